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
    m.add_function(wrap_pyfunction!(pinned_device, m)?)?;
    m.add_function(wrap_pyfunction!(device_of, m)?)?;
    Ok(())
}

/// Keeps a column in GPU memory, on GPU `device` (None: the current device); returns its device
/// bytes.
#[pyfunction]
#[pyo3(signature = (series, device=None))]
fn pin(py: Python<'_>, series: PySeries, device: Option<i64>) -> PyResult<usize> {
    call(py, "pin", || {
        let (physical, _) = readable(&series.0)?;
        let gpu = match device {
            Some(k) => {
                let k = crate::gpu::device::checked_ordinal(k, crate::gpu::device_count()?)?;
                crate::gpu::on(k as i32)?
            }
            None => crate::gpu::get()?,
        };
        crate::gpu::pin::pin(gpu, &physical, &crate::gpu::Settings::from_env())
    })
}

/// The GPU a column is pinned to, if it is.
#[pyfunction]
fn pinned_device(py: Python<'_>, series: PySeries) -> PyResult<Option<i32>> {
    call(py, "pinned_device", || {
        let (physical, _) = readable(&series.0)?;
        let column = crate::input::HostColumn::new(&physical)?;
        Ok(crate::gpu::pin::find(&column).map(|p| p.ordinal))
    })
}

/// The GPU whose memory holds the address `ptr` (`what` names it in errors); the current device
/// for memory every GPU reads (managed, page-locked host memory).
#[pyfunction]
fn device_of(py: Python<'_>, ptr: u64, what: &str) -> PyResult<i32> {
    call(py, "device_of", || {
        crate::gpu::device_count()?;
        Ok(match crate::gpu::device::home_of(ptr, what)? {
            crate::gpu::device::Home::Device(k) => k,
            crate::gpu::device::Home::Anywhere => crate::gpu::device::current(),
        })
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
