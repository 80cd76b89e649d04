//! The arithmetic numpy's statistics run, replayed: pairwise and buffered sums, the C library's
//! `pow`, percentiles by linear interpolation between order statistics (a radix selection), and
//! OpenBLAS' `ddot` order.

use std::hint::black_box;

use rayon::prelude::*;

use super::{SampleValue, PIECE};
use crate::error::HistResult;

/// `np.float32(np.float32(sum) / np.intp(n))`: the division is float64, rounded back.
pub(super) fn div_rounded_f32(sum: f32, n: usize) -> f32 {
    (sum as f64 / n as f64) as f32
}

/// Python's `x ** y` for positive floats: the C library's `pow` (kept from constant folding,
/// which could use another implementation).
pub(super) fn python_pow(x: f64, y: f64) -> f64 {
    black_box(x).powf(black_box(y))
}

pub(super) fn libm_pow(x: f64, y: f64) -> f64 {
    x.powf(black_box(y))
}

pub(super) fn libm_powf(x: f32, y: f32) -> f32 {
    x.powf(black_box(y))
}

/// Sums numpy computes in float32 or float64.
pub(super) trait Accumulator: Copy + Send + std::ops::Add<Output = Self> {
    const ZERO: Self;
}

impl Accumulator for f32 {
    const ZERO: Self = 0.0;
}

impl Accumulator for f64 {
    const ZERO: Self = 0.0;
}

/// Below this many values a pairwise sum stays on one thread (the tree is the same either way).
const PARALLEL_SUM: usize = 1 << 16;

/// numpy's `pairwise_sum` of `f(x)` over `x` (its `add.reduce` of a contiguous array): blocks of
/// at most 128 summed by 8 accumulators, halves split at a multiple of 8.
pub(super) fn pairwise_sum<T: Copy + Sync, A: Accumulator>(
    x: &[T],
    f: impl Fn(T) -> A + Sync + Copy,
) -> A {
    let n = x.len();
    if n < 8 {
        let mut res = A::ZERO;
        for &v in x {
            res = res + f(v);
        }
        res
    } else if n <= 128 {
        let mut r = [A::ZERO; 8];
        for (acc, &v) in r.iter_mut().zip(&x[..8]) {
            *acc = f(v);
        }
        let whole = n - n % 8;
        for block in x[8..whole].chunks_exact(8) {
            for (acc, &v) in r.iter_mut().zip(block) {
                *acc = *acc + f(v);
            }
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &x[whole..] {
            res = res + f(v);
        }
        res
    } else {
        if n >= INTERRUPT_EVERY && crate::interrupt::pending() {
            return A::ZERO; // never used: the estimate checks before reading it
        }
        let mut half = n / 2;
        half -= half % 8;
        let (left, right) = x.split_at(half);
        if n >= PARALLEL_SUM {
            let (a, b) = rayon::join(|| pairwise_sum(left, f), || pairwise_sum(right, f));
            a + b
        } else {
            pairwise_sum(left, f) + pairwise_sum(right, f)
        }
    }
}

/// Values a pass reads between two looks for Ctrl-C (`crate::interrupt`).
const INTERRUPT_EVERY: usize = 1 << 16;

/// numpy's buffer, in values, when a reduction casts (`np.getbufsize()`).
const NUMPY_BUFFER: usize = 8192;

/// `np.add.reduce(x, dtype=float64)` of integers: each buffer of 8192 cast values summed
/// pairwise, the buffers added in order.
pub(super) fn buffered_sum_f64<T: SampleValue>(x: &[T]) -> f64 {
    let partial: Vec<f64> = x
        .par_chunks(NUMPY_BUFFER)
        .map(|chunk| pairwise_sum(chunk, |v: T| v.to_f64()))
        .collect();
    partial.into_iter().fold(0.0, |acc, s| acc + s)
}

/// `np.add.reduce(f(x), dtype=float32)` of float16 values (as `np.mean` sums them): each buffer
/// of 8192 cast values summed pairwise in float32, the buffers added in order in float32.
pub(super) fn buffered_sum_f32<T: Copy + Sync>(x: &[T], f: impl Fn(T) -> f32 + Sync + Copy) -> f32 {
    let partial: Vec<f32> = x
        .par_chunks(NUMPY_BUFFER)
        .map(|chunk| pairwise_sum(chunk, f))
        .collect();
    partial.into_iter().fold(0.0, |acc, s| acc + s)
}

/// `np.percentile(x, [75, 25])` (method "linear"), as float64; `extremes` are `x`'s.
pub(super) fn quartiles<T: SampleValue>(x: &[T], extremes: (T, T)) -> HistResult<(f64, f64)> {
    let n = x.len();
    // `(n - 1) * q`, its floor and its fractional part, clamped to the last value as numpy does
    // (its index -1, hence the fraction `v - (-1)`).
    let position = |q: f64| {
        let virtual_index = (n - 1) as f64 * q;
        if virtual_index >= (n - 1) as f64 {
            (n - 1, n - 1, virtual_index + 1.0)
        } else {
            let below = virtual_index.floor();
            (below as usize, below as usize + 1, virtual_index - below)
        }
    };
    let (lo75, hi75, t75) = position(0.75);
    let (lo25, hi25, t25) = position(0.25);
    let mut ranks = vec![lo25, hi25, lo75, hi75];
    ranks.sort_unstable();
    ranks.dedup();
    let values = order_statistics(x, extremes, &ranks)?;
    let at = |rank: usize| values[ranks.binary_search(&rank).expect("a requested rank")];
    Ok((lerp(at(lo75), at(hi75), t75), lerp(at(lo25), at(hi25), t25)))
}

/// Bits of the sort key each radix pass looks at.
const DIGIT_BITS: u32 = 16;

/// Below this many candidates a copy is sorted instead.
pub(super) const SORT_BELOW: usize = 1 << 15;

/// The values at `ranks` (ascending, distinct) of `x` sorted, by parallel radix selection: a
/// histogram of 16 bits of the sort keys, from the highest bit where the keys differ, finds the
/// bucket each rank lies in, which is narrowed the same way until it holds one value or few
/// enough to sort. A bucket is copied out only when it holds at most half of the values looked
/// at, so the copies together stay below the size of `x`. `(min, max)` are `x`'s extremes.
pub(super) fn order_statistics<T: SampleValue>(
    x: &[T],
    (min, max): (T, T),
    ranks: &[usize],
) -> HistResult<Vec<T>> {
    let mut out = vec![x[0]; ranks.len()];
    let all = Candidates {
        x,
        prefix: None,
        len: x.len(),
        keys: (min.key(), max.key()),
    };
    all.select(ranks, &mut out)?;
    Ok(out)
}

/// The values of `x` whose key, shifted right by `prefix.0`, equals `prefix.1` (all of `x` when
/// `prefix` is `None`): `len` of them, with keys in `keys`.
struct Candidates<'a, T> {
    x: &'a [T],
    prefix: Option<(u32, u64)>,
    len: usize,
    keys: (u64, u64),
}

