//! Counting by value ([`ByValue`]): the table of every value's bin, made by this backend's own
//! rule, and the fold of value counts into bins through it. The GPU folds with the same table.

use crate::counts::zeroed;
use crate::error::HistResult;
use crate::input::{Chunk, Values};
use crate::job::{Axis, ByValue};

/// The bin of each value `by_value.lo + i` of the column's type under `axis` (flow bins
/// included), `axis.len()` where the value is not counted: [`super::axis_cells`] over every
/// value of the type, so the fold counts exactly what binning row by row would.
pub fn value_bins(axis: &Axis, by_value: ByValue) -> HistResult<Vec<u32>> {
    let mut bins: Vec<u32> = zeroed(by_value.values)?;
    let values: Vec<i64> = (0..by_value.values as i64)
        .map(|i| by_value.lo + i)
        .collect();
    macro_rules! all_of {
        ($t:ty, $variant:ident) => {{
            let typed: Vec<$t> = values.iter().map(|&v| v as $t).collect();
            let chunk = Chunk {
                values: Values::$variant(&typed),
                validity: None,
            };
            super::axis_cells(axis, &chunk, &mut bins);
        }};
    }
    match (by_value.lo, by_value.values) {
        (0, 256) => all_of!(u8, U8),
        (_, 256) => all_of!(i8, I8),
        (0, _) => all_of!(u16, U16),
        _ => all_of!(i16, I16),
    }
    Ok(bins)
}

/// The counts of `cells` bins from the counts of each value and the bin of each value.
pub fn fold(value_counts: &[u64], value_bins: &[u32], cells: usize) -> HistResult<Vec<u64>> {
    let mut out: Vec<u64> = zeroed(cells)?;
    for (&count, &bin) in value_counts.iter().zip(value_bins) {
        if let Some(total) = out.get_mut(bin as usize) {
            *total += count;
        }
    }
    Ok(out)
}
