//! Equal bins as numpy's `histogram` (`_get_outer_edges`, `linspace`, `norm_denom`) and Polars'
//! `hist` make them, and the edges of equal bins where the estimate does not apply.

use super::linspace::table;
use super::{
    linspace, linspace_as, BinFloat, BinSpec, Closed, EdgeBins, Edges, Estimate, Extremes,
    HalfBins, Linspace, Range, UniformBins, ValueKind,
};
use crate::error::HistResult;

/// Equal bins binned by their edges (histogramdd), or explicit edges where the estimate of
/// equal ones would not help (closed right, or a span wider than the arithmetic type).
pub(super) fn edge_bins<P: BinFloat>(edges: Edges<P>, closed: Closed) -> HistResult<BinSpec>
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

pub(super) fn widened<P: BinFloat>(lo: P, hi: P) -> (P, P) {
    if lo == hi {
        (lo - P::HALF, hi + P::HALF)
    } else {
        (lo, hi)
    }
}

/// numpy's `_get_outer_edges` as Python floats: the range, or the data's extremes widened by
/// 0.5 when equal, or [0, 1] for no data.
pub(super) fn outer_edges(range: Option<Range>, extremes: Extremes) -> (f64, f64) {
    match (range, extremes) {
        (Some(r), _) => widened(r.lo, r.hi),
        (None, Extremes::Empty) => (0.0, 1.0),
        (None, e) => {
            let (lo, hi) = e.as_f64();
            widened(lo, hi)
        }
    }
}

/// numpy's `histogram` for `bins=n`: `_get_outer_edges`, `linspace` and `norm_denom`, each in
/// the type numpy computes it in.
pub(super) fn numpy_uniform(
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
        // float16 scalars beside data of another type: linspace and norm_denom in float16,
        // the estimate in the data's type (float32 for float32 data, else float64).
        (Some(r), _, ValueKind::Float32) if r.half => {
            let (edges, denom) = super::half::range_edges::<f32>(r, n)?;
            uniform_held(edges, denom, false)?
        }
        (Some(r), _, _) if r.half => {
            let (edges, denom) = super::half::range_edges::<f64>(r, n)?;
            uniform_held(edges, denom, true)?
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
pub(super) fn uniform_in<P: BinFloat>((lo, hi): (P, P), n: usize, wide: bool) -> HistResult<BinSpec>
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

/// Equal bins of edges made already, whose estimate divides by `denom` (numpy's `norm_denom`,
/// a float16 value) in `P` (or in float64 when `wide`).
fn uniform_held<P: BinFloat>(edges: Vec<P>, denom: f64, wide: bool) -> HistResult<BinSpec>
where
    UniformBins<P>: Into<BinSpec>,
{
    let edges = Edges::held(edges);
    if !denom.is_finite() {
        return edge_bins(edges, Closed::Left);
    }
    let estimate = Estimate {
        denom,
        n: edges.bins() as f64,
        wide,
    };
    Ok(UniformBins::numpy(edges, estimate).into())
}

/// Equal bins whose estimate divides by a float64 `denom` (numpy's float64 `norm_denom`).
pub(super) fn uniform_from<P: BinFloat>(edges: Edges<P>, denom: f64) -> HistResult<BinSpec>
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
pub(super) fn polars_uniform(n: usize, range: Option<Range>, ext: Extremes) -> HistResult<BinSpec> {
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
