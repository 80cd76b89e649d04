//! NVRTC: each kernel compiled on its own, for the device's own architecture, when a plan first
//! needs it, and kept in a private disk cache (keyed by the kernels' hash, the kernel, the
//! architecture and NVRTC's version) so that later processes load it at once.
//!
//! The cache is trusted only as far as the file system lets it be: its directory must belong to
//! the user and be writable by no one else (it is made 0700), entries are written under an
//! unpredictable name and renamed into place, never followed through a symbolic link, and
//! checked (length and checksum) before they are loaded. A cache that fails these checks is not
//! used: kernels are then compiled in memory, and [`cache_status`] says why.

use std::ffi::{c_char, CString};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};

use crate::error::{HistError, HistResult};
use crate::gpu::kernel::KernelId;

const HISTOGRAM_CU: &str = include_str!("../../kernels/histogram.cu");
/// The headers, by name, in the order they are inlined.
const HEADERS: [(&str, &str); 12] = [
    ("abi.cuh", include_str!("../../kernels/abi.cuh")),
    ("bin_rule.cuh", include_str!("../../kernels/bin_rule.cuh")),
    ("binners.cuh", include_str!("../../kernels/binners.cuh")),
    ("rows.cuh", include_str!("../../kernels/rows.cuh")),
    ("cells.cuh", include_str!("../../kernels/cells.cuh")),
    ("counters.cuh", include_str!("../../kernels/counters.cuh")),
    ("fixed.cuh", include_str!("../../kernels/fixed.cuh")),
    ("families.cuh", include_str!("../../kernels/families.cuh")),
    ("segmented.cuh", include_str!("../../kernels/segmented.cuh")),
    ("radix.cuh", include_str!("../../kernels/radix.cuh")),
    ("proof.cuh", include_str!("../../kernels/proof.cuh")),
    ("extremes.cuh", include_str!("../../kernels/extremes.cuh")),
];
/// The kernels' fingerprint (build.rs): cached and prebuilt kernels of other sources are not used.
pub(crate) const KERNELS_HASH: &str = env!("KERNELS_HASH");

/// Whether an NVRTC library can be loaded at all (never panics, unlike a first NVRTC call).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { nvrtc_sys::is_culib_present() }
}

/// NVRTC's (major, minor) version.
pub fn nvrtc_version() -> HistResult<(i32, i32)> {
    if !nvrtc_present() {
        return Err(HistError::Gpu(
            "the NVRTC library (libnvrtc) was not found: install the CUDA toolkit or \
             `pip install polars-gpu-hist[nvrtc]`"
                .into(),
        ));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| HistError::Gpu(format!("nvrtcVersion: {e:?}")))?;
    Ok((major, minor))
}

