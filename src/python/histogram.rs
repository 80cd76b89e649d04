//! `polars_gpu_hist.Histogram`'s native half: the mergeable histogram behind a lock, so that
//! several threads may fill one histogram at once.

use std::sync::Mutex;

use polars::prelude::*;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_polars::PySeries;

use crate::accumulator::{
    AccumulatorOptions, Axis, DataExtremes, DeviceCells, DeviceWeights, FlowCells, Storage,
};
use crate::alloc;
use crate::counts::Counts;
use crate::error::HistError;
use crate::python::values::{PyDataExtremes, PyDeviceSample};
use crate::python::{call, unpickle};

/// One axis of `polars_gpu_hist.Histogram`, as the wrapper pickles it.
#[derive(Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AxisArgument {
    bins: crate::bins::Binning,
    #[serde(default)]
    range: Option<(f64, f64)>,
}

/// The arguments of `polars_gpu_hist.Histogram`, pickled by the wrapper.
#[derive(Clone, serde::Deserialize)]
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
    kernel: Option<crate::family::Family>,
}

/// One axis: its bins over a fixed `range`, or over `data_range`, the extremes of all the data
/// (range="auto", one axis of `bins=n` and no `range`).
fn axis(a: AxisArgument, data_range: Option<DataExtremes>) -> PyResult<Axis> {
    use crate::accumulator::Span;
    use crate::bins::Binning;
    Ok(match (data_range, a.range, a.bins) {
        (Some(extremes), None, bins @ Binning::Count(_)) => Axis {
            bins,
            span: Span::Data(extremes),
        },
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

/// The mergeable histogram (`crate::accumulator::Histogram`) behind `polars_gpu_hist.Histogram`.
#[pyclass(module = "polars_gpu_hist._internal", name = "Histogram", frozen)]
pub struct PyHistogram(Mutex<crate::Histogram>);

impl PyHistogram {
    pub(super) fn new_from(h: crate::Histogram) -> Self {
        PyHistogram(Mutex::new(h))
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, crate::Histogram> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl PyHistogram {
    /// `data_range`: the extremes of all the data for a histogram of one axis of `bins=n`.
    #[new]
    #[pyo3(signature = (pickled_arguments, data_range=None))]
    fn new(
        py: Python<'_>,
        pickled_arguments: &[u8],
        data_range: Option<PyRef<'_, PyDataExtremes>>,
    ) -> PyResult<Self> {
        let a: Arguments = unpickle(pickled_arguments)?;
        let data_range = data_range.map(|d| d.0.clone());
        if data_range.is_some() && a.axes.len() != 1 {
            return Err(PyValueError::new_err(
                "a range from the data is for a histogram of one axis",
            ));
        }
        let axes = a
            .axes
            .into_iter()
            .map(|a| axis(a, data_range.clone()))
            .collect::<PyResult<_>>()?;
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
        let h = call(py, "Histogram", || crate::Histogram::new(axes, options))?;
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

    /// Counts a device sample (one dimension per axis) where it lies; a weighted fill's sample
    /// carries the float64 weights, and `squared_weights` their squares.
    #[pyo3(signature = (sample, squared_weights=None))]
    fn fill_cuda(
        &self,
        py: Python<'_>,
        sample: PyRef<'_, PyDeviceSample>,
        squared_weights: Option<u64>,
    ) -> PyResult<()> {
        let (columns, weights) = device_fill(&sample, squared_weights)?;
        call(py, "Histogram.fill", || {
            self.lock().fill_device(&columns, weights)
        })
    }

    /// What `fill` would add, without adding it: the counts, the squared weights (or None)
    /// and the flow. A Dask partial needs no histogram of its own.
    #[pyo3(signature = (columns, weights=None))]
    fn counted(
        &self,
        py: Python<'_>,
        columns: Vec<PySeries>,
        weights: Option<PySeries>,
    ) -> PyResult<FilledTuple> {
        let columns: Vec<Series> = columns.into_iter().map(|c| c.0).collect();
        call(py, "Histogram.fill", || {
            let filled = self
                .lock()
                .counted(&columns, weights.as_ref().map(|w| &w.0))?;
            Ok(filled_tuple(filled))
        })
    }

    /// What `fill_cuda` would add, without adding it (as `counted`).
    #[pyo3(signature = (sample, squared_weights=None))]
    fn counted_cuda(
        &self,
        py: Python<'_>,
        sample: PyRef<'_, PyDeviceSample>,
        squared_weights: Option<u64>,
    ) -> PyResult<FilledTuple> {
        let (columns, weights) = device_fill(&sample, squared_weights)?;
        call(py, "Histogram.fill", || {
            let filled = self.lock().counted_device(&columns, weights)?;
            Ok(filled_tuple(filled))
        })
    }

    /// Counts a device sample of one column into the caller's arrays on its stream: the bins
    /// with the flow bins, `[below, bins.., above, NaN]`, the rows (u64) at `rows` and for a
    /// weighted fill the sums of the weights and of their squares (f64) at `sums`. Returns the
    /// flow; the histogram is not changed.
    #[pyo3(signature = (sample, squared_weights, stream, cells, rows, sums=None))]
    #[allow(clippy::too_many_arguments)]
    fn count_cuda_into(
        &self,
        py: Python<'_>,
        sample: PyRef<'_, PyDeviceSample>,
        squared_weights: Option<u64>,
        stream: u64,
        cells: usize,
        rows: u64,
        sums: Option<(u64, u64)>,
    ) -> PyResult<FlowTuple> {
        let (columns, weights) = device_fill(&sample, squared_weights)?;
        let out = DeviceCells {
            stream,
            cells,
            rows,
            sums,
        };
        call(py, "Histogram.fill", || {
            let flow = self.lock().count_device_into(&columns, weights, &out)?;
            Ok(flow_tuple(&flow))
        })
    }

    /// Replaces the counts (UInt64, or Float64 sums of weights), the squared weights, the flow
    /// and (several axes) the flow cells, keeping the binning and the dtypes: a total summed
    /// elsewhere, a slice. Without `cells`, those of several axes are not known from then on.
    #[pyo3(signature = (counts, squares, flow, cells=None))]
    fn set_contents(
        &self,
        py: Python<'_>,
        counts: PySeries,
        squares: Option<PySeries>,
        flow: FlowTuple,
        cells: Option<(PySeries, Option<PySeries>)>,
    ) -> PyResult<()> {
        call(py, "Histogram.set_contents", || {
            let counts = counts_of(&counts.0)?;
            let squares = squares.map(|q| values_of(q.0.f64()?)).transpose()?;
            let cells = cells
                .map(|(c, q)| {
                    Ok::<_, HistError>(FlowCells {
                        counts: counts_of(&c.0)?,
                        squares: q.map(|q| values_of(q.0.f64()?)).transpose()?,
                    })
                })
                .transpose()?;
            let (rows, null, nan, underflow, overflow, uw, ow, us, os) = flow;
            let flow = crate::accumulator::Flow {
                rows,
                null,
                nan,
                underflow,
                overflow,
                underflow_weight: uw,
                overflow_weight: ow,
                underflow_squares: us,
                overflow_squares: os,
            };
            self.lock().set_contents(counts, squares, flow, cells)
        })
    }

    /// The flow cells: of several axes, the cells of the grid with a flow bin on each side of
    /// every axis that are not bins, row-major (None where not known); of one axis, below and
    /// above. Counts (UInt64) or sums of weights (Float64), and their squares.
    fn flow_cells(&self, py: Python<'_>) -> PyResult<Option<CellsTuple>> {
        call(py, "Histogram.flow_cells", || {
            Ok(self.lock().flow_cells()?.map(cells_tuple))
        })
    }

    /// A new histogram: the sum of both, or a ValueError when their binnings differ.
    fn merge(&self, py: Python<'_>, other: PyRef<'_, PyHistogram>) -> PyResult<PyHistogram> {
        let other: &PyHistogram = &other;
        call(py, "Histogram.merge", || {
            // Copied one at a time: `other` may be `self`, whose lock is not reentrant.
            let theirs = other.lock().try_clone()?;
            let mut merged = self.lock().try_clone()?;
            merged.merge(&theirs)?;
            Ok(PyHistogram::new_from(merged))
        })
    }

    /// The same binning, device and dtype, with every count zero.
    fn empty_like(&self, py: Python<'_>) -> PyResult<PyHistogram> {
        call(py, "Histogram.empty_like", || {
            Ok(PyHistogram::new_from(self.lock().empty_like()?))
        })
    }

    /// An empty histogram of some of these axes, in their order: `(i, None)` keeps axis `i`,
    /// `(i, [j, ...])` cuts it to its edges at those indices; counts or sums of weights
    /// (`weighted`); the options and dtypes this one's.
    fn reshaped(
        &self,
        py: Python<'_>,
        axes: Vec<(usize, Option<Vec<usize>>)>,
        weighted: bool,
    ) -> PyResult<PyHistogram> {
        let storage = if weighted {
            Storage::Weight
        } else {
            Storage::Count
        };
        call(py, "Histogram.reshaped", || {
            Ok(PyHistogram::new_from(self.lock().reshaped(&axes, storage)?))
        })
    }

    /// Counts per cell, row-major: UInt64, or Float64 sums of weights.
    fn counts(&self, py: Python<'_>) -> PyResult<PySeries> {
        call(py, "Histogram.counts", || {
            let name = "count".into();
            Ok(PySeries(match self.lock().counts() {
                Counts::Exact(c) => UInt64Chunked::from_vec(name, alloc::copied(c)?).into_series(),
                Counts::Weighted(s) => {
                    Float64Chunked::from_vec(name, alloc::copied(s)?).into_series()
                }
            }))
        })
    }

    /// Sums of squared weights per cell (Float64), or None for a counting histogram.
    fn squared_weights(&self, py: Python<'_>) -> PyResult<Option<PySeries>> {
        call(py, "Histogram.squared_weights", || {
            self.lock()
                .squared_weights()
                .map(|q| {
                    let q = alloc::copied(q)?;
                    Ok(PySeries(
                        Float64Chunked::from_vec("squares".into(), q).into_series(),
                    ))
                })
                .transpose()
        })
    }

    /// The edges of `axis` as Float64 (float32 edges widened exactly).
    fn edges(&self, py: Python<'_>, axis: usize) -> PyResult<PySeries> {
        call(py, "Histogram.edges", || {
            let h = self.lock();
            if axis >= h.axes().len() {
                return Err(HistError::InvalidArgument(format!(
                    "axis {axis} of a histogram of {} axes",
                    h.axes().len()
                )));
            }
            let edges = h.edges(axis)?;
            Ok(PySeries(
                Float64Chunked::from_vec("edges".into(), edges).into_series(),
            ))
        })
    }

    /// The expression's Struct rows, named `name` (n-D fields named by `axis_names`).
    #[pyo3(signature = (name, axis_names, density=false))]
    fn to_series(
        &self,
        py: Python<'_>,
        name: &str,
        axis_names: Vec<String>,
        density: bool,
    ) -> PyResult<PySeries> {
        let names: Vec<&str> = axis_names.iter().map(String::as_str).collect();
        call(py, "Histogram.to_series", || {
            Ok(PySeries(self.lock().to_series(name, &names, density)?))
        })
    }

    /// The state as bytes (pickle protocol, floats exact), for `from_bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let bytes = call(py, "Histogram.to_bytes", || {
            let h = self.lock();
            // The state and its pickle each hold the counts once more (serde_pickle allocates
            // infallibly): check there is room first.
            let cells = h.len().saturating_mul(8);
            alloc::ensure_available(cells.saturating_mul(3))?;
            serde_pickle::to_vec(&*h, Default::default())
                .map_err(|e| HistError::Internal(format!("serializing a Histogram: {e}")))
        })?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, state: &[u8]) -> PyResult<PyHistogram> {
        call(py, "Histogram.from_bytes", || {
            crate::accumulator::from_pickle(state).map(PyHistogram::new_from)
        })
    }

    /// The rows fills saw and those not counted: (rows, null, nan, underflow, overflow,
    /// underflow weight, overflow weight, their squared weights).
    fn flow(&self, py: Python<'_>) -> PyResult<FlowTuple> {
        call(py, "Histogram.flow", || Ok(flow_tuple(self.lock().flow())))
    }

    /// The number of bins of each axis.
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        call(py, "Histogram.shape", || Ok(self.lock().shape()))
    }

    /// "left" or "right".
    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<&'static str> {
        call(py, "Histogram.closed", || {
            Ok(match self.lock().options().closed {
                crate::Closed::Left => "left",
                crate::Closed::Right => "right",
            })
        })
    }

    #[getter]
    fn weighted(&self, py: Python<'_>) -> PyResult<bool> {
        call(py, "Histogram.weighted", || Ok(self.lock().is_weighted()))
    }

    /// The Polars dtype the first fill fixed on each axis (e.g. "Float32"), None before any.
    #[getter]
    fn dtypes(&self, py: Python<'_>) -> PyResult<Vec<Option<String>>> {
        call(py, "Histogram.dtypes", || {
            let h = self.lock();
            Ok((0..h.axes().len())
                .map(|i| h.dtype(i).map(|d| format!("{d:?}")))
                .collect())
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        call(py, "Histogram.__repr__", || Ok(self.lock().to_string()))
    }
}

/// A fill's columns and weights in GPU memory, from the sample the wrapper made.
fn device_fill(
    sample: &PyDeviceSample,
    squared_weights: Option<u64>,
) -> PyResult<(Vec<crate::DeviceArray>, Option<DeviceWeights>)> {
    if sample.dims.iter().any(|d| d.stride != 1) {
        return Err(PyValueError::new_err(
            "Histogram.fill reads contiguous arrays in GPU memory, one per axis",
        ));
    }
    let columns = sample.dims.iter().map(|d| d.array).collect();
    let weights = match (sample.weights, squared_weights) {
        (Some(values), Some(squares)) => Some(DeviceWeights { values, squares }),
        (None, None) => None,
        _ => {
            return Err(PyValueError::new_err(
                "a weighted fill of GPU arrays gives the weights and their squares",
            ))
        }
    };
    Ok((columns, weights))
}

/// Counts from Python: UInt64 exact counts, else Float64 sums of weights.
fn counts_of(series: &Series) -> Result<Counts, HistError> {
    Ok(match series.dtype() {
        DataType::UInt64 => Counts::Exact(values_of(series.u64()?)?),
        _ => Counts::Weighted(values_of(series.f64()?)?),
    })
}

/// The values of a column without nulls, copied out of its chunks.
fn values_of<T>(column: &ChunkedArray<T>) -> Result<Vec<T::Native>, HistError>
where
    T: PolarsNumericType,
{
    if column.null_count() > 0 {
        return Err(HistError::InvalidArgument(
            "the contents of a histogram hold no null".into(),
        ));
    }
    let mut values = alloc::with_capacity(column.len())?;
    for chunk in column.downcast_iter() {
        values.extend_from_slice(chunk.values());
    }
    Ok(values)
}

/// A flow as Python reads it: (rows, null, nan, underflow, overflow, underflow weight, overflow
/// weight, their squared weights).
type FlowTuple = (u64, u64, u64, u64, u64, f64, f64, f64, f64);
/// Flow cells as Python reads them: the counts (or sums of weights) and their squares.
type CellsTuple = (PySeries, Option<PySeries>);
type FilledTuple = (PySeries, Option<PySeries>, FlowTuple, Option<CellsTuple>);

/// Counts as a Series named `name` (moved, not copied: a million are 8 MB).
fn counts_series(name: &str, counts: Counts) -> PySeries {
    PySeries(match counts {
        Counts::Exact(c) => UInt64Chunked::from_vec(name.into(), c).into_series(),
        Counts::Weighted(s) => Float64Chunked::from_vec(name.into(), s).into_series(),
    })
}

fn squares_series(squares: Option<Vec<f64>>) -> Option<PySeries> {
    squares.map(|q| PySeries(Float64Chunked::from_vec("squares".into(), q).into_series()))
}

fn cells_tuple(cells: FlowCells) -> CellsTuple {
    (
        counts_series("flow", cells.counts),
        squares_series(cells.squares),
    )
}

/// A fill's counts, squared weights, flow and flow cells (several axes).
fn filled_tuple(filled: crate::accumulator::Filled) -> FilledTuple {
    (
        counts_series("count", filled.counts),
        squares_series(filled.squares),
        flow_tuple(&filled.flow),
        filled.cells.map(cells_tuple),
    )
}

fn flow_tuple(f: &crate::accumulator::Flow) -> FlowTuple {
    (
        f.rows,
        f.null,
        f.nan,
        f.underflow,
        f.overflow,
        f.underflow_weight,
        f.overflow_weight,
        f.underflow_squares,
        f.overflow_squares,
    )
}
