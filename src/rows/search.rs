//! The search: each row's bin among the breakpoints, on every core. Numbers that float64 holds
//! exactly (floats; integers, dates and times within 2^53 of zero) against finite breakpoints
//! take the CPU backend's SIMD search over explicit edges (`cpu::simd::edge_bins`, exact: the
//! same comparisons as the scalar rule), then one branch-free pass puts the rows below the
//! first and above the last breakpoint in the outer bins. Everything else (infinite or NaN
//! breakpoints, integers past 2^53, 128-bit integers and decimals, strings, categories, bytes)
//! is searched over order keys with the exact comparisons of Polars' total order.

use polars::prelude::*;
use polars_arrow::array::{Array, BinaryViewArray, PrimitiveArray, Utf8ViewArray};
use polars_arrow::bitmap::Bitmap;
use rayon::prelude::*;

use super::NanRows;
use crate::bins::{Closed, EdgeBins};
use crate::error::{HistError, HistResult};
use crate::input::Value;

/// Rows per task: below twice this a column is binned on the calling thread (Polars calls a
/// plugin from its own threads, once per group: small calls must not queue on the pool).
const PIECE: usize = 1 << 15;
/// The largest magnitude up to which every integer converts to float64 exactly.
const EXACT_F64: i128 = 1 << 53;

/// The breakpoints of one call in the domain they are compared in, with the search they take.
#[derive(Clone, Debug)]
pub struct BinRule {
    pub closed: Closed,
    breaks: Breaks,
    /// Finite breakpoints that float64 holds exactly: the SIMD search (see [`Simd`]).
    simd: Option<Simd>,
}

#[derive(Clone, Debug)]
enum Breaks {
    /// Float breakpoints, as float64 (exact for every float dtype).
    Floats(Vec<f64>),
    /// Integer, temporal, boolean and decimal breakpoints by their physical values; UInt128
    /// ones with the sign bit flipped, so that the order of i128 is theirs.
    Ints(Vec<i128>),
    /// Strings (and the categories of a Categorical column, which compare as strings).
    Text(Vec<String>),
    /// The category ids of an Enum column (their order is the Enum's).
    Cats(Vec<u32>),
    Bytes(Vec<Vec<u8>>),
}

/// The SIMD search: the edge kernel over breakpoints `b[0..m]` (m >= 2), whose bins hold the
/// values in `[b[0], b[m-1]]`; the rest go to bin 0 (below `b[0]`) or m (above `b[m-1]`, NaN).
#[derive(Clone, Debug)]
struct Simd {
    edges: Option<EdgeBins>,
    first: f64,
    last: f64,
    m: u32,
}

