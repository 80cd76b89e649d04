//! `by=`: every group's histogram in one pass, as a 2-D job whose first axis is the group.

use polars::prelude::*;

use crate::api::axes::{histogram_axis, readable, weights_f64, HostAxis};
use crate::api::by_keys;
use crate::api::groups::{group_axis, Look};
use crate::boundary::guarded;
use crate::engine::{self, Placement, Report};
use crate::error::{HistError, HistResult};
use crate::input::HostColumn;
use crate::job::{Axis, FlowBins, HostRows, Job, Rows, Rule};
use crate::options::HistogramOptions;
use crate::output::{self, AxisOut};

/// Every group's histogram of `values` in one pass: `keys` (any column Polars can group by but
/// floats, the same length) names the group of each row; a Struct key groups by its fields, as
/// [`histogram_by_keys`] does. One binning serves all groups: `bins` and `range` as in
/// [`crate::histogram`], the range from the whole column when not given. Rows are the groups in
/// order of first appearance (a null key is a group), each with its bins: fields `<key>`,
/// `bin_start`, `bin_end`, `count`. Each group's rows equal [`crate::histogram`] of that
/// group's values with the same binning (`density` normalizes per group).
pub fn histogram_by(
    values: &Column,
    keys: &Column,
    weights: Option<&Column>,
    options: &HistogramOptions,
) -> HistResult<Series> {
    histogram_by_keys(values, std::slice::from_ref(keys), weights, options)
}

/// [`histogram_by`] with several keys (each a column, or a Struct read as its fields): a group
/// is a combination of key values, a null a value of its own in each key. The result has one
/// field per key, in order, then the bins; groups in order of first appearance, as
/// `group_by(keys, maintain_order=True)` orders them.
pub fn histogram_by_keys(
    values: &Column,
    keys: &[Column],
    weights: Option<&Column>,
    options: &HistogramOptions,
) -> HistResult<Series> {
    let keys: Vec<Series> = keys
        .iter()
        .map(|key| key.as_materialized_series().clone())
        .collect();
    histogram_by_keys_series(
        values.as_materialized_series(),
        &keys,
        weights.map(Column::as_materialized_series),
        options,
    )
}

