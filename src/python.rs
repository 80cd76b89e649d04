//! The pyo3-polars expression plugin and the native module `polars_gpu_hist._internal`.

use polars::prelude::*;
use pyo3::prelude::*;
use pyo3_polars::derive::polars_expr;
use pyo3_polars::PolarsAllocator;

use crate::HistogramOptions;

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

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
