//! The pyo3-polars expression plugin and the native module `polars_gpu_hist._internal`.

use polars::prelude::*;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3_polars::derive::polars_expr;
use pyo3_polars::{PolarsAllocator, PySeries};

use crate::{HistogramDdOptions, HistogramOptions};

// Memory crosses the plugin boundary both ways: allocate with Polars' allocator.
#[global_allocator]
static ALLOC: PolarsAllocator = PolarsAllocator::new();

fn histogram_field(inputs: &[Field], options: HistogramOptions) -> PolarsResult<Field> {
    let x = &inputs[0];
    let dtype = crate::histogram_dtype(x.dtype(), inputs.len() > 1, options.density)?;
    Ok(Field::new(x.name().clone(), dtype))
}

/// `inputs`: the column, then optionally its weights.
#[polars_expr(output_type_func_with_kwargs=histogram_field)]
fn histogram(inputs: &[Series], kwargs: HistogramOptions) -> PolarsResult<Series> {
    crate::histogram(&inputs[0], inputs.get(1), &kwargs)
}

fn histogram_by_field(inputs: &[Field], options: HistogramOptions) -> PolarsResult<Field> {
    let x = &inputs[0];
    let first_row = Field::new(inputs[1].name().clone(), IDX_DTYPE);
    let dtype =
        crate::nd::histogram_by_dtype(x.dtype(), &first_row, inputs.len() > 2, options.density)?;
    Ok(Field::new(x.name().clone(), dtype))
}

/// `inputs`: the column, the group key's physical values, then optionally the weights. The key
/// field holds each group's first row; the wrapper gathers the key there.
#[polars_expr(output_type_func_with_kwargs=histogram_by_field)]
fn histogram_by(inputs: &[Series], kwargs: HistogramOptions) -> PolarsResult<Series> {
    use crate::nd::{compute_by, KeyField};
    Ok(compute_by(
        &inputs[0],
        &inputs[1],
        inputs.get(2),
        &kwargs,
        KeyField::FirstRow,
    )?)
}

/// `histogramdd`'s kwargs: the options, and whether the last input is the weights.
#[derive(serde::Deserialize)]
struct DdKwargs {
    options: HistogramDdOptions,
    weighted: bool,
}

impl DdKwargs {
    fn dims<'a, T>(&self, inputs: &'a [T]) -> (&'a [T], Option<&'a T>) {
        match self.weighted {
            true => (&inputs[..inputs.len() - 1], inputs.last()),
            false => (inputs, None),
        }
    }
}

fn histogramdd_field(inputs: &[Field], kwargs: DdKwargs) -> PolarsResult<Field> {
    let (dims, weights) = kwargs.dims(inputs);
    let dtype = crate::nd::histogramdd_dtype(dims, weights.is_some(), kwargs.options.density)?;
    Ok(Field::new(inputs[0].name().clone(), dtype))
}

/// `inputs`: the 2 to 8 columns, then optionally the weights.
#[polars_expr(output_type_func_with_kwargs=histogramdd_field)]
fn histogramdd(inputs: &[Series], kwargs: DdKwargs) -> PolarsResult<Series> {
    let (dims, weights) = kwargs.dims(inputs);
    crate::histogramdd(dims, weights, &kwargs.options)
}

