//! The bin contract: which bin a value falls in. Every backend (the CPU in `cpu/`, the CUDA kernels
//! in `kernels/bin_rule.cuh`) evaluates exactly these rules, so counts agree bit for bit.
//!
//! `closed = "left"` reproduces `numpy.histogram` literally:
//! - The arithmetic type `F` is float32 for Float32 columns and float64 for everything else
//!   (numpy's `bin_type`); integer and temporal values are rounded to float64 first.
//! - Equal bins: the edges are numpy's `linspace(lo, hi, n + 1)`, evaluated the way numpy does
//!   (in float32 when the range comes from a Float32 column's own min/max or is given as float32
//!   scalars). A value `x` is kept when `edges[0] <= x <= edges[n]`; its bin is estimated as
//!   `trunc(((x - lo) / denom) * n)` (see [`Estimate`] for the precision of each step) and
//!   corrected once against the two neighbouring edges. That division is costly, and numpy's
//!   answer is simply the bin whose edges hold `x` whenever its estimate is within one bin of
//!   it. The estimate is monotone in `x`, so checking each bin's first and last representable
//!   value proves (or refutes) this for every `x` at once: when it holds, the backends use a
//!   cheap multiply-and-search rule that finds the edge bin; when it does not (float32,
//!   millions of bins), they replay numpy's arithmetic literally. Either way the counts are
//!   numpy's.
//! - Explicit edges are float64; bin `i` holds `e[i] <= x < e[i+1]`, the last bin `e[n-1] <= x <= e[n]`.
//!   Integer edges with an integer or temporal column compare exactly, as numpy's `searchsorted`
//!   does in their common integer type ([`integer`] proves when float64 already is exact).
//! - Where numpy's own arithmetic breaks down (a range wider than the arithmetic type holds:
//!   numpy makes NaN edges or fails), the edges are computed without overflow and values are
//!   placed by the edges alone.
//!
//! `closed = "right"` reproduces Polars' `Expr.hist`: float64 arithmetic, edges
//! `i * width + lo` with the last edge `hi`, bins `(e[i], e[i+1]]` with the first closed on both
//! sides, and Polars' estimate `trunc(n / (hi - lo) * (x - lo))` corrected once.
//!
//! NaN and values outside the edges are never counted; nulls are filtered before a rule is asked.

mod checks;
mod edges;
mod equal;
mod half;
pub mod integer;
mod linspace;
#[cfg(test)]
mod proof_tests;
#[cfg(test)]
mod tests;
mod uniform;

use serde::{Deserialize, Serialize};

pub use crate::dtype::ValueKind;
use crate::error::{HistError, HistResult};
pub use checks::check_strictly_increasing;
pub(crate) use checks::validate_count;
use checks::{checked_extent, validate_edges};
pub use edges::EdgeBins;
pub(crate) use edges::Guide;
use equal::{edge_bins, numpy_uniform, outer_edges, polars_uniform, widened};
pub use half::{f16_of, HalfBins};
pub use integer::{Domain, ExactInt, IntBins};
use linspace::{increasing, table};
pub use linspace::{linspace, linspace_as, Edges, Linspace};
pub use uniform::{BinFloat, Estimate, Origin, UniformBins, Walk};

/// Upper bound on the number of bins (cells, n-D): the result alone is 24 bytes a bin.
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

/// What the contract bins by: a number of equal bins or explicit edges, in the column's
/// physical units (days, time units, or the numbers themselves).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Binning {
    Count(usize),
    Edges(Vec<f64>),
    /// Integer edges for an integer or temporal column, compared exactly ([`integer`]).
    #[serde(with = "integer::tagged")]
    Integers(Vec<i128>),
}

/// The outer edges of equal bins as given: Python floats, numpy float16 or float32 scalars
/// (numpy then makes the edges in that type), or numpy float64 scalars (numpy then makes
/// float64 bins even for float32 data: a float64 scalar does not defer to the array's type, a
/// Python float does). At most one of `half`, `single` and `wide` holds: the type of the
/// scalars' arithmetic (NEP 50), a Python float beside them taken in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
    pub half: bool,
    pub single: bool,
    pub wide: bool,
}

impl Range {
    pub fn new(lo: f64, hi: f64) -> Self {
        Range {
            lo,
            hi,
            half: false,
            single: false,
            wide: false,
        }
    }
}

/// Minimum and maximum of the valid (non-null, non-NaN) values, in the column's own type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Extremes {
    Empty,
    Float32(f32, f32),
    Float64(f64, f64),
    Integer(i128, i128),
}

impl Extremes {
    /// As float64 (exact for float32; integers round to nearest).
    pub fn as_f64(self) -> (f64, f64) {
        match self {
            Extremes::Empty => (0.0, 1.0),
            Extremes::Float32(lo, hi) => (lo as f64, hi as f64),
            Extremes::Float64(lo, hi) => (lo, hi),
            Extremes::Integer(lo, hi) => (lo as f64, hi as f64),
        }
    }
}

