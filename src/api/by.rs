//! `by=`: every group's histogram in one pass, as a 2-D job whose first axis is the group.

use polars::prelude::*;
use rayon::prelude::*;

use crate::api::axes::{histogram_axis, readable, weights_f64, HostAxis};
use crate::api::by_keys;
use crate::engine::{self, Placement, Report};
use crate::error::{guarded, HistError, HistResult};
use crate::input::{HostColumn, Value};
use crate::job::{Axis, FlowBins, GroupKeys, Groups, HostRows, Job, Rows, Rule, Strays};
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

/// How much of an integer key column its groups are read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Look {
    /// The first rows, where they show a narrow span of 32- or 64-bit keys that they fill and a
    /// spread sample of the rest lies in: the count then checks every key against it (see
    /// [`GroupKeys::Table`]), and is redone from every row where one strays. This spares a pass
    /// over the keys before the count: 3.7 ms of a 16.5 ms GPU call with 2^25 Int64 keys on the
    /// H100 host (BENCHMARKS.md, 2026-11-27).
    FirstRows,
    /// Every row.
    AllRows,
}

/// The group axis of `keys`: the column it reads (the keys' own integers where a table maps
/// them, else UInt32 ids), how it maps them, and each group's first row.
pub(crate) fn group_axis(keys: &Series, look: Look) -> HistResult<(Series, Groups, Vec<IdxSize>)> {
    let physical = keys.to_physical_repr().into_owned();
    if let Some(found) = integer_table(&physical, look)? {
        return Ok(found);
    }
    // Polars groups the keys with allocations that abort when they fail: check the room first
    // (its hash tables, group firsts and row lists take up to about 100 bytes a distinct key).
    crate::alloc::ensure_room(keys.len().saturating_mul(GROUPING_BYTES_PER_ROW))?;
    let groups = keys.group_tuples(true, true)?;
    let mut ids: Vec<u32> = crate::alloc::zeroed(keys.len())?;
    let mut firsts = crate::alloc::with_capacity(groups.len())?;
    for (g, group) in groups.iter().enumerate() {
        firsts.push(group.first());
        match group {
            GroupsIndicator::Idx((_, rows)) => {
                for &r in rows.iter() {
                    ids[r as usize] = g as u32;
                }
            }
            GroupsIndicator::Slice([first, len]) => {
                ids[first as usize..(first + len) as usize].fill(g as u32);
            }
        }
    }
    let groups = Groups {
        count: firsts.len(),
        keys: GroupKeys::Ids,
    };
    Ok((
        UInt32Chunked::from_vec(keys.name().clone(), ids).into_series(),
        groups,
        firsts,
    ))
}

/// Room checked for Polars' grouping of hashed keys, per row (all rows distinct at worst).
const GROUPING_BYTES_PER_ROW: usize = 128;

/// Keys below this many distinct slots (`max - min + 1`, and at most a few per row) are mapped
/// by a table instead of hashing.
const MAX_TABLE_SLOTS: usize = 1 << 24;

