//! numpy's bin-count estimators: `bins="auto" | "fd" | "doane" | "scott" | "stone" | "rice" |
//! "sturges" | "sqrt"`.
//!
//! [`equal_bin_count`] returns the number of equal bins `numpy.histogram(a, bins=name,
//! range=range)` uses (numpy 2.4, `numpy/lib/_histograms_impl.py`); the edges then follow from
//! that count exactly as for an integer `bins`. To give numpy's count, and not merely a close
//! one, every step is numpy's own arithmetic in numpy's own types:
//!
//! - The sample is the valid values, cut to `range` when one is given (compared as numpy
//!   compares: float32 columns against the range cast to float32, integers as float64).
//! - `ptp` is `max - min` in the column's type: float32 for Float32 (it may overflow), and for
//!   integers the difference of the same width, unsigned (`_unsigned_subtract`).
//! - `np.std` and `np.mean` are numpy's pairwise sums (blocks of 128 with 8 accumulators) in the
//!   column's float type; integers are summed as float64 in buffers of 8192 values when numpy
//!   casts them (the mean), over the whole array when it does not (squared deviations); float32
//!   means and variances divide in float64 and round back to float32, as `_var` does.
//! - `np.percentile` interpolates linearly between order statistics, the difference taken in the
//!   column's type (so narrow integers wrap, as numpy's do).
//! - Python's NEP 50 rules decide each scalar's precision: "rice", "scott" and "stone" give a
//!   float32 width for Float32 columns, which divides the float32 data span in float32; every
//!   other width and every range is float64.
//! - Float16 columns compute as numpy's float16 does: each operation in float32, rounded to
//!   float16 (its `ptp`, `std`, the widths of "rice", "scott" and "stone", the span over the
//!   width), except where numpy casts: `np.mean` sums float16 in float32 (cast buffers) and
//!   divides in float64, the percentiles interpolate in float64 from a float16 difference.
//! - `int(np.ceil(delta / width))`, with the width raised to 1 for integer columns
//!   (`width < 1`), and 1 bin for a zero width or an empty sample.
//!
//! Two numpy steps go through native libraries: `log2` and `pow` are the C library's (as numpy
//! calls them on CPUs without AVX-512; numpy's AVX-512 builds use SVML, which may differ in the
//! last bit), and "stone"'s `p_k.dot(p_k)` is OpenBLAS' `ddot`, reproduced here as its
//! Haswell/Zen kernel sums (other kernels round differently: a different minimum only where two
//! candidates tie to the last bit).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bins::{Range, MAX_BINS};
use crate::error::{HistError, HistResult, Spelling};
use numeric::{
    buffered_sum_f32, buffered_sum_f64, div_rounded_f32, libm_pow, libm_powf, openblas_ddot_self,
    pairwise_sum, python_pow, quartiles,
};
use sealed::{h, Class, Num};

mod numeric;
mod sample;

use sample::{rice_width, sqrt_width, sturges_width, Sample};

/// One of numpy's bin-count estimators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Estimator {
    /// The smaller of "sturges" and "fd" (the latter held to at least half the "sqrt" width).
    Auto,
    /// Freedman-Diaconis: `2 * IQR / n^(1/3)`.
    Fd,
    /// Sturges corrected for the sample's skewness.
    Doane,
    /// `(24 sqrt(pi) / n)^(1/3) * std`.
    Scott,
    /// The bin count (up to `max(100, sqrt(n))`) minimizing a cross-validated squared error.
    ///
    /// numpy scores each count with `p.dot(p)` through the BLAS it was built with, whose
    /// kernels round differently (AVX-512 against AVX2): two counts whose scores lie within
    /// that rounding of each other tie, and which one wins depends on the machine. The rule
    /// here: scores are computed as OpenBLAS' AVX2 (Haswell/Zen) kernel rounds them; where a
    /// dot product is registered ([`set_dot_product`]: the Python package registers the numpy
    /// it runs with), the counts that could tie are scored again with it, so the choice is that
    /// numpy's on that machine.
    Stone,
    /// `ptp / (2 n^(1/3))`.
    Rice,
    /// `ptp / (log2(n) + 1)`.
    Sturges,
    /// `ptp / sqrt(n)`.
    Sqrt,
}

