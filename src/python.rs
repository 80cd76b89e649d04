//! The pyo3-polars expression plugin and the native module `polars_gpu_hist._internal`. Every
//! entry point returns an ordinary exception: a panic or a failed allocation is caught here, never
//! unwound into Python or Polars.

use polars::prelude::*;
use pyo3::exceptions::{PyMemoryError, PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3_polars::{PolarsAllocator, PySeries};

use crate::error::{guarded, HistError, HistResult, Spelling};
use crate::options::{HistogramDdOptions, HistogramOptions};

mod bundle;
mod expressions;
mod floor;
mod hist;
mod hist_labels;
mod histogram;
mod plugin;

// Memory crosses the plugin boundary both ways: allocate with Polars' allocator.
#[global_allocator]
static ALLOC: PolarsAllocator = PolarsAllocator::new();

/// A Polars error worded for Python: the plugin's errors reach Python users.
fn for_python<T>(result: HistResult<T>) -> PolarsResult<T> {
    result.map_err(|e| e.into_polars(Spelling::Python))
}

/// Options pickled by the Python wrapper, as Polars pickles a plugin's kwargs: floats stay exact.
fn unpickle<T: serde::de::DeserializeOwned + Clone + 'static>(pickled: &[u8]) -> PyResult<T> {
    plugin::remembered::<T>(pickled)
        .map(|value| T::clone(&value))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The Python exception for an error of ours, in Python's words.
pub(crate) fn to_py(e: HistError) -> PyErr {
    let message = e.message(Spelling::Python);
    match e {
        HistError::InvalidArgument(_)
        | HistError::Argument { .. }
        | HistError::TooManyBins { .. } => PyValueError::new_err(message),
        HistError::UnsupportedDtype(_) => PyTypeError::new_err(message),
        HistError::Overflow => PyOverflowError::new_err(message),
        HistError::OutOfMemory(_) => PyMemoryError::new_err(message),
        HistError::Interrupted => interrupted(),
        _ => PyRuntimeError::new_err(message),
    }
}

/// The exception for a call Ctrl-C stopped: Python's own, from its SIGINT handler (which has a
/// pending signal to run; running it here means it does not fire again later), or
/// `KeyboardInterrupt` where that handler chose not to raise.
pub(crate) fn interrupted() -> PyErr {
    Python::attach(|py| match py.check_signals() {
        Err(e) => e,
        Ok(()) => pyo3::exceptions::PyKeyboardInterrupt::new_err(crate::error::INTERRUPTED),
    })
}

/// Runs `f` with the GIL released, every error (and panic) an ordinary exception.
pub(crate) fn call<T: Send>(
    py: Python<'_>,
    what: &str,
    f: impl FnOnce() -> HistResult<T> + Send,
) -> PyResult<T> {
    // Ctrl-C stops the call: chained again where a SIGINT handler installed since displaced ours.
    #[cfg(unix)]
    crate::interrupt::chain_sigint();
    py.detach(|| guarded(what, f)).map_err(to_py)
}

/// Raises the exception of a call Ctrl-C stopped (see [`interrupted`]): for the Python layer,
/// which meets the stop as the error Polars hands on.
#[pyfunction]
fn raise_interrupted() -> PyResult<()> {
    Err(interrupted())
}

/// `MemoryError` unless `nbytes` (an estimate of a whole step, held to half the machine's
/// memory) can be allocated now; the probe is freed at once. For the Python layer, before it
/// has Polars (whose allocations abort when they fail) build a result of a size it knows.
#[pyfunction]
fn ensure_room(nbytes: usize) -> PyResult<()> {
    crate::alloc::ensure_room(nbytes).map_err(to_py)
}

/// Chains the SIGINT action that stops long calls again where a handler installed since
/// displaced it (see `crate::interrupt::chain_sigint`): for the Python layer, as it builds an
/// expression that Polars runs later.
#[pyfunction]
fn watch_ctrl_c() {
    #[cfg(unix)]
    crate::interrupt::chain_sigint();
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

/// Which backend and kernel would run, and why (see `polars_gpu_hist.explain`). The dtype comes
/// as an empty Series of it: every dtype crosses as a Series, not every one as a dtype.
#[pyfunction]
#[pyo3(signature = (dtype, rows, pickled_options, weighted, location))]
fn explain(
    py: Python<'_>,
    dtype: PySeries,
    rows: u64,
    pickled_options: &[u8],
    weighted: bool,
    location: &str,
) -> PyResult<String> {
    let opts: HistogramOptions = unpickle(pickled_options)?;
    let location = match location {
        "host" => crate::Location::Host,
        "pinned" => crate::Location::Pinned,
        "device" => crate::Location::Device,
        other => return Err(PyValueError::new_err(format!("unknown location {other:?}"))),
    };
    call(py, "explain", || {
        crate::explain(dtype.0.dtype(), rows, &opts, weighted, location)
    })
}

/// The histogram of a host Series, the function the `histogram` plugin runs but without a query
/// around it: a frame, a plan and a collect cost more than counting a small array.
#[pyfunction]
#[pyo3(signature = (values, pickled_options, weights=None))]
fn histogram_series(
    py: Python<'_>,
    values: PySeries,
    pickled_options: &[u8],
    weights: Option<PySeries>,
) -> PyResult<PySeries> {
    let opts: HistogramOptions = unpickle(pickled_options)?;
    let weights = weights.map(|w| w.0);
    call(py, "histogram", || {
        crate::api::hist1d::histogram_series(&values.0, weights.as_ref(), &opts)
    })
    .map(PySeries)
}

/// The histogram of a device array given by address, length and array-interface type string:
/// (the Struct Series, the report as text, the kernels' time in ms).
#[pyfunction]
#[pyo3(signature = (name, ptr, len, typestr, pickled_options, weights_ptr=None))]
fn histogram_cuda(
    py: Python<'_>,
    name: &str,
    ptr: u64,
    len: u64,
    typestr: &str,
    pickled_options: &[u8],
    weights_ptr: Option<u64>,
) -> PyResult<(PySeries, String, f32)> {
    let opts: HistogramOptions = unpickle(pickled_options)?;
    let dtype = crate::DType::from_typestr(typestr).map_err(to_py)?;
    let values = crate::DeviceArray { ptr, len, dtype };
    let (series, report) = call(py, "histogram of a device array", || {
        crate::histogram_device(name, values, weights_ptr, &opts)
    })?;
    let ms = report.kernel_ms.unwrap_or(0.0);
    Ok((PySeries(series), report.to_string(), ms))
}

/// Device arrays, given by address and stride (in values), all of `len` rows of one type.
fn device_dims(
    ptrs: &[u64],
    strides: &[u64],
    len: u64,
    typestr: &str,
) -> PyResult<Vec<crate::DeviceDim>> {
    let dtype = crate::DType::from_typestr(typestr).map_err(to_py)?;
    Ok(ptrs
        .iter()
        .zip(strides)
        .map(|(&ptr, &stride)| crate::DeviceDim {
            array: crate::DeviceArray { ptr, len, dtype },
            stride,
        })
        .collect())
}

/// The n-D histogram of arrays in GPU memory: (the Struct Series, the report, the kernels' ms).
#[pyfunction]
#[pyo3(signature = (names, ptrs, strides, len, typestr, pickled_options, weights_ptr=None))]
#[allow(clippy::too_many_arguments)]
fn histogramdd_cuda(
    py: Python<'_>,
    names: Vec<String>,
    ptrs: Vec<u64>,
    strides: Vec<u64>,
    len: u64,
    typestr: &str,
    pickled_options: &[u8],
    weights_ptr: Option<u64>,
) -> PyResult<(PySeries, String, f32)> {
    let opts: HistogramDdOptions = unpickle(pickled_options)?;
    let dims = device_dims(&ptrs, &strides, len, typestr)?;
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (series, report) = call(py, "histogramdd of device arrays", || {
        crate::histogramdd_device(&names, &dims, weights_ptr, &opts)
    })?;
    let ms = report.kernel_ms.unwrap_or(0.0);
    Ok((PySeries(series), report.to_string(), ms))
}

/// An array left in GPU memory (counts, edges), shown to CuPy and PyTorch through
/// `__cuda_array_interface__`; the memory lives as long as this object (and the arrays made from
/// it, which keep it).
#[pyclass(module = "polars_gpu_hist._internal", name = "DeviceArray", frozen)]
struct PyDeviceArray {
    buffer: crate::gpu::DeviceBuffer,
    ptr: u64,
    device: i32,
}

impl PyDeviceArray {
    fn new(
        buffer: crate::gpu::DeviceBuffer,
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
        device: i32,
    ) -> Self {
        let ptr = buffer.ptr(stream);
        PyDeviceArray {
            buffer,
            ptr,
            device,
        }
    }
}

#[pymethods]
impl PyDeviceArray {
    #[getter]
    fn __cuda_array_interface__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("shape", (self.buffer.len(),))?;
        d.set_item("typestr", self.buffer.typestr())?;
        d.set_item("data", (self.ptr, false))?;
        d.set_item("version", 3)?;
        // The values are complete (their stream has finished): no stream to wait on.
        d.set_item("stream", py.None())?;
        Ok(d)
    }

    /// The device ordinal the array is on.
    #[getter]
    fn device(&self) -> i32 {
        self.device
    }
}

/// Each axis's edges: made on the device in the dtype asked for, or else as float64 on the
/// host (or neither, where none were asked for).
type AxisEdges = Vec<(Option<PyDeviceArray>, Option<PySeries>)>;

/// The device form of numpy's histogram: (counts left on the device, each axis's edges, the
/// report); `dd`: the arrays are the dimensions of `histogramdd`; `edge_typestrs`: per axis, the
/// dtype numpy gives its edges (None: not wanted, e.g. explicit edges the caller holds).
#[pyfunction]
#[pyo3(signature = (ptrs, strides, len, typestr, pickled_options, dd, edge_typestrs, weights_ptr=None))]
#[allow(clippy::too_many_arguments)]
fn histogram_cuda_counts(
    py: Python<'_>,
    ptrs: Vec<u64>,
    strides: Vec<u64>,
    len: u64,
    typestr: &str,
    pickled_options: &[u8],
    dd: bool,
    edge_typestrs: Vec<Option<String>>,
    weights_ptr: Option<u64>,
) -> PyResult<(PyDeviceArray, AxisEdges, String)> {
    let dims = device_dims(&ptrs, &strides, len, typestr)?;
    let result = if dd {
        let opts: HistogramDdOptions = unpickle(pickled_options)?;
        call(py, "histogramdd of device arrays", || {
            crate::api::device::histogramdd_on_device(&dims, weights_ptr, &opts)
        })?
    } else {
        let opts: HistogramOptions = unpickle(pickled_options)?;
        call(py, "histogram of a device array", || {
            crate::api::device::histogram_on_device(dims[0].array, weights_ptr, &opts)
        })?
    };
    let device = crate::gpu::get().map_err(to_py)?.ordinal();
    let mut edges = Vec::with_capacity(result.specs.len());
    for (axis, spec) in result.specs.iter().enumerate() {
        let wanted = match edge_typestrs.get(axis).cloned().flatten() {
            Some(t) => t,
            None => {
                edges.push((None, None));
                continue;
            }
        };
        // Only float32 and float64 edges are made on the device.
        let on_device = match crate::DType::from_typestr(&wanted) {
            Ok(dtype @ (crate::DType::F32 | crate::DType::F64)) => {
                call(py, "edges on the device", || {
                    result.device_edges(axis, dtype)
                })?
            }
            _ => None,
        };
        edges.push(match on_device {
            Some(buffer) => (
                Some(PyDeviceArray::new(buffer, &result.stream, device)),
                None,
            ),
            None => {
                let edges = call(py, "edges", || spec.edges_f64())?;
                let host = Float64Chunked::from_vec("edges".into(), edges);
                (None, Some(PySeries(host.into_series())))
            }
        });
    }
    let report = result.report.to_string();
    let counts = PyDeviceArray::new(result.counts.into(), &result.stream, device);
    Ok((counts, edges, report))
}

/// The device form of numpy's histogram into arrays the caller allocated: counts (`cells` of
/// them, u64 or f64 sums) at `counts_ptr`, each axis's edges where `edge_targets` names an
/// address and a dtype; queued on the caller's `stream` (0: the legacy default), not waited
/// for. Returns, per axis, the edges it could not make on the device (float64, on the host:
/// the caller copies them over) and the report.
#[pyfunction]
#[pyo3(signature = (ptrs, strides, len, typestr, pickled_options, dd, stream, counts_ptr, cells, edge_targets, weights_ptr=None))]
#[allow(clippy::too_many_arguments)]
fn histogram_cuda_into(
    py: Python<'_>,
    ptrs: Vec<u64>,
    strides: Vec<u64>,
    len: u64,
    typestr: &str,
    pickled_options: &[u8],
    dd: bool,
    stream: u64,
    counts_ptr: u64,
    cells: usize,
    edge_targets: Vec<Option<(u64, String)>>,
    weights_ptr: Option<u64>,
) -> PyResult<(Vec<Option<PySeries>>, String)> {
    let dims = device_dims(&ptrs, &strides, len, typestr)?;
    let edges = edge_targets
        .into_iter()
        .map(|t| {
            t.map(|(ptr, typestr)| Ok((ptr, crate::DType::from_typestr(&typestr)?)))
                .transpose()
        })
        .collect::<HistResult<Vec<_>>>()
        .map_err(to_py)?;
    let target = crate::api::device::Target {
        stream,
        counts: counts_ptr,
        cells,
        edges,
    };
    let filled = if dd {
        let opts: HistogramDdOptions = unpickle(pickled_options)?;
        call(py, "histogramdd of device arrays", || {
            crate::api::device::histogramdd_into(&dims, weights_ptr, &opts, &target)
        })?
    } else {
        let opts: HistogramOptions = unpickle(pickled_options)?;
        call(py, "histogram of a device array", || {
            crate::api::device::histogram_into(dims[0].array, weights_ptr, &opts, &target)
        })?
    };
    let host_edges = filled
        .host_edges
        .into_iter()
        .map(|e| e.map(|v| PySeries(Float64Chunked::from_vec("edges".into(), v).into_series())))
        .collect();
    Ok((host_edges, filled.report.to_string()))
}

/// Keeps a column in GPU memory (see `polars_gpu_hist.pin`); returns its device bytes.
#[pyfunction]
fn pin(py: Python<'_>, series: PySeries) -> PyResult<usize> {
    call(py, "pin", || {
        let (physical, _) = crate::api::axes::readable(&series.0)?;
        crate::gpu::pin::pin(crate::gpu::get()?, &physical)
    })
}

/// Drops a column's pin; whether it had one.
#[pyfunction]
fn unpin(py: Python<'_>, series: PySeries) -> PyResult<bool> {
    call(py, "unpin", || {
        let (physical, _) = crate::api::axes::readable(&series.0)?;
        crate::gpu::pin::unpin(&physical)
    })
}

/// Whether a column is pinned.
#[pyfunction]
fn is_pinned(py: Python<'_>, series: PySeries) -> PyResult<bool> {
    call(py, "is_pinned", || {
        let (physical, _) = crate::api::axes::readable(&series.0)?;
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
        crate::api::by::histogram_by_with_report(&values.0, &keys.0, None, &opts)
    })?;
    Ok((PySeries(series), report.to_string()))
}

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Ctrl-C stops long calls between row blocks; Python's handler still runs after ours.
    #[cfg(unix)]
    crate::interrupt::chain_sigint();
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(raise_interrupted, m)?)?;
    m.add_function(wrap_pyfunction!(ensure_room, m)?)?;
    m.add_function(wrap_pyfunction!(watch_ctrl_c, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_info, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_series, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(histogramdd_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_cuda_counts, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_cuda_into, m)?)?;
    m.add_function(wrap_pyfunction!(pin, m)?)?;
    m.add_function(wrap_pyfunction!(unpin, m)?)?;
    m.add_function(wrap_pyfunction!(unpin_all, m)?)?;
    m.add_function(wrap_pyfunction!(is_pinned, m)?)?;
    m.add_function(wrap_pyfunction!(pinned, m)?)?;
    bundle::register(m)?;
    m.add_function(wrap_pyfunction!(estimate_from_extremes, m)?)?;
    m.add_function(wrap_pyfunction!(_proof_walks, m)?)?;
    m.add_function(wrap_pyfunction!(_histogram_by_report, m)?)?;
    m.add_class::<PyDeviceArray>()?;
    m.add_class::<histogram::PyHistogram>()?;
    Ok(())
}