/// The real architectures NVRTC can compile for (`sm_XX` as XX), lowest first.
pub fn supported_archs() -> HistResult<Vec<u32>> {
    nvrtc_version()?;
    let fail = |e: nvrtc::NvrtcError| HistError::Gpu(format!("nvrtcGetSupportedArchs: {e:?}"));
    let mut count = 0;
    // SAFETY: one valid out-pointer, then a buffer of the count it gave.
    unsafe { nvrtc_sys::nvrtcGetNumSupportedArchs(&mut count) }
        .result()
        .map_err(fail)?;
    let mut archs = vec![0i32; count.max(0) as usize];
    unsafe { nvrtc_sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
        .result()
        .map_err(fail)?;
    let mut archs: Vec<u32> = archs.into_iter().map(|a| a as u32).collect();
    archs.sort_unstable();
    Ok(archs)
}

/// Refuses to compile with an NVRTC of a newer CUDA major version than the driver (`driver`:
/// its CUDA version, 1000 major + 10 minor), which cannot load what that NVRTC makes (within a
/// major version, a newer NVRTC's CUBINs load: CUDA's minor version compatibility).
pub fn check_driver(driver: u32) -> HistResult<()> {
    let (major, minor) = nvrtc_version()?;
    if major as u32 <= driver / 1000 {
        return Ok(());
    }
    Err(HistError::Gpu(format!(
        "the NVIDIA driver supports CUDA {}.{} but the NVRTC found is {major}.{minor}, whose \
         kernels need a CUDA {major} driver, and this kernel is not prebuilt for CUDA {}: \
         update the driver, or install the NVRTC of the driver's CUDA (`pip install \
         \"nvidia-cuda-nvrtc-cu{}\"`); with device=\"auto\" the CPU counts instead",
        driver / 1000,
        driver % 1000 / 10,
        driver / 1000,
        driver / 1000,
    )))
}

/// The kernel source as NVRTC sees it: the headers inlined (no include paths to set up).
pub fn source() -> String {
    HEADERS
        .iter()
        .fold(HISTOGRAM_CU.to_string(), |src, (name, text)| {
            src.replace(&format!("#include \"{name}\""), text)
        })
}

/// Compiles kernel `id` to a CUBIN for `sm_{arch}` (e.g. 90), or PTX for `compute_{arch}` when
/// `ptx` is set.
pub fn compile(id: &KernelId, arch: u32, ptx: bool) -> HistResult<Vec<u8>> {
    compile_with(id, id.defines(), arch, ptx)
}

/// [`compile`] with the defines given (a test compiles a variant the process does not choose,
/// e.g. the float sums of `crate::fixed::Sums`).
pub fn compile_with(
    id: &KernelId,
    defines: Vec<String>,
    arch: u32,
    ptx: bool,
) -> HistResult<Vec<u8>> {
    nvrtc_version()?;
    let fail = |what: &str, e: nvrtc::NvrtcError| HistError::Gpu(format!("NVRTC {what}: {e:?}"));
    let src = CString::new(source()).expect("kernel source has no NUL");
    let name = CString::new("histogram.cu").expect("no NUL");
    let program = nvrtc::create_program(&src, Some(&name)).map_err(|e| fail("create", e))?;
    let target = if ptx { "compute" } else { "sm" };
    let mut options = vec![
        format!("--gpu-architecture={target}_{arch}"),
        "-std=c++17".into(),
        "--fmad=false".into(),
        // The kernels hold no host code; NVRTC 13.0 took the generic lambdas of the entry
        // points for host functions without this (13.5 did not).
        "-default-device".into(),
    ];
    options.extend(defines);
    // SAFETY: `program` is live until destroyed below; options are valid C strings.
    let compiled = unsafe { nvrtc::compile_program(program, &options) };
    let result = match compiled {
        Ok(()) if ptx => unsafe { nvrtc::get_ptx(program) }
            .map(|p| p.iter().map(|&c| byte(c)).take_while(|&c| c != 0).collect())
            .map_err(|e| fail("get PTX", e)),
        Ok(()) => unsafe { cubin_of(program) }.map_err(|e| fail("get CUBIN", e)),
        Err(e) => {
            let log = unsafe { nvrtc::get_program_log(program) }
                .map(|l| l.iter().map(|&c| char::from(byte(c))).collect::<String>())
                .unwrap_or_default();
            Err(HistError::Gpu(format!(
                "NVRTC failed to compile {id} for {target}_{arch}: {e:?}\n{}",
                log.trim_end_matches('\0')
            )))
        }
    };
    // SAFETY: created above, not used after this.
    let _ = unsafe { nvrtc::destroy_program(program) };
    result
}

/// A C character's byte: `c_char` is signed on x86-64 and unsigned on aarch64.
fn byte(c: c_char) -> u8 {
    c.to_ne_bytes()[0]
}

unsafe fn cubin_of(program: nvrtc_sys::nvrtcProgram) -> Result<Vec<u8>, nvrtc::NvrtcError> {
    let mut size = 0usize;
    nvrtc_sys::nvrtcGetCUBINSize(program, &mut size).result()?;
    let mut out = vec![0u8; size];
    nvrtc_sys::nvrtcGetCUBIN(program, out.as_mut_ptr() as *mut c_char).result()?;
    Ok(out)
}

/// The disk cache at `asked` (`Settings::kernel_cache`), made if missing, or why it is not used.
pub fn cache_status(asked: Option<&Path>) -> Result<PathBuf, String> {
    let dir = asked.ok_or("no cache directory (no HOME)")?.to_path_buf();
    if !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    // SAFETY: geteuid has no preconditions.
    private_dir(&dir, unsafe { libc::geteuid() })?;
    Ok(dir)
}

/// Checks that `dir` is a directory of user `me` (not a link) that no one else can write, and
/// makes it private (0700) where it is readable by others: entries are then ours alone.
fn private_dir(dir: &Path, me: u32) -> Result<(), String> {
    let meta = fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if meta.uid() != me {
        return Err(format!("{} belongs to another user", dir.display()));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o022 != 0 {
        // Others may have written entries already: not ours to trust, even after a chmod.
        return Err(format!(
            "{} can be written by others (mode {mode:o}): make it 0700",
            dir.display()
        ));
    }
    if mode != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make {} private (0700): {e}", dir.display()))?;
    }
    Ok(())
}

/// The CUBIN of kernel `id` for `sm_{arch}`: from the disk cache at `cache`, or compiled (and
/// cached there).
pub fn cubin(id: &KernelId, arch: u32, cache: Option<&Path>) -> HistResult<Vec<u8>> {
    let (major, minor) = nvrtc_version()?;
    let file = format!("{KERNELS_HASH}-{id}-sm{arch}-nvrtc{major}.{minor}.cubin");
    let dir = cache_status(cache).ok();
    if let Some(bytes) = dir.as_ref().and_then(|d| read_entry(&d.join(&file))) {
        return Ok(bytes);
    }
    let bytes = compile(id, arch, false)?;
    if let Some(dir) = dir {
        // A cache that cannot be written only costs the next process a compile.
        let _ = write_entry(&dir, &file, &bytes);
    }
    Ok(bytes)
}

/// An entry: a magic tag, the payload's length and checksum, then the payload.
const MAGIC: &[u8; 8] = b"PGHCUBN1";

pub(crate) fn checksum(bytes: &[u8]) -> u64 {
    // FNV-1a: detects torn or corrupted entries (the directory's permissions keep others out).
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The payload of a cache entry, if it is a regular file of ours, not a link, and intact.
fn read_entry(path: &Path) -> Option<Vec<u8>> {
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    // SAFETY: geteuid has no preconditions.
    if !meta.is_file() || meta.uid() != unsafe { libc::geteuid() } {
        return None;
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).ok()?;
    let (head, payload) = bytes.split_at_checked(24)?;
    let len = u64::from_le_bytes(head[8..16].try_into().ok()?) as usize;
    let sum = u64::from_le_bytes(head[16..24].try_into().ok()?);
    (&head[..8] == MAGIC && payload.len() == len && checksum(payload) == sum)
        .then(|| payload.to_vec())
}

/// Writes an entry under an unpredictable temporary name (created, never opened through a
/// link), then renames it into place.
fn write_entry(dir: &Path, name: &str, payload: &[u8]) -> std::io::Result<()> {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    let tmp = dir.join(format!(".tmp-{:016x}", hasher.finish()));
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)?;
    file.write_all(MAGIC)?;
    file.write_all(&(payload.len() as u64).to_le_bytes())?;
    file.write_all(&checksum(payload).to_le_bytes())?;
    file.write_all(payload)?;
    file.sync_all()?;
    fs::rename(&tmp, dir.join(name)).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

#[cfg(test)]
#[path = "compile_tests.rs"]
mod tests;
