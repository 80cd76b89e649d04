//! Kernels compiled ahead of time: a bundle built when a wheel is built (NVRTC runs without a
//! GPU) and shipped beside the native module, so that the first call compiles nothing.
//!
//! A bundle holds sections, each the common kernels ([`common_kernels`](crate::gpu::bundle_kernels::common_kernels)) in one format for one
//! architecture, built by one NVRTC: CUBINs for every architecture NVRTC 13.0 knows, PTX for the
//! lowest (which the driver compiles for a GPU newer than any CUBIN), and PTX built by NVRTC
//! 12.0, which CUDA 12 drivers can compile (they cannot load what NVRTC 13 makes). The runtime
//! takes, per kernel, the first of [`choose`]'s sections that holds it, else compiles it.
//!
//! A bundle of other kernel sources (another hash) is ignored; so is a section built by an
//! NVRTC newer than the driver (its code may rely on what that driver lacks). The file is only
//! named at import ([`set_path`]): it is read on the first kernel a process loads, and a section
//! is decompressed when first used.
//!
//! Format: `PGHBNDL3`, the kernels' hash (16 hex bytes), the section count (u32), then per
//! section its format (u8: 0 CUBIN, 1 PTX), architecture (u32), the CUDA version of the NVRTC
//! that built it (u32, 1000 major + 10 minor, as the driver reports its own), its length
//! unpacked (u32) and packed (u32), the packed bytes' FNV-1a checksum (u64), and the packed
//! bytes: a zstd frame of the entry count (u32) and per entry the name's length (u16), the
//! name (the kernel's id), the image's length (u32) and the image.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::error::{HistError, HistResult};
use crate::gpu::compile::{self, checksum, KERNELS_HASH};
use crate::gpu::kernel::KernelId;

const MAGIC: &[u8; 8] = b"PGHBNDL3";
/// zstd's level for sections: built once, read fast at any level.
const LEVEL: i32 = 19;

/// How a kernel image is loaded: a CUBIN as it is, PTX compiled by the driver first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Cubin,
    Ptx,
}

/// What a section holds: its format, architecture and the NVRTC (CUDA version) that built it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionKey {
    pub format: Format,
    pub arch: u32,
    pub built_by: u32,
}

/// Which images a process may use (`POLARS_GPU_HIST_KERNELS`): `auto` (a CUBIN for the GPU,
/// else PTX, else NVRTC), `ptx` (the bundle's PTX, compiled by the driver, else NVRTC) or
/// `nvrtc` (no bundle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Auto,
    Ptx,
    Nvrtc,
}

impl Source {
    pub fn parse(text: &str) -> Result<Source, String> {
        match text {
            "" | "auto" => Ok(Source::Auto),
            "ptx" => Ok(Source::Ptx),
            "nvrtc" => Ok(Source::Nvrtc),
            other => Err(format!(
                "POLARS_GPU_HIST_KERNELS={other:?}: use auto, ptx or nvrtc (or unset it)"
            )),
        }
    }
}

/// A kernel image found in the bundle.
pub struct Image {
    pub format: Format,
    pub bytes: Vec<u8>,
}

struct Section {
    key: SectionKey,
    unpacked_len: usize,
    packed: Vec<u8>,
    images: OnceLock<HashMap<String, Vec<u8>>>,
}

impl Section {
    /// The images, unpacked on first use (a damaged section holds none).
    fn images(&self) -> &HashMap<String, Vec<u8>> {
        self.images
            .get_or_init(|| unpack(&self.packed, self.unpacked_len).unwrap_or_default())
    }
}

enum State {
    Unset,
    Unread(PathBuf),
    Read(Vec<Section>),
}

static BUNDLE: Mutex<State> = Mutex::new(State::Unset);

/// Names the bundle to use; it is read when the first kernel is loaded (a missing, unreadable
/// or foreign file then only means kernels are compiled).
pub fn set_path(path: PathBuf) {
    *BUNDLE.lock().unwrap_or_else(|p| p.into_inner()) = State::Unread(path);
}

/// The sections of the bundle at `path`: none when it was built from other kernel sources.
fn read(path: &Path) -> HistResult<Vec<Section>> {
    let bytes = std::fs::read(path)
        .map_err(|e| HistError::Gpu(format!("cannot read {}: {e}", path.display())))?;
    parse(&bytes).ok_or_else(|| {
        HistError::Gpu(format!(
            "{} is not a kernel bundle of this version",
            path.display()
        ))
    })
}

