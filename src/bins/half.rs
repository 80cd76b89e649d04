//! numpy's equal bins of float16 data: float16 edges and numpy's float16 (or mixed) arithmetic.
//! A float16 value has only 65,536 bit patterns, so numpy's steps are replayed once for each of
//! them, and binning a value is a table lookup by its bits (exact by construction).

use half::f16;

use crate::alloc::collected;
use crate::bins::{BinFloat, Extremes, Range};
use crate::error::HistResult;

/// `v` rounded once to the nearest float16 (ties to even), as numpy's `astype(np.float16)` and
/// its float16 scalars round a double. (`half::f16::from_f64` goes through float32 where the
/// CPU converts in hardware: twice rounded, one unit off in the last place in rare cases.)
pub fn f16_of(v: f64) -> f16 {
    let f = v as f32;
    if f as f64 == v || !v.is_finite() || f.is_infinite() {
        return f16::from_f32(f);
    }
    // Round to odd first (toward zero, the last bit set): the float32 keeps 13 bits more than
    // float16, so its rounding to nearest then is the double's own.
    let toward_zero = match (f as f64).abs() > v.abs() {
        true => f32::from_bits(f.to_bits() - 1),
        false => f,
    };
    f16::from_f32(f32::from_bits(toward_zero.to_bits() | 1))
}

/// Equal bins of a Float16 column, closed left, as `numpy.histogram` makes and counts them.
#[derive(Clone, Debug, PartialEq)]
pub struct HalfBins {
    pub edges: Vec<f16>,
    /// The bin of each float16 bit pattern (`n` where it is not counted).
    table: Vec<u32>,
}

impl HalfBins {
    /// A copy, or an out-of-memory error.
    pub fn try_clone(&self) -> HistResult<Self> {
        Ok(HalfBins {
            edges: crate::alloc::copied(&self.edges)?,
            table: self.table.clone(),
        })
    }

    /// `bins=n` over `range` (Python floats or float16 scalars) or over the data's extremes
    /// (float16 values).
    pub fn numpy(n: usize, range: Option<Range>, extremes: Extremes) -> HistResult<HalfBins> {
        // float16 scalars (the data's own extremes, or a float16 `range`): float16 throughout.
        let from_data = match range {
            Some(r) => r.half,
            None => !matches!(extremes, Extremes::Empty),
        };
        let (first, last): (f64, f64) = match (range, extremes) {
            (Some(r), _) if r.half => {
                let (lo, hi) = half_outer_edges(r);
                (lo.to_f64(), hi.to_f64())
            }
            (Some(r), _) => widened(r.lo, r.hi),
            (None, Extremes::Empty) => (0.0, 1.0),
            (None, e) => {
                let (lo, hi) = e.as_f64();
                if lo == hi {
                    // float16 scalars minus a Python float: float16 arithmetic.
                    let v = f16_of(lo);
                    (
                        (v - f16::from_f32(0.5)).to_f64(),
                        (v + f16::from_f32(0.5)).to_f64(),
                    )
                } else {
                    (lo, hi)
                }
            }
        };
        let edges = if from_data {
            linspace_f16(f16_of(first), f16_of(last), n)?
        } else {
            // linspace of Python floats computes in float64, then casts.
            let mut e: Vec<f16> = collected(
                (0..n + 1).map(|i| f16_of(i as f64 * ((last - first) / n as f64) + first)),
            )?;
            e[n] = f16_of(last);
            e
        };
        let wide_denom = last - first;
        let narrow_denom = f16_of(last) - f16_of(first);
        let first16 = f16_of(first);
        let numpy_bin = |x: f16| -> u32 {
            if !(x >= edges[0] && x <= edges[n]) {
                return n as u32;
            }
            let d = x - first16;
            let f = if from_data {
                (d / narrow_denom * f16_of(n as f64)).to_f64()
            } else {
                d.to_f64() / wide_denom * n as f64
            };
            let mut i = (f as usize).min(n - 1);
            if x < edges[i] {
                i -= 1;
            }
            if i != n - 1 && x >= edges[i + 1] {
                i += 1;
            }
            i as u32
        };
        let table = (0..=u16::MAX)
            .map(|bits| numpy_bin(f16::from_bits(bits)))
            .collect();
        Ok(HalfBins { edges, table })
    }

    pub fn len(&self) -> usize {
        self.edges.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bin of a float16 value (given widened to float32), `len()` when it is not counted.
    #[inline(always)]
    pub fn bin(&self, x: f32) -> usize {
        self.table[f16::from_f32(x).to_bits() as usize] as usize
    }

    /// Whether the edges increase strictly (numpy refuses bins that collapse).
    pub fn increasing(&self) -> bool {
        self.edges.windows(2).all(|w| w[0] < w[1])
    }
}

/// `numpy.histogramdd`'s edges over a float16 column's own extremes: `linspace` of float16
/// scalars (widened by 0.5 in float16 arithmetic when equal), widened exactly to float64.
pub(super) fn dd_edges(extremes: Extremes, n: usize) -> HistResult<Vec<f64>> {
    let (lo, hi) = extremes.as_f64();
    let (lo, hi) = (f16_of(lo), f16_of(hi));
    let (lo, hi) = if lo == hi {
        (lo - f16::from_f32(0.5), hi + f16::from_f32(0.5))
    } else {
        (lo, hi)
    };
    collected(linspace_f16(lo, hi, n)?.iter().map(|e| e.to_f64()))
}

/// numpy's `_get_outer_edges` of a `range` of float16 scalars (a Python float beside one is
/// taken as float16): widened by 0.5 in float16 arithmetic when equal.
fn half_outer_edges(r: Range) -> (f16, f16) {
    let (lo, hi) = (f16_of(r.lo), f16_of(r.hi));
    if lo == hi {
        (lo - f16::from_f32(0.5), hi + f16::from_f32(0.5))
    } else {
        (lo, hi)
    }
}

/// numpy's edges of `n` equal bins over a `range` of float16 scalars, beside data of another
/// type: `linspace` computes in float16 whatever the bins' type, each edge then widened to `F`
/// exactly; and `norm_denom`, the float16 span.
pub(super) fn range_edges<F: BinFloat>(r: Range, n: usize) -> HistResult<(Vec<F>, f64)> {
    let (lo, hi) = half_outer_edges(r);
    let edges = linspace_f16(lo, hi, n)?;
    let widened = collected(edges.iter().map(|e| F::from_f64(e.to_f64())))?;
    Ok((widened, (hi - lo).to_f64()))
}

fn widened(lo: f64, hi: f64) -> (f64, f64) {
    if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    }
}

/// numpy's `linspace` of float16 scalars: `arange(n + 1)` in float16, times the float16 step,
/// plus the start, each step rounded to float16; the last edge set to `stop`.
fn linspace_f16(start: f16, stop: f16, n: usize) -> HistResult<Vec<f16>> {
    let delta = stop - start;
    let div = f16_of(n as f64);
    let step = delta / div;
    let mut edges: Vec<f16> = if step.to_f64() == 0.0 {
        collected((0..n + 1).map(|i| f16_of(i as f64) / div * delta + start))?
    } else {
        collected((0..n + 1).map(|i| f16_of(i as f64) * step + start))?
    };
    edges[n] = stop;
    Ok(edges)
}
