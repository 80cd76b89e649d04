//! `polars_gpu_hist.Histogram`'s native half: the mergeable histogram behind a lock, so that
//! several threads may fill one histogram at once.

use std::sync::Mutex;

use polars::prelude::*;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3_polars::PySeries;

use crate::accumulator::{AccumulatorOptions, Axis, DeviceWeights, Storage};
use crate::python::{call, to_py, unpickle};

/// One axis of `polars_gpu_hist.Histogram`, as the wrapper pickles it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AxisArgument {
    bins: crate::bins::Binning,
    #[serde(default)]
    range: Option<(f64, f64)>,
    /// `(kind, min, max)` of all the data (range="auto"): kind "float32", "float64", "integer"
    /// or "empty", the extremes as exact decimal text.
    #[serde(default)]
    data_range: Option<(String, String, String)>,
}

/// The arguments of `polars_gpu_hist.Histogram`, pickled by the wrapper.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    axes: Vec<AxisArgument>,
    #[serde(default)]
    closed: crate::Closed,
    #[serde(default)]
    weighted: bool,
    #[serde(default)]
    device: crate::Device,
    #[serde(default)]
    kernel: Option<crate::gpu::Family>,
}

fn axis(a: AxisArgument) -> PyResult<Axis> {
    use crate::accumulator::Span;
    use crate::bins::Binning;
    Ok(match (a.data_range, a.range, a.bins) {
        (Some(extremes), None, Binning::Count(n)) => Axis::data_range(n, data_extremes(&extremes)?),
        (Some(_), _, _) => {
            return Err(PyValueError::new_err(
                "a range from the data needs an int `bins` and no `range`",
            ))
        }
        (None, range, bins) => Axis {
            bins,
            span: range.map_or(Span::None, |(lo, hi)| Span::Range(lo, hi)),
        },
    })
}

fn data_extremes((kind, lo, hi): &(String, String, String)) -> PyResult<crate::bins::Extremes> {
    use crate::bins::Extremes;
    let bad = |what: &str| PyValueError::new_err(format!("bad data range extreme {what:?}"));
    let float = |s: &str| s.parse::<f64>().map_err(|_| bad(s));
    let int = |s: &str| s.parse::<i128>().map_err(|_| bad(s));
    Ok(match kind.as_str() {
        "empty" => Extremes::Empty,
        // The text is a float32 value widened exactly to float64.
        "float32" => Extremes::Float32(float(lo)? as f32, float(hi)? as f32),
        "float64" => Extremes::Float64(float(lo)?, float(hi)?),
        "integer" => Extremes::Integer(int(lo)?, int(hi)?),
        other => return Err(bad(other)),
    })
}

/// The mergeable histogram (`crate::accumulator::Histogram`) behind `polars_gpu_hist.Histogram`.
#[pyclass(module = "polars_gpu_hist._internal", name = "Histogram", frozen)]
pub struct PyHistogram(Mutex<crate::Histogram>);

