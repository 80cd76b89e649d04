//! NVRTC: the embedded kernels compiled for one column type and one architecture, cached on disk
//! (keyed by kernel hash, value type, architecture and NVRTC version) as CuPy does.

use std::ffi::{c_char, CString};
use std::path::PathBuf;

use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};

use crate::error::{HistError, HistResult};

const HISTOGRAM_CU: &str = include_str!("../../kernels/histogram.cu");
/// The headers `histogram.cu` includes, by name.
const HEADERS: [(&str, &str); 6] = [
    ("bin_rule.cuh", include_str!("../../kernels/bin_rule.cuh")),
    ("rows.cuh", include_str!("../../kernels/rows.cuh")),
    ("counters.cuh", include_str!("../../kernels/counters.cuh")),
    ("segmented.cuh", include_str!("../../kernels/segmented.cuh")),
    ("extremes.cuh", include_str!("../../kernels/extremes.cuh")),
    (
        "histogramdd.cuh",
        include_str!("../../kernels/histogramdd.cuh"),
    ),
];
const KERNELS_HASH: &str = env!("KERNELS_HASH");

/// The C type of each column type the kernels are instantiated for (`-DVALUE_T=...`).
pub const VALUE_TYPES: [&str; 10] = [
    "float",
    "double",
    "signed char",
    "short",
    "int",
    "long long",
    "unsigned char",
    "unsigned short",
    "unsigned int",
    "unsigned long long",
];

/// Whether an NVRTC library can be loaded at all (never panics, unlike a first NVRTC call).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { nvrtc_sys::is_culib_present() }
}

/// NVRTC's (major, minor) version.
pub fn nvrtc_version() -> HistResult<(i32, i32)> {
    if !nvrtc_present() {
        return Err(HistError::Gpu(
            "the NVRTC library (libnvrtc) was not found".into(),
        ));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| HistError::Gpu(format!("nvrtcVersion: {e:?}")))?;
    Ok((major, minor))
}

/// The kernel source as NVRTC sees it: the headers inlined (no include paths to set up).
fn source() -> String {
    HEADERS
        .iter()
        .fold(HISTOGRAM_CU.to_string(), |src, (name, text)| {
            src.replace(&format!("#include \"{name}\""), text)
        })
}

/// Compiles the kernels for `value_type` to a CUBIN for `sm_{arch}` (e.g. 90), or PTX for
/// `compute_{arch}` when `ptx` is set.
pub fn compile(value_type: &str, arch: u32, ptx: bool) -> HistResult<Vec<u8>> {
    nvrtc_version()?;
    let fail = |what: &str, e: nvrtc::NvrtcError| HistError::Gpu(format!("NVRTC {what}: {e:?}"));
    let src = CString::new(source()).expect("kernel source has no NUL");
    let name = CString::new("histogram.cu").unwrap();
    let program = nvrtc::create_program(&src, Some(&name)).map_err(|e| fail("create", e))?;
    let target = if ptx { "compute" } else { "sm" };
    let options = [
        format!("--gpu-architecture={target}_{arch}"),
        format!("-DVALUE_T={value_type}"),
        "-std=c++17".into(),
        "--fmad=false".into(),
        // The kernels hold no host code; NVRTC 13.0 took the generic lambdas of the entry
        // points for host functions without this (13.5 did not).
        "-default-device".into(),
    ];
    // SAFETY: `program` is live until destroyed below; options are valid C strings.
    let compiled = unsafe { nvrtc::compile_program(program, &options) };
    let result = match compiled {
        Ok(()) if ptx => unsafe { nvrtc::get_ptx(program) }
            .map(|p| p.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect())
            .map_err(|e| fail("get PTX", e)),
        Ok(()) => unsafe { cubin(program) }.map_err(|e| fail("get CUBIN", e)),
        Err(e) => {
            let log = unsafe { nvrtc::get_program_log(program) }
                .map(|l| l.iter().map(|&c| c as u8 as char).collect::<String>())
                .unwrap_or_default();
            Err(HistError::Gpu(format!(
                "NVRTC failed to compile the kernels for {value_type} on {target}_{arch}: {e:?}\n{}",
                log.trim_end_matches('\0')
            )))
        }
    };
    // SAFETY: created above, not used after this.
    let _ = unsafe { nvrtc::destroy_program(program) };
    result
}

unsafe fn cubin(program: nvrtc_sys::nvrtcProgram) -> Result<Vec<u8>, nvrtc::NvrtcError> {
    let mut size = 0usize;
    nvrtc_sys::nvrtcGetCUBINSize(program, &mut size).result()?;
    let mut out = vec![0u8; size];
    nvrtc_sys::nvrtcGetCUBIN(program, out.as_mut_ptr() as *mut c_char).result()?;
    Ok(out)
}

/// Where compiled kernels are kept: `$POLARS_GPU_HIST_CACHE`, else `$XDG_CACHE_HOME` or
/// `~/.cache`, under `polars-gpu-hist`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("POLARS_GPU_HIST_CACHE") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("polars-gpu-hist"))
}

/// The CUBIN for `value_type` on `sm_{arch}`, from the disk cache or freshly compiled.
pub fn cubin_cached(value_type: &str, arch: u32) -> HistResult<Vec<u8>> {
    let (major, minor) = nvrtc_version()?;
    let file = format!(
        "hist-{KERNELS_HASH}-{}-sm{arch}-nvrtc{major}.{minor}.cubin",
        value_type.replace(' ', "_")
    );
    let path = cache_dir().map(|d| d.join(file));
    if let Some(bytes) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
        return Ok(bytes);
    }
    let bytes = compile(value_type, arch, false)?;
    if let Some(path) = path {
        // A cache that cannot be written only costs the next process a compile.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let _ = std::fs::create_dir_all(path.parent().unwrap())
            .and_then(|_| std::fs::write(&tmp, &bytes))
            .and_then(|_| std::fs::rename(&tmp, &path));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI installs NVRTC from PyPI and sets PGH_REQUIRE_NVRTC=1, so a kernel that does not
    /// compile fails there; elsewhere the test is skipped when no NVRTC is found.
    #[test]
    fn every_kernel_compiles_for_ampere_and_hopper() {
        if !nvrtc_present() {
            assert!(
                std::env::var_os("PGH_REQUIRE_NVRTC").is_none(),
                "PGH_REQUIRE_NVRTC is set but libnvrtc was not found on the library path"
            );
            eprintln!("skipped: no NVRTC here");
            return;
        }
        // NVRTC takes 15-40 s for each type and architecture: as many at once as there are cores.
        let jobs: Vec<(&str, u32, bool)> = [80, 90]
            .into_iter()
            .flat_map(|arch| {
                VALUE_TYPES
                    .into_iter()
                    .map(move |t| (t, arch, false))
                    .chain([("float", arch, true)])
            })
            .collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    while let Some(&(value_type, arch, ptx)) =
                        jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        let out = compile(value_type, arch, ptx).unwrap();
                        if !ptx {
                            assert!(
                                out.starts_with(b"\x7fELF"),
                                "{value_type} sm_{arch}: not an ELF cubin"
                            );
                            continue;
                        }
                        let ptx = String::from_utf8_lossy(&out);
                        for family in ["shared", "packed", "segmented", "global"] {
                            assert!(ptx.contains(&format!(".entry hist_{family}_u32_left")));
                        }
                        assert!(
                            ptx.contains(".entry seg_count") && ptx.contains(".entry seg_scan")
                        );
                    }
                });
            }
        });
    }
}
