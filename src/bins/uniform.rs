//! Equal-width bins: numpy's `linspace` edges, numpy's bin estimate and its proved shortcut, and
//! Polars' right-closed rule.

use std::sync::OnceLock;

use crate::bins::linspace::{Edges, PARALLEL_LEN};
use crate::bins::{Closed, Linspace};
use crate::error::HistResult;

mod proofs;

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

/// The last value of bin `b` of these `edges`: the value before the next edge, or the last edge
/// itself.
#[inline(always)]
fn last_of<F: BinFloat>(edges: &[F], b: usize) -> F {
    let next = edges[b + 1];
    if b + 2 == edges.len() {
        next
    } else {
        next.next_down()
    }
}

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
#[derive(Clone, Debug)]
pub struct UniformBins<F> {
    /// `n + 1` edges, as numpy's `linspace` (or Polars' `hist`) makes them (on first use, from
    /// the formula that makes them, where one does).
    pub(crate) edges: Edges<F>,
    pub closed: Closed,
    /// numpy's estimate (closed left); Polars' `n / (hi - lo)` sits in `scale` (closed right).
    pub estimate: Estimate,
    /// `n / (hi - lo)`: the cheap estimate `(x - lo) * scale` of closed-left bins, and Polars'
    /// estimate of closed-right ones.
    pub scale: F,
    /// Which rule defines a value's bin.
    pub origin: Origin,
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

/// What the proof's walks over every bin find, on the host or on the device (`gpu::proof`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Walk {
    /// numpy's estimate of every bin's first and last value lies within one bin of it.
    pub near: bool,
    /// How far the cheap estimate of any value leaves its edge bin, in bins.
    pub worst: f64,
}

impl<F: BinFloat> PartialEq for UniformBins<F> {
    /// The same bins and rule (a proof is derived from them, proved or not yet).
    fn eq(&self, other: &Self) -> bool {
        (self.closed, self.estimate, self.scale, self.origin)
            == (other.closed, other.estimate, other.scale, other.origin)
            && self.edges == other.edges
    }
}

impl<F: BinFloat> UniformBins<F> {
    /// A copy, or an out-of-memory error.
    pub fn try_clone(&self) -> HistResult<Self> {
        Ok(UniformBins {
            edges: self.edges.try_clone()?,
            closed: self.closed,
            estimate: self.estimate,
            scale: self.scale,
            origin: self.origin,
            proof: self.proof.clone(),
        })
    }

    /// numpy's bins (`numpy.histogram`).
    pub fn numpy(edges: Edges<F>, estimate: Estimate) -> Self {
        UniformBins {
            scale: Self::scale_of(&edges),
            edges,
            closed: Closed::Left,
            estimate,
            origin: Origin::NumpyEstimate,
            proof: OnceLock::new(),
        }
    }

    /// Equal bins binned by their edges alone, as `numpy.histogramdd` does (`searchsorted` on
    /// the linspace edges): the cheap rule always finds the edge bin, so it is never literal.
    pub fn edge_bin(edges: Edges<F>) -> Self {
        let n = edges.bins();
        UniformBins {
            scale: Self::scale_of(&edges),
            estimate: Estimate {
                denom: edges.last().to_f64() - edges.first().to_f64(),
                n: n as f64,
                wide: true,
            },
            edges,
            closed: Closed::Left,
            origin: Origin::Edges,
            proof: OnceLock::new(),
        }
    }