impl Estimator {
    /// Every estimator, in numpy's documentation order.
    pub const ALL: [Estimator; 8] = [
        Estimator::Auto,
        Estimator::Fd,
        Estimator::Doane,
        Estimator::Scott,
        Estimator::Stone,
        Estimator::Rice,
        Estimator::Sturges,
        Estimator::Sqrt,
    ];

    /// The name numpy (and `bins=`) uses.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::Auto => "auto",
            Estimator::Fd => "fd",
            Estimator::Doane => "doane",
            Estimator::Scott => "scott",
            Estimator::Stone => "stone",
            Estimator::Rice => "rice",
            Estimator::Sturges => "sturges",
            Estimator::Sqrt => "sqrt",
        }
    }

    /// The estimator as `spelling`'s API asks for it, for error messages:
    /// `Bins::Rule(BinRule::Estimator(Estimator::Fd))` in Rust, `bins="fd"` in Python.
    pub fn spelled(self, spelling: Spelling) -> String {
        match spelling {
            Spelling::Rust => format!("`Bins::Rule(BinRule::Estimator(Estimator::{self:?}))`"),
            Spelling::Python => format!("`bins=\"{}\"`", self.name()),
        }
    }

    /// The allowed names, quoted and comma-separated, for error messages.
    pub fn names() -> String {
        Estimator::ALL
            .iter()
            .map(|e| format!("\"{}\"", e.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Estimator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Estimator {
    type Err = HistError;

    /// Names are matched exactly, as numpy does.
    fn from_str(s: &str) -> HistResult<Self> {
        Estimator::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                HistError::InvalidArgument(format!(
                    "{s:?} is not a bin estimator: numpy's are {}",
                    Estimator::names()
                ))
            })
    }
}

/// numpy's own message when an estimator is asked for with weights (it raises `TypeError`).
pub const NUMPY_WEIGHTED_MESSAGE: &str =
    "Automated estimation of the number of bins is not supported for weighted data";

/// The error for an estimator with weights, which numpy refuses.
pub fn weighted_error(estimator: Estimator) -> HistError {
    HistError::argument(|s| {
        format!(
            "{} cannot be combined with `weights`: numpy estimates bin counts from unweighted \
             data only ({NUMPY_WEIGHTED_MESSAGE}); pass a number of bins or explicit edges",
            estimator.spelled(s)
        )
    })
}

/// What an estimator decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The number of equal bins, at least 1.
    pub bins: usize,
    /// The estimator's bin width, before integer data raises it to 1 (numpy's selector returns
    /// it; `bins = ceil(span / width)`); 0 for an empty sample or a zero width.
    pub width: f64,
    /// numpy's `RuntimeWarning`, when it would emit one: "stone" stopped at its upper bound.
    pub warning: Option<&'static str>,
}

/// The dot product `p · p` that breaks "stone"'s ties (see [`Estimator::Stone`]); `None` from
/// it falls back to the crate's own.
static DOT_PRODUCT: std::sync::OnceLock<DotProduct> = std::sync::OnceLock::new();

/// `p · p` of probabilities `p`, or `None` where it cannot be computed.
pub type DotProduct = fn(&[f64]) -> Option<f64>;

/// Registers the dot product "stone" breaks its ties with, once per process (the Python module
/// registers numpy's).
pub fn set_dot_product(dot: DotProduct) {
    let _ = DOT_PRODUCT.set(dot);
}

/// numpy's warning when "stone" picks its largest candidate.
pub const STONE_SUBOPTIMAL: &str = "The number of bins estimated may be suboptimal.";

/// The column types an estimator reads: `f16` (`half::f16`), `f32`, `f64`, `i8`..`i64` and
/// `u8`..`u64` (temporal columns through their physical integers).
pub trait SampleValue: sealed::Sample {}

impl<T: sealed::Sample> SampleValue for T {}

impl Num {
    fn f64(self) -> f64 {
        match self {
            Num::F16(v) => v.to_f64(),
            Num::F32(v) => v as f64,
            Num::F64(v) => v,
        }
    }

