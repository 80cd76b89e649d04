//! The group axis of one `by=` key column: each row's group id (or the keys' own integers,
//! where a table maps a narrow span of them), and each group's first row. Several keys reach
//! here combined into one (`by_keys`).

use polars::prelude::*;
use rayon::prelude::*;

use crate::error::HistResult;
use crate::input::{HostColumn, Value};
use crate::job::{GroupKeys, Groups, Strays};

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
pub(crate) const FIRST_ROWS: usize = 1 << 18;
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
