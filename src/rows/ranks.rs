//! `bin_ranks`: bins by position in the stable sorted order of the valid values (ties in input
//! order, NaN last), without sorting. Bin `j` starts at position `p[j]`; the value there,
//! `v[j]`, is an order statistic ([`super::select`]), and `o[j] = p[j] - #(values < v[j])` says
//! which of the rows equal to `v[j]` (in input order) it is. A row of value `x` that is the
//! `occ`-th row equal to `x` then lies in bin `#{j: v[j] < x} + #{j: v[j] == x, o[j] <= occ}`:
//! one search per row among the distinct `v[j]`, and a running count of the rows equal to one
//! of them, piece by piece in parallel after a first pass counts each piece's ties. GPU and CPU
//! alike need only this stable order of ties, never a sort.

use polars::prelude::*;
use polars_arrow::array::PrimitiveArray;
use rayon::prelude::*;

use super::select::{values_of_narrow_keys, values_of_wide_keys, Keys, Selectable};
use crate::error::HistResult;

/// Rows per piece of the two passes.
const PIECE: usize = 1 << 16;
/// A row equal to one of the boundaries (the flag of the first pass's code).
const TIED: u32 = 1 << 31;

/// The bins of `values` by rank (UInt32 named like it, nulls where it has them) and the value
/// at each bin's start (`positions(n)` gives the starts for `n` valid values; a start past the
/// values has none: null), in `values`' dtype.
pub fn rank_bins(
    values: &Series,
    positions: impl FnOnce(usize) -> Vec<usize>,
) -> HistResult<(UInt32Chunked, Series)> {
    let n = values.len() - values.null_count();
    let positions = positions(n);
    if values.dtype() == &DataType::Boolean {
        let narrow = values.cast(&DataType::UInt8)?;
        let (bins, starts) = bins_at(&narrow, &positions)?;
        return Ok((bins, starts.cast(&DataType::Boolean)?));
    }
    bins_at(values, &positions)
}

fn bins_at(values: &Series, positions: &[usize]) -> HistResult<(UInt32Chunked, Series)> {
    let values = values.rechunk();
    let name = PlSmallStr::from_static("breaks");
    let dtype = values.dtype().clone();
    let (compact, starts) = match &dtype {
        DataType::String | DataType::Categorical(..) => {
            let text = values.cast(&DataType::String)?;
            let ca = text.str()?;
            let keys: Vec<&str> = ca.iter().flatten().collect();
            let (bins, starts) = ranked(&keys, positions)?;
            let starts = StringChunked::from_iter_options(name, starts.into_iter()).into_series();
            (bins, starts.cast(&dtype)?)
        }
        DataType::Binary => {
            let ca = values.binary()?;
            let keys: Vec<&[u8]> = ca.iter().flatten().collect();
            let (bins, starts) = ranked(&keys, positions)?;
            (
                bins,
                BinaryChunked::from_iter_options(name, starts.into_iter()).into_series(),
            )
        }
        DataType::Enum(..) => {
            let ids = values.to_physical_repr().cast(&DataType::UInt32)?;
            let keys: Vec<u32> = ids.u32()?.iter().flatten().collect();
            let (bins, starts) = ranked(&keys, positions)?;
            let starts = UInt32Chunked::from_iter_options(name, starts.into_iter()).into_series();
            let phys = starts.cast(&dtype.to_physical())?;
            // SAFETY: category ids of this Enum, in its physical type.
            (bins, unsafe { phys.from_physical_unchecked(&dtype)? })
        }
        _ => match Keys::of(&values)? {
            Keys::Narrow(keys, kind) => {
                let (bins, starts) = ranked(&keys, positions)?;
                (
                    bins,
                    with_nulls(&starts, |k| {
                        values_of_narrow_keys(name.clone(), k, kind, &dtype)
                    })?,
                )
            }
            Keys::Wide(keys) => {
                let (bins, starts) = ranked(&keys, positions)?;
                (
                    bins,
                    with_nulls(&starts, |k| values_of_wide_keys(name.clone(), k, &dtype))?,
                )
            }
        },
    };
    let bins = scatter(&values, compact)?;
    Ok((bins, starts))
}

/// The Series `of(keys)` makes of the present keys, with a null for each absent one.
fn with_nulls<K: Copy>(
    keys: &[Option<K>],
    of: impl Fn(&[K]) -> HistResult<Series>,
) -> HistResult<Series> {
    let present: Vec<K> = keys.iter().flatten().copied().collect();
    let values = of(&present)?;
    if present.len() == keys.len() {
        return Ok(values);
    }
    // Absent keys are starts past the last value: they come last (positions never decrease).
    let nulls = Series::full_null(
        values.name().clone(),
        keys.len() - present.len(),
        values.dtype(),
    );
    let mut out = values;
    out.append(&nulls)?;
    Ok(out)
}