/// Options pickled by the Python wrapper, as Polars pickles a plugin's kwargs: floats stay exact.
fn options(pickled: &[u8]) -> PyResult<HistogramOptions> {
    serde_pickle::from_slice(pickled, Default::default())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

fn to_py(e: crate::HistError) -> PyErr {
    match e {
        crate::HistError::InvalidArgument(_) | crate::HistError::TooManyBins { .. } => {
            PyValueError::new_err(e.to_string())
        }
        crate::HistError::UnsupportedDtype(_) => PyTypeError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// Whether a GPU can be used (a driver, a device and a context).
#[pyfunction]
fn gpu_available() -> bool {
    crate::gpu::available()
}

/// The GPU's properties as the plan sees them, or why there is no GPU.
#[pyfunction]
fn gpu_info() -> String {
    match crate::gpu::get() {
        Ok(gpu) => format!("{:?}", gpu.props),
        Err(e) => e.to_string(),
    }
}

/// Which backend and kernel would run, and why (see `polars_gpu_hist.explain`).
#[pyfunction]
#[pyo3(signature = (dtype, rows, pickled_options, weighted, on_device))]
fn explain(
    dtype: &str,
    rows: u64,
    pickled_options: &[u8],
    weighted: bool,
    on_device: bool,
) -> PyResult<String> {
    let opts = options(pickled_options)?;
    crate::explain(dtype, rows, &opts, weighted, on_device).map_err(to_py)
}

/// The histogram of a device array given by address, length and array-interface type string:
/// (the Struct Series, the plan as text, the kernels' time in ms).
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
    let opts = options(pickled_options)?;
    let dtype = crate::DataTypeTag::from_typestr(typestr).map_err(to_py)?;
    let values = crate::DeviceArray { ptr, len, dtype };
    let (series, plan, kernel_ms) = py
        .detach(|| crate::histogram_device(name, values, weights_ptr, &opts))
        .map_err(to_py)?;
    Ok((PySeries(series), plan.to_string(), kernel_ms))
}

/// The n-D histogram of arrays in GPU memory, each given by address and stride (in values),
/// all of `len` rows of one array-interface type: (the Struct Series, the plan, the kernels' ms).
#[pyfunction]
#[pyo3(signature = (names, ptrs, strides, len, typestr, pickled_options, weights_ptr=None))]
#[allow(clippy::too_many_arguments)]
fn histogramdd_cuda(
    py: Python<'_>,
    names: Vec<String>,
    ptrs: Vec<u64>,
    strides: Vec<u32>,
    len: u64,
    typestr: &str,
    pickled_options: &[u8],
    weights_ptr: Option<u64>,
) -> PyResult<(PySeries, String, f32)> {
    let opts: HistogramDdOptions = serde_pickle::from_slice(pickled_options, Default::default())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let dtype = crate::DataTypeTag::from_typestr(typestr).map_err(to_py)?;
    let dims: Vec<crate::DeviceDim> = ptrs
        .iter()
        .zip(&strides)
        .map(|(&ptr, &stride)| crate::DeviceDim {
            array: crate::DeviceArray { ptr, len, dtype },
            stride,
        })
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (series, plan, kernel_ms) = py
        .detach(|| crate::histogramdd_device(&names, &dims, weights_ptr, &opts))
        .map_err(to_py)?;
    Ok((PySeries(series), plan.to_string(), kernel_ms))
}

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_info, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(histogramdd_cuda, m)?)?;
    m.add_class::<PyHistogram>()?;
    Ok(())
}

/// The options of `polars_gpu_hist.Histogram`, pickled by the wrapper.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AccumulatorOptions {
    bins: crate::Bins,
    #[serde(default)]
    range: Option<(f64, f64)>,
    /// `(kind, min, max)` of all the data (range="auto"): kind "float32", "float64", "integer"
    /// or "empty", the extremes as exact decimal text.
    #[serde(default)]
    data_range: Option<(String, String, String)>,
    #[serde(default)]
    closed: crate::Closed,
    #[serde(default)]
    weighted: bool,
    #[serde(default)]
    device: crate::Device,
    #[serde(default)]
    kernel: Option<crate::gpu::Family>,
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
#[pyclass(module = "polars_gpu_hist._internal", name = "Histogram")]
struct PyHistogram(crate::Histogram);

