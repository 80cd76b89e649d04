//! The breakpoints Polars derives from the data, found as Polars finds them:
//! - `bin_intervals(k)`: `k - 1` equal steps between the column's minimum and maximum (nulls and
//!   NaN left out), in the column's dtype. Floats interpolate in float64,
//!   `min * (1 - t) + max * t` with `t = i / k` (float32 and float16 columns round the result
//!   to their type); integers and decimals step exactly, `min + ceil(i * (max - min) / k)`
//!   left-closed and `floor` right-closed, so that a breakpoint is the first value of its bin.
//! - `bin_quantiles`: the sorted values (NaN last) at `floor(q * (n - 1))`, or at
//!   `floor(i * (n - 1) / k)` for `k` bins, computed in integers.
//! - `bin_ranks`: positions `round(r * n)`, or bins of `n / k` rows the first `n % k` of them
//!   one more ([`super::ranks`]).
//! - `qcut`: Polars' linear quantiles of the column as float64 with NaN left out.

use polars::prelude::*;
use polars_arrow::array::Array;

use super::select::{order_statistics, values_of_wide_keys, wide_key};
use super::{check_numeric, f64_key};
use crate::bins::Closed;
use crate::error::{HistError, HistResult};

/// The `k - 1` breakpoints of `bin_intervals(k)` over `values` (numeric), in its dtype.
pub fn equal_intervals(values: &Series, k: usize, closed: Closed) -> HistResult<Series> {
    check_numeric(values.dtype(), "bin_intervals")?;
    let name = PlSmallStr::from_static("breaks");
    let dtype = values.dtype();
    if dtype.is_float() {
        let (lo, hi) = float_extent(values)?;
        let steps = (1..k).map(|i| {
            let t = i as f64 / k as f64;
            lo * (1.0 - t) + hi * t
        });
        let breaks = Float64Chunked::from_iter_values(name, steps).into_series();
        // Float32 and Float16 breakpoints round to their type (to nearest).
        return Ok(breaks.cast(dtype)?);
    }
    // Integers and decimals: exact steps on the physical values, as u128 in their order.
    let Some((lo, hi)) = int_extent(values)? else {
        return Ok(Series::new_empty(name, dtype));
    };
    let span = hi - lo;
    let (per, rest) = (span / k as u128, span % k as u128);
    let mut steps = Vec::with_capacity(k.saturating_sub(1));
    for i in 1..k as u128 {
        // i * span / k without overflow: i * (span / k) + i * (span % k) / k.
        let whole = rest * i;
        let (q, r) = (whole / k as u128, whole % k as u128);
        let up = u128::from(closed == Closed::Left && r != 0);
        steps.push(lo + per * i + q + up);
    }
    values_of_wide_keys(name, &steps, dtype)
}

/// The minimum and maximum of an integer (or decimal) column as wide order keys.
fn int_extent(values: &Series) -> HistResult<Option<(u128, u128)>> {
    let phys = values.to_physical_repr();
    Ok(match phys.dtype() {
        DataType::UInt128 => {
            let ca = phys.u128()?;
            ca.min().zip(ca.max())
        }
        _ => {
            let wide = phys.cast(&DataType::Int128)?;
            let ca = wide.i128()?;
            ca.min()
                .zip(ca.max())
                .map(|(lo, hi)| (wide_key(lo), wide_key(hi)))
        }
    })
}

