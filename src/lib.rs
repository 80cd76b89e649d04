//! Histograms of Polars columns with counts identical to `numpy.histogram`, on all CPU cores.
//!
//! ```
//! use polars::prelude::*;
//! use polars_gpu_hist::{histogram_frame, Bins, HistogramOptions};
//!
//! let x = Series::new("x".into(), [0.0, 1.0, 2.0, 3.0, f64::NAN]);
//! let options = HistogramOptions { bins: Bins::Count(3), ..Default::default() };
//! let hist = histogram_frame(&x, None, &options).unwrap();
//! let counts: Vec<u64> = hist.column("count").unwrap().u64().unwrap().into_no_null_iter().collect();
//! assert_eq!(counts, [1, 1, 2]); // numpy: the last bin is closed, NaN is not counted
//! ```
//!
//! The bin rules live in [`bins`]; backends only evaluate them.

pub mod bins;
pub mod cpu;
pub mod error;
pub mod input;
pub mod output;
#[cfg(feature = "python")]
mod python;

use polars::prelude::*;
use serde::{Deserialize, Serialize};

pub use bins::{BinSpec, Bins, Closed};
pub use error::{HistError, HistResult};

/// Where a histogram is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    /// The fastest available backend for the input.
    #[default]
    Auto,
    Cpu,
    Gpu,
}

/// The arguments of a histogram, as `pl.col(..).gpu_hist.histogram(...)` takes them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistogramOptions {
    /// A number of equal-width bins, or strictly increasing edges.
    pub bins: Bins,
    /// Lower and upper edge for `Bins::Count`; the data's [min, max] when `None`.
    pub range: Option<(f64, f64)>,
    /// numpy's density: `count / bin width / total`.
    pub density: bool,
    pub closed: Closed,
    pub device: Device,
}

/// The histogram of `values` (optionally weighted) as a Struct Series named like `values`, one
/// row per bin with fields `bin_start`, `bin_end` and `count`.
pub fn histogram(
    values: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> PolarsResult<Series> {
    Ok(compute(values, weights, options)?)
}

/// [`histogram`] as a DataFrame with columns `bin_start`, `bin_end` and `count`.
pub fn histogram_frame(
    values: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> PolarsResult<DataFrame> {
    let hist = histogram(values, weights, options)?;
    let fields = hist.struct_()?.fields_as_series();
    DataFrame::new_infer_height(fields.into_iter().map(Column::from).collect())
}

/// The dtype [`histogram`] returns for a column of `input` dtype.
pub fn histogram_dtype(input: &DataType, weighted: bool, density: bool) -> HistResult<DataType> {
    input::value_kind(input)?;
    Ok(output::struct_dtype(input, weighted, density))
}

fn compute(
    values: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> HistResult<Series> {
    let kind = input::value_kind(values.dtype())?;
    let weights = weights.map(|w| input::weights_f64(values, w)).transpose()?;
    if options.device == Device::Gpu {
        return Err(HistError::Gpu(
            "device=\"gpu\" was asked for, but this build has no GPU backend available".into(),
        ));
    }
    with_physical!(values, |ca: T| {
        let column = input::Column::<T>::new(ca, weights.as_ref());
        let spec = BinSpec::resolve(&options.bins, options.range, options.closed, kind, || {
            input::extremes(&column)
        })?;
        let counts = cpu::histogram(&column, &spec);
        Ok(output::to_struct(
            values.name().clone(),
            &spec,
            counts,
            options.density,
            values.dtype(),
        )?)
    })
}
