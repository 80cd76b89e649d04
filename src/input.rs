//! Zero-copy views of Arrow buffers on the host: a column's typed values and validity, chunk by
//! chunk, and the pieces of rows where several columns are all contiguous.

use polars::prelude::*;
use polars_arrow::array::PrimitiveArray;
use polars_arrow::types::NativeType;

use crate::bins::Extremes;
use crate::dtype::DType;
use crate::error::{HistError, HistResult};

/// A physical value type the histogram reads directly from Arrow buffers.
pub trait Value: NativeType + PartialOrd + Copy + Send + Sync + 'static {
    const DTYPE: DType;
    /// numpy's `astype(float64)`: round to nearest.
    fn to_f64(self) -> f64;
    /// Only meaningful for float32 columns, the only ones binned in float32.
    fn to_f32(self) -> f32;
    fn is_nan(self) -> bool;
    fn extremes(min: Self, max: Self) -> Extremes;
    /// `self as i64` (integer keys of `by=`).
    fn as_i64(self) -> i64;
    fn values<'a>(values: Values<'a>) -> Option<&'a [Self]>;
}

/// The one min/max fold of every extremes pass (the CPU's stretches, the GPU's per-block
/// partials, an estimator's sample): the smaller minimum and the larger maximum of two
/// `(min, max)` pairs, the earlier kept among equal values (NaN never reaches it).
#[inline(always)]
pub fn wider<T: PartialOrd + Copy>((lo, hi): (T, T), (x, y): (T, T)) -> (T, T) {
    (if x < lo { x } else { lo }, if y > hi { y } else { hi })
}

/// The extremes of `(min, max)` pairs folded by [`wider`], as the bins take them.
pub fn extremes_of<T: Value>(pairs: impl IntoIterator<Item = (T, T)>) -> Extremes {
    pairs
        .into_iter()
        .reduce(wider)
        .map_or(Extremes::Empty, |(lo, hi)| T::extremes(lo, hi))
}

macro_rules! int_value {
    ($($t:ty => $d:ident),*) => {$(
        impl Value for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn to_f32(self) -> f32 { self as f32 }
            #[inline(always)]
            fn is_nan(self) -> bool { false }
            fn extremes(min: Self, max: Self) -> Extremes {
                Extremes::Integer(min as i128, max as i128)
            }
            #[inline(always)]
            fn as_i64(self) -> i64 { self as i64 }
            fn values<'a>(values: Values<'a>) -> Option<&'a [Self]> {
                match values { Values::$d(v) => Some(v), _ => None }
            }
        }
    )*};
}
int_value!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);

macro_rules! float_value {
    ($($t:ty => $d:ident, $e:ident),*) => {$(
        impl Value for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)]
            fn to_f32(self) -> f32 { self as f32 }
            #[inline(always)]
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            fn extremes(min: Self, max: Self) -> Extremes {
                Extremes::$e(min, max)
            }
            #[inline(always)]
            fn as_i64(self) -> i64 { self as i64 }
            fn values<'a>(values: Values<'a>) -> Option<&'a [Self]> {
                match values { Values::$d(v) => Some(v), _ => None }
            }
        }
    )*};
}
float_value!(f32 => F32, Float32, f64 => F64, Float64);

/// The values of a run of rows, in one of the physical types.
#[derive(Clone, Copy, Debug)]
pub enum Values<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