impl<T: SampleValue> Candidates<'_, T> {
    fn select(&self, ranks: &[usize], out: &mut [T]) -> HistResult<()> {
        // One loop per kind of candidate set, so the common one tests nothing per value.
        match self.prefix {
            None => self.select_where(ranks, out, |_| true),
            Some((shift, prefix)) => {
                self.select_where(ranks, out, move |v: T| v.key() >> shift == prefix)
            }
        }
    }

    fn select_where(
        &self,
        ranks: &[usize],
        out: &mut [T],
        holds: impl Fn(T) -> bool + Sync + Copy,
    ) -> HistResult<()> {
        let (low, high) = self.keys;
        if low == high {
            let any = self.x.par_iter().find_any(|&&v| holds(v));
            out.fill(*any.expect("a candidate"));
            return Ok(());
        }
        if self.len <= SORT_BELOW {
            let mut sorted: Vec<T> = self.x.iter().copied().filter(|&v| holds(v)).collect();
            sorted.sort_unstable_by(|a, b| a.order(b));
            for (value, &rank) in out.iter_mut().zip(ranks) {
                *value = sorted[rank];
            }
            return Ok(());
        }
        // Every key shares the bits above the highest differing one: the digit below is monotone.
        let top = 63 - (low ^ high).leading_zeros();
        let shift = top.saturating_sub(DIGIT_BITS - 1);
        let digit = move |v: T| ((v.key() >> shift) as usize) & ((1 << DIGIT_BITS) - 1);
        // A bucket holds a single value once the digit reaches the key's last significant bit.
        let exact = shift <= 64 - T::KEY_BITS;
        let part_len = self
            .x
            .len()
            .div_ceil(rayon::current_num_threads() * 4)
            .max(PIECE);
        let counts: Vec<Vec<u32>> = self
            .x
            .par_chunks(part_len)
            .map(|part| {
                let mut count = vec![0u32; 1 << DIGIT_BITS];
                for block in part.chunks(INTERRUPT_EVERY) {
                    if crate::interrupt::pending() {
                        break;
                    }
                    for &v in block {
                        if holds(v) {
                            count[digit(v)] += 1;
                        }
                    }
                }
                count
            })
            .collect();
        crate::interrupt::check()?;
        let mut first = 0; // rank of the bucket's first value
        let mut r = 0; // ranks[..r] are resolved
        for bucket in 0..1usize << DIGIT_BITS {
            let size: usize = counts.iter().map(|c| c[bucket] as usize).sum();
            let end = first + size;
            let inside = ranks[r..].iter().take_while(|&&rank| rank < end).count();
            if inside > 0 {
                let local: Vec<usize> = ranks[r..r + inside].iter().map(|&k| k - first).collect();
                let slots = &mut out[r..r + inside];
                let in_bucket = |v: T| holds(v) && digit(v) == bucket;
                if exact {
                    let any = self.x.par_iter().find_any(|&&v| in_bucket(v));
                    slots.fill(*any.expect("a counted bucket"));
                } else if 2 * size <= self.len {
                    let (values, keys) = gather(self.x, part_len, &counts, bucket, in_bucket)?;
                    let bucket = Candidates {
                        x: &values[..],
                        prefix: None,
                        len: size,
                        keys,
                    };
                    bucket.select(&local, slots)?;
                } else {
                    // Most values are in this bucket: narrow it in place rather than copy it. Its
                    // keys lie between those of its first and last possible digit.
                    let common = (low >> shift) & !((1 << DIGIT_BITS) - 1);
                    let prefix = common | bucket as u64;
                    let below = (1u64 << shift) - 1;
                    let keys = (low.max(prefix << shift), high.min(prefix << shift | below));
                    let bucket = Candidates {
                        x: self.x,
                        prefix: Some((shift, prefix)),
                        len: size,
                        keys,
                    };
                    bucket.select(&local, slots)?;
                }
                r += inside;
                if r == ranks.len() {
                    return Ok(());
                }
            }
            first = end;
        }
        Ok(())
    }
}

