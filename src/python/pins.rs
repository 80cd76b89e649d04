//! Columns kept in GPU memory between calls (see `polars_gpu_hist.pin`).

use pyo3::prelude::*;
use pyo3_polars::PySeries;

use super::call;
use crate::api::axes::readable;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pin, m)?)?;
    m.add_function(wrap_pyfunction!(unpin, m)?)?;
    m.add_function(wrap_pyfunction!(unpin_all, m)?)?;
    m.add_function(wrap_pyfunction!(is_pinned, m)?)?;
    m.add_function(wrap_pyfunction!(pinned, m)?)?;
    Ok(())
}

/// Keeps a column in GPU memory; returns its device bytes.
#[pyfunction]
fn pin(py: Python<'_>, series: PySeries) -> PyResult<usize> {
    call(py, "pin", || {
        let (physical, _) = readable(&series.0)?;
        crate::gpu::pin::pin(
            crate::gpu::get()?,
            &physical,
            &crate::gpu::Settings::from_env(),
        )
    })
}

/// Drops a column's pin; whether it had one.
#[pyfunction]
fn unpin(py: Python<'_>, series: PySeries) -> PyResult<bool> {
    call(py, "unpin", || {
        let (physical, _) = readable(&series.0)?;
        crate::gpu::pin::unpin(&physical)
    })
}

/// Whether a column is pinned.
#[pyfunction]
fn is_pinned(py: Python<'_>, series: PySeries) -> PyResult<bool> {
    call(py, "is_pinned", || {
        let (physical, _) = readable(&series.0)?;
        let column = crate::input::HostColumn::new(&physical)?;
        Ok(crate::gpu::pin::find(&column).is_some())
    })
}

/// Drops every pin.
#[pyfunction]
fn unpin_all(py: Python<'_>) -> PyResult<()> {
    call(py, "unpin", || {
        crate::gpu::pin::clear();
        Ok(())
    })
}

/// (pinned columns, their device bytes).
#[pyfunction]
fn pinned(py: Python<'_>) -> PyResult<(usize, usize)> {
    call(py, "pinned", || Ok(crate::gpu::pin::usage()))
}
