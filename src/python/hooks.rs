//! Hooks for tests and benchmarks, not for users (their names start with `_`): the proof's two
//! walks side by side, `histogram` and `by=` with the engine's report, and the time of a call
//! without the plugin boundary around it.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_polars::PySeries;

use super::{call, unpickle};
use crate::options::HistogramOptions;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_proof_walks, m)?)?;
    m.add_function(wrap_pyfunction!(_histogram_by_report, m)?)?;
    m.add_function(wrap_pyfunction!(_time_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(_histogram_report, m)?)?;
    Ok(())
}

/// The cheap rule's proof walked on the host and on the GPU (tests hold them equal), for numpy's
/// `bins` equal bins of a `dtype` ("float32", "float64", "integer") column: over `range` given
/// as `range_type` ("python", "float32" or "float64" scalars), or taken from the data ("data":
/// `range` is then the data's extremes). Each walk is `(near, worst)`, the host's first; `None`
/// where the device does not walk these bins.
#[pyfunction]
fn _proof_walks(
    py: Python<'_>,
    bins: usize,
    range: (f64, f64),
    dtype: &str,
    range_type: &str,
) -> PyResult<Option<[(bool, f64); 2]>> {
    use crate::bins::{BinSpec, Binning, Closed, Extremes, Range, ValueKind};
    let kind = match dtype {
        "float32" => ValueKind::Float32,
        "float64" => ValueKind::Float64,
        "integer" => ValueKind::Integer,
        other => return Err(PyValueError::new_err(format!("unknown dtype {other:?}"))),
    };
    let (lo, hi) = range;
    let (range, extremes) = match range_type {
        "python" => (Some(Range::new(lo, hi)), Extremes::Empty),
        "float32" | "float64" => (
            Some(Range {
                single: range_type == "float32",
                wide: range_type == "float64",
                ..Range::new(lo, hi)
            }),
            Extremes::Empty,
        ),
        "data" if kind == ValueKind::Float32 => (None, Extremes::Float32(lo as f32, hi as f32)),
        "data" => (None, Extremes::Float64(lo, hi)),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown range_type {other:?}"
            )))
        }
    };
    call(py, "_proof_walks", || {
        let spec = BinSpec::resolve(&Binning::Count(bins), range, Closed::Left, kind, || {
            Ok(extremes)
        })?;
        let walks = crate::gpu::proof::both_walks(crate::gpu::get()?, &spec)?;
        Ok(walks.map(|walks| walks.map(|w| (w.near, w.worst))))
    })
}

/// `by=` as the expression computes it, with the engine's report as text (the host's phases in
/// ms: grouping the keys, resolving the bins, the engine's own, building the result), for
/// benchmarks that ask where a call spends its time.
#[pyfunction]
fn _histogram_by_report(
    py: Python<'_>,
    values: PySeries,
    keys: PySeries,
    pickled_options: &[u8],
) -> PyResult<(PySeries, String)> {
    let opts: HistogramOptions = unpickle(pickled_options)?;
    let (series, report) = call(py, "histogram_by", || {
        crate::api::by::histogram_by_with_report(
            &values.0,
            std::slice::from_ref(&keys.0),
            None,
            &opts,
        )
    })?;
    Ok((PySeries(series), report.to_string()))
}

/// The time of one call of the `histogram` plugin's function (µs), the plugin boundary left out:
/// `reps` calls on `values` back to back, timed in Rust (benchmarks of the small call split its
/// cost between the boundary and the work).
#[pyfunction]
fn _time_histogram(
    py: Python<'_>,
    values: PySeries,
    pickled_options: &[u8],
    reps: u32,
) -> PyResult<f64> {
    let opts: HistogramOptions = unpickle(pickled_options)?;
    call(py, "_time_histogram", || {
        let start = std::time::Instant::now();
        for _ in 0..reps {
            drop(std::hint::black_box(crate::api::hist1d::histogram_series(
                &values.0, None, &opts,
            )?));
        }
        Ok(start.elapsed().as_secs_f64() * 1e6 / f64::from(reps.max(1)))
    })
}

/// The histogram of a host Series with the engine's report as text, for tests that hold it
/// equal to what `explain` says of the call.
#[pyfunction]
#[pyo3(signature = (values, pickled_options, weights=None))]
fn _histogram_report(
    py: Python<'_>,
    values: PySeries,
    pickled_options: &[u8],
    weights: Option<PySeries>,
) -> PyResult<(PySeries, String)> {
    let opts: HistogramOptions = unpickle(pickled_options)?;
    let weights = weights.map(|w| w.0);
    let (series, report) = call(py, "histogram", || {
        crate::api::hist1d::histogram_with_report(&values.0, weights.as_ref(), &opts)
    })?;
    Ok((PySeries(series), report.to_string()))
}