fn parse(bytes: &[u8]) -> Option<Vec<Section>> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = bytes.get(at..at + n)?;
        at += n;
        Some(s)
    };
    let u32_of = |s: &[u8]| u32::from_le_bytes(s.try_into().unwrap_or_default());
    if take(8)? != MAGIC {
        return None;
    }
    if take(16)? != KERNELS_HASH.as_bytes() {
        return Some(Vec::new());
    }
    let count = u32_of(take(4)?);
    let mut sections = Vec::new();
    for _ in 0..count {
        let format = match take(1)?[0] {
            0 => Format::Cubin,
            1 => Format::Ptx,
            _ => return None,
        };
        let arch = u32_of(take(4)?);
        let built_by = u32_of(take(4)?);
        let unpacked_len = u32_of(take(4)?) as usize;
        let packed_len = u32_of(take(4)?) as usize;
        let sum = u64::from_le_bytes(take(8)?.try_into().ok()?);
        let packed = take(packed_len)?;
        if checksum(packed) != sum {
            return None;
        }
        sections.push(Section {
            key: SectionKey {
                format,
                arch,
                built_by,
            },
            unpacked_len,
            packed: packed.to_vec(),
            images: OnceLock::new(),
        });
    }
    Some(sections)
}

fn unpack(packed: &[u8], unpacked_len: usize) -> Option<HashMap<String, Vec<u8>>> {
    let raw = zstd::bulk::decompress(packed, unpacked_len).ok()?;
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let s = raw.get(at..at + n)?;
        at += n;
        Some(s)
    };
    let count = u32::from_le_bytes(take(4)?.try_into().ok()?);
    let mut images = HashMap::new();
    for _ in 0..count {
        let name_len = u16::from_le_bytes(take(2)?.try_into().ok()?) as usize;
        let name = String::from_utf8(take(name_len)?.to_vec()).ok()?;
        let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
        images.insert(name, take(len)?.to_vec());
    }
    Some(images)
}

/// The order in which sections may serve a GPU of `sm_{arch}` under a driver of CUDA version
/// `driver`: CUBINs of its major architecture no newer than it (the newest first), then PTX of
/// an architecture no newer than it (the newest NVRTC first), none built by an NVRTC newer than
/// the driver. `source` leaves out the CUBINs (`Ptx`) or everything (`Nvrtc`).
pub fn choose(keys: &[SectionKey], arch: u32, driver: u32, source: Source) -> Vec<usize> {
    let usable = |k: &SectionKey| k.built_by <= driver && k.arch <= arch;
    let mut cubins: Vec<usize> = (0..keys.len())
        .filter(|&i| source == Source::Auto && keys[i].format == Format::Cubin)
        .filter(|&i| usable(&keys[i]) && keys[i].arch / 10 == arch / 10)
        .collect();
    cubins.sort_by_key(|&i| Reverse(keys[i].arch));
    let mut ptx: Vec<usize> = (0..keys.len())
        .filter(|&i| source != Source::Nvrtc && keys[i].format == Format::Ptx)
        .filter(|&i| usable(&keys[i]))
        .collect();
    ptx.sort_by_key(|&i| Reverse((keys[i].built_by, keys[i].arch)));
    cubins.extend(ptx);
    cubins
}

/// `f` of the bundle's sections, read on the first call after [`set_path`].
fn with_sections<T>(f: impl FnOnce(&[Section]) -> T) -> T {
    let mut state = BUNDLE.lock().unwrap_or_else(|p| p.into_inner());
    if let State::Unread(path) = &*state {
        *state = State::Read(read(path).unwrap_or_default());
    }
    match &*state {
        State::Read(sections) => f(sections),
        _ => f(&[]),
    }
}

/// The prebuilt image of `id` for a GPU of `sm_{arch}` under a driver of CUDA version `driver`
/// (see [`choose`]), if the bundle has one.
pub fn find(id: &KernelId, arch: u32, driver: u32, source: Source) -> Option<Image> {
    let name = id.to_string();
    with_sections(|sections| {
        let keys: Vec<SectionKey> = sections.iter().map(|s| s.key).collect();
        choose(&keys, arch, driver, source)
            .into_iter()
            .find_map(|i| {
                Some(Image {
                    format: keys[i].format,
                    bytes: sections[i].images().get(&name)?.clone(),
                })
            })
    })
}

/// What serves the common kernels on a GPU of `sm_{arch}` under a driver of CUDA version
/// `driver`, as `explain` says it.
pub fn describe(arch: u32, driver: u32, source: Source) -> String {
    let version = |v: u32| format!("{}.{}", v / 1000, v % 1000 / 10);
    let first = with_sections(|sections| {
        let keys: Vec<SectionKey> = sections.iter().map(|s| s.key).collect();
        choose(&keys, arch, driver, source)
            .first()
            .map(|&i| keys[i])
    });
    match first {
        Some(k) if k.format == Format::Cubin => format!(
            "prebuilt for sm_{} (CUBIN, NVRTC {}): nothing to compile",
            k.arch,
            version(k.built_by)
        ),
        Some(k) => format!(
            "prebuilt as PTX for compute_{} (NVRTC {}), which the driver compiles on first use",
            k.arch,
            version(k.built_by)
        ),
        None => format!(
            "none prebuilt for sm_{arch} under a CUDA {} driver (kernels: {source:?}): NVRTC \
             compiles each on first use",
            version(driver)
        ),
    }
}