/// The minimum and maximum of a float column's values, NaN left out (NaN where only NaN is
/// valid; the extent is unused without valid values).
fn float_extent(values: &Series) -> HistResult<(f64, f64)> {
    let wide = values.cast(&DataType::Float64)?;
    let ca = wide.f64()?;
    let mut extent: Option<(f64, f64)> = None;
    let mut any = false;
    for arr in ca.downcast_iter() {
        let found = match arr.null_count() {
            0 => parallel_min_max(arr.values()),
            _ => arr.non_null_values_iter().filter(|v| !v.is_nan()).fold(
                None,
                |acc: Option<(f64, f64)>, v| match acc {
                    None => Some((v, v)),
                    Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
                },
            ),
        };
        any |= arr.len() > arr.null_count();
        if let Some((lo, hi)) = found {
            extent = Some(extent.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }
    Ok(match (extent, any) {
        (Some(e), _) => e,
        (None, _) => (f64::NAN, f64::NAN),
    })
}

/// The SIMD extremes of `xs` (NaN left out) on every core.
fn parallel_min_max(xs: &[f64]) -> Option<(f64, f64)> {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 18;
    if xs.len() < 2 * PIECE {
        return crate::cpu::simd::min_max(xs);
    }
    xs.par_chunks(PIECE)
        .filter_map(crate::cpu::simd::min_max)
        .reduce_with(|(a, b), (c, d)| (a.min(c), b.max(d)))
}

/// `bin_quantiles`' breakpoints: the sorted valid values at `floor(q * (n - 1))` for each
/// fraction, in the column's dtype (none without valid values).
pub fn quantile_breaks(values: &Series, fractions: &[f64]) -> HistResult<Series> {
    check_numeric(values.dtype(), "bin_quantiles")?;
    let n = values.len() - values.null_count();
    let positions: Vec<usize> = match n {
        0 => Vec::new(),
        _ => fractions
            .iter()
            .map(|&q| (q * (n - 1) as f64) as usize)
            .collect(),
    };
    order_statistics(values, &positions)
}

/// `bin_quantiles(k)`' breakpoints: the sorted valid values at `floor(i * (n - 1) / k)`.
pub fn quantile_count_breaks(values: &Series, k: usize) -> HistResult<Series> {
    check_numeric(values.dtype(), "bin_quantiles")?;
    let n = values.len() - values.null_count();
    let positions: Vec<usize> = match n {
        0 => Vec::new(),
        _ => (1..k as u128)
            .map(|i| (i * (n as u128 - 1) / k as u128) as usize)
            .collect(),
    };
    order_statistics(values, &positions)
}

/// `bin_ranks`' positions: where each bin starts in the sorted valid values.
pub fn rank_positions(n: usize, fractions: &[f64]) -> Vec<usize> {
    fractions
        .iter()
        .map(|&r| ((r * n as f64).round() as usize).min(n))
        .collect()
}

/// `bin_ranks(k)`' positions: `k` bins of `n / k` rows, the first `n % k` one more.
pub fn rank_count_positions(n: usize, k: usize) -> Vec<usize> {
    let (per, rest) = (n / k, n % k);
    (1..k).map(|j| j * per + j.min(rest)).collect()
}

/// What `qcut` found: the sorted breakpoints (duplicates kept where allowed).
pub fn qcut_breaks(
    values: &Series,
    probs: &[f64],
    allow_duplicates: bool,
) -> HistResult<Option<Vec<f64>>> {
    if probs.iter().any(|q| q.is_nan()) {
        return Err(polars_err!(ComputeError: "quantiles cannot be NaN").into());
    }
    let wide = values.cast(&DataType::Float64)?;
    let ca = wide.f64()?;
    let len = ca.len();
    let nans = ca
        .downcast_iter()
        .map(|a| a.non_null_values_iter().filter(|v| v.is_nan()).count())
        .sum::<usize>();
    let nulls = ca.null_count() + nans;
    let n = len - nulls;
    if n == 0 {
        return Ok(None);
    }
    // Polars' linear quantile over the values sorted with the nulls (and NaN) first: index
    // `(n - 1) * q + nulls`, interpolated between it and the next.
    let float_idx: Vec<f64> = probs
        .iter()
        .map(|&q| (n as f64 - 1.0) * q + nulls as f64)
        .collect();
    let mut positions = Vec::with_capacity(2 * probs.len());
    for &f in &float_idx {
        let idx = (f as usize).clamp(nulls, len - 1) - nulls;
        positions.push(idx);
        positions.push((idx + 1).min(n - 1));
    }
    let numbers = ca.filter(&ca.is_not_nan())?.into_series();
    let picked = order_statistics(&numbers, &positions)?;
    let picked = picked.f64()?;
    let numbers = numbers.f64()?;
    // A zero's sign is the one at its place in Polars' sort, which keeps -0.0 and 0.0 in input
    // order (the keys made them one value); it shows in the labels.
    let signed = |at: usize, v: f64| {
        if v == 0.0 {
            signed_zero(numbers, at)
        } else {
            v
        }
    };
    let mut breaks = Vec::with_capacity(probs.len());
    for (j, &f) in float_idx.iter().enumerate() {
        let idx = f as usize;
        let lower = signed(positions[2 * j], picked.get(2 * j).unwrap_or(f64::NAN));
        let top = f.ceil() as usize;
        let value = if idx == top {
            lower
        } else {
            let upper = signed(
                positions[2 * j + 1],
                picked.get(2 * j + 1).unwrap_or(f64::NAN),
            );
            if lower == upper {
                lower
            } else {
                (f - idx as f64) * (upper - lower) + lower
            }
        };
        breaks.push(value);
    }
    if breaks.iter().any(|b| b.is_nan()) {
        return Err(polars_err!(
            ComputeError: "quantile breakpoint is NaN (the input may contain infinite values)"
        )
        .into());
    }
    // Polars sorts with `partial_cmp`: -0.0 and 0.0 stay in their order.
    breaks.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    if !allow_duplicates && breaks.windows(2).any(|w| w[0] == w[1]) {
        return Err(polars_err!(
            Duplicate: "quantiles are not unique while allow_duplicates=False: pass \
            allow_duplicates=True, or fewer quantiles"
        )
        .into());
    }
    Ok(Some(breaks))
}

/// The zero at `position` of the stable sort of `numbers` (no nulls, no NaN).
fn signed_zero(numbers: &Float64Chunked, position: usize) -> f64 {
    let below = numbers.into_no_null_iter().filter(|&v| v < 0.0).count();
    numbers
        .into_no_null_iter()
        .filter(|&v| v == 0.0)
        .nth(position.saturating_sub(below))
        .unwrap_or(0.0)
}

/// `cut`'s breakpoints, checked and sorted as Polars checks them.
pub fn cut_breaks(mut breaks: Vec<f64>) -> HistResult<Vec<f64>> {
    if breaks.iter().any(|x| x.is_nan()) {
        return Err(polars_err!(ComputeError: "breaks cannot be NaN").into());
    }
    breaks.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    if breaks.windows(2).any(|w| w[0] == w[1]) {
        return Err(polars_err!(Duplicate: "breaks are not unique").into());
    }
    match (breaks.first(), breaks.last()) {
        (Some(&lo), _) if lo == f64::NEG_INFINITY => {
            Err(polars_err!(ComputeError: "don't include -inf in breaks").into())
        }
        (_, Some(&hi)) if hi == f64::INFINITY => {
            Err(polars_err!(ComputeError: "don't include inf in breaks").into())
        }
        _ => Ok(breaks),
    }
}

/// Whether `breaks` never decrease in Polars' total order (NaN last).
pub fn non_decreasing(breaks: &[f64]) -> bool {
    breaks.windows(2).all(|w| f64_key(w[0]) <= f64_key(w[1]))
}

/// The error of breakpoints that decrease.
pub fn decreasing() -> HistError {
    polars_err!(ComputeError: "breakpoints must be non-decreasing: sort them").into()
}