/// Groups of integer keys without nulls over a narrow span: the first row of every key value,
/// found in parallel, ranks the groups by first appearance.
fn integer_table(
    physical: &Series,
    look: Look,
) -> HistResult<Option<(Series, Groups, Vec<IdxSize>)>> {
    let dtype = match crate::dtype::DType::of_primitive(physical.dtype()) {
        Some(d) if !d.is_float() && d != crate::dtype::DType::U64 => d,
        _ => return Ok(None),
    };
    if physical.null_count() > 0 || physical.is_empty() {
        return Ok(None);
    }
    let column = HostColumn::new(physical)?;
    // A pinned key column is read in place on the device, where nothing checks it against a
    // table of the first rows.
    let first_rows_only =
        look == Look::FirstRows && dtype.size() >= 4 && crate::gpu::pin::find(&column).is_none();
    let from_first_rows = match first_rows_only {
        true => crate::with_dtype!(dtype, |T| span_of_first_rows::<T>(&column)),
        false => None,
    };
    // The table's lowest key and span, its slots in order of first appearance as
    // `(first row, slot)`, and its strays where it was made from the first rows.
    let (lo, span, seen, strays) = match from_first_rows {
        // The first rows held every key of their span.
        Some((lo, seen)) => (lo, seen.len(), seen, Some(Strays::default())),
        None => {
            let pieces = crate::input::pieces(&[&column]);
            let crate::bins::Extremes::Integer(lo, hi) =
                crate::cpu::extremes::extremes(&[&column], &pieces, 0)?
            else {
                return Ok(None);
            };
            // In i128: a span of 64-bit keys may not fit their width (or a usize); such a
            // span is far past any table and takes the general path.
            let span = hi - lo + 1;
            if span > MAX_TABLE_SLOTS.min((4 * physical.len()).max(1 << 16)) as i128 {
                return Ok(None);
            }
            let span = span as usize;
            let lo = lo as i64;
            // Slots in order of first appearance (found in that order where the first rows held
            // them all, else sorted by their first row).
            let seen = match crate::with_dtype!(dtype, |T| first_rows::<T>(&column, lo, span))? {
                FirstRows::InOrder(seen) => seen,
                FirstRows::BySlot(firsts) => {
                    let groups = firsts.iter().filter(|&&row| row != u64::MAX).count();
                    let mut seen = crate::alloc::with_capacity(groups)?;
                    seen.extend(
                        firsts
                            .iter()
                            .enumerate()
                            .filter(|(_, &row)| row != u64::MAX)
                            .map(|(slot, &row)| (row, slot)),
                    );
                    seen.par_sort_unstable();
                    seen
                }
            };
            (lo, span, seen, None)
        }
    };
    let mut table = crate::alloc::filled(span, u32::MAX)?;
    for (id, &(_, slot)) in seen.iter().enumerate() {
        table[slot] = id as u32;
    }
    let groups = Groups {
        count: seen.len(),
        keys: GroupKeys::Table { lo, table, strays },
    };
    let firsts = crate::alloc::collected(seen.iter().map(|&(row, _)| row as IdxSize))?;
    Ok(Some((physical.clone(), groups, firsts)))
}

/// Rows of the keys whose extremes bound the span [`Look::FirstRows`] proposes, and how many
/// rows spread over the rest must lie in it (enough to find sorted or clustered keys, which
/// would have every row counted twice; each is a cache miss).
const FIRST_ROWS: usize = 1 << 18;
const SPREAD_SAMPLE: usize = 256;

/// A span of keys from the first rows of a long column: the extremes of its first
/// [`FIRST_ROWS`] rows, where the span is narrow, every row of a spread sample of the rest lies
/// in it, and every key of it appears in the first rows (found in order, within the rows
/// [`first_rows`] would read in order). Then its lowest key, and its keys as
/// `(first row, key - lo)` in order of first appearance.
fn span_of_first_rows<T: Value>(column: &HostColumn<'_>) -> Option<(i64, Vec<(u64, usize)>)> {
    let chunks = values_of::<T>(column);
    let len: usize = chunks.iter().map(|c| c.len()).sum();
    if len <= FIRST_ROWS {
        return None;
    }
    let (mut lo, mut hi, mut left) = (i64::MAX, i64::MIN, FIRST_ROWS);
    for chunk in &chunks {
        let take = left.min(chunk.len());
        for x in &chunk[..take] {
            (lo, hi) = (lo.min(x.as_i64()), hi.max(x.as_i64()));
        }
        left -= take;
    }
    let span = hi.abs_diff(lo).saturating_add(1);
    if span > IN_ORDER_SLOTS as u64 {
        return None;
    }
    let inside = |x: i64| x.abs_diff(lo) < span && x >= lo;
    // The rest, at evenly spread rows, the last included.
    let rest = len - FIRST_ROWS;
    let sample = (0..SPREAD_SAMPLE).map(|k| FIRST_ROWS + k * (rest - 1) / (SPREAD_SAMPLE - 1));
    if !sample.map(|row| value_at(&chunks, row)).all(inside) {
        return None;
    }
    let span = span as usize;
    let mut first = vec![false; span];
    let mut seen = Vec::with_capacity(span);
    let rows = chunks.iter().flat_map(|c| c.iter().map(|x| x.as_i64()));
    for (row, x) in rows.take(in_order_rows(span)).enumerate() {
        if !inside(x) {
            return None;
        }
        let slot = (x - lo) as usize;
        if !first[slot] {
            first[slot] = true;
            seen.push((row as u64, slot));
            if seen.len() == span {
                return Some((lo, seen));
            }
        }
    }
    None
}

