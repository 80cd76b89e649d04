//! The histograms as Polars expressions, for lazy queries written in Rust (the `lazy` feature):
//! methods on `Expr` through [`GpuHistExt`], with the output of the Python plugin's.
//!
//! ```
//! use polars::prelude::*;
//! use polars_gpu_hist::lazy::GpuHistExt;
//! use polars_gpu_hist::{Bins, HistogramOptions};
//!
//! let df = df!("g" => [1, 1, 2], "x" => [0.1, 0.7, 0.4]).unwrap();
//! let options = HistogramOptions::default().bins(Bins::Count(2)).range(0.0, 1.0);
//! let per_group = df
//!     .lazy()
//!     .group_by_stable([col("g")])
//!     .agg([col("x").gpu_hist().histogram(options)])
//!     .collect()
//!     .unwrap();
//! // One list of bins per group.
//! assert_eq!(per_group.column("x").unwrap().dtype().inner_dtype().unwrap().is_struct(), true);
//! ```
//!
//! Each expression sees its whole input at once: in `select`/`with_columns` the whole column,
//! in `group_by(..).agg(..)` each group (a List of bins per group). `.by(keys)` does every
//! group in one pass instead, from a `select`.

use polars::prelude::*;

use crate::options::{HistogramDdOptions, HistogramOptions};

/// Histograms as methods of an expression: `col("x").gpu_hist().histogram(options)`, with
/// `.weights(expr)` and `.by(expr)` before it where wanted.
pub trait GpuHistExt {
    /// The histogram namespace of this expression.
    fn gpu_hist(self) -> GpuHistNameSpace;
}

impl GpuHistExt for Expr {
    fn gpu_hist(self) -> GpuHistNameSpace {
        GpuHistNameSpace {
            values: self,
            weights: None,
            by: None,
        }
    }
}

/// The histograms of one expression (see [`GpuHistExt`]).
#[must_use]
pub struct GpuHistNameSpace {
    values: Expr,
    weights: Option<Expr>,
    by: Option<Expr>,
}

impl GpuHistNameSpace {
    /// Weights of the same length: `count` becomes the sum of the weights in each bin
    /// (Float64); a null in a value or its weight skips the row.
    pub fn weights(mut self, weights: Expr) -> Self {
        self.weights = Some(weights);
        self
    }

    /// A group key: every group's histogram in one pass (see [`crate::histogram_by`]), the key
    /// as the Struct's first field. Groups share one binning.
    pub fn by(mut self, keys: Expr) -> Self {
        self.by = Some(keys);
        self
    }

    /// The histogram: a Struct column named like the expression, one row per bin (per group
    /// and bin with [`by`](Self::by)), with [`crate::histogram`]'s fields.
    pub fn histogram(self, options: HistogramOptions) -> Expr {
        match self.by {
            None => histogram(self.values, self.weights, options),
            Some(keys) => histogram_by(self.values, keys, self.weights, options),
        }
    }

    /// The n-D histogram of this expression and `others` (2 to 8 in all; see
    /// [`crate::histogramdd`]): a Struct column named like this one, one row per cell.
    /// [`by`](Self::by) does not apply to it (an error when the query is planned).
    pub fn histogramdd(
        self,
        others: impl IntoIterator<Item = Expr>,
        options: HistogramDdOptions,
    ) -> Expr {
        let columns: Vec<Expr> = std::iter::once(self.values).chain(others).collect();
        match self.by {
            None => histogramdd(columns, self.weights, options),
            Some(_) => {
                let refuse = || {
                    polars_err!(InvalidOperation: "`by` groups a 1-D histogram: call \
                        `histogram`, or make the key a dimension of `histogramdd`")
                };
                per_group(columns, move |_| Err(refuse()), move |_| Err(refuse()))
            }
        }
    }
}

/// The histogram of `values` (optionally weighted by `weights`, an expression of the same
/// length): a Struct column of [`crate::histogram`]'s fields, one row per bin.
fn histogram(values: Expr, weights: Option<Expr>, options: HistogramOptions) -> Expr {
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
fn histogram_by(
    values: Expr,
    keys: Expr,
    weights: Option<Expr>,
    options: HistogramOptions,
) -> Expr {
    let weighted = weights.is_some();
    let density = options.density;
    let inputs: Vec<Expr> = [values, keys].into_iter().chain(weights).collect();
    per_group(
        inputs,
        move |columns| {
            Ok(crate::histogram_by(
                &columns[0],
                &columns[1],
                columns.get(2),
                &options,
            )?)
        },
        move |fields| {
            let x = &fields[0];
            let dtype = crate::histogram_by_dtype(x.dtype(), &fields[1], weighted, density)?;
            Ok(Field::new(x.name().clone(), dtype))
        },
    )
}

/// The n-D histogram of `columns` (1 to 8), optionally weighted (see [`crate::histogramdd`]):
/// a Struct column named like the first column, one row per cell.
fn histogramdd(columns: Vec<Expr>, weights: Option<Expr>, options: HistogramDdOptions) -> Expr {
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
    count: impl Fn(&[Column]) -> PolarsResult<Series> + Send + Sync + 'static,
    field: impl Fn(&[Field]) -> PolarsResult<Field> + Send + Sync + 'static,
) -> Expr {
    apply_multiple(
        move |columns: &mut [Column]| count(columns).map(Column::from),
        inputs,
        move |_schema: &Schema, fields: &[Field]| field(fields),
        false,
    )
}
