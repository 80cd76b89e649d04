//! numpy's equal bins of float16 data: float16 edges and numpy's float16 (or mixed) arithmetic.
//! A float16 value has only 65,536 bit patterns, so numpy's steps are replayed once for each of
//! them, and binning a value is a table lookup by its bits (exact by construction).

use half::f16;

use crate::bins::{Extremes, Range};
use crate::error::HistResult;

/// Equal bins of a Float16 column, closed left, as `numpy.histogram` makes and counts them.
#[derive(Clone, Debug, PartialEq)]
pub struct HalfBins {
    pub edges: Vec<f16>,
    /// The bin of each float16 bit pattern (`n` where it is not counted).
    table: Vec<u32>,
}

impl HalfBins {
    /// `bins=n` over `range` (Python floats) or over the data's extremes (float16 values).
    pub fn numpy(n: usize, range: Option<Range>, extremes: Extremes) -> HistResult<HalfBins> {
        let from_data = range.is_none();
        let (first, last): (f64, f64) = match (range, extremes) {
            (Some(r), _) => widened(r.lo, r.hi),
            (None, Extremes::Empty) => (0.0, 1.0),
            (None, e) => {
                let (lo, hi) = e.as_f64();
                if lo == hi {
                    // float16 scalars minus a Python float: float16 arithmetic.
                    let v = f16::from_f64(lo);
                    (
                        (v - f16::from_f32(0.5)).to_f64(),
                        (v + f16::from_f32(0.5)).to_f64(),
                    )
                } else {
                    (lo, hi)
                }
            }
        };
        let edges = if from_data && !matches!(extremes, Extremes::Empty) {
            linspace_f16(f16::from_f64(first), f16::from_f64(last), n)
        } else {
            // linspace of Python floats computes in float64, then casts.
            let mut e: Vec<f16> = (0..=n)
                .map(|i| f16::from_f64(i as f64 * ((last - first) / n as f64) + first))
                .collect();
            e[n] = f16::from_f64(last);
            e
        };
        let wide_denom = last - first;
        let narrow_denom = f16::from_f64(last) - f16::from_f64(first);
        let first16 = f16::from_f64(first);
        let numpy_bin = |x: f16| -> u32 {
            if !(x >= edges[0] && x <= edges[n]) {
                return n as u32;
            }
            let d = x - first16;
            let f = if from_data && !matches!(extremes, Extremes::Empty) {
                (d / narrow_denom * f16::from_f64(n as f64)).to_f64()
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

fn widened(lo: f64, hi: f64) -> (f64, f64) {
    if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    }
}

/// numpy's `linspace` of float16 scalars: `arange(n + 1)` in float16, times the float16 step,
/// plus the start, each step rounded to float16; the last edge set to `stop`.
fn linspace_f16(start: f16, stop: f16, n: usize) -> Vec<f16> {
    let delta = stop - start;
    let div = f16::from_f64(n as f64);
    let step = delta / div;
    let mut edges: Vec<f16> = if step.to_f64() == 0.0 {
        (0..=n)
            .map(|i| f16::from_f64(i as f64) / div * delta + start)
            .collect()
    } else {
        (0..=n)
            .map(|i| f16::from_f64(i as f64) * step + start)
            .collect()
    };
    edges[n] = stop;
    edges
}
