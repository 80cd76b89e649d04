//! The entry points for arrays already in GPU memory: the `histogram` and `histogramdd` of a
//! device sample as a Struct Series, and the numpy drop-in's counts left on the device (in
//! arrays this module allocates, or in the caller's). Whether a call is 1-D or n-D follows from
//! the options type that arrives.

use polars::prelude::*;
use pyo3::prelude::*;
use pyo3_polars::PySeries;

use super::call_as;
use super::values::{AnyOptions, PyDeviceSample, PyDeviceTarget};
use crate::api::device;
use crate::boundary::python::Api;

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(histogram_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_cuda_counts, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_cuda_into, m)?)?;
    m.add_class::<PyDeviceArray>()?;
    Ok(())
}

/// The histogram of a device sample, one column named per dimension: (the Struct Series, the
/// report as text, the kernels' time in ms).
#[pyfunction]
fn histogram_cuda(
    py: Python<'_>,
    names: Vec<String>,
    sample: PyRef<'_, PyDeviceSample>,
    options: AnyOptions<'_>,
) -> PyResult<(PySeries, String, f32)> {
    let (dims, weights) = (&sample.dims, sample.weights);
    let (series, report) = match options {
        AnyOptions::One(options) => {
            let (opts, values) = (&options.0, sample.one()?);
            let [name] = &names[..] else {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "a 1-D histogram takes one name",
                ));
            };
            call_as(py, Api::Polars, "histogram of a device array", || {
                crate::histogram_device(name, values, weights, opts)
            })?
        }
        AnyOptions::Dd(options) => {
            let opts = &options.0;
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            call_as(py, Api::Polars, "histogramdd of device arrays", || {
                crate::histogramdd_device(&names, dims, weights, opts)
            })?
        }
    };
    let ms = report.kernel_ms.unwrap_or(0.0);
    Ok((PySeries(series), report.to_string(), ms))
}

/// An array left in GPU memory (counts, edges), shown to CuPy and PyTorch through
/// `__cuda_array_interface__`; the memory lives as long as this object (and the arrays made from
/// it, which keep it).
#[pyclass(module = "polars_gpu_hist._internal", name = "DeviceArray", frozen)]
struct PyDeviceArray {
    buffer: std::mem::ManuallyDrop<crate::gpu::DeviceBuffer>,
    ptr: u64,
    device: i32,
}

impl Drop for PyDeviceArray {
    fn drop(&mut self) {
        // Freed wherever Python lets go of it: freeing binds the buffer's GPU, and the thread's
        // current device (CuPy's, PyTorch's) must stay as it was.
        let _current = crate::gpu::device::KeepCurrent::now();
        // SAFETY: dropped once, here, and never used after.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.buffer) };
    }
}

impl PyDeviceArray {
    fn new(
        buffer: crate::gpu::DeviceBuffer,
        stream: &std::sync::Arc<cudarc::driver::CudaStream>,
        device: i32,
    ) -> Self {
        let ptr = buffer.ptr(stream);
        PyDeviceArray {
            buffer: std::mem::ManuallyDrop::new(buffer),
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
/// report); `edge_typestrs`: per axis, the dtype numpy gives its edges (None: not wanted, e.g.
/// explicit edges the caller holds).
#[pyfunction]
fn histogram_cuda_counts(
    py: Python<'_>,
    sample: PyRef<'_, PyDeviceSample>,
    options: AnyOptions<'_>,
    edge_typestrs: Vec<Option<String>>,
) -> PyResult<(PyDeviceArray, AxisEdges, String)> {
    let (dims, weights) = (&sample.dims, sample.weights);
    let result = match options {
        AnyOptions::Dd(options) => {
            let opts = &options.0;
            call_as(py, Api::Numpy, "histogramdd of device arrays", || {
                device::histogramdd_on_device(dims, weights, opts)
            })?
        }
        AnyOptions::One(options) => {
            let (opts, values) = (&options.0, sample.one()?);
            call_as(py, Api::Numpy, "histogram of a device array", || {
                device::histogram_on_device(values, weights, opts)
            })?
        }
    };
    let ordinal = result.ordinal;
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
                call_as(py, Api::Numpy, "edges on the device", || {
                    result.device_edges(axis, dtype)
                })?
            }
            _ => None,
        };
        edges.push(match on_device {
            Some(buffer) => (
                Some(PyDeviceArray::new(buffer, &result.stream, ordinal)),
                None,
            ),
            None => {
                let edges = call_as(py, Api::Numpy, "edges", || spec.edges_f64())?;
                let host = Float64Chunked::from_vec("edges".into(), edges);
                (None, Some(PySeries(host.into_series())))
            }
        });
    }
    let report = result.report.to_string();
    let counts = PyDeviceArray::new(result.counts.into(), &result.stream, ordinal);
    Ok((counts, edges, report))
}

/// The device form of numpy's histogram into arrays the caller allocated (`target`), queued on
/// the caller's stream, not waited for. Returns, per axis, the edges it could not make on the
/// device (float64, on the host: the caller copies them over) and the report.
#[pyfunction]
fn histogram_cuda_into(
    py: Python<'_>,
    sample: PyRef<'_, PyDeviceSample>,
    options: AnyOptions<'_>,
    target: PyRef<'_, PyDeviceTarget>,
) -> PyResult<(Vec<Option<PySeries>>, String)> {
    let (dims, weights, target) = (&sample.dims, sample.weights, &target.0);
    let filled = match options {
        AnyOptions::Dd(options) => {
            let opts = &options.0;
            call_as(py, Api::Numpy, "histogramdd of device arrays", || {
                device::histogramdd_into(dims, weights, opts, target)
            })?
        }
        AnyOptions::One(options) => {
            let (opts, values) = (&options.0, sample.one()?);
            call_as(py, Api::Numpy, "histogram of a device array", || {
                device::histogram_into(values, weights, opts, target)
            })?
        }
    };
    let host_edges = filled
        .host_edges
        .into_iter()
        .map(|e| e.map(|v| PySeries(Float64Chunked::from_vec("edges".into(), v).into_series())))
        .collect();
    Ok((host_edges, filled.report.to_string()))
}
