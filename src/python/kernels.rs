//! The GPU as the package sees it (whether there is one, its properties) and the prebuilt
//! kernels it uses (a bundle shipped in the wheel, named at import; `make bundle` builds it).

use pyo3::prelude::*;

use super::call;
use crate::boundary::guarded;
use crate::gpu::{bundle, compile};

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_info, m)?)?;
    m.add_function(wrap_pyfunction!(set_kernel_bundle, m)?)?;
    m.add_function(wrap_pyfunction!(build_kernel_bundle, m)?)?;
    m.add_function(wrap_pyfunction!(merge_kernel_bundles, m)?)?;
    Ok(())
}

/// Whether a GPU can be used (a driver, a device and a context).
#[pyfunction]
fn gpu_available() -> bool {
    guarded("gpu_available", || Ok(crate::gpu::available())).unwrap_or(false)
}

/// The GPU's properties as the plan sees them, or why there is no GPU.
#[pyfunction]
fn gpu_info() -> String {
    guarded("gpu_info", || {
        crate::gpu::get().map(|gpu| format!("{:?}", gpu.props))
    })
    .unwrap_or_else(|e| e.to_string())
}

/// Uses the prebuilt kernels at `path` (a bundle shipped in the wheel), read when the first
/// kernel is loaded.
#[pyfunction]
fn set_kernel_bundle(path: std::path::PathBuf) {
    bundle::set_path(path);
}

/// A section of a built bundle: (format, arch, NVRTC's CUDA version, kernels, bytes unpacked,
/// bytes packed).
type Section = (&'static str, u32, u32, usize, usize, usize);

/// Compiles the common kernels with the NVRTC loaded into a bundle at `path` (no GPU needed):
/// CUBINs for `archs` (None: every architecture this NVRTC supports) and PTX for `ptx_archs`
/// (None: its lowest). Per section: (format, arch, NVRTC's CUDA version, kernels, bytes
/// unpacked, bytes packed).
#[pyfunction]
#[pyo3(signature = (path, archs=None, ptx_archs=None, threads=4))]
fn build_kernel_bundle(
    py: Python<'_>,
    path: std::path::PathBuf,
    archs: Option<Vec<u32>>,
    ptx_archs: Option<Vec<u32>>,
    threads: usize,
) -> PyResult<Vec<Section>> {
    call(py, "build_kernel_bundle", || {
        let supported = compile::supported_archs()?;
        let archs = archs.unwrap_or_else(|| supported.clone());
        let ptx_archs = ptx_archs.unwrap_or_else(|| supported[..1.min(supported.len())].to_vec());
        let report = bundle::build(
            &path,
            &archs,
            &ptx_archs,
            &crate::gpu::bundle_kernels::common_kernels(),
            threads,
        )?;
        Ok(report
            .into_iter()
            .map(|(key, kernels, unpacked, packed)| {
                let format = match key.format {
                    bundle::Format::Cubin => "cubin",
                    bundle::Format::Ptx => "ptx",
                };
                (format, key.arch, key.built_by, kernels, unpacked, packed)
            })
            .collect())
    })
}

/// Writes the sections of the bundles at `inputs` as one bundle at `path`; the section count.
#[pyfunction]
fn merge_kernel_bundles(
    py: Python<'_>,
    path: std::path::PathBuf,
    inputs: Vec<std::path::PathBuf>,
) -> PyResult<usize> {
    call(py, "merge_kernel_bundles", || bundle::merge(&path, &inputs))
}