/// A resolved binning: the edges and the rule that puts a value in a bin.
#[derive(Clone, Debug, PartialEq)]
pub enum BinSpec {
    /// Equal bins of a Float32 column under numpy's rules.
    Uniform32(UniformBins<f32>),
    Uniform64(UniformBins<f64>),
    Edges(EdgeBins),
    /// Integer edges beyond ±2^53 for an integer or temporal column (`bins/integer.rs`).
    Integers(IntBins),
    /// Equal bins of a Float16 column under numpy's rules (closed left; CPU only).
    Half(HalfBins),
}

impl BinSpec {
    /// Resolves `bins` and `range` for a column of `kind` as `numpy.histogram` (closed left) or
    /// Polars' `hist` (closed right) would. `extremes` is asked only when the range comes from
    /// the data (a count of bins and no `range`).
    pub fn resolve(
        bins: &Binning,
        range: Option<Range>,
        closed: Closed,
        kind: ValueKind,
        extremes: impl FnOnce() -> HistResult<Extremes>,
    ) -> HistResult<BinSpec> {
        match bins {
            Binning::Edges(edges) => Self::explicit(edges, range, closed),
            Binning::Integers(edges) => integer::resolve(edges, range, closed, kind),
            &Binning::Count(n) => {
                let (range, extremes) = checked_extent(n, range, extremes)?;
                match closed {
                    Closed::Left => numpy_uniform(n, range, kind, extremes),
                    Closed::Right => polars_uniform(n, range, extremes),
                }
            }
        }
    }

    fn explicit(edges: &[f64], range: Option<Range>, closed: Closed) -> HistResult<BinSpec> {
        if range.is_some() {
            // numpy ignores `range` with explicit edges; refusing is kinder than ignoring.
            return Err(HistError::InvalidArgument(
                "`range` cannot be combined with explicit bin edges: drop `range`, or give a \
                 number of bins"
                    .into(),
            ));
        }
        validate_edges(edges)?;
        Ok(BinSpec::Edges(EdgeBins::new(
            crate::alloc::copied(edges)?,
            closed,
        )))
    }

    /// One dimension of `numpy.histogramdd`: the edges are `linspace` over `range` (or the
    /// data's [min, max], widened by 0.5 when equal) in the sample's precision (`kind`), and a
    /// value's bin is found by `searchsorted` on them, the last bin closed: the edge bin, never
    /// numpy.histogram's estimate. `closed = Right` mirrors it: `(a, b]`, the first bin closed.
    pub fn resolve_dd(
        bins: &Binning,
        range: Option<Range>,
        closed: Closed,
        kind: ValueKind,
        extremes: impl FnOnce() -> HistResult<Extremes>,
    ) -> HistResult<BinSpec> {
        let n = match bins {
            Binning::Edges(edges) => return Self::explicit(edges, range, closed),
            Binning::Integers(edges) => return integer::resolve(edges, range, closed, kind),
            &Binning::Count(n) => n,
        };
        let (range, extremes) = checked_extent(n, range, extremes)?;
        if kind == ValueKind::Float16 && range.is_none() && extremes != Extremes::Empty {
            // A float16 sample's own extremes: linspace of float16 scalars.
            return edge_bins(Edges::held(half::dd_edges(extremes, n)?), closed);
        }
        if let Some(r) = range.filter(|r| r.half) {
            // A range of float16 scalars: linspace in float16, searchsorted in the sample's type.
            return match kind {
                ValueKind::Float32 => {
                    edge_bins(Edges::held(half::range_edges::<f32>(r, n)?.0), closed)
                }
                _ => edge_bins(Edges::held(half::range_edges::<f64>(r, n)?.0), closed),
            };
        }
        // linspace computes in float32 when its ends are float32 scalars: the extremes of a
        // float32 sample, or a float32 `range`; searchsorted then compares in the sample's type.
        let single = match (range, extremes) {
            (Some(r), _) => r.single,
            (None, e) => matches!(e, Extremes::Float32(..)),
        };
        let spec = if single {
            let (lo, hi) = match (range, extremes) {
                (Some(r), _) => (r.lo as f32, r.hi as f32),
                (None, e) => {
                    let (lo, hi) = e.as_f64();
                    (lo as f32, hi as f32)
                }
            };
            let (lo, hi) = widened(lo, hi);
            match kind {
                ValueKind::Float32 => edge_bins(linspace_as::<f32, f32>(lo, hi, n)?, closed)?,
                _ => edge_bins(linspace_as::<f32, f64>(lo, hi, n)?, closed)?,
            }
        } else {
            let (lo, hi) = outer_edges(range, extremes);
            edge_bins(linspace(lo, hi, n)?, closed)?
        };
        // numpy.histogramdd accepts collapsed (equal) edges: searchsorted leaves those bins empty.
        Ok(spec)
    }

