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
    Ok(())
}
