//! Deterministic weighted sums, one rule for every backend (kernels/fixed.cuh mirrors each step
//! bit for bit): a call's weights are put on one grid of 2^-k, each finite weight rounded once
//! to the nearest multiple (ties to even), and summed exactly in 128-bit two's complement
//! integers; the sum is converted back to a float64 once, correctly rounded. Integer adds do not
//! depend on their order, so the sums are the same bits on every run, thread count, chunking,
//! launch shape and backend.
//!
//! The grid: with `M` the largest finite |weight| of the call (nulls left out), `M < 2^e`, and
//! `rows < 2^b`, `k = 125 - b - e`. Every rounded weight is then at most `2^(125 - b)` in
//! magnitude and any sum of the rows below `2^125`: no sum can overflow. A weight within a
//! factor `2^(72 - b)` of `M` (2^38 for 10^10 rows) lies on the grid and is summed exactly; a
//! smaller one is off by at most half a step, `2^-(k + 1)`, so a sum is within
//! `rows * 2^-(k + 1)` (about `rows^2 * M * 2^-126`) of the exact sum before its one rounding
//! to float64. Non-finite weights keep numpy's float sums: a bin with a NaN weight, or with
//! both infinities, is NaN; one with +inf (-inf) alone is +inf (-inf). A flag a cell carries
//! them beside the integer sum.

use std::sync::OnceLock;

use crate::input::{HostColumn, Values};

/// How weighted sums are summed: the one place that decides. Issue 51's rule: fixed point by
/// default only where it costs at most 10% against float sums at 256 and 65,536 bins; else float
/// sums by default and fixed point behind a flag (`POLARS_GPU_HIST_SUMS=fixed`). On the CPU (2
/// cores, BENCHMARKS.md) fixed point cost 2.6-3.9x at 256 bins and 4.5-6.5x at 65,536, whole
/// calls, so the default is float64 additions. Both backends must sum one way for their bits to
/// agree, so this one constant decides for both (the GPU's cost is `benches/weighted_sums.py`'s
/// on the device; the kernel bundle holds this way's weighted kernels).
pub const DEFAULT_SUMS: Sums = Sums::Float;

/// `POLARS_GPU_HIST_SUMS=fixed` (or `float`) overrides [`DEFAULT_SUMS`] for a process: the
/// deterministic sums are opt-in, and a benchmark can measure both.
pub const SUMS_ENV: &str = "POLARS_GPU_HIST_SUMS";

/// Fixed point (this module's rule: the same bits everywhere), or plain float64 additions in
/// whatever order the threads and atomics make (the last bits vary from run to run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sums {
    Fixed,
    Float,
}

/// The process's way of summing weights: [`SUMS_ENV`], else [`DEFAULT_SUMS`], chosen once (as
/// the CPU's instruction set is): every kernel and loop of a process sums one way.
pub fn sums() -> Sums {
    static CHOSEN: OnceLock<Sums> = OnceLock::new();
    *CHOSEN.get_or_init(|| match std::env::var(SUMS_ENV).as_deref().map(str::trim) {
        Ok("float") => Sums::Float,
        Ok("fixed") => Sums::Fixed,
        _ => DEFAULT_SUMS,
    })
}

/// Bits of the grid's headroom: the sum of every row stays below 2^GRID_BITS.
const GRID_BITS: i32 = 125;

/// A cell's flags for the non-finite weights it saw (fixed.cuh `FIXED_*`).
const POS_INF: u8 = 1;
const NEG_INF: u8 = 2;
const NAN: u8 = 4;

const FRACTION: u64 = (1 << 52) - 1;

/// The grid's exponent `k` for `rows` weights whose largest finite magnitude is `largest` (0
/// when no weight is finite and non-zero: then every sum is 0 or non-finite).
pub fn exponent(largest: f64, rows: u64) -> i32 {
    if !(largest > 0.0 && largest.is_finite()) {
        return 0;
    }
    let bits = largest.to_bits();
    let biased = (bits >> 52) as i32;
    // largest < 2^e
    let e = if biased == 0 {
        (64 - (bits & FRACTION).leading_zeros()) as i32 - 1074
    } else {
        biased - 1022
    };
    let b = (64 - rows.leading_zeros()) as i32;
    GRID_BITS - b - e
}