    /// numpy refuses equal bins that collapse (the span is too narrow for `n` distinct edges).
    fn strictly_increasing(self) -> HistResult<BinSpec> {
        let (lo, hi, precision) = match &self {
            BinSpec::Uniform32(u) if !u.increasing()? => {
                (u.edge(0) as f64, u.edge(u.len()) as f64, "float32")
            }
            BinSpec::Uniform64(u) if !u.increasing()? => (u.edge(0), u.edge(u.len()), "float64"),
            BinSpec::Edges(e) if !increasing(&e.edges) => (e.edges[0], e.edges[e.len()], "float64"),
            // numpy refuses float16 edges that collapse as it refuses the others.
            BinSpec::Half(h) if !h.increasing() => {
                (h.edges[0].to_f64(), h.edges[h.len()].to_f64(), "float16")
            }
            _ => return Ok(self),
        };
        Err(HistError::InvalidArgument(format!(
            "too many bins for the data range: {} equal bins over [{lo:?}, {hi:?}] \
             do not all have a positive width in {precision}; ask for fewer bins",
            self.len()
        )))
    }

    pub fn len(&self) -> usize {
        match self {
            BinSpec::Uniform32(u) => u.len(),
            BinSpec::Uniform64(u) => u.len(),
            BinSpec::Edges(e) => e.len(),
            BinSpec::Integers(b) => b.len(),
            BinSpec::Half(h) => h.len(),
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
            BinSpec::Integers(b) => b.closed,
            BinSpec::Half(_) => Closed::Left,
        }
    }

    /// Edge `i` as float64 (exact: float32 edges widen without rounding; integer edges beyond
    /// 2^53 round to nearest).
    pub fn edge(&self, i: usize) -> f64 {
        match self {
            BinSpec::Uniform32(u) => u.edge(i) as f64,
            BinSpec::Uniform64(u) => u.edge(i),
            BinSpec::Edges(e) => e.edges[i],
            BinSpec::Integers(b) => b.edges[i] as f64,
            BinSpec::Half(h) => h.edges[i].to_f64(),
        }
    }

    /// The edges as float64 (exact: float32 edges widen without rounding).
    pub fn edges_f64(&self) -> HistResult<Vec<f64>> {
        match self {
            BinSpec::Uniform64(u) => u.edges_f64(),
            BinSpec::Edges(e) => table(e.edges.len(), |i| e.edges[i]),
            BinSpec::Integers(b) => table(b.edges.len(), |i| b.edges[i] as f64),
            BinSpec::Uniform32(u) => u.edges_f64(),
            BinSpec::Half(h) => table(h.edges.len(), |i| h.edges[i].to_f64()),
        }
    }

    /// Makes every edge now (equal bins make theirs on first use): an out-of-memory error here
    /// rather than an abort where a backend reads them.
    pub fn make_edges(&self) -> HistResult<()> {
        match self {
            BinSpec::Uniform32(u) => u.try_edges().map(drop),
            BinSpec::Uniform64(u) => u.try_edges().map(drop),
            BinSpec::Edges(_) | BinSpec::Integers(_) | BinSpec::Half(_) => Ok(()),
        }
    }

    /// Settles equal bins' proof of the cheap rule now, on the calling thread: every counting
    /// task reads it, so it is proved once before they fan out rather than by whichever comes
    /// first.
    pub fn prove(&self) {
        match self {
            BinSpec::Uniform32(u) => _ = u.proof(),
            BinSpec::Uniform64(u) => _ = u.proof(),
            BinSpec::Edges(_) | BinSpec::Integers(_) | BinSpec::Half(_) => {}
        }
    }

    /// A copy, or an out-of-memory error (the edges may take gigabytes).
    pub fn try_clone(&self) -> HistResult<BinSpec> {
        Ok(match self {
            BinSpec::Uniform32(u) => BinSpec::Uniform32(u.try_clone()?),
            BinSpec::Uniform64(u) => BinSpec::Uniform64(u.try_clone()?),
            BinSpec::Edges(e) => BinSpec::Edges(e.try_clone()?),
            BinSpec::Integers(b) => BinSpec::Integers(b.try_clone()?),
            BinSpec::Half(h) => BinSpec::Half(h.try_clone()?),
        })
    }

    /// Width of bin `i` as numpy's `density` divides by it: the difference taken in the edges'
    /// own type.
    pub fn width(&self, i: usize) -> f64 {
        match self {
            BinSpec::Uniform32(u) => (u.edge(i + 1) - u.edge(i)) as f64,
            BinSpec::Half(h) => (h.edges[i + 1] - h.edges[i]).to_f64(),
            // The exact difference, rounded once.
            BinSpec::Integers(b) => (b.edges[i + 1] - b.edges[i]) as f64,
            _ => self.edge(i + 1) - self.edge(i),
        }
    }
}

impl From<UniformBins<f32>> for BinSpec {
    fn from(u: UniformBins<f32>) -> Self {
        BinSpec::Uniform32(u)
    }
}

impl From<UniformBins<f64>> for BinSpec {
    fn from(u: UniformBins<f64>) -> Self {
        BinSpec::Uniform64(u)
    }
}
