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
//! in `group_by(..).agg(..)` each group (a List of bins per group). `.by([keys])` does every
//! group in one pass instead, from a `select`.

use polars::prelude::*;

use crate::options::{HistogramDdOptions, HistogramOptions};

/// Histograms as methods of an expression: `col("x").gpu_hist().histogram(options)`, with
/// `.weights(expr)` and `.by([keys])` before it where wanted.
pub trait GpuHistExt {
    /// The histogram namespace of this expression.
    fn gpu_hist(self) -> GpuHistNameSpace;
}

impl GpuHistExt for Expr {
    fn gpu_hist(self) -> GpuHistNameSpace {
        GpuHistNameSpace {
            values: self,
            weights: None,
            by: Vec::new(),
        }
    }
}

/// The histograms of one expression (see [`GpuHistExt`]).
#[must_use]
pub struct GpuHistNameSpace {
    values: Expr,
    weights: Option<Expr>,
    by: Vec<Expr>,
}

impl GpuHistNameSpace {
    /// Weights of the same length: `count` becomes the sum of the weights in each bin
    /// (Float64); a null in a value or its weight skips the row.
    pub fn weights(mut self, weights: Expr) -> Self {
        self.weights = Some(weights);
        self
    }

    /// Group keys, as `group_by` takes them (`[col("g")]`, `[col("g"), col("h")]`): every
    /// group's histogram in one pass (see [`crate::histogram_by_keys`]), a group being a
    /// combination of key values; one field per key (a Struct key: per field) before the bins.
    /// Groups share one binning.
    pub fn by<E: AsRef<[IE]>, IE: Into<Expr> + Clone>(mut self, keys: E) -> Self {
        self.by = keys.as_ref().iter().cloned().map(Into::into).collect();
        self
    }

    /// The histogram: a Struct column named like the expression, one row per bin (per group
    /// and bin with [`by`](Self::by)), with [`crate::histogram`]'s fields.
    pub fn histogram(self, options: HistogramOptions) -> Expr {
        if self.by.is_empty() {
            histogram(self.values, self.weights, options)
        } else {
            histogram_by(self.values, self.by, self.weights, options)
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
        if self.by.is_empty() {
            histogramdd(columns, self.weights, options)
        } else {
            let refuse = || {
                polars_err!(InvalidOperation: "`by` groups a 1-D histogram: call \
                    `histogram`, or make the key a dimension of `histogramdd`")
            };
            per_group(columns, move |_| Err(refuse()), move |_| Err(refuse()))
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

/// Every group's histogram of `values` in one pass, a group being a combination of the values
/// of `keys` (see [`crate::histogram_by_keys`]): one field per key, then the bins.
fn histogram_by(
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