#[pymethods]
impl PyHistogram {
    #[new]
    fn new(pickled_options: &[u8]) -> PyResult<Self> {
        let o: AccumulatorOptions = serde_pickle::from_slice(pickled_options, Default::default())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let h = match (&o.data_range, o.range, &o.bins) {
            (Some(extremes), None, &crate::Bins::Count(n)) => {
                crate::Histogram::with_data_range(n, data_extremes(extremes)?, o.closed, o.weighted)
            }
            (Some(_), _, _) => {
                return Err(PyValueError::new_err(
                    "a range from the data needs an int `bins` and no `range`",
                ))
            }
            (None, range, bins) => crate::Histogram::new(bins.clone(), range, o.closed, o.weighted),
        }
        .map_err(to_py)?;
        Ok(PyHistogram(h.with_device(o.device).with_kernel(o.kernel)))
    }

    /// Counts a host Series (and sums its weights) into the histogram.
    #[pyo3(signature = (values, weights=None))]
    fn fill(
        &mut self,
        py: Python<'_>,
        values: PySeries,
        weights: Option<PySeries>,
    ) -> PyResult<()> {
        let h = &mut self.0;
        py.detach(|| h.fill(&values.0, weights.as_ref().map(|w| &w.0)))
            .map_err(to_py)
    }

    /// Counts an array in GPU memory, given by address, length and array-interface type string.
    #[pyo3(signature = (ptr, len, typestr, weights_ptr=None))]
    fn fill_cuda(
        &mut self,
        py: Python<'_>,
        ptr: u64,
        len: u64,
        typestr: &str,
        weights_ptr: Option<u64>,
    ) -> PyResult<()> {
        let dtype = crate::DataTypeTag::from_typestr(typestr).map_err(to_py)?;
        let values = crate::DeviceArray { ptr, len, dtype };
        let h = &mut self.0;
        py.detach(|| h.fill_device(values, weights_ptr))
            .map_err(to_py)
    }

    /// A new histogram: the sum of both, or a ValueError when their binnings differ.
    fn merge(&self, other: PyRef<'_, PyHistogram>) -> PyResult<PyHistogram> {
        let mut merged = self.0.clone();
        merged.merge(&other.0).map_err(to_py)?;
        Ok(PyHistogram(merged))
    }

    /// The same binning, device and dtype, with every count zero.
    fn empty_like(&self) -> PyHistogram {
        PyHistogram(self.0.empty_like())
    }

    /// Counts per bin: UInt64, or Float64 sums of weights.
    fn counts(&self) -> PySeries {
        PySeries(match self.0.counts() {
            crate::cpu::Counts::Exact(c) => Series::new("count".into(), c),
            crate::cpu::Counts::Weighted(s) => Series::new("count".into(), s),
        })
    }

    /// The bin edges as Float64 (float32 edges widened exactly).
    fn edges(&self) -> PySeries {
        PySeries(Series::new("edges".into(), self.0.edges()))
    }

    /// The expression's Struct rows (bin_start, bin_end, count), named `name`.
    #[pyo3(signature = (name, density=false))]
    fn to_series(&self, name: &str, density: bool) -> PyResult<PySeries> {
        Ok(PySeries(self.0.to_series(name, density).map_err(to_py)?))
    }

    /// The state as bytes (pickle protocol, floats exact), for `from_bytes`.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let bytes = serde_pickle::to_vec(&self.0, Default::default())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<PyHistogram> {
        serde_pickle::from_slice(state, Default::default())
            .map(PyHistogram)
            .map_err(|e| PyValueError::new_err(format!("not a serialized Histogram: {e}")))
    }

    /// The number of bins.
    #[getter]
    fn n_bins(&self) -> usize {
        self.0.len()
    }

    #[getter]
    fn weighted(&self) -> bool {
        self.0.is_weighted()
    }

    /// The Polars dtype the first fill fixed (e.g. "Float32"), or None before any fill.
    #[getter]
    fn dtype(&self) -> Option<String> {
        self.0.dtype().map(|d| format!("{d:?}"))
    }

    fn __repr__(&self) -> String {
        self.0.to_string()
    }
}
