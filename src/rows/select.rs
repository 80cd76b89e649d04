//! Order statistics: the values at given positions of a column's sorted valid values (NaN
//! last), without sorting it. The values become order keys (integers whose order is Polars'
//! total order: [`super::f64_key`] for floats, the sign bit flipped for signed integers), and a
//! multiple selection partitions the keys around each position in turn, the two sides of each
//! in parallel: `O(n log k)` for `k` positions, where a sort is `O(n log n)`.

use polars::prelude::*;
use polars_arrow::array::Array;
use rayon::prelude::*;

use super::f64_key;
use crate::error::{HistError, HistResult};

/// Below this many keys a side is selected on the calling thread.
const PARALLEL_FROM: usize = 1 << 16;

/// The order keys of the valid values of a column, and how to turn them back into values.
pub enum Keys {
    /// Floats (as float64), integers of 64 bits or fewer, dates and times (physical values).
    Narrow(Vec<u64>, Narrow),
    /// 128-bit integers and decimals (physical values).
    Wide(Vec<u128>),
}

/// What a narrow key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Narrow {
    Float,
    Signed,
    Unsigned,
}

/// The key of a signed 128-bit value: its order is the value's.
#[inline(always)]
pub fn wide_key(v: i128) -> u128 {
    (v as u128) ^ (1 << 127)
}

