//! `histogramdd`: the n-D histogram of 1 to 8 columns, as `numpy.histogramdd`.

use polars::prelude::*;

use crate::api::axes::{numpy_sample, resolve_axis, weights_f64, EdgeOrder, Flavour, HostAxis};
use crate::boundary::guarded;
use crate::dtype;
use crate::engine::{self, Placement, Report};
use crate::error::{HistError, HistResult};
use crate::input::HostColumn;
use crate::job::{Axis, HostRows, Job, Rows};
use crate::options::HistogramDdOptions;
use crate::output::{self, AxisOut};

/// The most dimensions an n-D histogram may have.
pub const MAX_DIMS: usize = crate::job::MAX_RANK;

/// The n-D histogram of `columns` (1 to 8 of the same length), optionally weighted, as a Struct
/// Series named like the first column: one row per cell in row-major order, with fields
/// `<column>_start` and `<column>_end` for each column and `count`. Counts equal
/// `numpy.histogramdd` of the sample the columns make (numpy's common dtype), over the rows with
/// no null; NaN values are not counted.
pub fn histogramdd(
    columns: &[Column],
    weights: Option<&Column>,
    options: &HistogramDdOptions,
) -> HistResult<Series> {
    let series: Vec<Series> = columns
        .iter()
        .map(|c| c.as_materialized_series().clone())
        .collect();
    histogramdd_series(
        &series,
        weights.map(Column::as_materialized_series),
        options,
    )
}

/// [`histogramdd`] of Series (what the Python plugin is handed).
pub(crate) fn histogramdd_series(
    columns: &[Series],
    weights: Option<&Series>,
    options: &HistogramDdOptions,
) -> HistResult<Series> {
    Ok(guarded("histogramdd", || {
        histogramdd_with_report(columns, weights, options)
    })?
    .0)
}

/// The Struct dtype of `histogramdd` over columns with these fields.
pub fn histogramdd_dtype(inputs: &[Field], weighted: bool, density: bool) -> HistResult<DataType> {
    let mut fields = Vec::with_capacity(2 * inputs.len());
    for f in inputs {
        dtype::reading(f.dtype())?;
        let edges = output::edge_dtype(f.dtype());
        fields.push(Field::new(
            format!("{}_start", f.name()).into(),
            edges.clone(),
        ));
        fields.push(Field::new(format!("{}_end", f.name()).into(), edges));
    }
    Ok(output::struct_dtype(fields, weighted, density))
}

/// The checks every n-D entry point makes on the number of dimensions and per-dimension options.
pub(crate) fn check_dims(d: usize, options: &HistogramDdOptions) -> HistResult<()> {
    if !(1..=MAX_DIMS).contains(&d) {
        return Err(HistError::InvalidArgument(format!(
            "histogramdd takes 1 to {MAX_DIMS} columns, got {d}"
        )));
    }
    if options.bins.len() != d {
        return Err(HistError::InvalidArgument(format!(
            "`bins` has {} entries for {d} columns: give one per column, or one for all",
            options.bins.len()
        )));
    }
    if !(options.range.is_empty() || options.range.len() == d) {
        return Err(HistError::argument(|s| {
            format!(
                "`range` has {} entries for {d} columns: give {}",
                options.range.len(),
                s.dd_ranges()
            )
        }));
    }
    Ok(())
}

/// [`histogramdd`], with the engine's report of what ran.
pub(crate) fn histogramdd_with_report(
    columns: &[Series],
    weights: Option<&Series>,
    options: &HistogramDdOptions,
) -> HistResult<(Series, Report)> {
    let d = columns.len();
    check_dims(d, options)?;
    let rows = columns[0].len();
    for (i, c) in columns.iter().enumerate() {
        if c.len() != rows {
            return Err(HistError::InvalidArgument(format!(
                "columns must have the same length: {:?} has {} rows, {:?} has {rows}",
                c.name().as_str(),
                c.len(),
                columns[0].name().as_str()
            )));
        }
        if columns[..i].iter().any(|b| b.name() == c.name()) {
            return Err(HistError::InvalidArgument(format!(
                "column {:?} appears twice: give each dimension its own name (`.alias`)",
                c.name().as_str()
            )));
        }
    }
    // numpy stacks the columns into one sample of their common dtype: read each column as that.
    let (physical, kind) = numpy_sample(columns)?;
    let weights = weights.map(|w| weights_f64(rows, w)).transpose()?;
    let host_rows = HostRows::new(
        physical
            .iter()
            .map(HostColumn::new)
            .collect::<HistResult<_>>()?,
        weights.as_ref().map(HostColumn::new).transpose()?,
    )?;
    let range = |i: usize| options.range.get(i).copied().flatten();
    let axes = (0..d)
        .map(|i| {
            let spec = resolve_axis(
                &options.bins[i],
                range(i),
                options.closed,
                columns[i].dtype(),
                kind,
                Flavour::Histogramdd,
                EdgeOrder::of(options.repeated_edges),
                weights.is_some(),
                &HostAxis {
                    rows: &host_rows,
                    axis: i,
                },
            )?;
            Ok(Axis::bins(spec, options.flow))
        })
        .collect::<HistResult<Vec<_>>>()?;
    let job = Job::new(axes, Rows::Host(host_rows))?;
    let placement = Placement::asked(options.device, options.kernel);
    let (counts, report) = engine::count(&job, &placement)?;
    let out: Vec<AxisOut> = job
        .axes
        .iter()
        .zip(columns)
        .map(|(axis, c)| {
            AxisOut::named(
                c.name(),
                axis.spec().expect("binned axes"),
                c.dtype().clone(),
                options.flow,
            )
        })
        .collect();
    let series = output::to_struct(columns[0].name().clone(), &out, counts, options.density)?;
    Ok((series, report))
}
