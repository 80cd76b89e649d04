//! Equal-width bins: numpy's `linspace` edges, numpy's bin estimate and its proved shortcut, and
//! Polars' right-closed rule.

use std::sync::OnceLock;

use crate::bins::Closed;
use crate::error::HistResult;

/// The float type a bin rule computes in.
pub trait BinFloat:
    Copy
    + PartialOrd
    + std::fmt::Debug
    + std::ops::Sub<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Add<Output = Self>
    + Send
    + Sync
    + 'static
{
    const ZERO: Self;
    const HALF: Self;
    /// Whether this is float32 (numpy's arithmetic then stays in float32 where numpy's does).
    const SINGLE: bool;
    fn from_f64(v: f64) -> Self;
    fn from_usize(v: usize) -> Self;
    fn to_f64(self) -> f64;
    /// `self as usize`: truncation, saturating at 0 and at `usize::MAX` (NaN gives 0).
    fn trunc_usize(self) -> usize;
    /// The largest value below `self`.
    fn next_down(self) -> Self;
    fn is_finite(self) -> bool;
}

macro_rules! bin_float {
    ($t:ty, $single:literal) => {
        impl BinFloat for $t {
            const ZERO: Self = 0.0;
            const HALF: Self = 0.5;
            const SINGLE: bool = $single;
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_usize(v: usize) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn trunc_usize(self) -> usize {
                self as usize
            }
            fn next_down(self) -> Self {
                <$t>::next_down(self)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
        }
    };
}
bin_float!(f32, true);
bin_float!(f64, false);

/// numpy's bin estimate `((x - lo) / denom) * n`. `x - lo` is computed in the bins' type; the
/// division and the multiply in float64 when `wide` (numpy's `norm_denom` is then a float64
/// scalar: the range came from Python floats), else in the bins' type (float32 extremes of a
/// Float32 column). Polars' right-closed rule uses `scale = n / (hi - lo)` instead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub denom: f64,
    pub n: f64,
    pub wide: bool,
}

/// Equal-width bins in arithmetic type `F`.
#[derive(Clone, Debug, PartialEq)]
pub struct UniformBins<F> {
    /// `n + 1` edges, as numpy's `linspace` (or Polars' `hist`) makes them.
    pub edges: Vec<F>,
    pub closed: Closed,
    /// numpy's estimate (closed left); Polars' `n / (hi - lo)` sits in `scale` (closed right).
    pub estimate: Estimate,
    /// `n / (hi - lo)`: the cheap estimate `(x - lo) * scale` of closed-left bins, and Polars'
    /// estimate of closed-right ones.
    pub scale: F,
    /// Which rule defines a value's bin.
    pub origin: Origin,
    /// The formula that made `edges`, when one did: a kernel recomputes an edge instead of
    /// reading it from an array larger than its caches.
    pub linspace: Option<Linspace>,
    /// How the closed-left rule may be computed, proved on first use: the proof walks every
    /// bin, which a backend that replays numpy's arithmetic anyway need not pay for.
    pub(crate) proof: OnceLock<Proof<F>>,
}

/// What defines the bin of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `numpy.histogram`: numpy's estimate, corrected by one step each way.
    NumpyEstimate,
    /// `numpy.histogramdd`: the edges alone (`searchsorted`).
    Edges,
    /// Polars' `hist`: closed right, its own estimate corrected once.
    Polars,
}

/// How closed-left bins may be computed exactly, proved for the bins at hand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Proof<F> {
    /// numpy's estimate can miss the edge bin by more than one somewhere, so its arithmetic
    /// must be replayed literally.
    pub literal: bool,
    /// How far the cheap estimate may stray from the edge bin: when its fractional part lies in
    /// `(margin, 1 - margin)` the bin is certain without reading an edge (0.5 disables the
    /// shortcut).
    pub margin: F,
}

/// Edge `i < n` is `i as P * step + start` rounded to the bins' type, with `P` float32 when
/// `single`, else float64 (one multiply, one add, no fused multiply-add); edge `n` is the
/// last edge as stored. This is how [`linspace`] and Polars' breaks evaluate them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Linspace {
    pub start: f64,
    pub step: f64,
    pub single: bool,
}

impl Linspace {
    /// Edge `i < n` in the bins' type `F`, as the kernels compute it (tests hold it to the
    /// stored edges).
    pub fn edge<F: BinFloat>(&self, i: usize) -> F {
        if self.single {
            F::from_f64((i as f32 * self.step as f32 + self.start as f32) as f64)
        } else {
            F::from_f64(i as f64 * self.step + self.start)
        }
    }
}