impl PyHistogram {
    fn new_from(h: crate::Histogram) -> Self {
        PyHistogram(Mutex::new(h))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, crate::Histogram> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl PyHistogram {
    #[new]
    fn new(pickled_arguments: &[u8]) -> PyResult<Self> {
        let a: Arguments = unpickle(pickled_arguments)?;
        let axes = a.axes.into_iter().map(axis).collect::<PyResult<_>>()?;
        let options = AccumulatorOptions {
            closed: a.closed,
            storage: if a.weighted {
                Storage::Weight
            } else {
                Storage::Count
            },
            device: a.device,
            kernel: a.kernel,
        };
        let h = crate::Histogram::new(axes, options).map_err(to_py)?;
        Ok(PyHistogram::new_from(h))
    }

    /// Counts host Series (one per axis) into the histogram, and sums the weights.
    #[pyo3(signature = (columns, weights=None))]
    fn fill(
        &self,
        py: Python<'_>,
        columns: Vec<PySeries>,
        weights: Option<PySeries>,
    ) -> PyResult<()> {
        let columns: Vec<Series> = columns.into_iter().map(|c| c.0).collect();
        call(py, "Histogram.fill", || {
            self.lock().fill(&columns, weights.as_ref().map(|w| &w.0))
        })
    }

    /// Counts arrays in GPU memory (one per axis), each given as (address, length,
    /// array-interface type string); weighted fills give the float64 weights and their squares.
    #[pyo3(signature = (columns, weights=None))]
    fn fill_cuda(
        &self,
        py: Python<'_>,
        columns: Vec<(u64, u64, String)>,
        weights: Option<(u64, u64)>,
    ) -> PyResult<()> {
        let columns = columns
            .into_iter()
            .map(|(ptr, len, typestr)| {
                let dtype = crate::DType::from_typestr(&typestr).map_err(to_py)?;
                Ok(crate::DeviceArray { ptr, len, dtype })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let weights = weights.map(|(values, squares)| DeviceWeights { values, squares });
        call(py, "Histogram.fill", || {
            self.lock().fill_device(&columns, weights)
        })
    }

    /// A new histogram: the sum of both, or a ValueError when their binnings differ.
    fn merge(&self, py: Python<'_>, other: PyRef<'_, PyHistogram>) -> PyResult<PyHistogram> {
        let theirs = other.lock().clone();
        let mut merged = self.lock().clone();
        call(py, "Histogram.merge", || merged.merge(&theirs))?;
        Ok(PyHistogram::new_from(merged))
    }

    /// The same binning, device and dtype, with every count zero.
    fn empty_like(&self) -> PyHistogram {
        PyHistogram::new_from(self.lock().empty_like())
    }

    /// Counts per cell, row-major: UInt64, or Float64 sums of weights.
    fn counts(&self) -> PySeries {
        PySeries(match self.lock().counts() {
            crate::counts::Counts::Exact(c) => Series::new("count".into(), c),
            crate::counts::Counts::Weighted(s) => Series::new("count".into(), s),
        })
    }

    /// Sums of squared weights per cell (Float64), or None for a counting histogram.
    fn squared_weights(&self) -> Option<PySeries> {
        self.lock()
            .squared_weights()
            .map(|q| PySeries(Series::new("squares".into(), q)))
    }

    /// The edges of `axis` as Float64 (float32 edges widened exactly).
    fn edges(&self, axis: usize) -> PyResult<PySeries> {
        let h = self.lock();
        if axis >= h.axes().len() {
            return Err(PyValueError::new_err(format!(
                "axis {axis} of a histogram of {} axes",
                h.axes().len()
            )));
        }
        Ok(PySeries(Series::new("edges".into(), h.edges(axis))))
    }

    /// The expression's Struct rows, named `name` (n-D fields named by `axis_names`).
    #[pyo3(signature = (name, axis_names, density=false))]
    fn to_series(&self, name: &str, axis_names: Vec<String>, density: bool) -> PyResult<PySeries> {
        let names: Vec<&str> = axis_names.iter().map(String::as_str).collect();
        Ok(PySeries(
            self.lock()
                .to_series(name, &names, density)
                .map_err(to_py)?,
        ))
    }

    /// The state as bytes (pickle protocol, floats exact), for `from_bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let bytes = serde_pickle::to_vec(&*self.lock(), Default::default())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<PyHistogram> {
        serde_pickle::from_slice(state, Default::default())
            .map(PyHistogram::new_from)
            .map_err(|e| PyValueError::new_err(format!("not a serialized Histogram: {e}")))
    }

    /// The number of bins of each axis.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.lock().shape()
    }

    /// "left" or "right".
    #[getter]
    fn closed(&self) -> &'static str {
        match self.lock().options().closed {
            crate::Closed::Left => "left",
            crate::Closed::Right => "right",
        }
    }

    #[getter]
    fn weighted(&self) -> bool {
        self.lock().is_weighted()
    }

    /// The Polars dtype the first fill fixed on each axis (e.g. "Float32"), None before any.
    #[getter]
    fn dtypes(&self) -> Vec<Option<String>> {
        let h = self.lock();
        (0..h.axes().len())
            .map(|i| h.dtype(i).map(|d| format!("{d:?}")))
            .collect()
    }

    fn __repr__(&self) -> String {
        self.lock().to_string()
    }
}
