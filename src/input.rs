//! Zero-copy typed views of a column's Arrow buffers: values, validity and the weights beside them.

use polars::prelude::*;
use polars_arrow::array::PrimitiveArray;
use polars_arrow::types::NativeType;

use crate::bins::{Extremes, ValueKind};
use crate::error::{HistError, HistResult};

/// A physical value type the histogram reads directly from Arrow buffers.
pub trait Value: NativeType + PartialOrd + Copy + Send + Sync + cudarc::driver::DeviceRepr {
    const KIND: ValueKind;
    /// The C type the CUDA kernels are compiled for (`-DVALUE_T`).
    const C_TYPE: &'static str;
    /// numpy's `astype(float64)`: round to nearest.
    fn to_f64(self) -> f64;
    /// Only meaningful for float32 columns, the only ones binned in float32.
    fn to_f32(self) -> f32;
    fn is_nan(self) -> bool;
    fn extremes(min: Self, max: Self) -> Extremes;
}

macro_rules! int_value {
    ($($t:ty => $c:literal),*) => {$(
        impl Value for $t {
            const KIND: ValueKind = ValueKind::Integer;
            const C_TYPE: &'static str = $c;
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn to_f32(self) -> f32 { self as f32 }
            #[inline(always)]
            fn is_nan(self) -> bool { false }
            fn extremes(min: Self, max: Self) -> Extremes {
                Extremes::Integer(min as i128, max as i128)
            }
        }
    )*};
}
int_value!(
    i8 => "signed char", i16 => "short", i32 => "int", i64 => "long long",
    u8 => "unsigned char", u16 => "unsigned short", u32 => "unsigned int", u64 => "unsigned long long"
);

impl Value for f32 {
    const KIND: ValueKind = ValueKind::Float32;
    const C_TYPE: &'static str = "float";
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        self.is_nan()
    }
    fn extremes(min: Self, max: Self) -> Extremes {
        Extremes::Float32(min, max)
    }
}

impl Value for f64 {
    const KIND: ValueKind = ValueKind::Float64;
    const C_TYPE: &'static str = "double";
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        self.is_nan()
    }
    fn extremes(min: Self, max: Self) -> Extremes {
        Extremes::Float64(min, max)
    }
}

/// A validity bitmap as bytes and a bit offset: bit `offset + i` set means row `i` is valid.
#[derive(Clone, Copy)]
pub struct Validity<'a> {
    pub bytes: &'a [u8],
    pub offset: usize,
}

impl<'a> Validity<'a> {
    fn of<T: NativeType>(array: &'a PrimitiveArray<T>) -> Option<Self> {
        let bitmap = array.validity().filter(|b| b.unset_bits() > 0)?;
        let (bytes, offset, _) = bitmap.as_slice();
        Some(Validity { bytes, offset })
    }

    #[inline(always)]
    pub fn is_valid(&self, i: usize) -> bool {
        let bit = self.offset + i;
        (self.bytes[bit >> 3] >> (bit & 7)) & 1 == 1
    }

    pub fn sliced(self, start: usize) -> Self {
        Validity {
            bytes: self.bytes,
            offset: self.offset + start,
        }
    }
}

/// One contiguous run of rows: the values, their validity, and the weights of the same rows.
#[derive(Clone, Copy)]
pub struct Segment<'a, T> {
    pub values: &'a [T],
    pub validity: Option<Validity<'a>>,
    pub weights: Option<(&'a [f64], Option<Validity<'a>>)>,
}

impl<'a, T> Segment<'a, T> {
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Rows `start..end` of this segment.
    pub fn slice(&self, start: usize, end: usize) -> Self {
        Segment {
            values: &self.values[start..end],
            validity: self.validity.map(|v| v.sliced(start)),
            weights: self
                .weights
                .map(|(w, v)| (&w[start..end], v.map(|v| v.sliced(start)))),
        }
    }
}

/// A column's rows as segments over its Arrow chunks, in order, with no copy. Where the weights
/// are chunked differently, segments end at the boundaries of both.
pub struct Column<'a, T> {
    pub segments: Vec<Segment<'a, T>>,
}

impl<'a, T: Value> Column<'a, T> {
    pub fn new<P>(values: &'a ChunkedArray<P>, weights: Option<&'a Float64Chunked>) -> Self
    where
        P: PolarsNumericType<Native = T>,
    {
        let value_chunks = values
            .downcast_iter()
            .map(|a| (a.values().as_slice(), Validity::of(a)));
        let Some(weights) = weights else {
            let segments = value_chunks
                .filter(|(v, _)| !v.is_empty())
                .map(|(values, validity)| Segment {
                    values,
                    validity,
                    weights: None,
                })
                .collect();
            return Column { segments };
        };
        let mut weight_chunks = weights
            .downcast_iter()
            .map(|a| (a.values().as_slice(), Validity::of(a)))
            .filter(|(w, _)| !w.is_empty());
        let mut segments = Vec::new();
        let mut pending_w: Option<(&[f64], Option<Validity>)> = None;
        for (mut vals, mut validity) in value_chunks {
            while !vals.is_empty() {
                let (w, wv) = match pending_w.take() {
                    Some(p) => p,
                    None => weight_chunks
                        .next()
                        .expect("weights are as long as the values"),
                };
                let take = vals.len().min(w.len());
                segments.push(Segment {
                    values: &vals[..take],
                    validity,
                    weights: Some((&w[..take], wv)),
                });
                if take < w.len() {
                    pending_w = Some((&w[take..], wv.map(|v| v.sliced(take))));
                }
                vals = &vals[take..];
                validity = validity.map(|v| v.sliced(take));
            }
        }
        Column { segments }
    }