/// Runs `$body` with `$v` bound to the typed slice of a `Values` and `$t` to its type (crate
/// internal: exported only because `macro_rules!` macros are reached through the crate root).
#[doc(hidden)]
#[macro_export]
macro_rules! with_values {
    ($values:expr, |$v:ident : $t:ident| $body:expr) => {{
        use $crate::input::Values as V;
        match $values {
            V::F32($v) => {
                #[allow(dead_code)]
                type $t = f32;
                $body
            }
            V::F64($v) => {
                #[allow(dead_code)]
                type $t = f64;
                $body
            }
            V::I8($v) => {
                #[allow(dead_code)]
                type $t = i8;
                $body
            }
            V::I16($v) => {
                #[allow(dead_code)]
                type $t = i16;
                $body
            }
            V::I32($v) => {
                #[allow(dead_code)]
                type $t = i32;
                $body
            }
            V::I64($v) => {
                #[allow(dead_code)]
                type $t = i64;
                $body
            }
            V::U8($v) => {
                #[allow(dead_code)]
                type $t = u8;
                $body
            }
            V::U16($v) => {
                #[allow(dead_code)]
                type $t = u16;
                $body
            }
            V::U32($v) => {
                #[allow(dead_code)]
                type $t = u32;
                $body
            }
            V::U64($v) => {
                #[allow(dead_code)]
                type $t = u64;
                $body
            }
        }
    }};
}

impl<'a> Values<'a> {
    pub fn len(&self) -> usize {
        crate::with_values!(*self, |v: T| v.len())
    }

    /// The raw bytes (for copies to the device).
    pub fn bytes(&self) -> &'a [u8] {
        crate::with_values!(*self, |v: T| bytes_of(v))
    }

    pub fn slice(&self, start: usize, len: usize) -> Values<'a> {
        fn cut<T>(v: &[T], start: usize, len: usize) -> &[T] {
            &v[start..start + len]
        }
        match *self {
            Values::F32(v) => Values::F32(cut(v, start, len)),
            Values::F64(v) => Values::F64(cut(v, start, len)),
            Values::I8(v) => Values::I8(cut(v, start, len)),
            Values::I16(v) => Values::I16(cut(v, start, len)),
            Values::I32(v) => Values::I32(cut(v, start, len)),
            Values::I64(v) => Values::I64(cut(v, start, len)),
            Values::U8(v) => Values::U8(cut(v, start, len)),
            Values::U16(v) => Values::U16(cut(v, start, len)),
            Values::U32(v) => Values::U32(cut(v, start, len)),
            Values::U64(v) => Values::U64(cut(v, start, len)),
        }
    }
}

/// The bytes of a slice of plain values.
pub fn bytes_of<T: NativeType>(values: &[T]) -> &[u8] {
    // SAFETY: native Arrow types are plain old data without padding.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), std::mem::size_of_val(values)) }
}

/// A validity bitmap as bytes and a bit offset: bit `offset + i` set means row `i` is valid.
#[derive(Clone, Copy, Debug)]
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

    /// The bytes that hold rows `0..len`, and the bit offset of row 0 in the first of them.
    pub fn bytes_for(&self, len: usize) -> (&'a [u8], usize) {
        let first = self.offset / 8;
        (
            &self.bytes[first..(self.offset + len).div_ceil(8)],
            self.offset % 8,
        )
    }
}

/// One Arrow chunk of a column: its values and their validity.
#[derive(Clone, Copy, Debug)]
pub struct Chunk<'a> {
    pub values: Values<'a>,
    pub validity: Option<Validity<'a>>,
}

impl<'a> Chunk<'a> {
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Rows `start..start + len`.
    pub fn slice(&self, start: usize, len: usize) -> Chunk<'a> {
        Chunk {
            values: self.values.slice(start, len),
            validity: self.validity.map(|v| v.sliced(start)),
        }
    }

    fn of<P: PolarsNumericType>(array: &'a PrimitiveArray<P::Native>) -> Chunk<'a>
    where
        P::Native: Value,
    {
        let values = array.values().as_slice();
        let values = with_dtype_values::<P::Native>(values);
        Chunk {
            values,
            validity: Validity::of(array),
        }
    }
}

