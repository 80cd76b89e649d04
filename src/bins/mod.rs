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

mod edges;
mod half;
pub mod integer;
mod linspace;
#[cfg(test)]
mod tests;
mod uniform;

use serde::{Deserialize, Serialize};

pub use crate::dtype::ValueKind;
use crate::error::{HistError, HistResult};
pub use edges::EdgeBins;
pub(crate) use edges::Guide;
pub use half::HalfBins;
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

/// The outer edges of equal bins as given: Python floats, numpy float32 scalars (numpy then
/// makes the edges in float32), or numpy float64 scalars (numpy then makes float64 bins even
/// for float32 data: a float64 scalar does not defer to the array's type, a Python float does).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
    pub single: bool,
    pub wide: bool,
}

impl Range {
    pub fn new(lo: f64, hi: f64) -> Self {
        Range {
            lo,
            hi,
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
    /// The extremes of both.
    pub fn union(self, other: Extremes) -> Extremes {
        use Extremes::*;
        match (self, other) {
            (Empty, e) | (e, Empty) => e,
            (Float32(a, b), Float32(c, d)) => Float32(a.min(c), b.max(d)),
            (Float64(a, b), Float64(c, d)) => Float64(a.min(c), b.max(d)),
            (Integer(a, b), Integer(c, d)) => Integer(a.min(c), b.max(d)),
            (a, b) => {
                let (a0, a1) = a.as_f64();
                let (b0, b1) = b.as_f64();
                Float64(a0.min(b0), a1.max(b1))
            }
        }
    }

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

/// Equal bins binned by their edges (histogramdd), or explicit edges where the estimate of
/// equal ones would not help (closed right, or a span wider than the arithmetic type).
fn edge_bins<P: BinFloat>(edges: Edges<P>, closed: Closed) -> HistResult<BinSpec>
where
    UniformBins<P>: Into<BinSpec>,
{
    let span_fits = (edges.last() - edges.first()).is_finite();
    Ok(match closed {
        Closed::Left if span_fits && edges.increasing()? => UniformBins::edge_bin(edges).into(),
        _ => {
            let all = edges.try_all()?;
            BinSpec::Edges(EdgeBins::new(
                table(all.len(), |i| all[i].to_f64())?,
                closed,
            ))
        }
    })
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

fn widened<P: BinFloat>(lo: P, hi: P) -> (P, P) {
    if lo == hi {
        (lo - P::HALF, hi + P::HALF)
    } else {
        (lo, hi)
    }
}

/// numpy's `_get_outer_edges` as Python floats: the range, or the data's extremes widened by
/// 0.5 when equal, or [0, 1] for no data.
fn outer_edges(range: Option<Range>, extremes: Extremes) -> (f64, f64) {
    match (range, extremes) {
        (Some(r), _) => widened(r.lo, r.hi),
        (None, Extremes::Empty) => (0.0, 1.0),
        (None, e) => {
            let (lo, hi) = e.as_f64();
            widened(lo, hi)
        }
    }
}

/// Checks `n` equal bins and their `range`, and asks for the data's extremes only when no
/// range is given (they must be finite: numpy's rule).
fn checked_extent(
    n: usize,
    range: Option<Range>,
    extremes: impl FnOnce() -> HistResult<Extremes>,
) -> HistResult<(Option<Range>, Extremes)> {
    validate_count(n)?;
    let range = range.map(validate_range).transpose()?;
    let extremes = match range {
        Some(_) => Extremes::Empty,
        None => extremes()?,
    };
    check_finite(extremes)?;
    Ok((range, extremes))
}

pub(crate) fn validate_count(n: usize) -> HistResult<()> {
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
    // Infinite edges are numpy's catch-all bins (`[-inf, 0, inf]`): every rule compares values
    // with edges, which holds for them; only the guide's grid needs a finite span (it has none).
    if let Some(i) = edges.iter().position(|e| e.is_nan()) {
        return Err(HistError::InvalidArgument(format!(
            "bin edges must be numbers, but edge {i} is NaN"
        )));
    }
    if let Some(i) = edges.windows(2).position(|w| w[0] > w[1]) {
        return Err(HistError::InvalidArgument(format!(
            "bin edges must increase, but edge {i} ({:?}) > edge {} ({:?})",
            edges[i],
            i + 1,
            edges[i + 1]
        )));
    }
    Ok(())
}

/// The front ends' rule for edges a user gives (Polars' `hist` and boost-histogram's too):
/// strictly increasing. The bins themselves take numpy's, under which an edge may repeat.
pub fn check_strictly_increasing(edges: &[f64]) -> HistResult<()> {
    match edges.windows(2).position(|w| w[0] >= w[1]) {
        Some(i) => Err(HistError::InvalidArgument(format!(
            "bin edges must increase strictly, but edge {i} ({:?}) >= edge {} ({:?})",
            edges[i],
            i + 1,
            edges[i + 1]
        ))),
        None => Ok(()),
    }
}

fn validate_range(r: Range) -> HistResult<Range> {
    let (lo, hi) = (r.lo, r.hi);
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(HistError::InvalidArgument(format!(
            "`range` must be finite, got ({lo:?}, {hi:?})"
        )));
    }
    if lo > hi {
        return Err(HistError::InvalidArgument(format!(
            "`range` must have min <= max, got ({lo:?}, {hi:?})"
        )));
    }
    if r.single && !((lo as f32).is_finite() && (hi as f32).is_finite()) {
        return Err(HistError::InvalidArgument(format!(
            "`range` ({lo:?}, {hi:?}) is given as float32 but does not fit in float32"
        )));
    }
    Ok(r)
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
        Err(HistError::argument(|s| {
            format!(
                "the range taken from the data, [{lo}, {hi}], is not finite: pass {} to bin \
                 data with infinite values",
                s.range()
            )
        }))
    }
}

/// numpy's `histogram` for `bins=n`: `_get_outer_edges`, `linspace` and `norm_denom`, each in
/// the type numpy computes it in.
fn numpy_uniform(
    n: usize,
    range: Option<Range>,
    kind: ValueKind,
    ext: Extremes,
) -> HistResult<BinSpec> {
    if kind == ValueKind::Float16 && !range.is_some_and(|r| r.single || r.wide) {
        return BinSpec::Half(HalfBins::numpy(n, range, ext)?).strictly_increasing();
    }
    let spec = match (range, ext, kind) {
        // float32 scalars (the data's own extremes, or a float32 `range`) with float32 data:
        // everything, linspace and norm_denom included, stays in float32.
        (None, Extremes::Float32(lo, hi), _) => uniform_in(widened(lo, hi), n, false)?,
        (Some(r), _, ValueKind::Float32 | ValueKind::Float16) if r.single => {
            uniform_in(widened(r.lo as f32, r.hi as f32), n, false)?
        }
        // numpy float64 scalars beside float32 (or float16) data: float64 throughout.
        (Some(r), _, ValueKind::Float32 | ValueKind::Float16) if r.wide => {
            let (lo, hi) = outer_edges(range, ext);
            uniform_from(linspace(lo, hi, n)?, hi - lo)?
        }
        // float32 scalars beside float64 data: linspace in float32, bins in float64.
        (Some(r), _, _) if r.single => {
            let (lo, hi) = widened(r.lo as f32, r.hi as f32);
            uniform_from(linspace_as::<f32, f64>(lo, hi, n)?, (hi - lo) as f64)?
        }
        (None, Extremes::Integer(lo, hi), _) if lo != hi => {
            // `_unsigned_subtract` of the integer extremes is exact; linspace casts then subtracts.
            uniform_from(linspace(lo as f64, hi as f64, n)?, (hi - lo) as f64)?
        }
        (range, ext, kind) => {
            // Python floats (a `range`, the empty default (0, 1), or widened integer extremes)
            // or float64 extremes: linspace in float64, then cast to the bin type; numpy's
            // norm_denom is then a float64 scalar.
            let (lo, hi) = outer_edges(range, ext);
            match kind {
                ValueKind::Float32 => uniform_from(linspace_as::<f64, f32>(lo, hi, n)?, hi - lo)?,
                _ => uniform_from(linspace(lo, hi, n)?, hi - lo)?,
            }
        }
    };
    spec.strictly_increasing()
}

/// Equal bins made and estimated in `P` (float32 extremes with float32 data).
fn uniform_in<P: BinFloat>((lo, hi): (P, P), n: usize, wide: bool) -> HistResult<BinSpec>
where
    UniformBins<P>: Into<BinSpec>,
{
    let edges = linspace(lo, hi, n)?;
    let denom = hi - lo;
    if !denom.is_finite() {
        return edge_bins(edges, Closed::Left);
    }
    let estimate = Estimate {
        denom: denom.to_f64(),
        n: n as f64,
        wide,
    };
    Ok(UniformBins::numpy(edges, estimate).into())
}

/// Equal bins whose estimate divides by a float64 `denom` (numpy's float64 `norm_denom`).
fn uniform_from<P: BinFloat>(edges: Edges<P>, denom: f64) -> HistResult<BinSpec>
where
    UniformBins<P>: Into<BinSpec>,
{
    if !denom.is_finite() {
        // numpy's estimate is NaN here (it makes NaN indices or fails): place by the edges.
        return edge_bins(edges, Closed::Left);
    }
    let estimate = Estimate {
        denom,
        n: edges.bins() as f64,
        wide: true,
    };
    Ok(UniformBins::numpy(edges, estimate).into())
}

/// Polars' `hist(bin_count=n)`: `get_breaks` and `uniform_hist_count` in float64.
fn polars_uniform(n: usize, range: Option<Range>, ext: Extremes) -> HistResult<BinSpec> {
    let (lo, hi) = match (range, ext) {
        (Some(r), _) => (r.lo, r.hi),
        (None, e) => e.as_f64(),
    };
    let (lo, width, hi) = if lo == hi {
        (lo - 0.5, 1.0 / n as f64, hi + 0.5)
    } else {
        (lo, (hi - lo) / n as f64, hi)
    };
    if !width.is_finite() {
        // Wider than float64 holds: Polars' breaks would be NaN; place by finite edges.
        return edge_bins(linspace(lo, hi, n)?, Closed::Right);
    }
    let formula = Linspace {
        start: lo,
        step: width,
        single: false,
    };
    // Polars checks nothing here: collapsing bins still keep every index in bounds.
    Ok(BinSpec::Uniform64(UniformBins::polars(Edges::of_formula(
        formula, n, hi,
    ))))
}
