//! The GPU as the package sees it (whether there is one, its properties) and the prebuilt
//! kernels it uses (a bundle shipped in the wheel, or built for it).

use pyo3::prelude::*;

use super::{call, to_py};
use crate::error::guarded;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_info, m)?)?;
    m.add_function(wrap_pyfunction!(set_kernel_bundle, m)?)?;
    m.add_function(wrap_pyfunction!(build_kernel_bundle, m)?)?;
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

/// Uses the prebuilt kernels at `path` (a bundle shipped in the wheel); the number it holds
/// for these kernel sources.
#[pyfunction]
fn set_kernel_bundle(path: std::path::PathBuf) -> PyResult<usize> {
    guarded("set_kernel_bundle", || crate::gpu::bundle::load(&path)).map_err(to_py)
}

/// Compiles the common kernels for `archs` (e.g. [80, 90]) into a bundle at `path` (NVRTC, no
/// GPU needed); the number of kernels written.
#[pyfunction]
#[pyo3(signature = (path, archs, threads=4))]
fn build_kernel_bundle(
    py: Python<'_>,
    path: std::path::PathBuf,
    archs: Vec<u32>,
    threads: usize,
) -> PyResult<usize> {
    call(py, "build_kernel_bundle", || {
        let kernels = crate::gpu::bundle::common_kernels();
        crate::gpu::bundle::build(&path, &archs, &kernels, threads)
    })
}
