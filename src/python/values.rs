//! The typed values the Python layer hands the native calls: a device sample made once from the
//! arrays' `__cuda_array_interface__`, where a call's results go, the parsed options (whose
//! type says whether a call is 1-D or n-D), and a histogram's data extremes. Each is checked
//! when it is made, so a renamed field or a reordered argument fails where the value is built.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::{to_py, unpickle};
use crate::accumulator::DataExtremes;
use crate::api::device::{one_dtype_and_length, Target};
use crate::{DType, DeviceArray, DeviceDim};

/// Arrays in GPU memory of one dtype and length, as the dimensions of one sample, and the
/// address of their float64 weights.
#[pyclass(module = "polars_gpu_hist._internal", name = "DeviceSample", frozen)]
pub(crate) struct PyDeviceSample {
    pub(crate) dims: Vec<DeviceDim>,
    pub(crate) weights: Option<u64>,
}

impl PyDeviceSample {
    /// The one array of a 1-D call: a sample of several dimensions (or a strided column) is a
    /// caller's mistake, never a histogram of its first column.
    pub(crate) fn one(&self) -> PyResult<DeviceArray> {
        match &self.dims[..] {
            [dim] if dim.stride == 1 => Ok(dim.array),
            _ => Err(PyValueError::new_err(format!(
                "a 1-D histogram takes one contiguous array in GPU memory, got {} dimensions",
                self.dims.len()
            ))),
        }
    }
}

#[pymethods]
impl PyDeviceSample {
    /// `columns`: per dimension (address, rows, array-interface type string, stride in values:
    /// 1 for an array of its own, `d` for column `j` of a C-contiguous `(n, d)` array).
    #[new]
    #[pyo3(signature = (columns, weights=None))]
    fn new(columns: Vec<(u64, u64, String, u64)>, weights: Option<u64>) -> PyResult<Self> {
        let dims = columns
            .into_iter()
            .map(|(ptr, len, typestr, stride)| {
                let dtype = DType::from_typestr(&typestr)?;
                Ok(DeviceDim {
                    array: DeviceArray { ptr, len, dtype },
                    stride,
                })
            })
            .collect::<crate::error::HistResult<Vec<_>>>()
            .map_err(to_py)?;
        one_dtype_and_length(dims.iter().map(|d| d.array)).map_err(to_py)?;
        Ok(PyDeviceSample { dims, weights })
    }

    /// The rows every dimension has.
    #[getter]
    fn rows(&self) -> u64 {
        self.dims[0].array.len
    }

    /// The number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.dims.len()
    }
}

/// Where an axis's edges go: a device address and the dtype to write there.
#[pyclass(module = "polars_gpu_hist._internal", name = "EdgeTarget", frozen)]
pub(crate) struct PyEdgeTarget {
    ptr: u64,
    dtype: DType,
}

#[pymethods]
impl PyEdgeTarget {
    #[new]
    fn new(ptr: u64, typestr: &str) -> PyResult<Self> {
        let dtype = DType::from_typestr(typestr).map_err(to_py)?;
        Ok(PyEdgeTarget { ptr, dtype })
    }
}

/// Arrays the caller allocated for a call's results, and the stream to queue on (see
/// `crate::api::device::Target`).
#[pyclass(module = "polars_gpu_hist._internal", name = "DeviceTarget", frozen)]
pub(crate) struct PyDeviceTarget(pub(crate) Target);

#[pymethods]
impl PyDeviceTarget {
    /// `stream`: the caller's (0: the legacy default); `counts`: the address of `cells` counts;
    /// `edges`: per axis, where its edges go (None: not wanted).
    #[new]
    fn new(
        stream: u64,
        counts: u64,
        cells: usize,
        edges: Vec<Option<PyRef<'_, PyEdgeTarget>>>,
    ) -> Self {
        let edges = edges
            .into_iter()
            .map(|e| e.map(|e| (e.ptr, e.dtype)))
            .collect();
        PyDeviceTarget(Target {
            stream,
            counts,
            cells,
            edges,
        })
    }
}

/// The options of a 1-D histogram, parsed once from the wrapper's pickle (src/options.rs).
#[pyclass(
    module = "polars_gpu_hist._internal",
    name = "HistogramOptions",
    frozen
)]
pub(crate) struct PyHistogramOptions(pub(crate) crate::HistogramOptions);

#[pymethods]
impl PyHistogramOptions {
    #[new]
    fn new(pickled: &[u8]) -> PyResult<Self> {
        Ok(PyHistogramOptions(unpickle(pickled)?))
    }
}

/// The options of an n-D histogram, parsed once from the wrapper's pickle (src/options.rs).
#[pyclass(
    module = "polars_gpu_hist._internal",
    name = "HistogramDdOptions",
    frozen
)]
pub(crate) struct PyHistogramDdOptions(pub(crate) crate::HistogramDdOptions);

#[pymethods]
impl PyHistogramDdOptions {
    #[new]
    fn new(pickled: &[u8]) -> PyResult<Self> {
        Ok(PyHistogramDdOptions(unpickle(pickled)?))
    }
}

/// Either options: the type decides whether a device call is 1-D or n-D.
#[derive(FromPyObject)]
pub(crate) enum AnyOptions<'py> {
    One(PyRef<'py, PyHistogramOptions>),
    Dd(PyRef<'py, PyHistogramDdOptions>),
}

/// The extremes of all of a column's data (numpy's automatic range), as a streaming first pass
/// found them: values of the column's own kind, exact, not text.
#[pyclass(module = "polars_gpu_hist._internal", name = "DataExtremes", frozen)]
pub(crate) struct PyDataExtremes(pub(crate) DataExtremes);

#[pymethods]
impl PyDataExtremes {
    /// No values counted.
    #[staticmethod]
    fn empty() -> Self {
        PyDataExtremes(DataExtremes::Empty)
    }

    /// The extremes of a Float16 column (exact in float32): numpy's float16 bins.
    #[staticmethod]
    fn float16(lo: f32, hi: f32) -> Self {
        PyDataExtremes(DataExtremes::Float16(lo, hi))
    }

    #[staticmethod]
    fn float32(lo: f32, hi: f32) -> Self {
        PyDataExtremes(DataExtremes::Float32(lo, hi))
    }

    #[staticmethod]
    fn float64(lo: f64, hi: f64) -> Self {
        PyDataExtremes(DataExtremes::Float64(lo, hi))
    }

    /// The extremes of an integer (or temporal) column's physical values.
    #[staticmethod]
    fn integer(lo: i128, hi: i128) -> PyResult<Self> {
        if lo > hi {
            return Err(PyValueError::new_err(format!(
                "the extremes of a sample are its (min, max), got min {lo} > max {hi}"
            )));
        }
        Ok(PyDataExtremes(DataExtremes::Integer(
            lo.to_string(),
            hi.to_string(),
        )))
    }

    fn __repr__(&self) -> String {
        format!("DataExtremes({:?})", self.0)
    }
}
