//! `histogram`: the 1-D histogram of a column (the rank-1 job).

use polars::prelude::*;

use crate::api::axes::{histogram_axis, readable, weights_f64, HostAxis};
use crate::boundary::guarded;
use crate::engine::{self, Placement, Report};
use crate::error::HistResult;
use crate::input::HostColumn;
use crate::job::{Axis, HostRows, Job, Rows};
use crate::options::HistogramOptions;
use crate::output::{self, AxisOut};

/// The histogram of `values` (optionally weighted) as a Struct Series named like `values`, one
/// row per bin with fields `bin_start`, `bin_end` and `count`: counts identical to
/// `numpy.histogram` (or, with `closed: Right`, to Polars' `hist`).
pub fn histogram(
    values: &Column,
    weights: Option<&Column>,
    options: &HistogramOptions,
) -> HistResult<Series> {
    histogram_series(
        values.as_materialized_series(),
        weights.map(Column::as_materialized_series),
        options,
    )
}

/// [`histogram`] of Series (what the Python plugin is handed).
pub(crate) fn histogram_series(
    values: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> HistResult<Series> {
    Ok(guarded("histogram", || {
        histogram_with_report(values, weights, options)
    })?
    .0)
}

/// [`histogram`] as a DataFrame with columns `bin_start`, `bin_end` and `count`.
pub fn histogram_frame(
    values: &Column,
    weights: Option<&Column>,
    options: &HistogramOptions,
) -> HistResult<DataFrame> {
    let hist = histogram(values, weights, options)?;
    let fields = hist.struct_()?.fields_as_series();
    Ok(DataFrame::new_infer_height(
        fields.into_iter().map(Column::from).collect(),
    )?)
}

/// The dtype [`histogram`] returns for a column of `input` dtype.
pub fn histogram_dtype(input: &DataType, weighted: bool, density: bool) -> HistResult<DataType> {
    crate::dtype::reading(input)?;
    Ok(output::struct_dtype(
        output::bin_fields(input),
        weighted,
        density,
    ))
}

/// [`histogram`], with the engine's report of what ran.
pub(crate) fn histogram_with_report(
    values: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> HistResult<(Series, Report)> {
    let (physical, reading) = readable(values)?;
    let weights = weights.map(|w| weights_f64(values.len(), w)).transpose()?;
    let rows = HostRows::new(
        vec![HostColumn::new(&physical)?],
        weights.as_ref().map(HostColumn::new).transpose()?,
    )?;
    let spec = histogram_axis(
        options,
        values.dtype(),
        reading.kind(),
        weights.is_some(),
        &HostAxis {
            rows: &rows,
            axis: 0,
        },
    )?;
    let job = Job::new(vec![Axis::bins(spec, options.flow)], Rows::Host(rows))?;
    let placement = Placement::asked(options.device, options.kernel);
    let (counts, report) = engine::count(&job, &placement)?;
    let spec = job.axes[0].spec().expect("a binned axis");
    let axes = [AxisOut::bins(spec, values.dtype().clone(), options.flow)];
    let series = output::to_struct(values.name().clone(), &axes, counts, options.density)?;
    Ok((series, report))
}