/// `round(w * 2^k)`, ties to even, of a finite `w`, from its bits (its sign applied without a
/// branch: random signs mispredicted one row in two).
#[inline(always)]
pub fn fixed_of(w: f64, k: i32) -> i128 {
    let bits = w.to_bits();
    let biased = (bits >> 52 & 0x7FF) as i32;
    // w = m * 2^(e - 1075), with the implicit bit where w is normal.
    let m = (bits & FRACTION) | u64::from(biased != 0) << 52;
    let s = biased.max(1) - 1075 + k;
    let q = if s >= 0 {
        (m as u128) << s
    } else {
        u128::from(shifted_right(m, (-s) as u32))
    };
    let negative = 0u128.wrapping_sub(u128::from(bits >> 63));
    ((q ^ negative).wrapping_sub(negative)) as i128
}

/// `m / 2^r` rounded to the nearest integer, ties to even (`r >= 1`).
#[inline(always)]
fn shifted_right(m: u64, r: u32) -> u64 {
    if r >= 54 {
        return 0; // m < 2^53 <= 2^(r - 1): below a half
    }
    let kept = m >> r;
    let rest = m & ((1 << r) - 1);
    let half = 1u64 << (r - 1);
    kept + u64::from(rest > half || (rest == half && kept & 1 == 1))
}

/// 2^a for -1022 <= a <= 1023, from its bits.
fn pow2(a: i32) -> f64 {
    f64::from_bits(((1023 + a) as u64) << 52)
}

/// `x * 2^k` in two exact steps (each power a normal float64): rounded once where the result is
/// subnormal, and never in between where it matters.
fn times_pow2(x: f64, k: i32) -> f64 {
    let a = k / 2;
    x * pow2(a) * pow2(k - a)
}

/// One cell's sum of weights on the grid, exact (128-bit two's complement, as two words so that
/// a cell takes 24 bytes, not the 32 an aligned i128 would: 65,536 cells a task stay closer to
/// the caches), and the non-finite weights it saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FixedSum {
    lo: u64,
    hi: u64,
    flags: u8,
}

impl FixedSum {
    /// A cell holding `sum` on the grid (no non-finite weights).
    #[cfg(test)]
    pub fn of(sum: i128) -> FixedSum {
        FixedSum {
            lo: sum as u64,
            hi: (sum >> 64) as u64,
            flags: 0,
        }
    }

    /// The exact sum on the grid.
    pub fn sum(&self) -> i128 {
        ((self.hi as u128) << 64 | self.lo as u128) as i128
    }

    #[inline(always)]
    fn plus(&mut self, q: i128) {
        let sum = self.sum().wrapping_add(q);
        self.lo = sum as u64;
        self.hi = (sum >> 64) as u64;
    }

    /// Adds the weight `w` on the grid 2^-k.
    #[inline(always)]
    pub fn add(&mut self, w: f64, k: i32) {
        if w.is_finite() {
            self.plus(fixed_of(w, k));
        } else {
            self.flags |= if w.is_nan() {
                NAN
            } else if w > 0.0 {
                POS_INF
            } else {
                NEG_INF
            };
        }
    }

    /// Adds another cell of the same grid (exact: the grid's bound keeps every sum in range).
    #[inline]
    pub fn merge(&mut self, other: &FixedSum) {
        self.plus(other.sum());
        self.flags |= other.flags;
    }

    /// The float64 of the cell: the sum correctly rounded, times 2^-k; or the non-finite value
    /// its flags give (numpy's float sums).
    pub fn value(&self, k: i32) -> f64 {
        let infinities = self.flags & (POS_INF | NEG_INF);
        if self.flags & NAN != 0 || infinities == POS_INF | NEG_INF {
            return f64::NAN;
        }
        if infinities == POS_INF {
            return f64::INFINITY;
        }
        if infinities == NEG_INF {
            return f64::NEG_INFINITY;
        }
        let sum = self.sum();
        let v = times_pow2(sum.unsigned_abs() as f64, -k);
        if sum < 0 {
            -v
        } else {
            v
        }
    }
}