/// The values of `x` for which `in_bucket` holds, each part of `x` writing where the per-part
/// counts of `bucket` put it, and their smallest and largest keys.
fn gather<T: SampleValue>(
    x: &[T],
    part_len: usize,
    counts: &[Vec<u32>],
    bucket: usize,
    in_bucket: impl Fn(T) -> bool + Sync,
) -> HistResult<(Vec<T>, (u64, u64))> {
    let total: usize = counts.iter().map(|c| c[bucket] as usize).sum();
    let mut out = crate::alloc::filled(total, x[0])?;
    let mut rest = &mut out[..];
    let mut targets = Vec::with_capacity(counts.len());
    for count in counts {
        let (head, tail) = rest.split_at_mut(count[bucket] as usize);
        targets.push(head);
        rest = tail;
    }
    let keys = x
        .par_chunks(part_len)
        .zip(targets)
        .map(|(part, target)| {
            let (mut low, mut high) = (u64::MAX, 0);
            let mut slots = target.iter_mut();
            for &v in part.iter().filter(|&&v| in_bucket(v)) {
                let key = v.key();
                low = low.min(key);
                high = high.max(key);
                if let Some(slot) = slots.next() {
                    *slot = v;
                }
            }
            (low, high)
        })
        .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    Ok((out, keys))
}

/// numpy's `_lerp(a, b, t)` for one quantile: `a + (b - a) * t`, or `b - (b - a) * (1 - t)` when
/// `t >= 0.5`, the difference in the column's type and the rest in float64.
fn lerp<T: SampleValue>(a: T, b: T, t: f64) -> f64 {
    let diff = T::lerp_diff(a, b);
    if t >= 0.5 {
        b.to_f64() - diff * (1.0 - t)
    } else {
        a.to_f64() + diff * t
    }
}

/// `p.dot(p)` as numpy computes it through OpenBLAS' `ddot` on Haswell and Zen CPUs: 16 values a
/// step into four 4-wide fused multiply-add accumulators, folded as its kernel folds them, the
/// remaining values added one product at a time. (Above 10,000 values OpenBLAS splits the sum
/// over threads; "stone" reaches that only beyond 10^8 values.)
pub(super) fn openblas_ddot_self(p: &[f64]) -> f64 {
    let whole = p.len() & !15;
    let mut dot = 0.0;
    if whole > 0 {
        let mut acc = [[0.0f64; 4]; 4];
        for block in p[..whole].chunks_exact(16) {
            for (v, lanes) in acc.iter_mut().enumerate() {
                for (l, lane) in lanes.iter_mut().enumerate() {
                    let x = block[4 * v + l];
                    *lane = x.mul_add(x, *lane);
                }
            }
        }
        // Each ymm accumulator: high half added to low half; then (4+5) + (6+7); then the
        // horizontal add of the two lanes.
        let halves = acc.map(|a| [a[0] + a[2], a[1] + a[3]]);
        let lane = |l: usize| (halves[0][l] + halves[1][l]) + (halves[2][l] + halves[3][l]);
        dot = lane(0) + lane(1);
    }
    for &x in &p[whole..] {
        dot += x * x;
    }
    dot
}
