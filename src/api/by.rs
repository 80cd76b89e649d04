//! `by=`: every group's histogram in one pass, as a 2-D job whose first axis is the group.

use polars::prelude::*;
use rayon::prelude::*;

use crate::api::axes::{readable, resolve_axis, weights_f64, Flavour, HostAxis};
use crate::engine::{self, Placement, Report};
use crate::error::{guarded, HistError, HistResult};
use crate::input::{HostColumn, Value};
use crate::job::{Axis, GroupKeys, Groups, HostRows, Job, Rows, Rule};
use crate::options::HistogramOptions;
use crate::output::{self, AxisOut};

/// Every group's histogram of `values` in one pass: `keys` (any column Polars can group by but
/// floats, the same length) names the group of each row. One binning serves all groups: `bins`
/// and `range` as in [`crate::histogram`], the range from the whole column when not given. Rows
/// are the groups in order of first appearance (a null key is a group), each with its bins:
/// fields `<key>`, `bin_start`, `bin_end`, `count`. Each group's rows equal
/// [`crate::histogram`] of that group's values with the same binning (`density` normalizes per
/// group).
pub fn histogram_by(
    values: &Series,
    keys: &Series,
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
    crate::dtype::reading(values)?;
    check_key(key.dtype())?;
    let mut fields = vec![key.clone()];
    fields.extend(output::bin_fields(values));
    Ok(output::struct_dtype(fields, weighted, density))
}

fn check_key(dtype: &DataType) -> HistResult<()> {
    if dtype.is_float() {
        return Err(HistError::InvalidArgument(format!(
            "`by` groups rows by exact key values, and a {} key would make a group of every \
             distinct float: round or cast it to an integer first",
            crate::dtype::name(dtype)
        )));
    }
    if matches!(
        dtype,
        DataType::List(_) | DataType::Array(..) | DataType::Struct(_)
    ) {
        return Err(HistError::UnsupportedDtype(format!(
            "{} as a `by` key: group by a column of scalars",
            crate::dtype::name(dtype)
        )));
    }
    // An Object key reaches the plugin as Binary (its pointers): it would group by address.
    if matches!(dtype, DataType::Binary | DataType::BinaryOffset) {
        return Err(HistError::UnsupportedDtype(format!(
            "{} as a `by` key (an Object column reaches the plugin as Binary): group by an \
             integer, String, Boolean, temporal, Categorical or Enum column",
            crate::dtype::name(dtype)
        )));
    }
    Ok(())
}

