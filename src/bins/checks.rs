//! The checks a binning passes before it is made: a count, edges, a range and the data's
//! extremes that arithmetic can hold, each refused with the argument named.

use super::{Extremes, Range, MAX_BINS};
use crate::error::{HistError, HistResult};

/// Checks `n` equal bins and their `range`, and asks for the data's extremes only when no
/// range is given (they must be finite: numpy's rule).
pub(super) fn checked_extent(
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

pub(super) fn validate_edges(edges: &[f64]) -> HistResult<()> {
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

pub(super) fn validate_range(r: Range) -> HistResult<Range> {
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
    let fits_half = |v: f64| super::f16_of(v).is_finite();
    if r.half && !(fits_half(lo) && fits_half(hi)) {
        return Err(HistError::InvalidArgument(format!(
            "`range` ({lo:?}, {hi:?}) is given as float16 but does not fit in float16"
        )));
    }
    Ok(r)
}

pub(super) fn check_finite(extremes: Extremes) -> HistResult<()> {
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
