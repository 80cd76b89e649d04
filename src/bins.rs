//! The bin contract: which bin a value falls in. Every backend (the CPU here, the CUDA kernels in
//! `kernels/bin_rule.cuh`) evaluates exactly these rules, so counts agree bit for bit.
//!
//! `closed = "left"` reproduces `numpy.histogram` literally:
//! - The arithmetic type `F` is float32 for Float32 columns and float64 for everything else
//!   (numpy's `bin_type`); integer and temporal values are rounded to float64 first.
//! - Equal bins: the edges are numpy's `linspace(lo, hi, n + 1)`, evaluated the way numpy does
//!   (in float32 only when the range comes from a Float32 column's own min/max). A value `x` is
//!   kept when `edges[0] <= x <= edges[n]`; its bin is estimated as
//!   `trunc(((x - lo) / denom) * n)` in `F` and corrected once against the two neighbouring edges
//!   (`x < e[i]` moves down, `x >= e[i+1]` moves up unless `i` is the last bin). That division
//!   is costly, and numpy's answer is simply the bin whose edges hold `x` whenever its estimate
//!   is within one bin of it. The estimate is monotone in `x`, so checking each bin's first and
//!   last representable value proves (or refutes) this for every `x` at once: when it holds, the
//!   backends use a cheap multiply-and-search rule that finds the edge bin; when it does not
//!   (float32, millions of bins), they replay numpy's arithmetic literally. Either way the
//!   counts are numpy's.
//! - Explicit edges are float64; bin `i` holds `e[i] <= x < e[i+1]`, the last bin `e[n-1] <= x <= e[n]`.
//!
//! `closed = "right"` reproduces Polars' `Expr.hist`: float64 arithmetic, edges
//! `i * width + lo` with the last edge `hi`, bins `(e[i], e[i+1]]` with the first closed on both
//! sides, and Polars' estimate `trunc(n / (hi - lo) * (x - lo))` corrected once.
//!
//! NaN and values outside the edges are never counted; nulls are filtered before a rule is asked.

use serde::{Deserialize, Serialize};

use crate::error::{HistError, HistResult};

/// Upper bound on the number of bins: the result alone is 24 bytes a bin.
pub const MAX_BINS: usize = 1 << 28;

/// Which side of a bin is closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Closed {
    /// numpy: `[a, b)`, the last bin `[a, b]`.
    #[default]
    Left,
    /// Polars' `hist`: `(a, b]`, the first bin `[a, b]`.
    Right,
}

/// What the user asked for: a number of equal bins or explicit edges.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bins {
    Count(usize),
    Edges(Vec<f64>),
}

impl Default for Bins {
    fn default() -> Self {
        Bins::Count(10)
    }
}

/// The kind of physical values a column holds, as far as binning cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    Float32,
    Float64,
    /// Every integer width and the temporal types (their physical values).
    Integer,
}

/// Minimum and maximum of the valid (non-null, non-NaN) values, in the column's own type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Extremes {
    Empty,
    Float32(f32, f32),
    Float64(f64, f64),
    Integer(i128, i128),
}

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
    fn from_f64(v: f64) -> Self;
    fn from_usize(v: usize) -> Self;
    fn to_f64(self) -> f64;
    /// `self as usize`: truncation, saturating at 0 and at `usize::MAX` (NaN gives 0).
    fn trunc_usize(self) -> usize;
    /// The largest value below `self`.
    fn next_down(self) -> Self;
}

macro_rules! bin_float {
    ($t:ty) => {
        impl BinFloat for $t {
            const ZERO: Self = 0.0;
            const HALF: Self = 0.5;
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
        }
    };
}
bin_float!(f32);
bin_float!(f64);

/// Equal-width bins in arithmetic type `F`.
#[derive(Clone, Debug, PartialEq)]
pub struct UniformBins<F> {
    /// `n + 1` edges, as numpy's `linspace` (or Polars' `hist`) makes them.
    pub edges: Vec<F>,
    /// numpy's `norm_denom` (closed left) or Polars' `n / (hi - lo)` (closed right).
    pub denom: F,
    /// The bin count in `F` (numpy's `norm_numerator`).
    pub n_f: F,
    pub closed: Closed,
    /// `n / (hi - lo)`: the cheap estimate of closed-left bins.
    pub scale: F,
    /// How far the cheap estimate `(x - lo) * scale` may stray from the edge bin: when its
    /// fractional part lies in `(margin, 1 - margin)` the bin is certain without reading an edge
    /// (0.5 disables the shortcut). Proved on the host like `literal`, read by the kernels.
    pub margin: F,
    /// Closed left only: numpy's estimate can miss the edge bin by more than one somewhere, so
    /// its arithmetic must be replayed literally.
    pub literal: bool,
    /// The formula that made `edges`, when one did: a kernel recomputes an edge instead of
    /// reading it from an array larger than its caches.
    pub linspace: Option<Linspace>,
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

impl<F: BinFloat> UniformBins<F> {
    /// numpy's bins: checks once whether the cheap rule gives numpy's answer for every value.
    fn numpy(edges: Vec<F>, denom: F, n_f: F) -> Self {
        let n = edges.len() - 1;
        let span = edges[n].to_f64() - edges[0].to_f64();
        let mut bins = UniformBins {
            scale: F::from_f64(n as f64 / span),
            margin: F::HALF,
            edges,
            denom,
            n_f,
            closed: Closed::Left,
            literal: false,
            linspace: None,
        };
        bins.literal = !bins.numpy_estimate_is_near_everywhere();
        bins.margin = bins.cheap_estimate_margin();
        bins
    }