fn with_dtype_values<T: Value>(values: &[T]) -> Values<'_> {
    let bytes = bytes_of(values);
    let n = values.len();
    // SAFETY: `T::DTYPE` names `T` itself, so each cast below is the identity.
    unsafe {
        match T::DTYPE {
            DType::F32 => Values::F32(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::F64 => Values::F64(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::I8 => Values::I8(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::I16 => Values::I16(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::I32 => Values::I32(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::I64 => Values::I64(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::U8 => Values::U8(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::U16 => Values::U16(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::U32 => Values::U32(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
            DType::U64 => Values::U64(std::slice::from_raw_parts(bytes.as_ptr().cast(), n)),
        }
    }
}

/// A column in host memory, chunk by chunk, read where it lies.
#[derive(Clone, Debug)]
pub struct HostColumn<'a> {
    pub dtype: DType,
    pub chunks: Vec<Chunk<'a>>,
}

impl<'a> HostColumn<'a> {
    /// The chunks of a Series of a primitive physical dtype (see [`crate::dtype::reading`]
    /// for getting one); empty chunks are skipped.
    pub fn new(series: &'a Series) -> HistResult<Self> {
        let dtype = DType::of_primitive(series.dtype()).ok_or_else(|| {
            HistError::UnsupportedDtype(format!("{} (not a physical type)", series.dtype()))
        })?;
        macro_rules! chunks {
            ($ca:expr, $p:ty) => {
                $ca.downcast_iter()
                    .filter(|a| a.len() > 0)
                    .map(|a| Chunk::of::<$p>(a))
                    .collect()
            };
        }
        let chunks = match dtype {
            DType::F32 => chunks!(series.f32()?, Float32Type),
            DType::F64 => chunks!(series.f64()?, Float64Type),
            DType::I8 => chunks!(series.i8()?, Int8Type),
            DType::I16 => chunks!(series.i16()?, Int16Type),
            DType::I32 => chunks!(series.i32()?, Int32Type),
            DType::I64 => chunks!(series.i64()?, Int64Type),
            DType::U8 => chunks!(series.u8()?, UInt8Type),
            DType::U16 => chunks!(series.u16()?, UInt16Type),
            DType::U32 => chunks!(series.u32()?, UInt32Type),
            DType::U64 => chunks!(series.u64()?, UInt64Type),
        };
        Ok(HostColumn { dtype, chunks })
    }

    pub fn len(&self) -> usize {
        self.chunks.iter().map(Chunk::len).sum()
    }
}

/// A run of rows, `start..start + len` of the whole, where every column is contiguous: for
/// column `c`, its chunk `at[c].0` from row `at[c].1` of that chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub start: usize,
    pub len: usize,
    pub at: Vec<(usize, usize)>,
}

impl Piece {
    /// Column `c`'s part of this piece.
    pub fn part<'a>(&self, column: &HostColumn<'a>, c: usize) -> Chunk<'a> {
        let (chunk, offset) = self.at[c];
        column.chunks[chunk].slice(offset, self.len)
    }
}

/// Cuts the rows of `columns` (all of one length) into pieces at every chunk boundary of any of
/// them: each piece is contiguous in every column.
pub fn pieces(columns: &[&HostColumn<'_>]) -> Vec<Piece> {
    let len = columns.first().map_or(0, |c| c.len());
    let mut at = vec![(0usize, 0usize); columns.len()];
    let mut out = Vec::new();
    let mut start = 0;
    while start < len {
        let take = columns
            .iter()
            .zip(&at)
            .map(|(c, &(chunk, offset))| c.chunks[chunk].len() - offset)
            .min()
            .expect("at least one column");
        out.push(Piece {
            start,
            len: take,
            at: at.clone(),
        });
        start += take;
        for (c, (chunk, offset)) in columns.iter().zip(at.iter_mut()) {
            *offset += take;
            if *offset == c.chunks[*chunk].len() && *chunk + 1 < c.chunks.len() {
                *chunk += 1;
                *offset = 0;
            }
        }
    }
    out
}

/// The values of column `c` that count (valid in every column, not NaN), in row order.
pub fn counted_values<T: Value>(
    columns: &[&HostColumn<'_>],
    pieces: &[Piece],
    c: usize,
) -> HistResult<Vec<T>> {
    // Room for every row up front: a column larger than memory is an error, not an abort.
    let rows = pieces.iter().map(|p| p.len).sum();
    let mut out = crate::alloc::with_capacity(rows)?;
    for piece in pieces {
        let part = piece.part(columns[c], c);
        let values = T::values(part.values).expect("the column's own type");
        let others: Vec<Option<Validity>> = columns
            .iter()
            .enumerate()
            .map(|(other, col)| piece.part(col, other).validity)
            .collect();
        // In stretches, Ctrl-C read between them: a chunk may hold billions of rows.
        for start in (0..values.len()).step_by(GATHER_STRETCH) {
            crate::interrupt::check()?;
            let end = values.len().min(start + GATHER_STRETCH);
            out.extend((start..end).filter_map(|i| {
                let x = values[i];
                let valid = others.iter().all(|v| v.is_none_or(|v| v.is_valid(i)));
                (valid && !x.is_nan()).then_some(x)
            }));
        }
    }
    Ok(out)
}

/// Rows [`counted_values`] copies between two looks for Ctrl-C.
const GATHER_STRETCH: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_end_at_every_chunk_boundary() {
        let mut a = Series::new("a".into(), [1.0f64, 2.0, 3.0]);
        a.append(&Series::new("a".into(), [4.0f64, 5.0])).unwrap();
        let mut b = Series::new("b".into(), [1i32]);
        b.append(&Series::new("b".into(), [2i32, 3, 4, 5])).unwrap();
        let (ca, cb) = (HostColumn::new(&a).unwrap(), HostColumn::new(&b).unwrap());
        let p = pieces(&[&ca, &cb]);
        let cuts: Vec<(usize, usize)> = p.iter().map(|p| (p.start, p.len)).collect();
        assert_eq!(cuts, [(0, 1), (1, 2), (3, 2)]);
        assert_eq!(p[2].at, [(1, 0), (1, 2)]);
        let Values::I32(v) = p[2].part(&cb, 1).values else {
            panic!()
        };
        assert_eq!(v, [4, 5]);
    }

    #[test]
    fn one_fold_gives_every_pass_the_same_extremes() {
        // The earlier of equal values is kept: -0.0 before 0.0 stays the minimum, as the SIMD
        // scan, the GPU's partials and an estimator's sample all fold it.
        let values = [0.5f64, -0.0, 0.0, 2.0, 2.0, -1.5];
        let pairs = values.iter().map(|&x| (x, x));
        assert_eq!(extremes_of(pairs.clone()), Extremes::Float64(-1.5, 2.0));
        let zeros = [-0.0f64, 0.0].map(|x| (x, x));
        let Extremes::Float64(lo, hi) = extremes_of(zeros) else {
            panic!()
        };
        assert!(lo.is_sign_negative() && hi.is_sign_negative());
        // Folding partials (min, max) of parts equals folding every value.
        let parts = values.chunks(2).map(extremes_of_pair);
        assert_eq!(extremes_of(parts), extremes_of(pairs));
        assert_eq!(extremes_of::<i64>([]), Extremes::Empty);
        assert_eq!(extremes_of([(-3i64, 7i64)]), Extremes::Integer(-3, 7));
        // The CPU pass over a column agrees, its nulls and NaN skipped.
        let s = Series::new("x".into(), [Some(0.5f64), None, Some(f64::NAN), Some(-1.5)]);
        let column = HostColumn::new(&s).unwrap();
        let found = crate::cpu::extremes::extremes(&[&column], &pieces(&[&column]), 0).unwrap();
        assert_eq!(found, Extremes::Float64(-1.5, 0.5));
    }

    fn extremes_of_pair(values: &[f64]) -> (f64, f64) {
        values.iter().map(|&x| (x, x)).reduce(wider).unwrap()
    }
}