    /// numpy's `a / b`: float16 or float32 only when both are.
    fn div(self, by: Num) -> Num {
        match (self, by) {
            (Num::F16(a), Num::F16(b)) => Num::F16(h(a.to_f32() / b.to_f32())),
            (Num::F32(a), Num::F32(b)) => Num::F32(a / b),
            (Num::F16(a), Num::F32(b)) => Num::F32(a.to_f32() / b),
            (Num::F32(a), Num::F16(b)) => Num::F32(a / b.to_f32()),
            (a, b) => Num::F64(a.f64() / b.f64()),
        }
    }

    /// `self / k` for a Python int `k` (a bin count): a float16 or float32 scalar keeps its
    /// type, `k` cast to it.
    fn div_count(self, k: usize) -> Num {
        match self {
            Num::F16(a) => Num::F16(h(a.to_f32() / crate::bins::f16_of(k as f64).to_f32())),
            Num::F32(a) => Num::F32(a / k as f32),
            Num::F64(a) => Num::F64(a / k as f64),
        }
    }

    fn precision(self) -> &'static str {
        match self {
            Num::F16(_) => "float16",
            Num::F32(_) => "float32",
            Num::F64(_) => "float64",
        }
    }
}

mod sealed;

/// The number of equal bins `numpy.histogram(values, bins=estimator.name(), range=range)` uses.
///
/// `values` are the column's valid values in its own type (NaN, if any, are skipped as the
/// histogram skips them; numpy itself refuses them without a `range`). A borrowed slice is
/// copied only when `range` cuts it or NaN must be skipped, and a `Vec` is then cut in place;
/// the quartiles of "fd" and "auto" copy the values near them, less than the sample in all.
///
/// `histogram(k)` is called only by [`Estimator::Stone`], for `k = 1..=max(100, sqrt(n))`: it
/// must return the counts of `numpy.histogram(values, bins=k, range=range)` (the same `range`,
/// `None` included), `k` of them: as many histograms of the column as numpy makes, which
/// dominates the cost of "stone" on large columns. Its errors (numpy refuses bins that
/// collapse) are returned, with the bin count that failed.
///
/// Errors as numpy fails: an invalid `range`, an infinite range taken from the data, a width or
/// span that overflows to infinity or NaN, and (beyond numpy) more than [`MAX_BINS`] bins.
pub fn equal_bin_count<'a, T: SampleValue>(
    estimator: Estimator,
    values: impl Into<Cow<'a, [T]>>,
    range: Option<Range>,
    histogram: &mut dyn FnMut(usize) -> HistResult<Vec<u64>>,
) -> HistResult<Estimate> {
    let values: Cow<'a, [T]> = values.into();
    let (sample, delta) = match range {
        Some(range) => {
            let (first, last) = window::<T>(range)?;
            // `&`, not `&&`: both comparisons and no branch, so the count can vectorize.
            let sample = Sample::new(keep(values, move |x| (x >= first) & (x <= last))?);
            (sample, outer_edges(range)?.2)
        }
        None => {
            let values = match T::CLASS {
                Class::Integer => values,
                _ => keep(values, |x| !x.is_nan())?,
            };
            let sample = Sample::new(values);
            let Some((min, max)) = sample.extremes else {
                return Ok(one_bin());
            };
            let delta = data_span(min, max)?;
            (sample, delta)
        }
    };
    // The passes below stop early on Ctrl-C: their partial results must never be used.
    crate::interrupt::check()?;
    if sample.values.is_empty() {
        return Ok(one_bin());
    }
    let mut warning = None;
    let width = match estimator {
        Estimator::Auto => sample.auto()?,
        Estimator::Fd => sample.fd()?,
        Estimator::Doane => sample.doane(),
        Estimator::Scott => sample.scott(),
        Estimator::Stone => {
            let (width, at_bound) = sample.stone(histogram)?;
            if at_bound {
                warning = Some(STONE_SUBOPTIMAL);
            }
            width
        }
        Estimator::Rice => sample.rice(),
        Estimator::Sturges => sample.sturges(),
        Estimator::Sqrt => sample.sqrt(),
    };
    crate::interrupt::check()?;
    let bins = count_from_width(estimator, width, delta, T::CLASS == Class::Integer)?;
    Ok(Estimate {
        bins,
        width: width.f64(),
        warning,
    })
}

