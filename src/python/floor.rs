//! The floor of a plugin call, for benchmarks only (`benches/swaps.py`): functions that do no
//! work, so that the cost of crossing the plugin boundary can be measured beside the real calls
//! in the same run. Not part of the public API.
//!
//! `bench_floor` returns one value (the input's length): the boundary itself; asked to, it
//! panics instead, so that tests see a panic cross the boundary as Polars' error.
//! `bench_floor_struct` returns `histogram`'s shape (a Struct of `bin_start`, `bin_end` and
//! `count`, `bins` rows of zeros), or with `hist` the shape of `hist` with both fields (a Struct
//! of `breakpoint`, `category` and `count`, the labels fixed strings): the boundary for that
//! output, counting nothing.

use polars::prelude::*;

use crate::output::{BIN_END, BIN_START, COUNT};
use crate::python::hist::{BREAKPOINT, CATEGORY};
use crate::python::plugin::plugin;

plugin!(
    _polars_plugin_field_bench_floor,
    _polars_plugin_bench_floor,
    FloorKwargs,
    floor_field,
    floor
);
plugin!(
    _polars_plugin_field_bench_floor_struct,
    _polars_plugin_bench_floor_struct,
    FloorStructKwargs,
    floor_struct_field,
    floor_struct
);

/// No arguments but the tests' `panic` (Polars sends no bytes for empty kwargs: the wrapper
/// sends `noop`).
#[derive(serde::Deserialize)]
struct FloorKwargs {
    #[serde(default)]
    panic: bool,
}

fn floor_field(inputs: &[Field], _: &FloorKwargs) -> PolarsResult<Field> {
    Ok(Field::new(inputs[0].name().clone(), IDX_DTYPE))
}

fn floor(inputs: &[Series], kwargs: &FloorKwargs) -> PolarsResult<Series> {
    assert!(!kwargs.panic, "the panic a boundary test asked for");
    let x = &inputs[0];
    Ok(IdxCa::from_vec(x.name().clone(), vec![x.len() as IdxSize]).into_series())
}

/// The number of rows of the Struct, and whose shape: `histogram`'s, or with `hist` that of
/// `hist` with both fields.
#[derive(serde::Deserialize)]
struct FloorStructKwargs {
    bins: usize,
    #[serde(default)]
    hist: bool,
}

fn floor_struct_dtype(kwargs: &FloorStructKwargs) -> DataType {
    DataType::Struct(match kwargs.hist {
        false => vec![
            Field::new(BIN_START.into(), DataType::Float64),
            Field::new(BIN_END.into(), DataType::Float64),
            Field::new(COUNT.into(), DataType::UInt64),
        ],
        true => vec![
            Field::new(BREAKPOINT.into(), DataType::Float64),
            Field::new(CATEGORY.into(), DataType::String),
            Field::new(COUNT.into(), IDX_DTYPE),
        ],
    })
}

fn floor_struct_field(inputs: &[Field], kwargs: &FloorStructKwargs) -> PolarsResult<Field> {
    Ok(Field::new(
        inputs[0].name().clone(),
        floor_struct_dtype(kwargs),
    ))
}

fn floor_struct(inputs: &[Series], kwargs: &FloorStructKwargs) -> PolarsResult<Series> {
    let n = kwargs.bins;
    let fields = match kwargs.hist {
        false => [
            Float64Chunked::from_vec(BIN_START.into(), vec![0.0; n]).into_series(),
            Float64Chunked::from_vec(BIN_END.into(), vec![0.0; n]).into_series(),
            UInt64Chunked::from_vec(COUNT.into(), vec![0; n]).into_series(),
        ],
        true => [
            Float64Chunked::from_vec(BREAKPOINT.into(), vec![0.0; n]).into_series(),
            StringChunked::from_iter_values(CATEGORY.into(), (0..n).map(|_| "(0.0, 0.0]"))
                .into_series(),
            IdxCa::from_vec(COUNT.into(), vec![0; n]).into_series(),
        ],
    };
    Ok(StructChunked::from_series(inputs[0].name().clone(), n, fields.iter())?.into_series())
}
