//! What a [`super::Histogram`] did not count, and why: boost-histogram keeps under- and
//! overflow bins; this keeps them too, with the rows numpy drops for a null or a NaN, so that
//! every row a fill saw is accounted for: `rows = counted + null + nan + underflow + overflow`.
//!
//! A row is classified once, by the first reason that applies: a null on some axis (or a null
//! weight), else a NaN on some axis, else a value outside its axis' bins. With several axes the
//! first axis (in order) on which the row is outside decides whether it is underflow (below the
//! first edge) or overflow (above the last).

use serde::{Deserialize, Serialize};

use crate::error::{HistError, HistResult};

/// Rows seen and rows not counted, by reason; the weights (and squared weights) of the under-
/// and overflow rows for a weighted histogram (the flow bins' values and variances).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Flow {
    /// Every row the fills saw.
    pub rows: u64,
    /// Rows with a null on some axis, or a null weight.
    pub null: u64,
    /// Rows with NaN on some axis (and no null).
    pub nan: u64,
    /// Rows below the first edge (of the first axis on which they are outside).
    pub underflow: u64,
    /// Rows above the last edge (of the first axis on which they are outside).
    pub overflow: u64,
    pub underflow_weight: f64,
    pub overflow_weight: f64,
    pub underflow_squares: f64,
    pub overflow_squares: f64,
}

impl Flow {
    /// The rows counted in the bins.
    pub fn counted(&self) -> u64 {
        self.rows
            .saturating_sub(self.null + self.nan + self.underflow + self.overflow)
    }

