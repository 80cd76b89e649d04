//! The floor of a plugin call, for benchmarks only (`benches/swaps.py`): a function that does no
//! work and returns one value (the input's length), so that the cost of crossing the plugin
//! boundary can be measured beside the real calls in the same run. Not part of the public API.

use polars::prelude::*;

use crate::python::plugin::plugin;

plugin!(
    _polars_plugin_field_bench_floor,
    _polars_plugin_bench_floor,
    FloorKwargs,
    floor_field,
    floor
);

/// No arguments (Polars sends no bytes for empty kwargs: the wrapper sends `noop`).
#[derive(serde::Deserialize)]
struct FloorKwargs {}

fn floor_field(inputs: &[Field], _: &FloorKwargs) -> PolarsResult<Field> {
    Ok(Field::new(inputs[0].name().clone(), IDX_DTYPE))
}

fn floor(inputs: &[Series], _: &FloorKwargs) -> PolarsResult<Series> {
    let x = &inputs[0];
    Ok(IdxCa::from_vec(x.name().clone(), vec![x.len() as IdxSize]).into_series())
}