/// What a build wrote: per section, its key, kernel count and bytes unpacked and packed.
pub type BuildReport = Vec<(SectionKey, usize, usize, usize)>;

/// Compiles `kernels` with the NVRTC loaded, to CUBINs for each of `cubin_archs` and PTX for
/// each of `ptx_archs`, on `threads` threads, into a bundle at `path`.
pub fn build(
    path: &Path,
    cubin_archs: &[u32],
    ptx_archs: &[u32],
    kernels: &[KernelId],
    threads: usize,
) -> HistResult<BuildReport> {
    let (major, minor) = compile::nvrtc_version()?;
    let built_by = (major * 1000 + minor * 10) as u32;
    let keys: Vec<SectionKey> = cubin_archs
        .iter()
        .map(|&arch| (Format::Cubin, arch))
        .chain(ptx_archs.iter().map(|&arch| (Format::Ptx, arch)))
        .map(|(format, arch)| SectionKey {
            format,
            arch,
            built_by,
        })
        .collect();
    let jobs: Vec<(usize, KernelId)> = (0..keys.len())
        .flat_map(|s| kernels.iter().map(move |&k| (s, k)))
        .collect();
    let images = compile_all(&keys, &jobs, threads)?;
    let mut sections = Vec::new();
    let mut report = Vec::new();
    for (s, key) in keys.iter().enumerate() {
        let mut entries: Vec<&(usize, String, Vec<u8>)> =
            images.iter().filter(|(i, _, _)| *i == s).collect();
        entries.sort_by(|a, b| a.1.cmp(&b.1));
        let mut raw = (entries.len() as u32).to_le_bytes().to_vec();
        for (_, name, image) in &entries {
            raw.extend_from_slice(&(name.len() as u16).to_le_bytes());
            raw.extend_from_slice(name.as_bytes());
            raw.extend_from_slice(&(image.len() as u32).to_le_bytes());
            raw.extend_from_slice(image);
        }
        let packed = zstd::bulk::compress(&raw, LEVEL)
            .map_err(|e| HistError::Gpu(format!("compressing the bundle: {e}")))?;
        report.push((*key, entries.len(), raw.len(), packed.len()));
        sections.push((*key, raw.len(), packed));
    }
    write(path, &sections)?;
    Ok(report)
}

/// Compiles every (section, kernel) job on `threads` threads: (section, name, image).
fn compile_all(
    keys: &[SectionKey],
    jobs: &[(usize, KernelId)],
    threads: usize,
) -> HistResult<Vec<(usize, String, Vec<u8>)>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(jobs.len()));
    let failure = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                while let Some(&(s, id)) =
                    jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let key = keys[s];
                    match compile::compile(&id, key.arch, key.format == Format::Ptx) {
                        Ok(image) => results.lock().unwrap_or_else(|p| p.into_inner()).push((
                            s,
                            id.to_string(),
                            image,
                        )),
                        Err(e) => *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e),
                    }
                }
            });
        }
    });
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(results.into_inner().unwrap_or_else(|p| p.into_inner())),
    }
}

/// Writes `sections` (key, unpacked length, packed bytes) as a bundle at `path`.
fn write(path: &Path, sections: &[(SectionKey, usize, Vec<u8>)]) -> HistResult<()> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(KERNELS_HASH.as_bytes());
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    for (key, unpacked_len, packed) in sections {
        out.push(match key.format {
            Format::Cubin => 0,
            Format::Ptx => 1,
        });
        out.extend_from_slice(&key.arch.to_le_bytes());
        out.extend_from_slice(&key.built_by.to_le_bytes());
        out.extend_from_slice(&(*unpacked_len as u32).to_le_bytes());
        out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
        out.extend_from_slice(&checksum(packed).to_le_bytes());
        out.extend_from_slice(packed);
    }
    std::fs::write(path, out)
        .map_err(|e| HistError::Gpu(format!("cannot write {}: {e}", path.display())))
}

/// Writes the sections of the bundles at `inputs` (built by different NVRTCs, in processes of
/// their own) as one bundle at `path`; the number of sections.
pub fn merge(path: &Path, inputs: &[PathBuf]) -> HistResult<usize> {
    let mut sections = Vec::new();
    for input in inputs {
        let read = read(input)?;
        if read.is_empty() {
            return Err(HistError::Gpu(format!(
                "{} holds no kernels of these sources",
                input.display()
            )));
        }
        sections.extend(read.into_iter().map(|s| (s.key, s.unpacked_len, s.packed)));
    }
    write(path, &sections)?;
    Ok(sections.len())
}

#[cfg(test)]
#[path = "bundle_tests.rs"]
mod tests;