    /// Polars' `hist(bin_count=n)` bins over `edges` (closed right, float64 in Polars).
    pub fn polars(edges: Edges<F>) -> Self {
        let n = edges.bins();
        UniformBins {
            scale: F::from_f64(n as f64 / (edges.last().to_f64() - edges.first().to_f64())),
            estimate: Estimate {
                denom: 0.0,
                n: n as f64,
                wide: true,
            },
            edges,
            closed: Closed::Right,
            origin: Origin::Polars,
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

    /// The closed-left rule, proved once for these bins (once per thread for bins a formula
    /// makes: every group of a `group_by().agg()` asks for the same bins), by walking them on
    /// this host where no walk elsewhere settled it first ([`Self::settle_proof`]).
    pub fn proof(&self) -> Proof<F> {
        self.known_proof().unwrap_or_else(|| {
            self.settle(
                || self.numpy_estimate_is_near_everywhere(),
                || self.cheap_estimate_worst(),
            )
        })
    }

    /// The proof, where it needs no walk: set, settled before, or remembered for these bins.
    pub fn known_proof(&self) -> Option<Proof<F>> {
        if let Some(proof) = self.proof.get() {
            return Some(*proof);
        }
        let (literal, margin) = self.proof_key().and_then(proofs::recall)?;
        Some(*self.proof.get_or_init(|| Proof {
            literal,
            margin: F::from_f64(margin),
        }))
    }

    /// Settles the proof from what a walk made elsewhere found (the device's, `gpu::proof`),
    /// derived as [`Self::proof`] derives it from its own.
    pub fn settle_proof(&self, walk: Walk) -> Proof<F> {
        self.settle(|| walk.near, || walk.worst)
    }

    /// What both walks find on this host, whether or not each would decide (tests hold the
    /// device's walk to it).
    pub fn host_walk(&self) -> Walk {
        Walk {
            near: self.numpy_estimate_is_near_everywhere(),
            worst: self.cheap_estimate_worst(),
        }
    }

    /// The proof from the two walks' findings, each asked for only where it decides, remembered
    /// for bins a formula makes.
    ///
    /// The walks run outside the cell: they fan out on the thread pool, and a thread waiting on
    /// them may be handed a task that asks for this same proof, which would wait forever on an
    /// initialization that its own stack holds. Threads that race here walk twice and agree.
    fn settle(&self, near: impl FnOnce() -> bool, worst: impl FnOnce() -> f64) -> Proof<F> {
        if let Some(proof) = self.proof.get() {
            return *proof;
        }
        // Over a subnormal span `scale` overflows and the cheap estimate would walk O(n)
        // edges a value; numpy's own estimate stays finite there.
        let literal =
            self.origin == Origin::NumpyEstimate && (!self.scale.to_f64().is_finite() || !near());
        let margin = match literal {
            true => F::HALF,
            false => self.margin_of(worst),
        };
        let proof = Proof { literal, margin };
        if let Some(key) = self.proof_key() {
            proofs::remember(key, (proof.literal, proof.margin.to_f64()));
        }
        *self.proof.get_or_init(|| proof)
    }

    /// The cheap estimate's margin from its worst slack ([`Self::cheap_estimate_worst`]), with
    /// room to spare; 0.5 when that is too large to help or the fractional part cannot be
    /// computed exactly.
    fn margin_of(&self, worst: impl FnOnce() -> f64) -> F {
        // f - trunc(f) is exact below 2^24 (float32) or 2^53: keep well inside.
        let exact_below = if F::SINGLE { 1 << 22 } else { 1 << 50 };
        if self.len() >= exact_below {
            return F::HALF;
        }
        // Twice the worst case plus a little: the kernel compares a rounded fraction.
        let margin = 2.0 * worst() + 1e-3;
        if margin < 0.25 {
            F::from_f64(margin)
        } else {
            F::HALF
        }
    }

    /// Everything the proof is derived from, when a formula makes the edges (held edges would
    /// have to be compared whole).
    fn proof_key(&self) -> Option<proofs::Key> {
        let formula = self.edges.formula()?;
        let e = self.estimate;
        Some(proofs::Key {
            bits: [
                formula.start,
                formula.step,
                self.edges.last().to_f64(),
                self.scale.to_f64(),
                e.denom,
                e.n,
            ]
            .map(f64::to_bits),
            n: self.len(),
            flags: [
                F::SINGLE,
                formula.single,
                e.wide,
                self.closed == Closed::Right,
            ],
            origin: self.origin,
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
    fn scale_of(edges: &Edges<F>) -> F {
        F::from_f64(edges.bins() as f64 / (edges.last().to_f64() - edges.first().to_f64()))
    }

    /// All `n + 1` edges (made now, when a formula makes them and nothing asked before).
    pub fn edges(&self) -> &[F] {
        self.edges.all()
    }

    /// [`Self::edges`], or an out-of-memory error when millions do not fit.
    pub fn try_edges(&self) -> HistResult<&[F]> {
        self.edges.try_all()
    }

    /// Every edge as float64, in an array of its own made in parallel.
    pub fn edges_f64(&self) -> HistResult<Vec<f64>> {
        self.edges.to_f64()
    }

    /// Edge `i` (the first and the last without making the others).
    pub fn edge(&self, i: usize) -> F {
        self.edges.at(i)
    }

    /// The formula that makes the edges, when one does: a kernel recomputes an edge instead of
    /// reading it from an array, and the host never needs to make them.
    pub fn linspace(&self) -> Option<Linspace> {
        self.edges.formula()
    }

    /// Whether every edge is below the next (numpy refuses bins that collapse).
    pub fn increasing(&self) -> HistResult<bool> {
        self.edges.increasing()
    }

    /// The cheap estimate, `(x - lo) * scale` in `F`, as the kernels compute it.
    #[inline(always)]
    pub fn cheap_estimate(&self, x: F) -> F {
        (x - self.edges.first()) * self.scale
    }

    /// The largest distance, in bins, by which the cheap estimate of any value leaves its edge
    /// bin: the estimate is monotone, so each bin's first and last value bound it.
    fn cheap_estimate_worst(&self) -> f64 {
        use rayon::prelude::*;
        let n = self.len();
        let edges = self.edges();
        // Small bins on the calling thread: a trip through the pool costs more than they do.
        if n < PARALLEL_LEN {
            (0..n).map(|b| self.slack(edges, b)).fold(0.0, f64::max)
        } else {
            (0..n)
                .into_par_iter()
                .with_min_len(1 << 14)
                .map(|b| self.slack(edges, b))
                .reduce(|| 0.0, f64::max)
        }
    }

    /// How far the cheap estimate of bin `b`'s first or last value (of these bins' `edges`)
    /// leaves the bin, in bins (0 when it stays).
    #[inline(always)]
    fn slack(&self, edges: &[F], b: usize) -> f64 {
        let first = self.cheap_estimate(edges[b]).to_f64();
        let last = self.cheap_estimate(last_of(edges, b)).to_f64();
        (b as f64 - first).max(last - (b + 1) as f64).max(0.0)
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
        let d = x - self.edges.first();
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
        // The edges once, not a lookup of them per bin (which made the proof 1.6x slower).
        let edges = self.edges();
        // No early exit inside a block: the loop runs without branches.
        const BLOCK: usize = 1 << 12;
        let block_near = |k: usize| {
            (k * BLOCK..n.min((k + 1) * BLOCK))
                .fold(true, |all, b| all & self.estimate_is_near(edges, b))
        };
        let blocks = n.div_ceil(BLOCK);
        if n < PARALLEL_LEN {
            (0..blocks).all(block_near)
        } else {
            (0..blocks).into_par_iter().all(block_near)
        }
    }

    /// Whether numpy's estimate of the first value of bin `b` (of these bins' `edges`) is at
    /// least `b - 1` and that of its last value at most `b + 1`, decided by comparing floats
    /// instead of truncating them (no branches or conversions). With `v` the unrounded estimate and `t = trunc(v)` (0 for NaN
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
    /// stake there and the edge bin stands (docs/semantics.md: values placed by the edges alone).
    #[inline(always)]
    pub(super) fn estimate_is_near(&self, edges: &[F], b: usize) -> bool {
        let n = self.len();
        let first = self.numpy_estimate_unrounded(edges[b]);
        let last = self.numpy_estimate_unrounded(last_of(edges, b));
        let first_ok = (b <= 1) | (first >= b.saturating_sub(1) as f64);
        let clamped = (b + 2 >= n) & (last >= n as f64) & (last < (n + 1) as f64);
        let overflows = last == f64::INFINITY;
        let last_ok = (last < (b + 2) as f64) | last.is_nan() | clamped | overflows;
        first_ok & last_ok
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.edges.bins()
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
        let e = self.edges();
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
        let e = self.edges();
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