/// The bins of the valid rows (in order) placed in a column like `values` (nulls where it has).
fn scatter(values: &Series, compact: Vec<u32>) -> HistResult<UInt32Chunked> {
    let name = values.name().clone();
    let validity = values.chunks().first().and_then(|a| a.validity().cloned());
    let Some(validity) = validity.filter(|v| v.unset_bits() > 0) else {
        return Ok(UInt32Chunked::from_vec(name, compact));
    };
    let mut out = super::zero_bins(values.len())?;
    let mut next = compact.into_iter();
    for (o, valid) in out.iter_mut().zip(validity.iter()) {
        if valid {
            *o = next.next().expect("one bin per valid row");
        }
    }
    let arr = PrimitiveArray::new(ArrowDataType::UInt32, out.into(), Some(validity));
    // SAFETY: a UInt32 array, as the dtype says.
    Ok(unsafe { UInt32Chunked::from_chunks(name, vec![arr.boxed()]) })
}

/// The bins of `keys` (the valid values in row order) whose bins start at `positions`
/// (non-decreasing, at most `keys.len()`), and the key at each start (None past the end).
fn ranked<K: Selectable>(
    keys: &[K],
    positions: &[usize],
) -> HistResult<(Vec<u32>, Vec<Option<K>>)> {
    let n = keys.len();
    let inside: Vec<usize> = positions.iter().copied().filter(|&p| p < n).collect();
    let starts = K::select_at(keys, &inside)?;
    // The distinct start values, and for each the starts' ranks among its equal rows.
    let mut distinct: Vec<K> = starts.clone();
    distinct.dedup();
    let mut bins = super::zero_bins(n)?;
    // First pass: each row's place among the distinct starts (`#{d < x}`, flagged where x is
    // one), and per piece the rows of each place and the rows equal to each start.
    let pieces: Vec<(Vec<u64>, Vec<u64>)> = bins
        .par_chunks_mut(PIECE)
        .zip(keys.par_chunks(PIECE))
        .map(|(out, xs)| {
            let mut tied = vec![0u64; distinct.len()];
            let mut places = vec![0u64; distinct.len() + 1];
            for (o, &x) in out.iter_mut().zip(xs) {
                let b = distinct.partition_point(|d| *d < x);
                places[b] += 1;
                if b < distinct.len() && distinct[b] == x {
                    tied[b] += 1;
                    *o = b as u32 | TIED;
                } else {
                    *o = b as u32;
                }
            }
            (tied, places)
        })
        .collect();
    // Rows below each distinct start: the rows of the places before it, and its own place's
    // rows that are not equal to it.
    let mut places = vec![0u64; distinct.len() + 1];
    let mut equal = vec![0u64; distinct.len()];
    for (tied, here) in &pieces {
        equal.iter_mut().zip(tied).for_each(|(e, t)| *e += t);
        places.iter_mut().zip(here).for_each(|(p, h)| *p += h);
    }
    let mut below = Vec::with_capacity(distinct.len());
    let mut run = 0u64;
    for (i, &count) in places.iter().enumerate().take(distinct.len()) {
        below.push(run + count - equal[i]);
        run += count;
    }
    // Each start's rank among the rows equal to its value, grouped by value; and the starts
    // below each place.
    let mut ranks: Vec<Vec<u64>> = vec![Vec::new(); distinct.len()];
    for (&p, v) in inside.iter().zip(&starts) {
        let i = distinct
            .binary_search(v)
            .expect("a start is a distinct start");
        ranks[i].push(p as u64 - below[i]);
    }
    let mut starts_below = Vec::with_capacity(distinct.len() + 1);
    let mut run = 0u32;
    for r in &ranks {
        starts_below.push(run);
        run += r.len() as u32;
    }
    starts_below.push(run);
    // Second pass: the bin of each row, with the running count of its ties.
    let mut before = vec![0u64; distinct.len()];
    let offsets: Vec<Vec<u64>> = pieces
        .iter()
        .map(|(piece, _)| {
            let here = before.clone();
            for (b, t) in before.iter_mut().zip(piece) {
                *b += t;
            }
            here
        })
        .collect();
    bins.par_chunks_mut(PIECE)
        .zip(offsets)
        .for_each(|(out, mut seen)| {
            for o in out.iter_mut() {
                let b = (*o & !TIED) as usize;
                let mut bin = starts_below[b];
                if *o & TIED != 0 {
                    let occ = seen[b];
                    seen[b] += 1;
                    bin += ranks[b].partition_point(|&r| r <= occ) as u32;
                }
                *o = bin;
            }
        });
    crate::interrupt::check()?;
    let mut all_starts: Vec<Option<K>> = starts.into_iter().map(Some).collect();
    all_starts.resize(positions.len(), None);
    Ok((bins, all_starts))
}