#[inline(always)]
fn signed_key(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

/// The float64 of a float key (the zero is 0.0, the NaN the canonical one).
#[inline(always)]
pub fn key_f64(key: u64) -> f64 {
    match key {
        u64::MAX => f64::NAN,
        k if k >> 63 == 1 => f64::from_bits(k & !(1 << 63)),
        k => f64::from_bits(!k),
    }
}

impl Keys {
    /// The keys of the valid values of `values` (numeric or temporal).
    pub fn of(values: &Series) -> HistResult<Keys> {
        let phys = values.to_physical_repr();
        macro_rules! narrow {
            ($ca:expr, $kind:expr, |$v:ident| $key:expr) => {{
                let ca = $ca;
                let mut keys = crate::alloc::with_capacity(ca.len() - ca.null_count())?;
                for arr in ca.downcast_iter() {
                    match arr.null_count() {
                        // A plain map over the values (it vectorizes); the validity walk only
                        // where there are nulls.
                        0 => keys.extend(arr.values().iter().map(|&$v| $key)),
                        _ => keys.extend(arr.non_null_values_iter().map(|$v| $key)),
                    }
                }
                Keys::Narrow(keys, $kind)
            }};
        }
        Ok(match phys.dtype() {
            DataType::Float64 => narrow!(phys.f64()?, Narrow::Float, |v| f64_key(v)),
            DataType::Float32 => narrow!(phys.f32()?, Narrow::Float, |v| f64_key(v as f64)),
            DataType::Float16 => {
                let wide = phys.cast(&DataType::Float64)?;
                narrow!(wide.f64()?, Narrow::Float, |v| f64_key(v))
            }
            DataType::Int8 => narrow!(phys.i8()?, Narrow::Signed, |v| signed_key(v as i64)),
            DataType::Int16 => narrow!(phys.i16()?, Narrow::Signed, |v| signed_key(v as i64)),
            DataType::Int32 => narrow!(phys.i32()?, Narrow::Signed, |v| signed_key(v as i64)),
            DataType::Int64 => narrow!(phys.i64()?, Narrow::Signed, |v| signed_key(v)),
            DataType::UInt8 => narrow!(phys.u8()?, Narrow::Unsigned, |v| v as u64),
            DataType::UInt16 => narrow!(phys.u16()?, Narrow::Unsigned, |v| v as u64),
            DataType::UInt32 => narrow!(phys.u32()?, Narrow::Unsigned, |v| v as u64),
            DataType::UInt64 => narrow!(phys.u64()?, Narrow::Unsigned, |v| v),
            DataType::Boolean => {
                let narrow = phys.cast(&DataType::UInt8)?;
                narrow!(narrow.u8()?, Narrow::Unsigned, |v| v as u64)
            }
            DataType::Int128 => {
                let ca = phys.i128()?;
                let mut keys = crate::alloc::with_capacity(ca.len() - ca.null_count())?;
                for arr in ca.downcast_iter() {
                    keys.extend(arr.non_null_values_iter().map(wide_key));
                }
                Keys::Wide(keys)
            }
            DataType::UInt128 => {
                let ca = phys.u128()?;
                let mut keys = crate::alloc::with_capacity(ca.len() - ca.null_count())?;
                for arr in ca.downcast_iter() {
                    keys.extend(arr.non_null_values_iter());
                }
                Keys::Wide(keys)
            }
            dtype => return Err(HistError::UnsupportedDtype(dtype.to_string())),
        })
    }

    pub fn len(&self) -> usize {
        match self {
            Keys::Narrow(k, _) => k.len(),
            Keys::Wide(k) => k.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The values at `positions` (each below the count of valid values) of the sorted valid
/// values of `values`, in its dtype, named `breaks`.
pub fn order_statistics(values: &Series, positions: &[usize]) -> HistResult<Series> {
    let name = PlSmallStr::from_static("breaks");
    let dtype = values.dtype();
    if positions.is_empty() {
        return Ok(Series::new_empty(name, dtype));
    }
    Ok(match Keys::of(values)? {
        Keys::Narrow(keys, kind) => {
            let picked = u64::select_at(&keys, positions)?;
            values_of_narrow_keys(name, &picked, kind, dtype)?
        }
        Keys::Wide(mut keys) => {
            let picked = select(&mut keys, positions)?;
            values_of_wide_keys(name, &picked, dtype)?
        }
    })
}

/// A Series of `dtype` from narrow keys of that dtype's physical values.
pub fn values_of_narrow_keys(
    name: PlSmallStr,
    keys: &[u64],
    kind: Narrow,
    dtype: &DataType,
) -> HistResult<Series> {
    let phys = match kind {
        Narrow::Float => {
            let floats = Float64Chunked::from_iter_values(name, keys.iter().map(|&k| key_f64(k)));
            // Float32 and Float16 keys came from values of that type: the cast is exact.
            return Ok(floats.into_series().cast(dtype)?);
        }
        Narrow::Signed => {
            Int64Chunked::from_iter_values(name, keys.iter().map(|&k| (k ^ (1 << 63)) as i64))
                .into_series()
        }
        Narrow::Unsigned => {
            UInt64Chunked::from_iter_values(name, keys.iter().copied()).into_series()
        }
    };
    of_physical(phys, dtype)
}

/// A Series of `dtype` from wide keys of its physical values (integers and decimals of any
/// width: the keys of narrower ones came from their values, so the casts are exact).
pub fn values_of_wide_keys(
    name: PlSmallStr,
    keys: &[u128],
    dtype: &DataType,
) -> HistResult<Series> {
    let phys = match dtype.to_physical() {
        DataType::UInt128 => {
            UInt128Chunked::from_iter_values(name, keys.iter().copied()).into_series()
        }
        _ => Int128Chunked::from_iter_values(name, keys.iter().map(|&k| (k ^ (1 << 127)) as i128))
            .into_series(),
    };
    of_physical(phys, dtype)
}

/// `phys` (integers) as `dtype`: cast to its physical type, then viewed as it.
fn of_physical(phys: Series, dtype: &DataType) -> HistResult<Series> {
    let physical = dtype.to_physical();
    let phys = phys.cast(&physical)?;
    if physical == *dtype {
        return Ok(phys);
    }
    // SAFETY: `phys` has `dtype`'s physical type, and holds values of that dtype.
    Ok(unsafe { phys.from_physical_unchecked(dtype)? })
}

/// The keys at `positions` of `keys` sorted, in the order of `positions` (repeats allowed).
/// Reorders `keys`.
pub fn select<K: Ord + Copy + Send>(keys: &mut [K], positions: &[usize]) -> HistResult<Vec<K>> {
    let mut wanted: Vec<usize> = positions.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    if let Some(&last) = wanted.last() {
        if last >= keys.len() {
            return Err(HistError::Internal(format!(
                "position {last} of {} sorted values",
                keys.len()
            )));
        }
    }
    let mut found = vec![None; wanted.len()];
    multiselect(keys, &wanted, &mut found);
    crate::interrupt::check()?;
    Ok(positions
        .iter()
        .map(|p| {
            let i = wanted.binary_search(p).expect("every position is wanted");
            found[i].expect("every wanted position is selected")
        })
        .collect())
}

/// Selects the keys at `wanted` (sorted, distinct, below `keys.len()`) into `found`.
fn multiselect<K: Ord + Copy + Send>(keys: &mut [K], wanted: &[usize], found: &mut [Option<K>]) {
    if wanted.is_empty() || crate::interrupt::pending() {
        return;
    }
    let mid = wanted.len() / 2;
    let at = wanted[mid];
    let (below, kth, above) = keys.select_nth_unstable(at);
    found[mid] = Some(*kth);
    let (found_below, rest) = found.split_at_mut(mid);
    let found_above = &mut rest[1..];
    let wanted_below = &wanted[..mid];
    let wanted_above: Vec<usize> = wanted[mid + 1..].iter().map(|p| p - at - 1).collect();
    if below.len() + above.len() >= PARALLEL_FROM {
        rayon::join(
            || multiselect(below, wanted_below, found_below),
            || multiselect(above, &wanted_above, found_above),
        );
    } else {
        multiselect(below, wanted_below, found_below);
        multiselect(above, &wanted_above, found_above);
    }
}

/// Keys whose order statistics are found without reordering them.
pub trait Selectable: Ord + Copy + Send + Sync + Sized {
    /// The keys at `positions` of `keys` sorted, in the order of `positions`.
    fn select_at(keys: &[Self], positions: &[usize]) -> HistResult<Vec<Self>> {
        let mut scratch = crate::alloc::copied(keys)?;
        select(&mut scratch, positions)
    }
}

impl Selectable for u128 {}
impl Selectable for u32 {}
impl Selectable for &str {}
impl Selectable for &[u8] {}

/// Keys per radix pass: the top 16 bits of what is left.
const RADIX_BITS: u32 = 16;
/// A bucket this small is copied and selected in.
const SMALL: usize = 1 << 16;

impl Selectable for u64 {
    /// Radix selection: a histogram of the keys' top 16 bits says which bucket holds each
    /// position and where in it; only those buckets' keys are gathered, and selected in when
    /// small or refined by the next 16 bits when not. Two passes over the keys for spread
    /// data, none of them writing the keys (a multiple selection moves them all, several
    /// times).
    fn select_at(keys: &[u64], positions: &[usize]) -> HistResult<Vec<u64>> {
        if let Some(&p) = positions.iter().max() {
            if p >= keys.len() {
                return Err(HistError::Internal(format!(
                    "position {p} of {} sorted values",
                    keys.len()
                )));
            }
        }
        let out = radix_select(keys, 64 - RADIX_BITS, positions)?;
        crate::interrupt::check()?;
        Ok(out)
    }
}

/// [`Selectable::select_at`] for `u64` over `keys` whose bits above `shift + 16` are all equal.
fn radix_select(keys: &[u64], shift: u32, positions: &[usize]) -> HistResult<Vec<u64>> {
    if keys.len() <= SMALL || positions.is_empty() {
        let mut scratch = crate::alloc::copied(keys)?;
        return select(&mut scratch, positions);
    }
    let buckets = 1usize << RADIX_BITS;
    let digit = |k: u64| ((k >> shift) as usize) & (buckets - 1);
    // A table a split of the keys (rayon's fold), summed; u64, as a column may pass 2^32 rows.
    let counts = keys
        .par_chunks(1 << 18)
        .fold(
            || vec![0u64; buckets],
            |mut c, piece| {
                piece.iter().for_each(|&k| c[digit(k)] += 1);
                c
            },
        )
        .reduce(
            || vec![0u64; buckets],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
    // Each position's bucket and its rank within it.
    let mut starts = Vec::with_capacity(buckets + 1);
    let mut run = 0usize;
    for &c in &counts {
        starts.push(run);
        run += c as usize;
    }
    starts.push(run);
    // (bucket, rank within it, index into `positions`), grouped by bucket.
    let mut targets: Vec<(usize, usize, usize)> = positions
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let b = starts.partition_point(|&s| s <= p) - 1;
            (b, p - starts[b], i)
        })
        .collect();
    targets.sort_unstable();
    let mut wanted: Vec<usize> = targets.iter().map(|t| t.0).collect();
    wanted.dedup();
    // Gather the wanted buckets' keys (a slot per wanted bucket).
    let mut slot_of = vec![u32::MAX; buckets];
    for (slot, &b) in wanted.iter().enumerate() {
        slot_of[b] = slot as u32;
    }
    let mut gathered: Vec<Vec<u64>> = wanted
        .iter()
        .map(|&b| crate::alloc::with_capacity(counts[b] as usize))
        .collect::<HistResult<_>>()?;
    for &k in keys {
        let slot = slot_of[digit(k)];
        if slot != u32::MAX {
            gathered[slot as usize].push(k);
        }
    }
    let mut found = vec![0u64; positions.len()];
    for (bucket, group) in gathered.iter().zip(targets.chunk_by(|a, b| a.0 == b.0)) {
        let ranks: Vec<usize> = group.iter().map(|t| t.1).collect();
        let picked = match (shift, bucket.iter().min(), bucket.iter().max()) {
            // All equal (or the last digit): every rank is that key.
            (_, Some(lo), Some(hi)) if lo == hi => vec![*lo; ranks.len()],
            (0, ..) => {
                let mut scratch = bucket.clone();
                select(&mut scratch, &ranks)?
            }
            _ => radix_select(bucket, shift.saturating_sub(RADIX_BITS), &ranks)?,
        };
        for (t, v) in group.iter().zip(picked) {
            found[t.2] = v;
        }
    }
    Ok(found)
}