    /// Equal bins binned by their edges alone, as `numpy.histogramdd` does (`searchsorted` on
    /// the linspace edges): the cheap rule always finds the edge bin, so `literal` is never set.
    fn edge_bin(edges: Vec<F>) -> Self {
        let n = edges.len() - 1;
        let span = edges[n].to_f64() - edges[0].to_f64();
        let mut bins = UniformBins {
            scale: F::from_f64(n as f64 / span),
            margin: F::HALF,
            denom: F::from_f64(span),
            n_f: F::from_usize(n),
            edges,
            closed: Closed::Left,
            literal: false,
            linspace: None,
        };
        bins.margin = bins.cheap_estimate_margin();
        bins
    }

    /// These bins with the formula that made their edges.
    fn made_by(mut self, linspace: Option<Linspace>) -> Self {
        self.linspace = linspace;
        self
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
        let exact_below = if std::mem::size_of::<F>() == 4 {
            1 << 22
        } else {
            1 << 50
        };
        if self.literal || n >= exact_below {
            return F::HALF;
        }
        let slack = |b: usize| {
            let first = self.cheap_estimate(self.edges[b]).to_f64();
            let last_x = if b == n - 1 {
                self.edges[n]
            } else {
                self.edges[b + 1].next_down()
            };
            let last = self.cheap_estimate(last_x).to_f64();
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

    /// numpy's bin estimate before its correction, `n - 1` for `n` as numpy clamps it.
    #[inline(always)]
    fn numpy_estimate(&self, x: F) -> usize {
        let n = self.len();
        let i = (((x - self.edges[0]) / self.denom) * self.n_f).trunc_usize();
        if i == n {
            n - 1
        } else {
            i
        }
    }

    /// Whether numpy's estimate lies within one bin of the edge bin for every `x`: the estimate
    /// is monotone, so the first and last value of each bin bound it over the whole bin.
    fn numpy_estimate_is_near_everywhere(&self) -> bool {
        use rayon::prelude::*;
        let n = self.len();
        let near = |b: usize| {
            let first = self.edges[b];
            let last = if b == n - 1 {
                self.edges[n]
            } else {
                self.edges[b + 1].next_down()
            };
            self.numpy_estimate(first) + 1 >= b && self.numpy_estimate(last) <= b + 1
        };
        (0..n).into_par_iter().with_min_len(1 << 14).all(near)
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
        let lo = e[0];
        if !(x >= lo && x <= e[n]) {
            return n;
        }
        if self.literal {
            // numpy's own steps; i > 0 whenever x < e[i], since x >= e[0].
            let mut i = (((x - lo) / self.denom) * self.n_f)
                .trunc_usize()
                .min(n - 1);
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
        if frac > self.margin && frac < F::HALF + F::HALF - self.margin {
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
        let mut i = (self.denom * (x - lo)).trunc_usize().min(n - 1);
        if x <= e[i] {
            i -= 1;
        } else if x > e[i + 1] {
            i += 1;
        }
        i
    }
}

/// Explicit, strictly increasing float64 edges.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeBins {
    pub edges: Vec<f64>,
    pub closed: Closed,
    /// Where the CPU starts looking for a value's bin (`None`: binary search).
    guide: Option<Guide>,
}

/// A uniform grid over [e[0], e[n]]: for each cell, the bin of its lower end. A value's cell
/// names a bin at most a few edges from its own, found by a short walk, instead of a binary
/// search of log2(n) dependent loads. The walk checks the edges themselves, so the guide only
/// affects speed, never the answer.
#[derive(Clone, Debug, PartialEq)]
struct Guide {
    first: Vec<u32>,
    cells_per_unit: f64,
}

impl Guide {
    /// Cells per bin, and the most edges one cell may hold before the guide stops paying.
    const CELLS_PER_BIN: usize = 4;
    const MAX_EDGES_PER_CELL: u32 = 4;

    fn new(e: &[f64]) -> Option<Guide> {
        let n = e.len() - 1;
        let cells = (n * Self::CELLS_PER_BIN).clamp(16, 1 << 20);
        let cells_per_unit = cells as f64 / (e[n] - e[0]);
        if !cells_per_unit.is_finite() {
            return None;
        }
        let first: Vec<u32> = (0..=cells)
            .map(|k| {
                let lower = e[0] + k as f64 / cells_per_unit;
                (e.partition_point(|&edge| edge <= lower).max(1) - 1).min(n - 1) as u32
            })
            .collect();
        let crowded = first
            .windows(2)
            .any(|w| w[1] - w[0] > Self::MAX_EDGES_PER_CELL);
        (!crowded).then_some(Guide {
            first,
            cells_per_unit,
        })
    }

    #[inline(always)]
    fn start(&self, e0: f64, x: f64) -> usize {
        let cell = ((x - e0) * self.cells_per_unit) as usize;
        self.first[cell.min(self.first.len() - 1)] as usize
    }
}

impl EdgeBins {
    pub fn new(edges: Vec<f64>, closed: Closed) -> Self {
        let guide = Guide::new(&edges);
        EdgeBins {
            edges,
            closed,
            guide,
        }
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
    pub fn bin(&self, x: f64) -> usize {
        let e = &self.edges[..];
        let n = e.len() - 1;
        if !(x >= e[0] && x <= e[n]) {
            return n;
        }
        match (self.closed, &self.guide) {
            (Closed::Left, Some(guide)) => {
                let mut i = guide.start(e[0], x);
                while i > 0 && x < e[i] {
                    i -= 1;
                }
                while i < n - 1 && x >= e[i + 1] {
                    i += 1;
                }
                i
            }
            (Closed::Right, Some(guide)) => {
                let mut i = guide.start(e[0], x);
                while i > 0 && x <= e[i] {
                    i -= 1;
                }
                while i < n - 1 && x > e[i + 1] {
                    i += 1;
                }
                i
            }
            // Number of edges <= x, minus one; the last edge belongs to the last bin.
            (Closed::Left, None) => (upper_bound(e, x) - 1).min(n - 1),
            // Number of edges < x, minus one; the first edge belongs to the first bin.
            (Closed::Right, None) => lower_bound(e, x).max(1) - 1,
        }
    }
}

/// Count of `e[i] <= x` for sorted `e`, branch-free so random data does not mispredict.
#[inline(always)]
fn upper_bound(e: &[f64], x: f64) -> usize {
    let mut base = 0usize;
    let mut len = e.len();
    while len > 1 {
        let half = len / 2;
        // Random data mispredicts a branch on every level (about 30 cycles each, measured):
        // ask for a conditional move, which LLVM otherwise turns back into a branch in loops.
        base = std::hint::select_unpredictable(e[base + half - 1] <= x, base + half, base);
        len -= half;
    }
    base + (e[base] <= x) as usize
}

/// Count of `e[i] < x` for sorted `e`.
#[inline(always)]
fn lower_bound(e: &[f64], x: f64) -> usize {
    let mut base = 0usize;
    let mut len = e.len();
    while len > 1 {
        let half = len / 2;
        base = std::hint::select_unpredictable(e[base + half - 1] < x, base + half, base);
        len -= half;
    }
    base + (e[base] < x) as usize
}

/// A resolved binning: the edges and the rule that puts a value in a bin.
#[derive(Clone, Debug, PartialEq)]
pub enum BinSpec {
    /// Equal bins of a Float32 column under numpy's rules.
    Uniform32(UniformBins<f32>),
    Uniform64(UniformBins<f64>),
    Edges(EdgeBins),
}

impl BinSpec {
    /// Resolves `bins` and `range` for a column of `kind`. `extremes` is asked only when the
    /// range comes from the data (an integer `bins` and no `range`).
    pub fn resolve(
        bins: &Bins,
        range: Option<(f64, f64)>,
        closed: Closed,
        kind: ValueKind,
        extremes: impl FnOnce() -> Extremes,
    ) -> HistResult<BinSpec> {
        match bins {
            Bins::Edges(edges) => {
                if range.is_some() {
                    // numpy ignores `range` with explicit edges; refusing is kinder than ignoring.
                    return Err(HistError::InvalidArgument(
                        "`range` cannot be combined with explicit bin edges".into(),
                    ));
                }
                validate_edges(edges)?;
                Ok(BinSpec::Edges(EdgeBins::new(edges.clone(), closed)))
            }
            &Bins::Count(n) => {
                let (range, extremes) = checked_extent(n, range, extremes)?;
                match closed {
                    Closed::Left => numpy_uniform(n, range, kind, extremes).strictly_increasing(),
                    Closed::Right => Ok(BinSpec::Uniform64(polars_uniform(n, range, extremes))),
                }
            }
        }
    }

    /// One dimension of `numpy.histogramdd`: the edges are `linspace` over `range` (or the
    /// data's [min, max], widened by 0.5 when equal) in the sample's precision (float32 only when
    /// the whole sample is float32 and the range comes from it), and a value's bin is found by
    /// `searchsorted` on them, the last bin closed: the edge bin, never numpy.histogram's
    /// estimate. `closed = Right` mirrors it: `(a, b]`, the first bin closed.
    pub fn resolve_dd(
        bins: &Bins,
        range: Option<(f64, f64)>,
        closed: Closed,
        float32_sample: bool,
        extremes: impl FnOnce() -> Extremes,
    ) -> HistResult<BinSpec> {
        let n = match bins {
            Bins::Edges(_) => {
                return BinSpec::resolve(bins, range, closed, ValueKind::Float64, extremes)
            }
            &Bins::Count(n) => n,
        };
        let (range, extremes) = checked_extent(n, range, extremes)?;
        let widened = |lo: f64, hi: f64| {
            if lo == hi {
                (lo - 0.5, hi + 0.5)
            } else {
                (lo, hi)
            }
        };
        // numpy makes NaN edges where the range's width overflows (then counts nonsense or
        // fails in ravel_multi_index): refuse instead.
        let too_wide = |lo: f64, hi: f64, precision: &str| {
            HistError::InvalidArgument(format!(
                "the range [{lo:?}, {hi:?}] is too wide: its width overflows {precision}, so its \
                 equal bins have no finite edges; pass a narrower `range` or explicit edges"
            ))
        };
        let spec = match (range, extremes) {
            (None, Extremes::Float32(lo, hi)) if float32_sample => {
                let (lo, hi) = if lo == hi {
                    (lo - 0.5, hi + 0.5)
                } else {
                    (lo, hi)
                };
                let (edges, _) = linspace(lo, hi, n);
                if edges.iter().any(|e| !e.is_finite()) {
                    return Err(too_wide(lo as f64, hi as f64, "float32"));
                }
                match closed {
                    Closed::Left if strictly_increasing(&edges) => {
                        BinSpec::Uniform32(UniformBins::edge_bin(edges))
                    }
                    _ => BinSpec::Edges(EdgeBins::new(
                        edges.iter().map(|&e| e as f64).collect(),
                        closed,
                    )),
                }
            }
            (range, extremes) => {
                let (lo, hi) = match (range, extremes) {
                    (Some((lo, hi)), _) => widened(lo, hi),
                    (None, Extremes::Float32(lo, hi)) => widened(lo as f64, hi as f64),
                    (None, Extremes::Float64(lo, hi)) => widened(lo, hi),
                    (None, Extremes::Integer(lo, hi)) => widened(lo as f64, hi as f64),
                    (None, Extremes::Empty) => (0.0, 1.0),
                };
                let (edges, _) = linspace(lo, hi, n);
                if edges.iter().any(|e| !e.is_finite()) {
                    return Err(too_wide(lo, hi, "float64"));
                }
                match closed {
                    Closed::Left if strictly_increasing(&edges) => {
                        BinSpec::Uniform64(UniformBins::edge_bin(edges))
                    }
                    _ => BinSpec::Edges(EdgeBins::new(edges, closed)),
                }
            }
        };
        Ok(spec)
    }

    /// numpy refuses equal bins that collapse (the span is too narrow for `n` distinct edges).
    fn strictly_increasing(self) -> HistResult<BinSpec> {
        let (lo, hi, precision) = match &self {
            BinSpec::Uniform32(u) if u.edges.windows(2).any(|w| w[0] >= w[1]) => {
                (u.edges[0] as f64, u.edges[u.len()] as f64, "float32")
            }
            BinSpec::Uniform64(u) if u.edges.windows(2).any(|w| w[0] >= w[1]) => {
                (u.edges[0], u.edges[u.len()], "float64")
            }
            _ => return Ok(self),
        };
        Err(HistError::InvalidArgument(format!(
            "too many bins for the data range: {} equal bins over [{lo}, {hi}] \
             do not all have a positive width in {precision}",
            self.len()
        )))
    }

    pub fn len(&self) -> usize {
        match self {
            BinSpec::Uniform32(u) => u.len(),
            BinSpec::Uniform64(u) => u.len(),
            BinSpec::Edges(e) => e.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn closed(&self) -> Closed {
        match self {
            BinSpec::Uniform32(u) => u.closed,
            BinSpec::Uniform64(u) => u.closed,
            BinSpec::Edges(e) => e.closed,
        }
    }

    /// The edges as float64 (exact: float32 edges widen without rounding).
    pub fn edges_f64(&self) -> Vec<f64> {
        match self {
            BinSpec::Uniform32(u) => u.edges.iter().map(|&e| e as f64).collect(),
            BinSpec::Uniform64(u) => u.edges.clone(),
            BinSpec::Edges(e) => e.edges.clone(),
        }
    }

    /// Bin widths as numpy's `density` divides by them: differences taken in the edges' own type.
    pub fn widths(&self) -> Vec<f64> {
        match self {
            BinSpec::Uniform32(u) => u.edges.windows(2).map(|w| (w[1] - w[0]) as f64).collect(),
            BinSpec::Uniform64(u) => u.edges.windows(2).map(|w| w[1] - w[0]).collect(),
            BinSpec::Edges(e) => e.edges.windows(2).map(|w| w[1] - w[0]).collect(),
        }
    }
}

fn strictly_increasing<P: BinFloat>(edges: &[P]) -> bool {
    edges.windows(2).all(|w| w[0] < w[1])
}

/// Checks `n` equal bins and their `range`, and asks for the data's extremes only when no
/// range is given (they must be finite: numpy's rule).
fn checked_extent(
    n: usize,
    range: Option<(f64, f64)>,
    extremes: impl FnOnce() -> Extremes,
) -> HistResult<(Option<(f64, f64)>, Extremes)> {
    validate_count(n)?;
    let range = range.map(validate_range).transpose()?;
    let extremes = match range {
        Some(_) => Extremes::Empty,
        None => extremes(),
    };
    check_finite(extremes)?;
    Ok((range, extremes))
}

fn validate_count(n: usize) -> HistResult<()> {
    if n == 0 {
        return Err(HistError::InvalidArgument(
            "`bins` must be a positive integer, got 0".into(),
        ));
    }
    if n > MAX_BINS {
        return Err(HistError::TooManyBins {
            bins: n,
            max: MAX_BINS,
        });
    }
    Ok(())
}

fn validate_edges(edges: &[f64]) -> HistResult<()> {
    if edges.len() < 2 {
        return Err(HistError::InvalidArgument(format!(
            "explicit `bins` needs at least two edges, got {}",
            edges.len()
        )));
    }
    if edges.len() - 1 > MAX_BINS {
        return Err(HistError::TooManyBins {
            bins: edges.len() - 1,
            max: MAX_BINS,
        });
    }
    if let Some(bad) = edges.iter().find(|e| !e.is_finite()) {
        return Err(HistError::InvalidArgument(format!(
            "bin edges must be finite, got {bad}"
        )));
    }
    if let Some(i) = edges.windows(2).position(|w| w[0] >= w[1]) {
        return Err(HistError::InvalidArgument(format!(
            "bin edges must increase strictly, but edge {i} ({}) >= edge {} ({})",
            edges[i],
            i + 1,
            edges[i + 1]
        )));
    }
    Ok(())
}

fn validate_range((lo, hi): (f64, f64)) -> HistResult<(f64, f64)> {
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
    Ok((lo, hi))
}

fn check_finite(extremes: Extremes) -> HistResult<()> {
    let (lo, hi) = match extremes {
        Extremes::Float32(lo, hi) => (lo as f64, hi as f64),
        Extremes::Float64(lo, hi) => (lo, hi),
        _ => return Ok(()),
    };
    if lo.is_finite() && hi.is_finite() {
        Ok(())
    } else {
        Err(HistError::InvalidArgument(format!(
            "the range taken from the data, [{lo}, {hi}], is not finite: \
             pass `range=(min, max)` to bin data with infinite values"
        )))
    }
}

/// numpy's `linspace(start, stop, n + 1)` computed in `P`: `i * ((stop - start) / n) + start`,
/// with the last edge set to `stop`; and that formula, unless the step underflows to 0.
fn linspace<P: BinFloat>(start: P, stop: P, n: usize) -> (Vec<P>, Option<Linspace>) {
    let delta = stop - start;
    let div = P::from_usize(n);
    let step = delta / div;
    let (mut edges, formula): (Vec<P>, _) = if step.to_f64() == 0.0 {
        let edges = (0..=n)
            .map(|i| P::from_usize(i) / div * delta + start)
            .collect();
        (edges, None)
    } else {
        let edges = (0..=n).map(|i| P::from_usize(i) * step + start).collect();
        let formula = Linspace {
            start: start.to_f64(),
            step: step.to_f64(),
            single: std::mem::size_of::<P>() == 4,
        };
        (edges, Some(formula))
    };
    edges[n] = stop;
    (edges, formula)
}

/// numpy's `histogram` for `bins=n`: `_get_outer_edges`, `linspace` and `norm_denom`.
fn numpy_uniform(n: usize, range: Option<(f64, f64)>, kind: ValueKind, ext: Extremes) -> BinSpec {
    // Outer edges as Python would see them: floats from `range`, or numpy scalars of the data.
    let widened = |lo: f64, hi: f64| {
        if lo == hi {
            (lo - 0.5, hi + 0.5)
        } else {
            (lo, hi)
        }
    };
    match (range, ext) {
        (None, Extremes::Float32(lo, hi)) => {
            // float32 scalars: everything, linspace included, stays in float32.
            let (lo, hi) = if lo == hi {
                (lo - 0.5, hi + 0.5)
            } else {
                (lo, hi)
            };
            let (edges, formula) = linspace(lo, hi, n);
            BinSpec::Uniform32(UniformBins::numpy(edges, hi - lo, n as f32).made_by(formula))
        }
        (None, Extremes::Integer(lo, hi)) if lo != hi => {
            // `_unsigned_subtract` of the integer extremes is exact; linspace casts then subtracts.
            let (edges, formula) = linspace(lo as f64, hi as f64, n);
            BinSpec::Uniform64(
                UniformBins::numpy(edges, (hi - lo) as f64, n as f64).made_by(formula),
            )
        }
        (range, ext) => {
            // Python floats (a `range`, the empty default (0, 1), or widened integer extremes)
            // or float64 extremes: linspace in float64, then cast to the bin type.
            let (lo, hi) = match (range, ext) {
                (Some((lo, hi)), _) => widened(lo, hi),
                (None, Extremes::Float64(lo, hi)) => widened(lo, hi),
                (None, Extremes::Integer(lo, hi)) => widened(lo as f64, hi as f64),
                _ => (0.0, 1.0),
            };
            let (edges, formula) = linspace(lo, hi, n);
            match kind {
                ValueKind::Float32 => BinSpec::Uniform32(
                    UniformBins::numpy(
                        edges.iter().map(|&e| e as f32).collect(),
                        (hi - lo) as f32,
                        n as f32,
                    )
                    .made_by(formula),
                ),
                _ => BinSpec::Uniform64(
                    UniformBins::numpy(edges, hi - lo, n as f64).made_by(formula),
                ),
            }
        }
    }
}

/// Polars' `hist(bin_count=n)`: `get_breaks` and `uniform_hist_count` in float64.
fn polars_uniform(n: usize, range: Option<(f64, f64)>, ext: Extremes) -> UniformBins<f64> {
    let (lo, hi) = match (range, ext) {
        (Some(r), _) => r,
        (None, Extremes::Float32(lo, hi)) => (lo as f64, hi as f64),
        (None, Extremes::Float64(lo, hi)) => (lo, hi),
        (None, Extremes::Integer(lo, hi)) => (lo as f64, hi as f64),
        (None, Extremes::Empty) => (0.0, 1.0),
    };
    let (lo, width, hi) = if lo == hi {
        (lo - 0.5, 1.0 / n as f64, hi + 0.5)
    } else {
        (lo, (hi - lo) / n as f64, hi)
    };
    let mut edges: Vec<f64> = (0..=n).map(|i| i as f64 * width + lo).collect();
    edges[n] = hi;
    UniformBins {
        denom: n as f64 / (hi - lo),
        n_f: n as f64,
        edges,
        closed: Closed::Right,
        scale: n as f64 / (hi - lo),
        margin: 0.5,
        literal: true,
        linspace: Some(Linspace {
            start: lo,
            step: width,
            single: false,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(bins: Bins, range: Option<(f64, f64)>, closed: Closed, ext: Extremes) -> BinSpec {
        let kind = match ext {
            Extremes::Float32(..) => ValueKind::Float32,
            Extremes::Integer(..) => ValueKind::Integer,
            _ => ValueKind::Float64,
        };
        BinSpec::resolve(&bins, range, closed, kind, || ext).unwrap()
    }

    fn bin64(s: &BinSpec, x: f64) -> usize {
        match s {
            BinSpec::Uniform64(u) => u.bin(x),
            BinSpec::Edges(e) => e.bin(x),
            BinSpec::Uniform32(u) => u.bin(x as f32),
        }
    }

    #[test]
    fn left_closed_edges_follow_numpy() {
        // np.histogram([0, 1, 2, 3], bins=3) -> [1, 1, 2]
        let s = spec(Bins::Count(3), None, Closed::Left, Extremes::Integer(0, 3));
        let bins: Vec<usize> = [0.0, 1.0, 2.0, 3.0].iter().map(|&x| bin64(&s, x)).collect();
        assert_eq!(bins, vec![0, 1, 2, 2]);
        assert_eq!(s.edges_f64(), vec![0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn right_closed_edges_follow_polars() {
        // pl.Series([0, 1, 2, 3]).hist(bin_count=3) -> [2, 1, 1]
        let s = spec(Bins::Count(3), None, Closed::Right, Extremes::Integer(0, 3));
        let bins: Vec<usize> = [0.0, 1.0, 2.0, 3.0].iter().map(|&x| bin64(&s, x)).collect();
        assert_eq!(bins, vec![0, 0, 1, 2]);
    }

    #[test]
    fn explicit_edges_both_conventions() {
        let e = Bins::Edges(vec![0.0, 1.0, 2.5, 10.0]);
        let left = spec(e.clone(), None, Closed::Left, Extremes::Empty);
        let right = spec(e, None, Closed::Right, Extremes::Empty);
        let xs = [-1.0, 0.0, 0.5, 1.0, 2.5, 9.0, 10.0, 10.5, f64::NAN];
        let l: Vec<usize> = xs.iter().map(|&x| bin64(&left, x)).collect();
        let r: Vec<usize> = xs.iter().map(|&x| bin64(&right, x)).collect();
        assert_eq!(l, vec![3, 0, 0, 1, 2, 2, 2, 3, 3]);
        assert_eq!(r, vec![3, 0, 0, 0, 1, 2, 2, 3, 3]);
    }

    #[test]
    fn the_edge_guide_changes_speed_not_answers() {
        // Even, skewed (crowded: no guide) and sparse-then-dense edges, both sides.
        let sets: Vec<Vec<f64>> = vec![
            (0..=256).map(|i| i as f64 / 256.0).collect(),
            (0..=300).map(|i| (i as f64 / 30.0).exp()).collect(),
            [0.0, 1e-9, 2e-9, 3e-9, 1.0, 1000.0].to_vec(),
            (0..=64).map(|i| ((i * i) as f64).sqrt() - 3.0).collect(),
        ];
        for edges in sets {
            for closed in [Closed::Left, Closed::Right] {
                let guided = EdgeBins::new(edges.clone(), closed);
                let searched = EdgeBins {
                    guide: None,
                    ..guided.clone()
                };
                let (lo, hi) = (edges[0], edges[edges.len() - 1]);
                let probes = edges.iter().flat_map(|&e| [e.next_down(), e, e.next_up()]);
                let sweep = (0..=10_000).map(|k| lo + (hi - lo) * k as f64 / 10_000.0);
                for x in probes.chain(sweep) {
                    assert_eq!(guided.bin(x), searched.bin(x), "x={x} {closed:?}");
                }
            }
        }
    }

    #[test]
    fn outside_nan_and_inf_are_not_counted() {
        let s = spec(
            Bins::Count(4),
            Some((0.0, 1.0)),
            Closed::Left,
            Extremes::Empty,
        );
        for x in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1e-300,
            1.0000000001,
        ] {
            assert_eq!(bin64(&s, x), 4, "{x}");
        }
        assert_eq!(bin64(&s, 1.0), 3);
        assert_eq!(bin64(&s, 0.0), 0);
    }

    #[test]
    fn one_distinct_value_widens_by_half() {
        let s = spec(
            Bins::Count(2),
            None,
            Closed::Left,
            Extremes::Float64(5.0, 5.0),
        );
        assert_eq!(s.edges_f64(), vec![4.5, 5.0, 5.5]);
        assert_eq!(bin64(&s, 5.0), 1);
        let s = spec(Bins::Count(2), None, Closed::Left, Extremes::Empty);
        assert_eq!(s.edges_f64(), vec![0.0, 0.5, 1.0]);
    }

    #[test]
    fn float32_columns_bin_in_float32() {
        let s = spec(
            Bins::Count(10),
            Some((0.1, 0.9)),
            Closed::Left,
            Extremes::Float32(0.0, 0.0),
        );
        let BinSpec::Uniform32(u) = &s else {
            panic!("expected float32 bins")
        };
        assert_eq!(u.edges[0], 0.1f32);
        assert_eq!(u.edges[10], 0.9f32);
    }

    #[test]
    fn integer_denominator_is_exact() {
        let lo = -(1i128 << 62);
        let hi = (1i128 << 62) + 1;
        let s = spec(
            Bins::Count(7),
            None,
            Closed::Left,
            Extremes::Integer(lo, hi),
        );
        let BinSpec::Uniform64(u) = &s else {
            panic!("expected float64 bins")
        };
        assert_eq!(u.denom, (hi - lo) as f64);
        assert_eq!(u.bin(hi as f64), 6);
        assert_eq!(u.bin(lo as f64), 0);
    }

    /// The kernels recompute edges from `linspace` for large bin counts: it must give every
    /// stored edge, for each way the edges are made.
    #[test]
    fn the_linspace_formula_gives_every_stored_edge() {
        let cases = [
            (None, Extremes::Float32(-3.25, 7.5), Closed::Left, 100_003),
            (
                Some((0.0, 1.0)),
                Extremes::Float32(0.0, 1.0),
                Closed::Left,
                1 << 24,
            ),
            (Some((0.0, 1.0)), Extremes::Empty, Closed::Left, 1 << 20),
            (None, Extremes::Float64(-1e-3, 2.5e7), Closed::Left, 65_537),
            (None, Extremes::Integer(-7, 1 << 40), Closed::Left, 4097),
            (Some((0.1, 0.7)), Extremes::Empty, Closed::Right, 33_333),
        ];
        for (range, ext, closed, n) in cases {
            fn check<F: BinFloat>(u: &UniformBins<F>) {
                let f = u.linspace.expect("equal bins record their formula");
                let n = u.len();
                for (i, &e) in u.edges[..n].iter().enumerate() {
                    assert!(f.edge::<F>(i) == e, "edge {i} of {n}: {f:?}");
                }
            }
            match spec(Bins::Count(n), range, closed, ext) {
                BinSpec::Uniform32(u) => check(&u),
                BinSpec::Uniform64(u) => check(&u),
                BinSpec::Edges(_) => panic!("equal bins"),
            }
        }
    }

    /// The cheap rule must give numpy's literal answer wherever the check allows it.
    #[test]
    fn cheap_rule_agrees_with_numpy_arithmetic_where_proved() {
        for (lo, hi, n) in [
            (0.1f64, 0.9f64, 10usize),
            (-3.3, 1e5, 4096),
            (0.1, 0.7, 1 << 20),
            (0.0, 1.0, 1 << 24),
            (1.0, 3.0, 1 << 22),
        ] {
            let s = spec(
                Bins::Count(n),
                Some((lo, hi)),
                Closed::Left,
                Extremes::Float32(0.0, 0.0),
            );
            let BinSpec::Uniform32(fast) = s else {
                panic!()
            };
            let literal = UniformBins {
                literal: true,
                ..fast.clone()
            };
            // Every float32 around a sample of edges, and a sweep of the whole range.
            let step = (n / 997).max(1);
            let mut xs: Vec<f32> = (0..=n).step_by(step).map(|i| fast.edges[i]).collect();
            xs.extend((0..20_000).map(|k| (lo + (hi - lo) * k as f64 / 20_000.0) as f32));
            for x in xs {
                for y in [x.next_down(), x, x.next_up()] {
                    assert_eq!(
                        fast.bin_left(y),
                        literal.bin_left(y),
                        "x={y} n={n} [{lo}, {hi}]"
                    );
                }
            }
        }
    }

    #[test]
    fn an_estimate_that_misses_by_two_forces_the_literal_rule() {
        let (edges, _) = linspace(0.0f64, 1.0, 1000);
        assert!(!UniformBins::numpy(edges.clone(), 1.0, 1000.0).literal);
        // A denominator 0.4% off moves the estimate by up to 4 bins near the top.
        assert!(UniformBins::numpy(edges, 1.004, 1000.0).literal);
    }

    #[test]
    fn bad_arguments_are_errors() {
        let r = |b: Bins, range| {
            BinSpec::resolve(&b, range, Closed::Left, ValueKind::Float64, || {
                Extremes::Float64(0.0, 1.0)
            })
        };
        assert!(r(Bins::Count(0), None).is_err());
        assert!(r(Bins::Count(MAX_BINS + 1), None).is_err());
        assert!(r(Bins::Edges(vec![1.0]), None).is_err());
        assert!(r(Bins::Edges(vec![0.0, 1.0, 1.0]), None).is_err());
        assert!(r(Bins::Edges(vec![0.0, f64::NAN]), None).is_err());
        assert!(r(Bins::Edges(vec![0.0, f64::INFINITY]), None).is_err());
        assert!(r(Bins::Count(3), Some((1.0, 0.0))).is_err());
        assert!(r(Bins::Count(3), Some((0.0, f64::NAN))).is_err());
        assert!(r(Bins::Count(3), Some((f64::NEG_INFINITY, 0.0))).is_err());
        let inf = BinSpec::resolve(
            &Bins::Count(3),
            None,
            Closed::Left,
            ValueKind::Float64,
            || Extremes::Float64(0.0, f64::INFINITY),
        );
        assert!(inf.unwrap_err().to_string().contains("not finite"));
    }

    #[test]
    fn collapsing_bins_are_refused_like_numpy_and_never_index_out_of_range() {
        for (lo, hi, n) in [(1e-45f32, 3e-45f32, 1000usize), (1e7, 1e7 + 3.0, 1 << 20)] {
            let left = BinSpec::resolve(
                &Bins::Count(n),
                None,
                Closed::Left,
                ValueKind::Float32,
                || Extremes::Float32(lo, hi),
            );
            assert!(left.unwrap_err().to_string().contains("too many bins"));
            // Polars' rule has no such check: it must still keep every index in bounds.
            let s = spec(
                Bins::Count(n),
                None,
                Closed::Right,
                Extremes::Float32(lo, hi),
            );
            let BinSpec::Uniform64(u) = &s else { panic!() };
            let mut x = lo;
            while x <= hi {
                assert!(u.bin(x as f64) < n);
                x = f32::from_bits(x.to_bits() + 1);
            }
        }
    }
}
