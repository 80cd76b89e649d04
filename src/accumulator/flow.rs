//! What a [`super::Histogram`] did not count, and why: boost-histogram keeps under- and
//! overflow bins; this keeps them too, with the rows numpy drops for a null or a NaN, so that
//! every row a fill saw is accounted for: `rows = counted + null + nan + underflow + overflow`.
//!
//! A row is classified once, by the first reason that applies: a null on some axis (or a null
//! weight), else a NaN on some axis, else a value outside its axis' bins. With several axes the
//! first axis (in order) on which the row is outside decides whether it is underflow (below the
//! first edge) or overflow (above the last).

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bins::BinSpec;
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

/// The flow of a host fill of `columns` (physical, as the engine read them) with `weights`
/// (Float64), binned by `specs`; `counted` is the number of rows the engine counted where it is
/// known (counting storage), which spares the pass over the rows when every row was counted.
pub(super) fn host_flow(
    specs: &[&BinSpec],
    columns: &[Series],
    weights: Option<&Series>,
    counted: Option<u64>,
) -> HistResult<Flow> {
    let len = columns[0].len();
    let rows = len as u64;
    let mut flow = Flow {
        rows,
        ..Flow::default()
    };
    if counted == Some(rows) {
        return Ok(flow);
    }
    if let ([column], None, Some(counted)) = (columns, weights, counted) {
        // One axis without weights: when the rows not counted are its nulls, no pass is needed.
        let null = column.null_count() as u64;
        if counted + null == rows {
            flow.null = null;
            return Ok(flow);
        }
    }
    // Bounds as float64: float32 (and float16) edges and values widen exactly, and integers
    // round monotonically, so `x < first edge` here is the comparison the bins make.
    let bounds: Vec<(f64, f64)> = specs.iter().map(|s| (s.edge(0), s.edge(s.len()))).collect();
    let values = columns
        .iter()
        .map(|c| Ok(c.cast(&DataType::Float64)?.f64()?.clone()))
        .collect::<HistResult<Vec<Float64Chunked>>>()?;
    let mut iters: Vec<_> = values.iter().map(|v| v.iter()).collect();
    let weights = weights.map(|w| w.f64().cloned()).transpose()?;
    let mut weight_iter = weights.as_ref().map(|w| w.iter());
    for _ in 0..len {
        let weight = weight_iter.as_mut().map(|w| w.next().flatten());
        let mut null = matches!(weight, Some(None));
        let (mut nan, mut side) = (false, None);
        for (it, &(lo, hi)) in iters.iter_mut().zip(&bounds) {
            match it.next().flatten() {
                None => null = true,
                Some(x) if x.is_nan() => nan = true,
                Some(x) if side.is_none() && x < lo => side = Some(true),
                Some(x) if side.is_none() && x > hi => side = Some(false),
                Some(_) => {}
            }
        }
        let w = weight.flatten().unwrap_or(0.0);
        match (null, nan, side) {
            (true, _, _) => flow.null += 1,
            (false, true, _) => flow.nan += 1,
            (false, false, Some(true)) => {
                flow.underflow += 1;
                flow.underflow_weight += w;
                flow.underflow_squares += w * w;
            }
            (false, false, Some(false)) => {
                flow.overflow += 1;
                flow.overflow_weight += w;
                flow.overflow_squares += w * w;
            }
            (false, false, None) => {}
        }
    }
    if let Some(counted) = counted {
        // The engine's count is the truth: should a comparison here disagree with it (integers
        // past 2^53 binned exactly), the rows outside still add up.
        let outside = rows.saturating_sub(counted + flow.null + flow.nan);
        if flow.underflow + flow.overflow != outside {
            flow.underflow = flow.underflow.min(outside);
            flow.overflow = outside - flow.underflow;
        }
    }
    Ok(flow)
}
