//! The histograms as Polars expressions, for lazy queries written in Rust (the `lazy` feature):
//! the same functions the Python plugin registers, with the same output.
//!
//! ```
//! use polars::prelude::*;
//! use polars_gpu_hist::{lazy, Bins, HistogramOptions};
//!
//! let df = df!("g" => [1, 1, 2], "x" => [0.1, 0.7, 0.4]).unwrap();
//! let options = HistogramOptions { bins: Bins::Count(2), range: Some((0.0.into(), 1.0.into())), ..Default::default() };
//! let per_group = df
//!     .lazy()
//!     .group_by_stable([col("g")])
//!     .agg([lazy::histogram(col("x"), None, options)])
//!     .collect()
//!     .unwrap();
//! // One list of bins per group.
//! assert_eq!(per_group.column("x").unwrap().dtype().inner_dtype().unwrap().is_struct(), true);
//! ```
//!
//! Each expression sees its whole input at once: in `select`/`with_columns` the whole column,
//! in `group_by(..).agg(..)` each group (a List of bins per group). `histogram_by` does every
//! group in one pass instead, from a `select`.

use polars::prelude::*;

use crate::options::{HistogramDdOptions, HistogramOptions};

/// The histogram of `values` (optionally weighted by `weights`, an expression of the same
/// length): a Struct column of [`crate::histogram`]'s fields, one row per bin.
pub fn histogram(values: Expr, weights: Option<Expr>, options: HistogramOptions) -> Expr {
    let weighted = weights.is_some();
    let density = options.density;
    let inputs: Vec<Expr> = std::iter::once(values).chain(weights).collect();
    per_group(
        inputs,
        move |columns| Ok(crate::histogram(&columns[0], columns.get(1), &options)?),
        move |fields| {
            let x = &fields[0];
            let dtype = crate::histogram_dtype(x.dtype(), weighted, density)?;
            Ok(Field::new(x.name().clone(), dtype))
        },
    )
}

/// Every group's histogram of `values` in one pass, groups named by `keys` (see
/// [`crate::histogram_by`]): the key is the Struct's first field, then the bins.
pub fn histogram_by(
    values: Expr,
    keys: Expr,
    weights: Option<Expr>,
    options: HistogramOptions,
) -> Expr {
    histogram_by_keys(values, vec![keys], weights, options)
}

/// Every group's histogram of `values` in one pass, a group being a combination of the values
/// of `keys` (see [`crate::histogram_by_keys`]): one field per key, then the bins.
pub fn histogram_by_keys(
    values: Expr,
    keys: Vec<Expr>,
    weights: Option<Expr>,
    options: HistogramOptions,
) -> Expr {
    let weighted = weights.is_some();
    let density = options.density;
    let n_keys = keys.len();
    let inputs: Vec<Expr> = std::iter::once(values).chain(keys).chain(weights).collect();
    per_group(
        inputs,
        move |columns| {
            Ok(crate::histogram_by_keys(
                &columns[0],
                &columns[1..=n_keys],
                columns.get(n_keys + 1),
                &options,
            )?)
        },
        move |fields| {
            let x = &fields[0];
            let keys = &fields[1..=n_keys];
            let dtype = crate::histogram_by_keys_dtype(x.dtype(), keys, weighted, density)?;
            Ok(Field::new(x.name().clone(), dtype))
        },
    )
}

/// The n-D histogram of `columns` (1 to 8), optionally weighted (see [`crate::histogramdd`]):
/// a Struct column named like the first column, one row per cell.
pub fn histogramdd(columns: Vec<Expr>, weights: Option<Expr>, options: HistogramDdOptions) -> Expr {
    let dims = columns.len();
    let weighted = weights.is_some();
    let density = options.density;
    let planned = options.clone();
    let inputs: Vec<Expr> = columns.into_iter().chain(weights).collect();
    per_group(
        inputs,
        move |columns| {
            Ok(crate::histogramdd(
                &columns[..dims],
                columns.get(dims),
                &options,
            )?)
        },
        move |fields| {
            // Checked when the query is planned, not only when it runs.
            crate::api::histdd::check_dims(dims, &planned)?;
            let dtype = crate::histogramdd_dtype(&fields[..dims], weighted, density)?;
            Ok(Field::new(fields[0].name().clone(), dtype))
        },
    )
}

/// A function of the whole input (or of each group under `agg`) whose output has its own
/// length: Polars calls it with the materialized inputs.
fn per_group(
    inputs: Vec<Expr>,
    count: impl Fn(&[Series]) -> PolarsResult<Series> + Send + Sync + 'static,
    field: impl Fn(&[Field]) -> PolarsResult<Field> + Send + Sync + 'static,
) -> Expr {
    apply_multiple(
        move |columns: &mut [Column]| {
            let series: Vec<Series> = columns
                .iter()
                .map(|c| c.as_materialized_series().clone())
                .collect();
            count(&series).map(Column::from)
        },
        inputs,
        move |_schema: &Schema, fields: &[Field]| field(fields),
        false,
    )
}