impl BinRule {
    /// The rule of sorted `breaks` (already in the comparison dtype: `super::compare_dtype`).
    pub fn new(breaks: &Series, closed: Closed) -> HistResult<BinRule> {
        let breaks = match breaks.dtype() {
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                let b = breaks.cast(&DataType::Float64)?;
                Breaks::Floats(b.f64()?.into_no_null_iter().collect())
            }
            DataType::String => {
                Breaks::Text(breaks.str()?.iter().flatten().map(String::from).collect())
            }
            DataType::Categorical(..) => Breaks::Text(
                breaks
                    .cast(&DataType::String)?
                    .str()?
                    .iter()
                    .flatten()
                    .map(String::from)
                    .collect(),
            ),
            DataType::Enum(..) => {
                let ids = breaks.to_physical_repr().cast(&DataType::UInt32)?;
                Breaks::Cats(ids.u32()?.into_no_null_iter().collect())
            }
            DataType::Binary => Breaks::Bytes(
                breaks
                    .binary()?
                    .iter()
                    .flatten()
                    .map(<[u8]>::to_vec)
                    .collect(),
            ),
            _ => Breaks::Ints(int_keys(breaks)?),
        };
        let simd = match &breaks {
            Breaks::Floats(b) if b.iter().all(|v| v.is_finite()) => Some(Simd::new(b, closed)),
            Breaks::Ints(b) if b.iter().all(|v| v.abs() <= EXACT_F64) => {
                let b: Vec<f64> = b.iter().map(|&v| v as f64).collect();
                Some(Simd::new(&b, closed))
            }
            _ => None,
        };
        Ok(BinRule {
            closed,
            breaks,
            simd,
        })
    }

    /// The number of breakpoints (the bins are one more).
    pub fn len(&self) -> usize {
        match &self.breaks {
            Breaks::Floats(b) => b.len(),
            Breaks::Ints(b) => b.len(),
            Breaks::Text(b) => b.len(),
            Breaks::Cats(b) => b.len(),
            Breaks::Bytes(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Simd {
    fn new(b: &[f64], closed: Closed) -> Simd {
        let m = b.len();
        Simd {
            edges: (m >= 2).then(|| EdgeBins::new(b.to_vec(), closed)),
            first: b.first().copied().unwrap_or(f64::NAN),
            last: b.last().copied().unwrap_or(f64::NAN),
            m: m as u32,
        }
    }

    /// The bins of `xs` (numbers float64 holds exactly).
    fn bins<T: Value>(&self, closed: Closed, xs: &[T], out: &mut [u32]) {
        let (first, last, m) = (self.first, self.last, self.m);
        let left = closed == Closed::Left;
        if m == 0 {
            // No breakpoint: one bin.
            out.fill(0);
            return;
        }
        let Some(edges) = &self.edges else {
            // One breakpoint: bin 1 at or above it (left-closed) or above it; NaN above.
            for (o, &x) in out.iter_mut().zip(xs) {
                let x = x.to_f64();
                let above = if left { x >= first } else { x > first };
                *o = u32::from(above || x.is_nan());
            }
            return;
        };
        crate::cpu::simd::edge_bins(edges, xs, out);
        // The edge kernel's bin i is [b[i], b[i+1]) (right-closed: (b[i], b[i+1]]): ours is
        // i + 1. Its closed end (b[m-1] left-closed, b[0] right-closed) and what it leaves out
        // (outside, NaN) go to the outer bins. Branch-free, so that it vectorizes.
        if left {
            fix_left(out, xs, first, last, m);
        } else {
            fix_right(out, xs, first, last, m);
        }
    }
}

/// The edge kernel's bins moved to Polars' left-closed bins: below `first` bin 0, at or above
/// `last` (or NaN) bin `m`, else one up. Branch-free selects on 0/1 masks, so that it
/// vectorizes (a branch per row cost more than the search).
#[inline(always)]
fn fix_left<T: Value>(out: &mut [u32], xs: &[T], first: f64, last: f64, m: u32) {
    for (o, &x) in out.iter_mut().zip(xs) {
        let x = x.to_f64();
        let low = u32::from(x < first);
        let high = u32::from((x >= last) | x.is_nan());
        *o = (1 - low) * ((1 - high) * (*o + 1) + high * m);
    }
}

/// [`fix_left`] right-closed: at or below `first` bin 0, above `last` (or NaN) bin `m`.
#[inline(always)]
fn fix_right<T: Value>(out: &mut [u32], xs: &[T], first: f64, last: f64, m: u32) {
    for (o, &x) in out.iter_mut().zip(xs) {
        let x = x.to_f64();
        let low = u32::from(x <= first);
        let high = u32::from((x > last) | x.is_nan());
        *o = (1 - low) * ((1 - high) * (*o + 1) + high * m);
    }
}

/// The order key of a float in Polars' total order: NaN above everything and equal to every
/// NaN, -0.0 equal to 0.0.
#[inline(always)]
pub fn f64_key(x: f64) -> u64 {
    if x.is_nan() {
        return u64::MAX;
    }
    // -0.0 + 0.0 is 0.0: one key for both zeros.
    let bits = (x + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The order keys of integer-like breakpoints or values (physical values; UInt128 with its
/// sign bit flipped).
fn int_keys(s: &Series) -> HistResult<Vec<i128>> {
    let phys = s.to_physical_repr();
    let phys = match phys.dtype() {
        DataType::Boolean => phys.cast(&DataType::UInt8)?,
        _ => phys.into_owned(),
    };
    Ok(match phys.dtype() {
        DataType::UInt128 => phys
            .u128()?
            .into_no_null_iter()
            .map(|v| (v ^ (1 << 127)) as i128)
            .collect(),
        DataType::Int128 => phys.i128()?.into_no_null_iter().collect(),
        _ => {
            let wide = phys.cast(&DataType::Int128)?;
            wide.i128()?.into_no_null_iter().collect()
        }
    })
}

/// Number of `breaks` at most `key` (left-closed) or below it (right-closed), branch-free.
#[inline(always)]
fn search_keys<K: Copy + PartialOrd>(breaks: &[K], closed: Closed, key: K) -> u32 {
    let mut base = 0usize;
    let mut len = breaks.len();
    if len == 0 {
        return 0;
    }
    let before = |b: K| match closed {
        Closed::Left => b <= key,
        Closed::Right => b < key,
    };
    while len > 1 {
        let half = len / 2;
        base = std::hint::select_unpredictable(before(breaks[base + half - 1]), base + half, base);
        len -= half;
    }
    (base + usize::from(before(breaks[base]))) as u32
}

/// The bins of every row of `values` under `rule`, chunked like `values`.
pub fn bins(values: &Series, rule: &BinRule, nan: NanRows) -> HistResult<UInt32Chunked> {
    let name = values.name().clone();
    let chunks: Vec<Box<dyn Array>> = match values.dtype() {
        DataType::Float16 => {
            let wide = values.cast(&DataType::Float64)?;
            return bins(&wide.with_name(name), rule, nan);
        }
        DataType::Boolean => {
            let narrow = values.cast(&DataType::UInt8)?;
            return bins(&narrow.with_name(name), rule, nan);
        }
        DataType::Categorical(..) => {
            let text = values.cast(&DataType::String)?;
            return bins(&text.with_name(name), rule, nan);
        }
        DataType::String => per_chunk(values.str()?.downcast_iter(), |arr| text_bins(arr, rule))?,
        DataType::Binary => per_chunk(values.binary()?.downcast_iter(), |arr| {
            bytes_bins(arr, rule)
        })?,
        DataType::Enum(..) => {
            let ids = values.to_physical_repr().cast(&DataType::UInt32)?;
            per_chunk(ids.u32()?.downcast_iter(), |arr| {
                let Breaks::Cats(b) = &rule.breaks else {
                    return Err(mismatch());
                };
                keyed(arr.len(), arr.validity(), |i| arr.value(i), b, rule.closed)
            })?
        }
        _ => {
            let phys = values.to_physical_repr();
            numeric_chunks(&phys, rule, nan)?
        }
    };
    // SAFETY: UInt32 arrays, as the dtype says.
    Ok(unsafe { UInt32Chunked::from_chunks(name, chunks) })
}

fn mismatch() -> HistError {
    HistError::Internal("row binning: breakpoints of another domain than the column".into())
}

/// `f` over each chunk, the results as arrays.
fn per_chunk<'a, A: 'a>(
    arrays: impl Iterator<Item = &'a A>,
    f: impl Fn(&A) -> HistResult<PrimitiveArray<u32>>,
) -> HistResult<Vec<Box<dyn Array>>> {
    arrays.map(|a| Ok(f(a)?.boxed())).collect()
}

fn text_bins(arr: &Utf8ViewArray, rule: &BinRule) -> HistResult<PrimitiveArray<u32>> {
    let Breaks::Text(b) = &rule.breaks else {
        return Err(mismatch());
    };
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    keyed(arr.len(), arr.validity(), |i| arr.value(i), &b, rule.closed)
}

fn bytes_bins(arr: &BinaryViewArray, rule: &BinRule) -> HistResult<PrimitiveArray<u32>> {
    let Breaks::Bytes(b) = &rule.breaks else {
        return Err(mismatch());
    };
    let b: Vec<&[u8]> = b.iter().map(Vec::as_slice).collect();
    keyed(arr.len(), arr.validity(), |i| arr.value(i), &b, rule.closed)
}

/// Bins by order keys: `key(i)` is row `i`'s key, `breaks` the breakpoints' keys.
fn keyed<K: Copy + PartialOrd + Sync>(
    len: usize,
    validity: Option<&Bitmap>,
    key: impl Fn(usize) -> K + Sync,
    breaks: &[K],
    closed: Closed,
) -> HistResult<PrimitiveArray<u32>> {
    let mut out = super::zero_bins(len)?;
    for_pieces(&mut out, |start, piece| {
        for (j, o) in piece.iter_mut().enumerate() {
            *o = search_keys(breaks, closed, key(start + j));
        }
    });
    crate::interrupt::check()?;
    Ok(PrimitiveArray::new(
        ArrowDataType::UInt32,
        out.into(),
        validity.cloned(),
    ))
}

/// Runs `f(start, piece)` over pieces of `out`, in parallel where there are several.
fn for_pieces(out: &mut [u32], f: impl Fn(usize, &mut [u32]) + Sync) {
    if out.len() < 2 * PIECE {
        return f(0, out);
    }
    out.par_chunks_mut(PIECE)
        .enumerate()
        .for_each(|(p, piece)| {
            if !crate::interrupt::pending() {
                f(p * PIECE, piece)
            }
        });
}

/// The bins of a numeric (or temporal: physical) column's chunks.
fn numeric_chunks(phys: &Series, rule: &BinRule, nan: NanRows) -> HistResult<Vec<Box<dyn Array>>> {
    macro_rules! chunks_of {
        ($ca:expr) => {
            per_chunk($ca.downcast_iter(), |arr| numeric_bins(arr, rule, nan))
        };
    }
    match phys.dtype() {
        DataType::Float32 => chunks_of!(phys.f32()?),
        DataType::Float64 => chunks_of!(phys.f64()?),
        DataType::Int8 => chunks_of!(phys.i8()?),
        DataType::Int16 => chunks_of!(phys.i16()?),
        DataType::Int32 => chunks_of!(phys.i32()?),
        DataType::Int64 => chunks_of!(phys.i64()?),
        DataType::UInt8 => chunks_of!(phys.u8()?),
        DataType::UInt16 => chunks_of!(phys.u16()?),
        DataType::UInt32 => chunks_of!(phys.u32()?),
        DataType::UInt64 => chunks_of!(phys.u64()?),
        DataType::Int128 => per_chunk(phys.i128()?.downcast_iter(), |arr| {
            wide_bins(arr, rule, |v| v)
        }),
        DataType::UInt128 => per_chunk(phys.u128()?.downcast_iter(), |arr| {
            wide_bins(arr, rule, |v| (v ^ (1 << 127)) as i128)
        }),
        dtype => Err(HistError::UnsupportedDtype(dtype.to_string())),
    }
}

fn wide_bins<T: polars_arrow::types::NativeType>(
    arr: &PrimitiveArray<T>,
    rule: &BinRule,
    key: impl Fn(T) -> i128 + Sync,
) -> HistResult<PrimitiveArray<u32>> {
    let Breaks::Ints(b) = &rule.breaks else {
        return Err(mismatch());
    };
    let values = arr.values();
    keyed(
        arr.len(),
        arr.validity(),
        |i| key(values[i]),
        b,
        rule.closed,
    )
}

/// One chunk of a numeric column: the SIMD search where the rule and the values allow it, else
/// the search of order keys.
fn numeric_bins<T: Value + IntKey>(
    arr: &PrimitiveArray<T>,
    rule: &BinRule,
    nan: NanRows,
) -> HistResult<PrimitiveArray<u32>> {
    let xs = arr.values().as_slice();
    let float = T::DTYPE.is_float();
    let exact = float || within_exact_f64(xs);
    let validity = match (nan, float) {
        (NanRows::Null, true) => not_nan(arr),
        _ => arr.validity().cloned(),
    };
    let closed = rule.closed;
    let out = match (&rule.simd, &rule.breaks) {
        (Some(simd), _) if exact => {
            let mut out = super::zero_bins(xs.len())?;
            for_pieces(&mut out, |start, piece| {
                simd.bins(closed, &xs[start..start + piece.len()], piece)
            });
            out
        }
        (_, Breaks::Floats(b)) => {
            let keys: Vec<u64> = b.iter().map(|&v| f64_key(v)).collect();
            return keyed_values(xs, validity, &keys, closed, |x| f64_key(x.to_f64()));
        }
        (_, Breaks::Ints(b)) if !float => {
            return keyed_values(xs, validity, b, closed, |x| x.to_i128());
        }
        _ => return Err(mismatch()),
    };
    crate::interrupt::check()?;
    Ok(PrimitiveArray::new(
        ArrowDataType::UInt32,
        out.into(),
        validity,
    ))
}

fn keyed_values<T: Value + IntKey, K: Copy + PartialOrd + Sync>(
    xs: &[T],
    validity: Option<Bitmap>,
    breaks: &[K],
    closed: Closed,
    key: impl Fn(T) -> K + Sync,
) -> HistResult<PrimitiveArray<u32>> {
    let arr = keyed(xs.len(), validity.as_ref(), |i| key(xs[i]), breaks, closed)?;
    Ok(arr.with_validity(validity))
}

/// Whether every integer of `xs` converts to float64 exactly (always for 32 bits and fewer).
fn within_exact_f64<T: Value + IntKey>(xs: &[T]) -> bool {
    if std::mem::size_of::<T>() <= 4 {
        return true;
    }
    match crate::cpu::simd::min_max(xs) {
        None => true,
        Some((lo, hi)) => lo.to_i128().abs() <= EXACT_F64 && hi.to_i128().abs() <= EXACT_F64,
    }
}

/// A value's physical integer, exactly (floats never ask).
trait IntKey: Copy {
    fn to_i128(self) -> i128;
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl IntKey for $t {
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self as i128
            }
        }
    )*};
}
int_key!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// The chunk's validity with its NaN rows made null.
fn not_nan<T: Value>(arr: &PrimitiveArray<T>) -> Option<Bitmap> {
    let xs = arr.values();
    if !xs.iter().any(|x| x.is_nan()) {
        return arr.validity().cloned();
    }
    let numbers: Bitmap = xs.iter().map(|x| !x.is_nan()).collect();
    Some(match arr.validity() {
        Some(v) => v & &numbers,
        None => numbers,
    })
}