/// Below this many values a table is filled on the calling thread.
pub(crate) const PARALLEL_LEN: usize = 1 << 16;

/// `[f(0), ..., f(len - 1)]`, on every core when `len` is large: each value is computed on
/// its own, so the result does not depend on the split. An out-of-memory error, not an abort,
/// when `len` values do not fit.
pub(crate) fn table<T: Send>(
    len: usize,
    f: impl Fn(usize) -> T + Sync + Send,
) -> HistResult<Vec<T>> {
    use rayon::prelude::*;
    let mut out = crate::alloc::with_capacity(len)?;
    if len < PARALLEL_LEN {
        out.extend((0..len).map(f));
    } else {
        // An indexed parallel iterator writes into the reserved room: no other allocation.
        out.par_extend((0..len).into_par_iter().with_min_len(1 << 14).map(f));
    }
    Ok(out)
}

/// numpy's `linspace(start, stop, n + 1)` computed in `P`: `i * ((stop - start) / n) + start`,
/// with the last edge set to `stop`; and that formula, unless the step underflows to 0 or the
/// span overflows.
pub fn linspace<P: BinFloat>(
    start: P,
    stop: P,
    n: usize,
) -> HistResult<(Vec<P>, Option<Linspace>)> {
    linspace_as(start, stop, n)
}

/// [`linspace`] computed in `P`, each edge then rounded to `F` (numpy's `linspace(...,
/// dtype=F)`), in one pass and without an array of `P`.
pub fn linspace_as<P: BinFloat, F: BinFloat>(
    start: P,
    stop: P,
    n: usize,
) -> HistResult<(Vec<F>, Option<Linspace>)> {
    let delta = stop - start;
    let div = P::from_usize(n);
    let step = delta / div;
    let to_f = |p: P| F::from_f64(p.to_f64());
    let (mut edges, formula): (Vec<F>, _) = if !delta.is_finite() {
        // The span overflows `P` (numpy makes NaN edges here): each edge as a weighted mean of
        // the ends, which stays finite.
        let edges = table(n + 1, |i| {
            let t = P::from_usize(i) / div;
            to_f(start - start * t + stop * t)
        })?;
        (edges, None)
    } else if step.to_f64() == 0.0 {
        let edges = table(n + 1, |i| to_f(P::from_usize(i) / div * delta + start))?;
        (edges, None)
    } else {
        let edges = table(n + 1, |i| to_f(P::from_usize(i) * step + start))?;
        let formula = Linspace {
            start: start.to_f64(),
            step: step.to_f64(),
            single: P::SINGLE,
        };
        (edges, Some(formula))
    };
    edges[n] = to_f(stop);
    Ok((edges, formula))
}

impl<F: BinFloat> UniformBins<F> {
    /// A copy, or an out-of-memory error.
    pub fn try_clone(&self) -> HistResult<Self> {
        Ok(UniformBins {
            edges: crate::alloc::copied(&self.edges)?,
            closed: self.closed,
            estimate: self.estimate,
            scale: self.scale,
            origin: self.origin,
            linspace: self.linspace,
            proof: self.proof.clone(),
        })
    }

    /// numpy's bins (`numpy.histogram`).
    pub fn numpy(edges: Vec<F>, estimate: Estimate, linspace: Option<Linspace>) -> Self {
        UniformBins {
            scale: Self::scale_of(&edges),
            edges,
            closed: Closed::Left,
            estimate,
            origin: Origin::NumpyEstimate,
            linspace,
            proof: OnceLock::new(),
        }
    }

    /// Equal bins binned by their edges alone, as `numpy.histogramdd` does (`searchsorted` on
    /// the linspace edges): the cheap rule always finds the edge bin, so it is never literal.
    pub fn edge_bin(edges: Vec<F>, linspace: Option<Linspace>) -> Self {
        let n = edges.len() - 1;
        UniformBins {
            scale: Self::scale_of(&edges),
            estimate: Estimate {
                denom: edges[n].to_f64() - edges[0].to_f64(),
                n: n as f64,
                wide: true,
            },
            edges,
            closed: Closed::Left,
            origin: Origin::Edges,
            linspace,
            proof: OnceLock::new(),
        }
    }

