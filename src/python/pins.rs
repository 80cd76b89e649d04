//! Columns kept in GPU memory between calls (see `polars_gpu_hist.pin`).

use pyo3::prelude::*;
use pyo3_polars::PySeries;

use super::call;
use crate::api::axes::readable;
use crate::gpu::pin;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(self::pin, m)?)?;
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
        pin::pin(crate::gpu::get()?, &physical)
    })
}

/// Drops a column's pin; whether it had one.
#[pyfunction]
fn unpin(py: Python<'_>, series: PySeries) -> PyResult<bool> {
    call(py, "unpin", || {
        let (physical, _) = readable(&series.0)?;
        pin::unpin(&physical)
    })
}

/// Whether a column is pinned.
#[pyfunction]
fn is_pinned(py: Python<'_>, series: PySeries) -> PyResult<bool> {
    call(py, "is_pinned", || {
        let (physical, _) = readable(&series.0)?;
        let column = crate::input::HostColumn::new(&physical)?;
        Ok(pin::find(&column).is_some())
    })
}

/// Drops every pin.
#[pyfunction]
fn unpin_all(py: Python<'_>) -> PyResult<()> {
    call(py, "unpin", || {
        pin::clear();
        Ok(())
    })
}

/// (pinned columns, their device bytes).
#[pyfunction]
fn pinned(py: Python<'_>) -> PyResult<(usize, usize)> {
    call(py, "pinned", || Ok(pin::usage()))
}