    pub fn len(&self) -> usize {
        self.segments.iter().map(Segment::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: Value> Segment<'_, T> {
    #[inline(always)]
    fn row_is_valid(&self, i: usize) -> bool {
        self.validity.is_none_or(|v| v.is_valid(i))
            && self
                .weights
                .is_none_or(|(_, wv)| wv.is_none_or(|v| v.is_valid(i)))
    }

    /// Minimum and maximum of the rows that are counted at all (valid, not NaN).
    fn extremes(&self) -> Option<(T, T)> {
        let mut acc: Option<(T, T)> = None;
        let fold = |acc: &mut Option<(T, T)>, x: T| {
            if x.is_nan() {
                return;
            }
            *acc = Some(match *acc {
                None => (x, x),
                Some((lo, hi)) => (if x < lo { x } else { lo }, if x > hi { x } else { hi }),
            });
        };
        if self.validity.is_none() && self.weights.is_none_or(|(_, wv)| wv.is_none()) {
            // Branch-free over plain values: a seed from the data, then min/max that skip NaN.
            let first = self.values.iter().position(|x| !x.is_nan())?;
            let (mut lo, mut hi) = (self.values[first], self.values[first]);
            for &x in &self.values[first..] {
                lo = if x < lo { x } else { lo };
                hi = if x > hi { x } else { hi };
            }
            return Some((lo, hi));
        }
        for (i, &x) in self.values.iter().enumerate() {
            if self.row_is_valid(i) {
                fold(&mut acc, x);
            }
        }
        acc
    }
}

/// Minimum and maximum over the rows that are counted (valid in values and weights, not NaN).
pub fn extremes<T: Value>(column: &Column<'_, T>) -> Extremes {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 18;
    let pieces: Vec<Segment<'_, T>> = column
        .segments
        .iter()
        .flat_map(|s| {
            (0..s.len())
                .step_by(PIECE)
                .map(|a| s.slice(a, (a + PIECE).min(s.len())))
        })
        .collect();
    let reduced = pieces
        .par_iter()
        .with_min_len(4)
        .filter_map(Segment::extremes)
        .reduce_with(|(a, b), (c, d)| (if c < a { c } else { a }, if d > b { d } else { b }));
    match reduced {
        Some((lo, hi)) => T::extremes(lo, hi),
        None => Extremes::Empty,
    }
}

/// Casts `weights` to Float64 (no copy when it is Float64 already), after checking it fits.
pub fn weights_f64(values: &Series, weights: &Series) -> HistResult<Float64Chunked> {
    if weights.len() != values.len() {
        return Err(HistError::InvalidArgument(format!(
            "`weights` has {} rows but the column has {}: they must have the same length",
            weights.len(),
            values.len()
        )));
    }
    if !weights.dtype().is_primitive_numeric() {
        return Err(HistError::InvalidArgument(format!(
            "`weights` must be numeric, got dtype {}",
            weights.dtype()
        )));
    }
    Ok(weights.cast(&DataType::Float64)?.f64()?.clone())
}

/// The physical kind of a supported column, or an error naming its dtype.
pub fn value_kind(dtype: &DataType) -> HistResult<ValueKind> {
    use DataType::*;
    match dtype {
        Float32 => Ok(ValueKind::Float32),
        Float64 => Ok(ValueKind::Float64),
        Int8
        | Int16
        | Int32
        | Int64
        | UInt8
        | UInt16
        | UInt32
        | UInt64
        | Date
        | Datetime(_, _)
        | Duration(_) => Ok(ValueKind::Integer),
        other => Err(HistError::UnsupportedDtype(format!("{other:?}"))),
    }
}

/// Runs `$body` with `$ca` bound to the column's physical values as a typed `ChunkedArray`
/// and `$t` to their native type.
#[macro_export]
macro_rules! with_physical {
    ($series:expr, |$ca:ident : $t:ident| $body:expr) => {{
        use polars::prelude::DataType as D;
        let physical = $series.to_physical_repr();
        match physical.dtype() {
            D::Float32 => {
                type $t = f32;
                let $ca = physical.f32()?;
                $body
            }
            D::Float64 => {
                type $t = f64;
                let $ca = physical.f64()?;
                $body
            }
            D::Int8 => {
                type $t = i8;
                let $ca = physical.i8()?;
                $body
            }
            D::Int16 => {
                type $t = i16;
                let $ca = physical.i16()?;
                $body
            }
            D::Int32 => {
                type $t = i32;
                let $ca = physical.i32()?;
                $body
            }
            D::Int64 => {
                type $t = i64;
                let $ca = physical.i64()?;
                $body
            }
            D::UInt8 => {
                type $t = u8;
                let $ca = physical.u8()?;
                $body
            }
            D::UInt16 => {
                type $t = u16;
                let $ca = physical.u16()?;
                $body
            }
            D::UInt32 => {
                type $t = u32;
                let $ca = physical.u32()?;
                $body
            }
            D::UInt64 => {
                type $t = u64;
                let $ca = physical.u64()?;
                $body
            }
            other => Err($crate::error::HistError::UnsupportedDtype(format!(
                "{other:?}"
            )))?,
        }
    }};
}
