//! Row binning: every row's bin among sorted breakpoints, as Polars' `bin_intervals`,
//! `bin_quantiles`, `bin_ranks`, `cut` and `qcut` give it. A histogram counts bins; these calls
//! keep them, one per row, so the work is the first half of a histogram without the counters.
//!
//! The rule is Polars' own, not numpy's: `m` sorted breakpoints make `m + 1` bins, the first
//! below every breakpoint and the last above them all (no value is outside). Left-closed, a
//! row's bin is the number of breakpoints at most its value (`[b[i-1], b[i])`); right-closed,
//! the number strictly below it (`(b[i-1], b[i]]`). Values compare in Polars' total order:
//! NaN above every number and equal to itself, -0.0 equal to 0.0; a null row has no bin. `cut`
//! and `qcut` give NaN no bin either ([`NanRows::Null`]). numpy's `searchsorted` is the same
//! rule (`side="right"` left-closed, `"left"` right-closed); its `histogram` is not (values
//! outside the edges are left out, the last bin is closed).
//!
//! Layout: this file compares a column with its breakpoints in one domain (the dtype Polars
//! compares them in: [`compare_dtype`]) and hands the rows to [`search`] (the SIMD search of
//! the CPU backend for numbers, an exact search of order keys otherwise); [`breaks`] finds the
//! breakpoints Polars derives from the data, [`select`] the order statistics they need, and
//! [`ranks`] the positional bins of `bin_ranks`.

pub mod breaks;
mod edges;
pub mod ranks;
mod search;
pub mod select;
#[cfg(test)]
mod tests;

use polars::prelude::*;

use crate::bins::Closed;
use crate::error::{HistError, HistResult};
use crate::options::Device;

pub use edges::bin_edges;
pub use search::{f64_key, BinRule};

/// What becomes of a row whose value is NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanRows {
    /// A bin like any other value's: above every number (`bin_intervals`, `bin_quantiles`).
    Bin,
    /// No bin, a null (`cut`, `qcut`).
    Null,
}

/// The dtype a column and its explicit breakpoints are compared in, as Polars 2 compares them:
/// the supertype of two numeric dtypes, else the column's own (breakpoints are cast to it).
pub fn compare_dtype(column: &DataType, breaks: &DataType) -> HistResult<DataType> {
    check_orderable(column, "bin_intervals")?;
    let numeric = |d: &DataType| d.is_primitive_numeric() || d.is_decimal();
    if numeric(column) && numeric(breaks) {
        return Ok(numeric_supertype(column, breaks)?);
    }
    Ok(column.clone())
}

/// Polars 2's supertype of two numeric dtypes where it differs from polars-core's.
fn numeric_supertype(a: &DataType, b: &DataType) -> PolarsResult<DataType> {
    use DataType::*;
    let pair = |x: &DataType, y: &DataType| (x.clone(), y.clone());
    Ok(match pair(a, b) {
        // Polars 2.1 compares UInt64 and UInt128 with a signed integer as Int128 (polars-core
        // 0.55 as Float64).
        (UInt64 | UInt128, Int8 | Int16 | Int32 | Int64 | Int128)
        | (Int8 | Int16 | Int32 | Int64 | Int128, UInt64 | UInt128) => Int128,
        _ => polars_core::utils::try_get_supertype(a, b)?,
    })
}

/// Refuses dtypes with no order (Polars: "requires an orderable input").
pub fn check_orderable(dtype: &DataType, call: &str) -> HistResult<()> {
    let orderable = !(dtype.is_null()
        || dtype.is_nested()
        || dtype.is_object()
        || dtype.is_extension()
        || matches!(dtype, DataType::Unknown(_)));
    if orderable {
        return Ok(());
    }
    Err(HistError::InvalidArgument(format!(
        "`{call}` requires an orderable input, got `{dtype}`: bin a column of numbers, \
         dates, times or strings"
    )))
}

/// Refuses what is not a number (Polars: "requires a numeric input").
pub fn check_numeric(dtype: &DataType, call: &str) -> HistResult<()> {
    if dtype.is_primitive_numeric() || dtype.is_decimal() {
        return Ok(());
    }
    Err(HistError::InvalidArgument(format!(
        "`{call}` requires a numeric input, got `{dtype}`: cast the column to a number first"
    )))
}

/// `n` zero bins, from memory the system hands over zeroed (fresh pages are not written twice:
/// the search writes every bin anyway), or an out-of-memory error.
pub(crate) fn zero_bins(n: usize) -> HistResult<Vec<u32>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u32>(n)
        .map_err(|_| HistError::OutOfMemory(n.saturating_mul(4)))?;
    // SAFETY: a non-zero layout; the pointer, if not null, is a zeroed allocation of `n` u32
    // with the global allocator's layout, which `Vec` frees with the same layout.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<u32>();
        if ptr.is_null() {
            return Err(HistError::OutOfMemory(layout.size()));
        }
        Ok(Vec::from_raw_parts(ptr, n, n))
    }
}

/// The bin of every row of `values` among `breaks` (sorted in the comparison order; both in
/// one dtype, [`compare_dtype`]), a null where the row has none: UInt32 named like `values`,
/// chunked like it. Rows are binned on every CPU core (`Device::Auto` and `Device::Cpu`):
/// there is no GPU row-binning kernel yet, so `Device::Gpu` is an error, not a CPU run.
pub fn bin_rows(
    values: &Series,
    breaks: &Series,
    closed: Closed,
    nan: NanRows,
    device: Device,
) -> HistResult<UInt32Chunked> {
    on_cpu(device)?;
    let rule = BinRule::new(breaks, closed)?;
    search::bins(values, &rule, nan)
}

/// Refuses `Device::Gpu` for row binning, which runs on the CPU only.
pub fn on_cpu(device: Device) -> HistResult<()> {
    match device {
        Device::Gpu => Err(HistError::Gpu(
            "row binning has no GPU kernel yet; it bins rows on every CPU core: ask for \
             device=\"auto\" or \"cpu\""
                .into(),
        )),
        Device::Auto | Device::Cpu => Ok(()),
    }
}