/// The values of each chunk of a column of `T`.
fn values_of<'a, T: Value>(column: &HostColumn<'a>) -> Vec<&'a [T]> {
    let values = |chunk: &crate::input::Chunk<'a>| T::values(chunk.values);
    column
        .chunks
        .iter()
        .map(|chunk| values(chunk).expect("the column's own type"))
        .collect()
}

/// Row `row` of a column in `chunks`, as i64.
fn value_at<T: Value>(chunks: &[&[T]], mut row: usize) -> i64 {
    for chunk in chunks {
        match chunk.get(row) {
            Some(x) => return x.as_i64(),
            None => row -= chunk.len(),
        }
    }
    unreachable!("row {row} past the column's end")
}

/// Spans of at most this many keys are looked for in order in the first rows.
const IN_ORDER_SLOTS: usize = 1 << 17;

/// How many first rows are read in order for the keys of a span of `span` slots: enough for
/// `span` random keys to have all appeared (about `span ln span`) with room to spare; none past
/// [`IN_ORDER_SLOTS`], where that is too long on one thread.
fn in_order_rows(span: usize) -> usize {
    match span <= IN_ORDER_SLOTS {
        true => (16 * span).max(1 << 16),
        false => 0,
    }
}

/// The first row of each key value of a span.
enum FirstRows {
    /// Every value of the span, as `(first row, value - lo)` in order of first appearance.
    InOrder(Vec<(u64, usize)>),
    /// By `value - lo`: its first row, or `u64::MAX` where it never appears.
    BySlot(Vec<u64>),
}

/// The first row of each key value `lo..lo + span`. The rows are read in order until every value
/// of the span has appeared (keys numbered `0..groups` all appear early: the rest is never read,
/// and the values were found in order), then the rest by stretches in parallel, each with a
/// table of its own, merged by minimum.
fn first_rows<T: Value>(column: &HostColumn<'_>, lo: i64, span: usize) -> HistResult<FirstRows> {
    const STRETCH: usize = 1 << 20;
    let chunks = values_of::<T>(column);
    let prefix_rows = in_order_rows(span);
    let mut first = crate::alloc::filled(span, u64::MAX)?;
    let mut found = Vec::new();
    let mut row = 0u64;
    'prefix: for values in &chunks {
        for &x in values.iter() {
            if row == prefix_rows as u64 {
                break 'prefix;
            }
            let slot = (x.as_i64() - lo) as usize;
            if first[slot] == u64::MAX {
                first[slot] = row;
                found.push((row, slot));
                if found.len() == span {
                    return Ok(FirstRows::InOrder(found));
                }
            }
            row += 1;
        }
    }
    let mut work = Vec::new();
    let mut start = 0u64;
    for values in chunks {
        let len = values.len() as u64;
        // Only the rows the prefix did not read.
        let skip = row.saturating_sub(start).min(len) as usize;
        for (k, piece) in values[skip..].chunks(STRETCH).enumerate() {
            work.push((start + (skip + k * STRETCH) as u64, piece));
        }
        start += len;
    }
    // Few tables at once: each takes `span` slots.
    let tables = rayon::current_num_threads()
        .min((1 << 26) / span.max(1))
        .clamp(1, work.len().max(1));
    let per_table = work.len().div_ceil(tables).max(1);
    let rest = work
        .par_chunks(per_table)
        .map(|stretches| -> HistResult<Vec<u64>> {
            let mut first = crate::alloc::filled(span, u64::MAX)?;
            for &(start, values) in stretches {
                for (i, &x) in values.iter().enumerate() {
                    let slot = &mut first[(x.as_i64() - lo) as usize];
                    if *slot == u64::MAX {
                        *slot = start + i as u64;
                    }
                }
            }
            Ok(first)
        })
        .try_reduce_with(|mut a, b| {
            a.iter_mut().zip(b).for_each(|(a, b)| *a = (*a).min(b));
            Ok(a)
        })
        .transpose()?;
    if let Some(rest) = rest {
        first
            .iter_mut()
            .zip(rest)
            .for_each(|(a, b)| *a = (*a).min(b));
    }
    Ok(FirstRows::BySlot(first))
}

#[cfg(test)]
mod tests {
    use polars::prelude::*;

    use super::*;
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