/// [`histogram_by`], with the engine's report of what ran.
pub fn histogram_by_with_report(
    values: &Series,
    keys: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> HistResult<(Series, Report)> {
    check_key(keys.dtype())?;
    if keys.len() != values.len() {
        return Err(HistError::InvalidArgument(format!(
            "the `by` key {:?} has {} rows but the column has {}: they must have the same length",
            keys.name().as_str(),
            keys.len(),
            values.len()
        )));
    }
    let (physical, reading) = readable(values)?;
    let weights = weights.map(|w| weights_f64(values.len(), w)).transpose()?;
    let (key_column, groups, firsts) = group_axis(keys)?;
    let rows = HostRows::new(
        vec![HostColumn::new(&key_column)?, HostColumn::new(&physical)?],
        weights.as_ref().map(HostColumn::new).transpose()?,
    )?;
    let spec = resolve_axis(
        &options.bins,
        options.range,
        options.closed,
        values.dtype(),
        reading.kind(),
        Flavour::Histogram,
        weights.is_some(),
        &HostAxis {
            rows: &rows,
            axis: 1,
        },
    )?;
    let axes = vec![
        Axis {
            rule: Rule::Groups(groups),
            flow: false,
        },
        Axis::bins(spec, options.flow),
    ];
    let job = Job::new(axes, Rows::Host(rows))?;
    let placement = Placement {
        device: options.device,
        kernel: options.kernel,
    };
    let (counts, report) = engine::count(&job, placement)?;
    let firsts = IdxCa::from_vec("firsts".into(), firsts);
    let out = [
        AxisOut::Group {
            key: keys.take(&firsts)?,
        },
        AxisOut::bins(
            job.axes[1].spec().expect("a binned axis"),
            values.dtype().clone(),
            options.flow,
        ),
    ];
    let series = output::to_struct(values.name().clone(), &out, counts, options.density)?;
    Ok((series, report))
}

/// The group axis of `keys`: the column it reads (the keys' own integers where a table maps
/// them, else UInt32 ids), how it maps them, and each group's first row.
fn group_axis(keys: &Series) -> HistResult<(Series, Groups, Vec<IdxSize>)> {
    let physical = keys.to_physical_repr().into_owned();
    if let Some(found) = integer_table(&physical)? {
        return Ok(found);
    }
    let groups = keys.group_tuples(true, true)?;
    let mut ids = vec![0u32; keys.len()];
    let mut firsts = Vec::with_capacity(groups.len());
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

/// Keys below this many distinct slots (`max - min + 1`, and at most a few per row) are mapped
/// by a table instead of hashing.
const MAX_TABLE_SLOTS: usize = 1 << 24;

/// Groups of integer keys without nulls over a narrow span: the first row of every key value,
/// found in parallel, ranks the groups by first appearance.
fn integer_table(physical: &Series) -> HistResult<Option<(Series, Groups, Vec<IdxSize>)>> {
    let dtype = match crate::dtype::DType::of_primitive(physical.dtype()) {
        Some(d) if !d.is_float() && d != crate::dtype::DType::U64 => d,
        _ => return Ok(None),
    };
    if physical.null_count() > 0 || physical.is_empty() {
        return Ok(None);
    }
    let column = HostColumn::new(physical)?;
    let pieces = crate::input::pieces(&[&column]);
    let crate::bins::Extremes::Integer(lo, hi) =
        crate::cpu::extremes::extremes(&[&column], &pieces, 0)
    else {
        return Ok(None);
    };
    let span = (hi - lo + 1) as usize;
    if span > MAX_TABLE_SLOTS.min((4 * physical.len()).max(1 << 16)) {
        return Ok(None);
    }
    let lo = lo as i64;
    // Slots in order of first appearance (found in that order where the first rows held them
    // all, else sorted by their first row).
    let seen = match crate::with_dtype!(dtype, |T| first_rows::<T>(&column, lo, span)) {
        FirstRows::InOrder(seen) => seen,
        FirstRows::BySlot(firsts) => {
            let mut seen: Vec<(u64, usize)> = firsts
                .iter()
                .enumerate()
                .filter(|(_, &row)| row != u64::MAX)
                .map(|(slot, &row)| (row, slot))
                .collect();
            seen.par_sort_unstable();
            seen
        }
    };
    let mut table = vec![u32::MAX; span];
    for (id, &(_, slot)) in seen.iter().enumerate() {
        table[slot] = id as u32;
    }
    let groups = Groups {
        count: seen.len(),
        keys: GroupKeys::Table { lo, table },
    };
    let firsts = seen.iter().map(|&(row, _)| row as IdxSize).collect();
    Ok(Some((physical.clone(), groups, firsts)))
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
fn first_rows<T: Value>(column: &HostColumn<'_>, lo: i64, span: usize) -> FirstRows {
    const STRETCH: usize = 1 << 20;
    let chunks: Vec<&[T]> = column
        .chunks
        .iter()
        .map(|chunk| T::values(chunk.values).expect("the column's own type"))
        .collect();
    // In order first, over enough rows for `span` random keys to have all appeared (about
    // `span ln span`) with room to spare; past 2^17 slots that is too long on one thread.
    let prefix_rows = match span <= 1 << 17 {
        true => (16 * span).max(1 << 16),
        false => 0,
    };
    let mut first = vec![u64::MAX; span];
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
                    return FirstRows::InOrder(found);
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
        .map(|stretches| {
            let mut first = vec![u64::MAX; span];
            for &(start, values) in stretches {
                for (i, &x) in values.iter().enumerate() {
                    let slot = &mut first[(x.as_i64() - lo) as usize];
                    if *slot == u64::MAX {
                        *slot = start + i as u64;
                    }
                }
            }
            first
        })
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(b).for_each(|(a, b)| *a = (*a).min(b));
            a
        });
    if let Some(rest) = rest {
        first
            .iter_mut()
            .zip(rest)
            .for_each(|(a, b)| *a = (*a).min(b));
    }
    FirstRows::BySlot(first)
}