    /// Polars' `hist(bin_count=n)` bins over `edges` (closed right, float64 in Polars).
    pub fn polars(edges: Vec<F>, linspace: Option<Linspace>) -> Self {
        let n = edges.len() - 1;
        UniformBins {
            scale: F::from_f64(n as f64 / (edges[n].to_f64() - edges[0].to_f64())),
            estimate: Estimate {
                denom: 0.0,
                n: n as f64,
                wide: true,
            },
            edges,
            closed: Closed::Right,
            origin: Origin::Polars,
            linspace,
            proof: OnceLock::from(Proof {
                literal: true,
                margin: F::HALF,
            }),
        }
    }

    /// These bins with their closed-left rule set rather than proved (tests, and rules known
    /// to be exact).
    pub fn with_proof(mut self, literal: bool, margin: F) -> Self {
        self.proof = OnceLock::from(Proof { literal, margin });
        self
    }

    /// The closed-left rule, proved once for these bins.
    pub fn proof(&self) -> Proof<F> {
        *self.proof.get_or_init(|| {
            // Over a subnormal span `scale` overflows and the cheap estimate would walk O(n)
            // edges a value; numpy's own estimate stays finite there.
            let literal = self.origin == Origin::NumpyEstimate
                && (!self.scale.to_f64().is_finite() || !self.numpy_estimate_is_near_everywhere());
            Proof {
                literal,
                margin: if literal {
                    F::HALF
                } else {
                    self.cheap_estimate_margin()
                },
            }
        })
    }

    /// Whether numpy's arithmetic must be replayed (closed left): see [`Proof::literal`].
    #[inline(always)]
    pub fn literal(&self) -> bool {
        self.proof().literal
    }

    /// See [`Proof::margin`].
    #[inline(always)]
    pub fn margin(&self) -> F {
        self.proof().margin
    }

    /// `n / (hi - lo)` in `F`, the span taken in float64 so that it cannot overflow.
    fn scale_of(edges: &[F]) -> F {
        let n = edges.len() - 1;
        F::from_f64(n as f64 / (edges[n].to_f64() - edges[0].to_f64()))
    }

    /// The cheap estimate, `(x - lo) * scale` in `F`, as the kernels compute it.
    #[inline(always)]
    pub fn cheap_estimate(&self, x: F) -> F {
        (x - self.edges[0]) * self.scale
    }

    /// The largest distance, in bins, by which the cheap estimate of any value leaves its edge
    /// bin (monotone again: each bin's first and last value bound it), with room to spare; 0.5
    /// when it is too large to help or the fractional part cannot be computed exactly.
    fn cheap_estimate_margin(&self) -> F {
        use rayon::prelude::*;
        let n = self.len();
        // f - trunc(f) is exact below 2^24 (float32) or 2^53: keep well inside.
        let exact_below = if F::SINGLE { 1 << 22 } else { 1 << 50 };
        if n >= exact_below {
            return F::HALF;
        }
        let slack = |b: usize| {
            let first = self.cheap_estimate(self.edges[b]).to_f64();
            let last = self.cheap_estimate(self.last_of(b)).to_f64();
            (b as f64 - first).max(last - (b + 1) as f64).max(0.0)
        };
        let worst = (0..n)
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(slack)
            .reduce(|| 0.0, f64::max);
        // Twice the worst case plus a little: the kernel compares a rounded fraction.
        let margin = 2.0 * worst + 1e-3;
        if margin < 0.25 {
            F::from_f64(margin)
        } else {
            F::HALF
        }
    }

    /// The last value of bin `b`: the value before the next edge, or the last edge itself.
    #[inline(always)]
    fn last_of(&self, b: usize) -> F {
        if b + 1 == self.len() {
            self.edges[b + 1]
        } else {
            self.edges[b + 1].next_down()
        }
    }

    /// numpy's estimate before its correction, `n - 1` for `n` as numpy clamps it.
    #[inline(always)]
    pub fn numpy_estimate(&self, x: F) -> usize {
        let n = self.len();
        let i = self.numpy_estimate_unrounded(x).trunc_usize();
        if i == n {
            n - 1
        } else {
            i
        }
    }

    /// numpy's `((x - lo) / denom) * n` before it is truncated to a bin (exact as float64: in
    /// float32 it is computed in float32 and widened).
    #[inline(always)]
    fn numpy_estimate_unrounded(&self, x: F) -> f64 {
        let Estimate {
            denom,
            n: n_f,
            wide,
        } = self.estimate;
        let d = x - self.edges[0];
        if wide || !F::SINGLE {
            (d.to_f64() / denom) * n_f
        } else {
            ((d / F::from_f64(denom)) * F::from_f64(n_f)).to_f64()
        }
    }