/// [`histogram_by_keys`] of Series (what the Python plugin is handed).
pub(crate) fn histogram_by_keys_series(
    values: &Series,
    keys: &[Series],
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> HistResult<Series> {
    Ok(guarded("histogram_by", || {
        histogram_by_with_report(values, keys, weights, options)
    })?
    .0)
}

/// The Struct dtype of a `by=` histogram: the key, then `bin_start`, `bin_end`, `count`.
pub fn histogram_by_dtype(
    values: &DataType,
    key: &Field,
    weighted: bool,
    density: bool,
) -> HistResult<DataType> {
    histogram_by_keys_dtype(values, std::slice::from_ref(key), weighted, density)
}

/// The Struct dtype of [`histogram_by_keys`]: one field per key, then the bins' fields.
pub fn histogram_by_keys_dtype(
    values: &DataType,
    keys: &[Field],
    weighted: bool,
    density: bool,
) -> HistResult<DataType> {
    crate::dtype::reading(values)?;
    let mut fields = by_keys::component_fields(keys)?;
    for key in &fields {
        by_keys::check_key(key.name(), key.dtype())?;
    }
    by_keys::check_names(fields.iter().map(|f| f.name().as_str()))?;
    fields.extend(output::bin_fields(values));
    Ok(output::struct_dtype(fields, weighted, density))
}

/// [`histogram_by_keys`], with the engine's report of what ran.
pub(crate) fn histogram_by_with_report(
    values: &Series,
    keys: &[Series],
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> HistResult<(Series, Report)> {
    let keys = by_keys::components(keys)?;
    for key in &keys {
        by_keys::check_key(key.name(), key.dtype())?;
        if key.len() != values.len() {
            return Err(HistError::InvalidArgument(format!(
                "the `by` key {:?} has {} rows but the column has {}: they must have the same \
                 length",
                key.name().as_str(),
                key.len(),
                values.len()
            )));
        }
    }
    by_keys::check_names(keys.iter().map(|k| k.name().as_str()))?;
    let clock = crate::gpu::Clock::start();
    // One key is grouped as it is; several by one integer per combination of their values.
    let grouping = match by_keys::need_combining(&keys) {
        true => by_keys::combined(&keys)?,
        false => keys[0].clone(),
    };
    let combined = clock.lap();
    let (physical, reading) = readable(values)?;
    let weights = weights.map(|w| weights_f64(values.len(), w)).transpose()?;
    let mut strayed = None;
    for look in [Look::FirstRows, Look::AllRows] {
        let (key_column, groups, firsts) = group_axis(&grouping, look)?;
        let grouped = clock.lap();
        let rows = HostRows::new(
            vec![HostColumn::new(&key_column)?, HostColumn::new(&physical)?],
            weights.as_ref().map(HostColumn::new).transpose()?,
        )?;
        let spec = histogram_axis(
            options,
            values.dtype(),
            reading.kind(),
            weights.is_some(),
            &HostAxis {
                rows: &rows,
                axis: 1,
            },
        )?;
        let axes = vec![
            Axis {
                rule: Rule::Groups(groups),
                flow: FlowBins::None,
            },
            Axis::bins(spec, options.flow),
        ];
        let job = Job::new(axes, Rows::Host(rows))?;
        let placement = Placement::asked(options.device, options.kernel);
        let resolved = clock.lap();
        let (counts, report) = engine::count(&job, &placement)?;
        if matches!(&job.axes[0].rule, Rule::Groups(g) if g.keys.strayed()) {
            // The first rows did not show every key: these counts are not the answer.
            strayed = Some(grouped + resolved + clock.lap());
            continue;
        }
        clock.lap();
        // Polars gathers the keys of the groups infallibly: check the room first.
        crate::alloc::ensure_available(firsts.len().saturating_mul(16 * keys.len()))?;
        let firsts = IdxCa::from_vec("firsts".into(), firsts);
        let out = [
            AxisOut::Group {
                keys: keys
                    .iter()
                    .map(|key| key.take(&firsts))
                    .collect::<PolarsResult<_>>()?,
            },
            AxisOut::bins(
                job.axes[1].spec().expect("a binned axis"),
                values.dtype().clone(),
                options.flow,
            ),
        ];
        let series = output::to_struct(values.name().clone(), &out, counts, options.density)?;
        let mut report = report.between(resolved, ("output", clock.lap()));
        report.phases.insert(0, ("groups", combined + grouped));
        if let Some(ms) = strayed {
            report
                .phases
                .insert(0, ("a count from the first rows' keys, redone", ms));
        }
        return Ok((series, report));
    }
    unreachable!("the groups of every row have no strays")
}

#[cfg(test)]
mod tests {
    use polars::prelude::*;

    use super::*;
    use crate::api::groups::FIRST_ROWS;
    use crate::job::GroupKeys;
    use crate::options::{Bins, Device};

    fn options() -> HistogramOptions {
        HistogramOptions {
            bins: Bins::Count(8),
            range: Some((0.0.into(), 1.0.into())),
            device: Device::Cpu,
            ..Default::default()
        }
    }

    /// `by=` of `keys` (Int64) against the same keys as strings, which are grouped by hashing
    /// every row: the same groups in the same order, the same counts.
    fn by_against_hashed(keys: Vec<i64>) -> Report {
        let n = keys.len();
        let values: Vec<f64> = (0..n).map(|i| (i * 7919 % 1000) as f64 / 1000.0).collect();
        let values = Series::new("x".into(), values);
        let keys = Series::new("g".into(), keys);
        let (got, report) =
            histogram_by_with_report(&values, std::slice::from_ref(&keys), None, &options())
                .expect("by");
        let strings = keys.cast(&DataType::String).expect("strings");
        let (hashed, _) =
            histogram_by_with_report(&values, &[strings], None, &options()).expect("by");
        let (got, hashed) = (got.struct_().unwrap(), hashed.struct_().unwrap());
        for field in ["bin_start", "count"] {
            assert!(got
                .field_by_name(field)
                .unwrap()
                .equals(&hashed.field_by_name(field).unwrap()));
        }
        let got_keys = got
            .field_by_name("g")
            .unwrap()
            .cast(&DataType::String)
            .unwrap();
        assert!(got_keys.equals(&hashed.field_by_name("g").unwrap()));
        report
    }

    fn redone(report: &Report) -> bool {
        report
            .phases
            .iter()
            .any(|(what, _)| what.contains("redone"))
    }

    #[test]
    fn keys_that_the_first_rows_show_are_grouped_from_them() {
        let n = 3 * FIRST_ROWS;
        let keys: Vec<i64> = (0..n as i64).map(|i| (i * 31) % 1000 - 500).collect();
        let physical = Series::new("g".into(), keys.clone());
        let (_, groups, firsts) = group_axis(&physical, Look::FirstRows).expect("groups");
        assert!(matches!(
            groups.keys,
            GroupKeys::Table {
                strays: Some(_),
                ..
            }
        ));
        assert_eq!((groups.count, firsts.len()), (1000, 1000));
        assert!(!redone(&by_against_hashed(keys)));
    }

    #[test]
    fn a_key_the_first_rows_did_not_show_redoes_the_count_from_every_row() {
        // Rows the spread sample does not read: just past the first rows, and just before the
        // last sampled row.
        let n = 3 * FIRST_ROWS;
        for (row, stray) in [
            (FIRST_ROWS + 1, 1000),
            (FIRST_ROWS + 2, -501),
            (n - 2, i64::MIN),
            (n - 3, i64::MAX),
        ] {
            let mut keys: Vec<i64> = (0..n as i64).map(|i| (i * 31) % 1000 - 500).collect();
            keys[row] = stray;
            assert!(redone(&by_against_hashed(keys)), "key {stray} at row {row}");
        }
    }

    #[test]
    fn first_rows_that_do_not_show_every_key_of_their_span_group_from_every_row() {
        let n = 3 * FIRST_ROWS;
        // Sorted keys: the first rows hold one key, the spread sample finds others.
        let sorted: Vec<i64> = (0..n as i64).map(|i| i / 1000).collect();
        // A gap: 0 and 2 but never 1 in the first rows.
        let gap: Vec<i64> = (0..n as i64).map(|i| 2 * (i % 2)).collect();
        // A span too wide for the first rows.
        let wide: Vec<i64> = (0..n as i64).map(|i| (i * 7) % 1_000_000).collect();
        for keys in [sorted, gap, wide] {
            let physical = Series::new("g".into(), keys.clone());
            let (_, groups, _) = group_axis(&physical, Look::FirstRows).expect("groups");
            assert!(matches!(groups.keys, GroupKeys::Table { strays: None, .. }));
            assert!(!redone(&by_against_hashed(keys)));
        }
    }
}
