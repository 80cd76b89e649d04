//! The entry points for host data outside a query: a Series' histogram without the query
//! around it, which backend a call would take, and the bin count a streaming pass estimates.

use polars::prelude::*;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3_polars::PySeries;

use super::{call, call_as, to_py, unpickle};
use crate::boundary::python::Api;
use crate::options::{HistogramDdOptions, HistogramOptions};

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_series, m)?)?;
    m.add_function(wrap_pyfunction!(histogramdd_series, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_buffers, m)?)?;
    m.add_function(wrap_pyfunction!(super::hist::hist_series, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_from_extremes, m)?)?;
    Ok(())
}

/// Which backend and kernel would run, and why (see `polars_gpu_hist.explain`). The dtype comes
/// as an empty Series of it: every dtype crosses as a Series, not every one as a dtype.
#[pyfunction]
#[pyo3(signature = (dtype, rows, pickled_options, weighted, location, device=None))]
fn explain(
    py: Python<'_>,
    dtype: PySeries,
    rows: u64,
    pickled_options: &[u8],
    weighted: bool,
    location: &str,
    device: Option<i32>,
) -> PyResult<String> {
    let opts: HistogramOptions = unpickle(pickled_options)?;
    let location = match location {
        "host" => crate::Location::Host,
        "pinned" => crate::Location::Pinned,
        "device" => crate::Location::Device,
        other => return Err(PyValueError::new_err(format!("unknown location {other:?}"))),
    };
    call(py, "explain", || {
        crate::explain(dtype.0.dtype(), rows, &opts, weighted, location, device)
    })
}

/// The histogram of a host Series, the function the `histogram` plugin runs but without a query
/// around it: a frame, a plan and a collect cost more than counting a small array. Raises the
/// exception types of `api` (the caller's).
#[pyfunction]
#[pyo3(signature = (values, pickled_options, weights=None, *, api))]
fn histogram_series(
    py: Python<'_>,
    values: PySeries,
    pickled_options: &[u8],
    weights: Option<PySeries>,
    api: &str,
) -> PyResult<PySeries> {
    let api = Api::named(api)?;
    let opts: HistogramOptions = unpickle(pickled_options)?;
    let weights = weights.map(|w| w.0);
    call_as(py, api, "histogram", || {
        crate::api::hist1d::histogram_series(&values.0, weights.as_ref(), &opts)
    })
    .map(PySeries)
}

/// The n-D histogram of host Series (one per dimension, of one length), the function the
/// `histogramdd` plugin runs, without a query around it; the exception types of `api`.
#[pyfunction]
#[pyo3(signature = (columns, pickled_options, weights=None, *, api))]
fn histogramdd_series(
    py: Python<'_>,
    columns: Vec<PySeries>,
    pickled_options: &[u8],
    weights: Option<PySeries>,
    api: &str,
) -> PyResult<PySeries> {
    let api = Api::named(api)?;
    let opts: HistogramDdOptions = unpickle(pickled_options)?;
    let columns: Vec<Series> = columns.into_iter().map(|c| c.0).collect();
    let weights = weights.map(|w| w.0);
    call_as(py, api, "histogramdd", || {
        crate::api::histdd::histogramdd_series(&columns, weights.as_ref(), &opts)
    })
    .map(PySeries)
}

/// [`histogram_series`] for the numpy drop-in (numpy's exception types), as raw native-endian
/// bytes for `numpy.frombuffer`: the counts (UInt64, or Float64 with weights or density) and the
/// `bins + 1` edges (Float64; numeric columns only). At 100 rows, unnesting the Struct and
/// converting its fields to numpy arrays cost more than the counting. The bytes are written in
/// place: a result too large for memory is a `MemoryError`.
#[pyfunction]
#[pyo3(signature = (values, pickled_options, weights=None))]
fn histogram_buffers<'py>(
    py: Python<'py>,
    values: PySeries,
    pickled_options: &[u8],
    weights: Option<PySeries>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let opts: HistogramOptions = unpickle(pickled_options)?;
    let weights = weights.map(|w| w.0);
    let hist = call_as(py, Api::Numpy, "histogram", || {
        crate::api::hist1d::histogram_series(&values.0, weights.as_ref(), &opts)
    })?;
    let numpy = |e: PolarsError| crate::boundary::python::to_py(e.into(), Api::Numpy);
    let fields = hist.struct_().map_err(numpy)?.fields_as_series();
    let [start, end, count] = &fields[..] else {
        unreachable!("a 1-D result has three fields")
    };
    let (starts, ends) = (start.f64().map_err(numpy)?, end.f64().map_err(numpy)?);
    let edges = PyBytes::new_with(py, 8 * (starts.len() + 1), |out| {
        let values = starts.into_no_null_iter().chain(ends.last());
        for (slot, v) in out.chunks_exact_mut(8).zip(values) {
            slot.copy_from_slice(&v.to_ne_bytes());
        }
        Ok(())
    })?;
    let counts = PyBytes::new_with(py, 8 * count.len(), |out| {
        let slots = out.chunks_exact_mut(8);
        match count.dtype() {
            DataType::UInt64 => {
                let values = count.u64().map_err(numpy)?.into_no_null_iter();
                slots
                    .zip(values)
                    .for_each(|(s, v)| s.copy_from_slice(&v.to_ne_bytes()));
            }
            _ => {
                let values = count.f64().map_err(numpy)?.into_no_null_iter();
                slots
                    .zip(values)
                    .for_each(|(s, v)| s.copy_from_slice(&v.to_ne_bytes()));
            }
        }
        Ok(())
    })?;
    Ok((counts, edges))
}

/// numpy's bin count for estimator `rule` ("sturges", "rice", "sqrt") from a streaming pass over a
/// column: `n` values counted, `extremes` their min and max (two values of the column's
/// physical dtype, none for no values); `None` for the rules that need every value.
#[pyfunction]
#[pyo3(signature = (rule, n, extremes, range=None))]
fn estimate_from_extremes(
    py: Python<'_>,
    rule: &str,
    n: usize,
    extremes: PySeries,
    range: Option<(f64, f64)>,
) -> PyResult<Option<usize>> {
    let estimator: crate::estimators::Estimator = rule.parse().map_err(to_py)?;
    call(py, "estimate_from_extremes", || {
        crate::api::axes::estimate_from_extremes(estimator, n, &extremes.0, range)
    })
}