    /// Whether numpy's estimate lies within one bin of the edge bin for every `x`: the estimate
    /// is monotone, so the first and last value of each bin bound it over the whole bin.
    fn numpy_estimate_is_near_everywhere(&self) -> bool {
        use rayon::prelude::*;
        let n = self.len();
        // No early exit inside a block: the loop runs without branches.
        const BLOCK: usize = 1 << 12;
        let block_near = |k: usize| {
            (k * BLOCK..n.min((k + 1) * BLOCK)).fold(true, |all, b| all & self.estimate_is_near(b))
        };
        let blocks = n.div_ceil(BLOCK);
        if n < PARALLEL_LEN {
            (0..blocks).all(block_near)
        } else {
            (0..blocks).into_par_iter().all(block_near)
        }
    }

    /// Whether numpy's estimate of bin `b`'s first value is at least `b - 1` and that of its last
    /// value at most `b + 1`, decided by comparing floats instead of truncating them (no
    /// branches or conversions). With `v` the unrounded estimate and `t = trunc(v)` (0 for NaN
    /// or below 0):
    /// - first: the clamp of `n` to `n - 1` keeps it at least `b - 1`, so this is `t >= b - 1`:
    ///   always true for `b <= 1`, and for `b >= 2` the same as `v >= b - 1` (NaN and negatives
    ///   fail both);
    /// - last: `t <= b + 1`, which is `v < b + 2` or `v` NaN, or `t == n` (clamped
    ///   to `n - 1 <= b + 1`), which is `n <= v < n + 1`.
    ///
    /// `tests::the_float_proof_is_the_estimates_own` holds it to the estimate bin by bin.
    ///
    /// An infinite estimate is `x - lo` overflowing float32 (a span wider than float32 holds):
    /// numpy's index is then garbage and it fails (IndexError), so no answer of numpy's is at
    /// stake there and the edge bin stands (README: values placed by the edges alone).
    #[inline(always)]
    pub(super) fn estimate_is_near(&self, b: usize) -> bool {
        let n = self.len();
        let first = self.numpy_estimate_unrounded(self.edges[b]);
        let last = self.numpy_estimate_unrounded(self.last_of(b));
        let first_ok = (b <= 1) | (first >= b.saturating_sub(1) as f64);
        let clamped = (b + 2 >= n) & (last >= n as f64) & (last < (n + 1) as f64);
        let overflows = last == f64::INFINITY;
        let last_ok = (last < (b + 2) as f64) | last.is_nan() | clamped | overflows;
        first_ok & last_ok
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.edges.len() - 1
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bin of `x`, or `self.len()` when `x` is not counted.
    #[inline(always)]
    pub fn bin(&self, x: F) -> usize {
        match self.closed {
            Closed::Left => self.bin_left(x),
            Closed::Right => self.bin_right(x),
        }
    }

    #[inline(always)]
    pub fn bin_left(&self, x: F) -> usize {
        let e = &self.edges[..];
        let n = e.len() - 1;
        if !(x >= e[0] && x <= e[n]) {
            return n;
        }
        let Proof { literal, margin } = self.proof();
        if literal {
            // numpy's own steps; i > 0 whenever x < e[i], since x >= e[0].
            let mut i = self.numpy_estimate(x).min(n - 1);
            if x < e[i] {
                i -= 1;
            }
            if i != n - 1 && x >= e[i + 1] {
                i += 1;
            }
            return i;
        }
        // The edge bin: e[i] <= x < e[i+1], the last bin closed. Away from a boundary the
        // estimate alone is proof (see `margin`); near one, search from it.
        let f = self.cheap_estimate(x);
        let mut i = f.trunc_usize().min(n - 1);
        let frac = f - F::from_usize(i);
        if frac > margin && frac < F::HALF + F::HALF - margin {
            return i;
        }
        while i > 0 && x < e[i] {
            i -= 1;
        }
        while i < n - 1 && x >= e[i + 1] {
            i += 1;
        }
        i
    }

    /// Polars' rule: `(e[i], e[i+1]]`, the first bin closed on both sides, estimated as
    /// `trunc(scale * (x - lo))` and corrected once.
    #[inline(always)]
    pub fn bin_right(&self, x: F) -> usize {
        let e = &self.edges[..];
        let n = e.len() - 1;
        let lo = e[0];
        if x == lo {
            return 0;
        }
        if !(x > lo && x <= e[n]) {
            return n;
        }
        let mut i = (self.scale * (x - lo)).trunc_usize().min(n - 1);
        if x <= e[i] {
            i -= 1;
        } else if x > e[i + 1] {
            i += 1;
        }
        i
    }
}