    /// The sum of both, or [`HistError::Overflow`] past 2^64 - 1 rows (never a wrap).
    pub fn plus(&self, other: &Flow) -> HistResult<Flow> {
        let add = |a: u64, b: u64| a.checked_add(b).ok_or(HistError::Overflow);
        Ok(Flow {
            rows: add(self.rows, other.rows)?,
            null: add(self.null, other.null)?,
            nan: add(self.nan, other.nan)?,
            underflow: add(self.underflow, other.underflow)?,
            overflow: add(self.overflow, other.overflow)?,
            underflow_weight: self.underflow_weight + other.underflow_weight,
            overflow_weight: self.overflow_weight + other.overflow_weight,
            underflow_squares: self.underflow_squares + other.underflow_squares,
            overflow_squares: self.overflow_squares + other.overflow_squares,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
}

/// A count split into the bins and what fell outside them ([`split_flow`]).
pub(super) struct Split<T> {
    pub(super) bins: Vec<T>,
    pub(super) below: T,
    pub(super) above: T,
    pub(super) nan: T,
    /// Several axes: boost-histogram's flow cells, the cells of the grid with a flow bin on
    /// each side of every axis (`(n + 2) x (m + 2)` for two) that are not bins, in the grid's
    /// row-major order ([`outside_cells`]); empty for one axis (its two are `below`, `above`).
    pub(super) outside: Vec<T>,
}

/// How many flow cells a grid of `bins` has: `prod(n + 2) - prod(n)` for several axes (the
/// cells with a coordinate in a flow bin), none for one axis ([`Split::outside`]).
pub fn outside_cells(bins: &[usize]) -> usize {
    if bins.len() < 2 {
        return 0;
    }
    let with_flow: usize = bins.iter().map(|n| n + 2).product();
    with_flow - bins.iter().product::<usize>()
}

/// A count made with [`FlowBins::OutsideAndNan`](crate::job::FlowBins) on every axis (three
/// more cells on each, row-major) split into the counts of the bins and what fell outside,
/// below, above and NaN, each cell decided as a row is (this module's header): NaN on some axis
/// first, else the first axis on which it is outside; with several axes, the flow cells too
/// ([`Split::outside`]). The bins are compacted in place (a million of them are megabytes: no
/// second buffer).
pub(super) fn split_flow<T>(mut extended: Vec<T>, bins: &[usize]) -> Split<T>
where
    T: Copy + Default + std::ops::AddAssign + Send + Sync,
{
    if let [n] = bins {
        // One axis: [below, bins.., above, NaN].
        let n = *n;
        let (below, above, nan) = (extended[0], extended[n + 1], extended[n + 2]);
        shift_down_one(&mut extended[..=n]);
        extended.truncate(n);
        return Split {
            bins: extended,
            below,
            above,
            nan,
            outside: Vec::new(),
        };
    }
    let (mut below, mut above, mut nan) = (T::default(), T::default(), T::default());
    // Few next to the bins (the grid's faces): collected as the runs go by.
    let mut flow_cells = Vec::with_capacity(outside_cells(bins));
    let sum = |cells: &[T]| {
        let mut total = T::default();
        cells.iter().for_each(|&c| total += c);
        total
    };
    // A run of the last axis at a time: its cells share the other axes' coordinates (`at`).
    let (outer, last) = bins.split_at(bins.len() - 1);
    let run = last[0] + 3;
    let mut at = vec![0usize; outer.len()];
    let mut kept = 0;
    for start in (0..extended.len()).step_by(run) {
        let cells = start..start + run;
        let nan_axis = at.iter().zip(outer).any(|(&i, &n)| i == n + 2);
        let outside = at.iter().zip(outer).find(|&(&i, &n)| i == 0 || i == n + 1);
        match (nan_axis, outside) {
            (true, _) => nan += sum(&extended[cells]),
            (false, Some((&i, _))) => {
                // NaN on the last axis still comes first.
                nan += extended[start + run - 1];
                let rest = &extended[start..start + run - 1];
                flow_cells.extend_from_slice(rest);
                if i == 0 {
                    below += sum(rest);
                } else {
                    above += sum(rest);
                }
            }
            (false, None) => {
                below += extended[start];
                above += extended[start + run - 2];
                nan += extended[start + run - 1];
                flow_cells.extend([extended[start], extended[start + run - 2]]);
                // `kept` trails `start`: every run begins with a below cell.
                extended.copy_within(start + 1..start + run - 2, kept);
                kept += run - 3;
            }
        }
        // The next run's coordinates: the last of the other axes turns fastest.
        for (i, &n) in at.iter_mut().zip(outer).rev() {
            *i += 1;
            if *i < n + 3 {
                break;
            }
            *i = 0;
        }
    }
    extended.truncate(kept);
    Split {
        bins: extended,
        below,
        above,
        nan,
        outside: flow_cells,
    }
}

/// `v[i] = v[i + 1]` for every `i < v.len() - 1`, a piece of the slice a thread when it is long:
/// a million counts are 8 MB, and one thread's move of them took about a millisecond of a Dask
/// partition's task on the GPU hosts. Each piece's last cell takes the next piece's first value,
/// read before any piece moves.
fn shift_down_one<T: Copy + Send + Sync>(v: &mut [T]) {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 16;
    let moved = v.len().saturating_sub(1);
    if moved < 4 * PIECE {
        v.copy_within(1.., 0);
        return;
    }
    let nexts: Vec<T> = (1..=moved.div_ceil(PIECE))
        .map(|k| v[(k * PIECE).min(moved)])
        .collect();
    v[..moved]
        .par_chunks_mut(PIECE)
        .zip(nexts)
        .for_each(|(piece, next)| {
            piece.copy_within(1.., 0);
            *piece.last_mut().expect("pieces are not empty") = next;
        });
}

/// The rows a fill did not count, classified by masks over the columns: the reference that the
/// tests hold [`split_flow`] to (fills count their flow in flow bins instead).
#[cfg(test)]
pub(super) mod masks {
    use polars::prelude::*;

    use super::Flow;
    use crate::bins::BinSpec;
    use crate::error::HistResult;

    /// The flow of a host fill of `columns` with `weights` (Float64), binned by `specs`, each reason
    /// a mask made by Polars' kernels, the weights of the rows outside summed through them.
    pub(in crate::accumulator) fn host_flow(
        specs: &[&BinSpec],
        columns: &[Series],
        weights: Option<&Series>,
    ) -> HistResult<Flow> {
        let len = columns[0].len();
        let rows = len as u64;
        let mut flow = Flow {
            rows,
            ..Flow::default()
        };
        let none = || BooleanChunked::full("flow".into(), false, len);
        let mut decided = none();
        for c in columns.iter().chain(weights) {
            if c.null_count() > 0 {
                decided = &decided | &c.is_null();
            }
        }
        flow.null = decided.num_trues() as u64;
        let mut nan = none();
        for c in columns.iter().filter(|c| c.dtype().is_float()) {
            nan = &nan | &known(c.is_nan()?)?;
        }
        let nan = &nan & &!&decided;
        flow.nan = nan.num_trues() as u64;
        decided = &decided | &nan;
        // (NaN, greatest in Polars' total order, is decided already.)
        let (mut under, mut over) = (none(), none());
        for (c, spec) in columns.iter().zip(specs) {
            let (below, above) = outside_of(c, spec)?;
            let below = &known(below)? & &!&decided;
            let above = &known(above)? & &!&decided;
            decided = &(&decided | &below) | &above;
            under = &under | &below;
            over = &over | &above;
        }
        flow.underflow = under.num_trues() as u64;
        flow.overflow = over.num_trues() as u64;
        if let Some(w) = weights {
            let w = w.f64()?;
            let squares = w * w;
            let sum = |v: &Float64Chunked, m: &BooleanChunked| -> HistResult<f64> {
                Ok(v.filter(m)?.sum().unwrap_or(0.0))
            };
            flow.underflow_weight = sum(w, &under)?;
            flow.overflow_weight = sum(w, &over)?;
            flow.underflow_squares = sum(&squares, &under)?;
            flow.overflow_squares = sum(&squares, &over)?;
        }
        Ok(flow)
    }

    /// Which values of `column` lie below the first edge of `spec`, and which above the last, compared
    /// as the bins compare them: integer columns with integer edges exactly (as Int128), the rest as
    /// float64 (float32 and float16 edges and values widen exactly; integers against float edges
    /// round monotonically, as numpy compares them).
    fn outside_of(column: &Series, spec: &BinSpec) -> HistResult<(BooleanChunked, BooleanChunked)> {
        if let (BinSpec::Integers(b), true) = (spec, column.dtype().is_integer()) {
            let x = column.cast(&DataType::Int128)?;
            let x = x.i128()?;
            return Ok((x.lt(b.edges[0]), x.gt(b.edges[b.edges.len() - 1])));
        }
        let x = column.cast(&DataType::Float64)?;
        let x = x.f64()?;
        Ok((x.lt(spec.edge(0)), x.gt(spec.edge(spec.len()))))
    }

    /// A mask with its nulls (rows with a null value) as false.
    fn known(mask: BooleanChunked) -> HistResult<BooleanChunked> {
        if mask.null_count() == 0 {
            return Ok(mask);
        }
        Ok(mask.fill_null_with_values(false)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flow cells of 2 and 3 axes are the cells of the grid with a flow bin on each side
    /// that are not bins, in its row-major order, and sum to the rows below and above.
    #[test]
    fn several_axes_keep_their_flow_cells_in_the_grids_order() {
        for bins in [vec![2usize, 3], vec![1, 1], vec![3, 1, 2]] {
            let extended_shape: Vec<usize> = bins.iter().map(|n| n + 3).collect();
            let cells: usize = extended_shape.iter().product();
            let extended: Vec<u64> = (0..cells as u64).map(|i| i * 3 + 1).collect();
            let split = split_flow(extended.clone(), &bins);
            // The expected cells: every extended coordinate without a NaN, row-major, where
            // some coordinate is a flow bin.
            let mut expected = Vec::new();
            for (flat, &value) in extended.iter().enumerate() {
                let mut rest = flat;
                let mut coordinates = vec![0; bins.len()];
                for (axis, &size) in extended_shape.iter().enumerate().rev() {
                    coordinates[axis] = rest % size;
                    rest /= size;
                }
                let nan = coordinates.iter().zip(&bins).any(|(&c, &n)| c == n + 2);
                let flow = coordinates
                    .iter()
                    .zip(&bins)
                    .any(|(&c, &n)| c == 0 || c == n + 1);
                if flow && !nan {
                    expected.push(value);
                }
            }
            assert_eq!(split.outside, expected, "{bins:?}");
            assert_eq!(split.outside.len(), outside_cells(&bins), "{bins:?}");
            let total: u64 = split.outside.iter().sum();
            assert_eq!(total, split.below + split.above, "{bins:?}");
        }
    }

    /// One axis' flow bins split off as the layout puts them, the bins moved down one in pieces
    /// or at once: every length around the pieces' thresholds keeps every count in its place.
    #[test]
    fn one_axis_splits_whatever_its_length() {
        for n in [
            0usize,
            1,
            5,
            1 << 16,
            (1 << 18) - 2,
            1 << 18,
            (1 << 18) + 1,
            1_000_003,
        ] {
            let extended: Vec<u64> = (0..n as u64 + 3).map(|i| i * 7 + 1).collect();
            let split = split_flow(extended.clone(), &[n]);
            assert_eq!(split.bins, extended[1..=n], "{n} bins");
            assert_eq!(
                (split.below, split.above, split.nan),
                (extended[0], extended[n + 1], extended[n + 2])
            );
            assert!(split.outside.is_empty());
        }
    }
}