/// [`equal_bin_count`] for the estimators that need only the sample's size and extremes
/// ("sturges", "rice" and "sqrt"), which a streaming pass over data larger than memory finds:
/// `n` values whose `(min, max)` are `extremes` (`None` when `n` is 0), counted as
/// [`equal_bin_count`] counts its sample (NaN left out; with a `range`, only the values in it,
/// compared as numpy compares them). `None` for the estimators that need every value.
pub fn equal_bin_count_from_extremes<T: SampleValue>(
    estimator: Estimator,
    n: usize,
    extremes: Option<(T, T)>,
    range: Option<Range>,
) -> HistResult<Option<Estimate>> {
    let width_of = match estimator {
        Estimator::Sqrt => sqrt_width,
        Estimator::Sturges => sturges_width,
        Estimator::Rice => rice_width,
        _ => return Ok(None),
    };
    let delta = match (range, extremes) {
        (Some(range), _) => outer_edges(range)?.2,
        (None, Some((min, max))) => data_span(min, max)?,
        (None, None) => return Ok(Some(one_bin())),
    };
    let Some((min, max)) = extremes.filter(|_| n > 0) else {
        return Ok(Some(one_bin()));
    };
    let width = width_of(n, T::ptp(min, max));
    let bins = count_from_width(estimator, width, delta, T::CLASS == Class::Integer)?;
    Ok(Some(Estimate {
        bins,
        width: width.f64(),
        warning: None,
    }))
}

/// numpy's span of equal bins over the data's extremes: `max - min` in the data's type, or a
/// width of 1 around a single value; refused when not finite.
fn data_span<T: SampleValue>(min: T, max: T) -> HistResult<Num> {
    if !(min.is_finite() && max.is_finite()) {
        return Err(HistError::argument(|s| {
            format!(
                "the range taken from the data, [{}, {}], is not finite: pass {} to estimate \
                 bins for data with infinite values",
                min.to_f64(),
                max.to_f64(),
                s.range()
            )
        }));
    }
    Ok(if min == max {
        T::widened_span(min)
    } else {
        T::ptp(min, max)
    })
}

fn one_bin() -> Estimate {
    Estimate {
        bins: 1,
        width: 0.0,
        warning: None,
    }
}

/// numpy's `_get_outer_edges` for a given range: checked, and widened by 0.5 when empty, in the
/// scalars' own type (NEP 50: a numpy float16 or float32 scalar keeps its type, a Python float
/// beside one is taken in it); with `_unsigned_subtract(last, first)`, the span, in that type.
fn outer_edges(range: Range) -> HistResult<(f64, f64, Num)> {
    let (lo, hi) = (range.lo, range.hi);
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(HistError::InvalidArgument(format!(
            "`range` must be finite, got ({lo}, {hi})"
        )));
    }
    if lo > hi {
        return Err(HistError::InvalidArgument(format!(
            "`range` must have min <= max, got ({lo}, {hi})"
        )));
    }
    Ok(if range.half {
        let (lo, hi) = (crate::bins::f16_of(lo), crate::bins::f16_of(hi));
        let (lo, hi) = match lo == hi {
            true => (h(lo.to_f32() - 0.5), h(hi.to_f32() + 0.5)),
            false => (lo, hi),
        };
        let span = Num::F16(h(hi.to_f32() - lo.to_f32()));
        (lo.to_f64(), hi.to_f64(), span)
    } else if range.single {
        let (lo, hi) = (lo as f32, hi as f32);
        let (lo, hi) = match lo == hi {
            true => (lo - 0.5, hi + 0.5),
            false => (lo, hi),
        };
        (lo as f64, hi as f64, Num::F32(hi - lo))
    } else {
        let (lo, hi) = match lo == hi {
            true => (lo - 0.5, hi + 0.5),
            false => (lo, hi),
        };
        (lo, hi, Num::F64(hi - lo))
    })
}

/// The values of a column of `T` that numpy's `(a >= first_edge) & (a <= last_edge)` keeps for
/// this `range`, as an inclusive interval of `T` (empty when its start exceeds its end): a
/// Python float meets the column in the column's type, a numpy scalar exactly.
pub fn window<T: SampleValue>(range: Range) -> HistResult<(T, T)> {
    let (lo, hi, _) = outer_edges(range)?;
    Ok(match range.half || range.single || range.wide {
        true => T::window_exact(lo, hi),
        false => T::window(lo, hi),
    })
}