/// The largest finite |weight| of a float64 column, its nulls left out (0 where there is none).
pub fn largest_magnitude(weights: &HostColumn<'_>) -> f64 {
    let mut largest = 0f64;
    for chunk in &weights.chunks {
        let Values::F64(w) = chunk.values else {
            unreachable!("weights are Float64")
        };
        // Finite magnitudes, their bits compared as integers (a float64 >= 0 orders as its
        // bits): a branch-free fold that vectorizes.
        let magnitude = |x: f64| {
            let m = x.to_bits() & !(1 << 63);
            if m < 0x7FF0 << 48 {
                m
            } else {
                0
            }
        };
        let most = match &chunk.validity {
            None => w.iter().map(|&x| magnitude(x)).max().unwrap_or(0),
            Some(v) => w
                .iter()
                .enumerate()
                .map(|(i, &x)| if v.is_valid(i) { magnitude(x) } else { 0 })
                .max()
                .unwrap_or(0),
        };
        largest = largest.max(f64::from_bits(most));
    }
    largest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weights on the grid sum exactly; a sum is correctly rounded; order, grouping and signs do
    /// not change a bit; non-finite weights give numpy's float sums.
    #[test]
    fn sums_are_exact_on_the_grid_and_independent_of_order() {
        let k = exponent(3.0, 4);
        let mut a = FixedSum::default();
        [0.1, 0.2, 3.0, -0.3].iter().for_each(|&w| a.add(w, k));
        let mut b = FixedSum::default();
        [-0.3, 3.0, 0.2, 0.1].iter().for_each(|&w| b.add(w, k));
        assert_eq!(a, b);
        // The exact sum of the four float64 values, correctly rounded, is 3.0 (numpy's float
        // sum in this order gives 3.0000000000000004).
        assert_eq!(a.value(k), 3.0);
        // 2^53 + 1 and + 1 more: float64 sums lose the ones, the exact sum keeps them.
        let big = 2f64.powi(53);
        let k = exponent(big, 3);
        let mut c = FixedSum::default();
        [big, 1.0, 1.0].iter().for_each(|&w| c.add(w, k));
        assert_eq!(c.value(k), big + 2.0);
        // Halves of two: ties to even on the grid.
        assert_eq!(fixed_of(2.5, 0), 2);
        assert_eq!(fixed_of(3.5, 0), 4);
        assert_eq!(fixed_of(-2.5, 0), -2);
        assert_eq!(fixed_of(0.25, 1), 0);
        assert_eq!(fixed_of(0.75, 1), 2);
        assert_eq!(fixed_of(f64::from_bits(1), 1074), 1);
        assert_eq!(fixed_of(f64::from_bits(1), 1073), 0);
        let special = |ws: &[f64]| {
            let mut s = FixedSum::default();
            ws.iter().for_each(|&w| s.add(w, 0));
            s.value(0)
        };
        assert!(special(&[1.0, f64::NAN]).is_nan());
        assert!(special(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
        assert_eq!(special(&[1.0, f64::INFINITY]), f64::INFINITY);
        assert_eq!(special(&[f64::NEG_INFINITY, 5.0]), f64::NEG_INFINITY);
        assert_eq!(special(&[]), 0.0);
    }

    /// At the grid's extremes (the largest and the smallest float64, one row and 2^64 - 1) no
    /// rounded weight passes the bound, and conversions stay in range.
    #[test]
    fn the_grid_bounds_every_sum() {
        for largest in [f64::MAX, 1.0, f64::MIN_POSITIVE, f64::from_bits(1), 3e-310] {
            for rows in [1u64, 2, 1000, u64::MAX] {
                let k = exponent(largest, rows);
                let b = 64 - rows.leading_zeros() as i32;
                let q = fixed_of(largest, k);
                assert!(q > 0 && q <= 1i128 << (GRID_BITS - b), "{largest} {rows}");
                let cell = FixedSum::of(q);
                assert!(cell.value(k) <= largest, "{largest} {rows}");
                assert!(cell.value(k) >= largest * (1.0 - 1e-15), "{largest} {rows}");
            }
        }
    }

    /// The conversion back is correctly rounded: against float64's own sum where that is exact.
    #[test]
    fn conversion_rounds_correctly() {
        let mut state = 12345u64;
        for _ in 0..10_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = f64::from_bits(state >> 12 | 0x3FF0_0000_0000_0000) - 1.0; // [0, 1)
            let k = exponent(1.0, 1 << 20);
            let cell = FixedSum::of(fixed_of(x, k));
            assert_eq!(cell.value(k), x);
            let neg = FixedSum::of(-fixed_of(x, k));
            assert_eq!(neg.value(k), -x);
        }
        // 2^64 + 2^11 + 1 rounds up past the tie (the sticky bit of the low word).
        let cell = FixedSum::of((1i128 << 64) + (1 << 11) + 1);
        assert_eq!(cell.value(0), 2f64.powi(64) + 2f64.powi(12));
        let tie = FixedSum::of((1i128 << 64) + (1 << 11));
        assert_eq!(tie.value(0), 2f64.powi(64));
    }
}
