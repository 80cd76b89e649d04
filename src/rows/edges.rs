//! Each row's bin edges (`include_intervals`): `left` the breakpoint below its bin, `right` the
//! one above, null below the first and above the last breakpoint and where the row has no
//! bin. Numbers and temporal values are gathered by their physical values in one pass per
//! side; other dtypes, and breakpoints with nulls, take Polars' gather.

use polars::prelude::*;
use polars_arrow::array::{Array, PrimitiveArray};
use polars_arrow::bitmap::Bitmap;
use polars_arrow::types::NativeType;

use crate::error::HistResult;

/// `(left, right)` of every row's bin among `breaks`, in `breaks`' dtype.
pub fn bin_edges(bins: &UInt32Chunked, breaks: &Series) -> HistResult<(Series, Series)> {
    let phys = breaks.to_physical_repr();
    macro_rules! gather {
        ($ca:expr) => {{
            let values: Vec<_> = $ca.into_no_null_iter().collect();
            (
                side(bins, &values, 0, breaks)?,
                side(bins, &values, 1, breaks)?,
            )
        }};
    }
    // Breakpoints with nulls (`bin_ranks`' starts past the end) take Polars' gather.
    let numeric = match phys.dtype() {
        _ if phys.null_count() > 0 => None,
        DataType::Float64 => Some(gather!(phys.f64()?)),
        DataType::Float32 => Some(gather!(phys.f32()?)),
        DataType::Int8 => Some(gather!(phys.i8()?)),
        DataType::Int16 => Some(gather!(phys.i16()?)),
        DataType::Int32 => Some(gather!(phys.i32()?)),
        DataType::Int64 => Some(gather!(phys.i64()?)),
        DataType::Int128 => Some(gather!(phys.i128()?)),
        DataType::UInt8 => Some(gather!(phys.u8()?)),
        DataType::UInt16 => Some(gather!(phys.u16()?)),
        DataType::UInt32 => Some(gather!(phys.u32()?)),
        DataType::UInt64 => Some(gather!(phys.u64()?)),
        DataType::UInt128 => Some(gather!(phys.u128()?)),
        _ => None,
    };
    if let Some(edges) = numeric {
        return Ok(edges);
    }
    // Breakpoints padded with a null at each end: `left` is entry bin, `right` entry bin + 1.
    let null = Series::full_null("breaks".into(), 1, breaks.dtype());
    let mut padded = null.clone();
    padded.append(breaks)?;
    padded.append(&null)?;
    let left = padded.take(bins)?;
    let above = bins + 1;
    let right = padded.take(&above)?;
    Ok((left, right))
}

/// One side: entry `bin - 1 + above` of `values` (the physical breakpoints) for every row,
/// as `like`'s dtype.
fn side<T: NativeType>(
    bins: &UInt32Chunked,
    values: &[T],
    above: u32,
    like: &Series,
) -> HistResult<Series> {
    let m = values.len() as u32;
    let chunks: Vec<Box<dyn Array>> = bins
        .downcast_iter()
        .map(|arr| {
            let at = |b: u32| (b + above).wrapping_sub(1);
            let gathered: Vec<T> = arr
                .values()
                .iter()
                .map(|&b| values.get(at(b) as usize).copied().unwrap_or_default())
                .collect();
            let inside: Bitmap = arr.values().iter().map(|&b| at(b) < m).collect();
            let validity = match arr.validity() {
                Some(v) => v & &inside,
                None => inside,
            };
            PrimitiveArray::new(T::PRIMITIVE.into(), gathered.into(), Some(validity)).boxed()
        })
        .collect();
    let name = like.name().clone();
    let physical = like.dtype().to_physical();
    // SAFETY: arrays of the breakpoints' physical type.
    let phys = unsafe { Series::from_chunks_and_dtype_unchecked(name, chunks, &physical) };
    if physical == *like.dtype() {
        return Ok(phys);
    }
    // SAFETY: physical values of the breakpoints' own dtype.
    Ok(unsafe { phys.from_physical_unchecked(like.dtype())? })
}