/// Values per piece of work in the parallel passes.
const PIECE: usize = 1 << 16;

/// The values `pred` keeps, in order; no copy when it keeps them all, none either when `values`
/// is owned (a copy larger than memory is an error).
fn keep<'a, T: SampleValue>(
    values: Cow<'a, [T]>,
    pred: impl Fn(T) -> bool + Sync,
) -> HistResult<Cow<'a, [T]>> {
    let kept: Vec<usize> = values
        .par_chunks(PIECE)
        .map(|piece| match crate::interrupt::pending() {
            true => 0,
            false => piece.iter().map(|&x| pred(x) as usize).sum::<usize>(),
        })
        .collect();
    crate::interrupt::check()?;
    let total: usize = kept.iter().sum();
    if total == values.len() {
        return Ok(values);
    }
    let source = match values {
        Cow::Owned(mut v) => {
            v.retain(|&x| pred(x));
            return Ok(Cow::Owned(v));
        }
        Cow::Borrowed(v) => v,
    };
    let Some(piece) = kept.iter().position(|&count| count > 0) else {
        return Ok(Cow::Owned(Vec::new()));
    };
    let first = source[piece * PIECE..]
        .iter()
        .copied()
        .find(|&x| pred(x))
        .expect("a counted value");
    // Each piece writes its kept values at the offset the counts give it.
    let mut out = crate::alloc::filled(total, first)?;
    let mut rest = &mut out[..];
    let mut targets = Vec::with_capacity(kept.len());
    for &count in &kept {
        let (head, tail) = rest.split_at_mut(count);
        targets.push(head);
        rest = tail;
    }
    source
        .par_chunks(PIECE)
        .zip(targets)
        .for_each(|(piece, target)| {
            let mut slots = target.iter_mut();
            for &x in piece.iter().filter(|&&x| pred(x)) {
                if let Some(slot) = slots.next() {
                    *slot = x;
                }
            }
        });
    Ok(Cow::Owned(out))
}

/// The smallest `x` in `lo..=hi` where `pred` holds, for `pred` false and then true.
fn first_where(mut lo: i128, mut hi: i128, pred: impl Fn(i128) -> bool) -> Option<i128> {
    if !pred(hi) {
        return None;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// `int(np.ceil(delta / width))` with numpy's guards, or why there is no such count.
fn count_from_width(
    estimator: Estimator,
    width: Num,
    delta: Num,
    integer: bool,
) -> HistResult<usize> {
    // `if width:` — zero (either sign) means one bin; NaN is truthy and fails below.
    if width.f64() == 0.0 {
        return Ok(1);
    }
    // Integer data never gets bins narrower than 1 (the Python int 1: float64 division).
    let width = if integer && width.f64() < 1.0 {
        Num::F64(1.0)
    } else {
        width
    };
    let ratio = delta.div(width);
    let count = match ratio {
        Num::F16(r) => r.to_f64().ceil(),
        Num::F32(r) => r.ceil() as f64,
        Num::F64(r) => r.ceil(),
    };
    if !count.is_finite() || count < 1.0 {
        let text = |s: Spelling| {
            format!(
                "{} finds no bin count for this data: a bin width of {} over a span of {} gives \
                 {} bins in {} (numpy fails here too); pass a number of bins or a narrower \
                 `range`",
                estimator.spelled(s),
                show(width.f64()),
                show(delta.f64()),
                show(count),
                ratio.precision()
            )
        };
        // numpy's `int(np.ceil(...))`: OverflowError for infinity, ValueError for NaN (and
        // here for no bins, where numpy would make none).
        return Err(match count.is_infinite() {
            true => HistError::InfiniteBins {
                rust: text(Spelling::Rust),
                python: text(Spelling::Python),
            },
            false => HistError::argument(text),
        });
    }
    if count > MAX_BINS as f64 {
        return Err(HistError::argument(|s| {
            format!(
                "{} estimates {} bins for this data, more than the {MAX_BINS} a histogram can \
                 hold; pass a number of bins or a narrower `range`",
                estimator.spelled(s),
                show(count)
            )
        }));
    }
    Ok(count as usize)
}

/// A float for a message: plain when short, in exponent form when very large or small.
fn show(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e16).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests;
