//! What a dtype is to a histogram: the physical value types the engine reads (and the kernels are
//! compiled for), how every Polars dtype is read or why it is refused, and one dispatch macro.

use polars::prelude::DataType;
use serde::{Deserialize, Serialize};

use crate::error::{HistError, HistResult};

/// A physical value type read straight from Arrow buffers, on the host and on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

/// How a column's values are binned: float32 arithmetic for Float32 columns, float64 for the
/// rest (integers and temporal values are rounded to float64 first), as numpy does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    Float32,
    Float64,
    Integer,
    /// Float16 columns (read widened to float32): numpy's float16 edges and arithmetic.
    Float16,
}

impl DType {
    pub const ALL: [DType; 10] = [
        DType::F32,
        DType::F64,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
    ];

    /// Bytes of one value.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// The C type the kernels are compiled for (`-DVALUE_T=...`).
    pub fn c_type(self) -> &'static str {
        match self {
            DType::F32 => "float",
            DType::F64 => "double",
            DType::I8 => "signed char",
            DType::I16 => "short",
            DType::I32 => "int",
            DType::I64 => "long long",
            DType::U8 => "unsigned char",
            DType::U16 => "unsigned short",
            DType::U32 => "unsigned int",
            DType::U64 => "unsigned long long",
        }
    }

    /// numpy's name, as in `dtype('float32')`; also the name in file names and serialized state.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
        }
    }

    /// The array-interface type string (`"<f4"`, `"|u1"`, ...), little-endian.
    pub fn typestr(self) -> String {
        let kind = match self {
            DType::F32 | DType::F64 => 'f',
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => 'i',
            _ => 'u',
        };
        let order = if self.size() == 1 { '|' } else { '<' };
        format!("{order}{kind}{}", self.size())
    }

    /// From an array-interface type string (`"<f4"`, `"|u1"`, `"=i8"`).
    pub fn from_typestr(typestr: &str) -> HistResult<DType> {
        if typestr.starts_with('>') && !typestr.ends_with('1') {
            return Err(HistError::InvalidArgument(format!(
                "big-endian arrays ({typestr}) are not supported: convert with \
                 `.astype(x.dtype.newbyteorder('<'))`"
            )));
        }
        let code = typestr.get(1..).unwrap_or("");
        DType::ALL
            .into_iter()
            .find(|d| &d.typestr()[1..] == code)
            .ok_or_else(|| {
                HistError::UnsupportedDtype(format!(
                    "an array of type {typestr:?} (only float32/float64 and 8- to 64-bit \
                     integers are read in GPU memory)"
                ))
            })
    }

    /// The Polars dtype of these physical values.
    pub fn polars(self) -> DataType {
        match self {
            DType::F32 => DataType::Float32,
            DType::F64 => DataType::Float64,
            DType::I8 => DataType::Int8,
            DType::I16 => DataType::Int16,
            DType::I32 => DataType::Int32,
            DType::I64 => DataType::Int64,
            DType::U8 => DataType::UInt8,
            DType::U16 => DataType::UInt16,
            DType::U32 => DataType::UInt32,
            DType::U64 => DataType::UInt64,
        }
    }

    pub fn kind(self) -> ValueKind {
        match self {
            DType::F32 => ValueKind::Float32,
            DType::F64 => ValueKind::Float64,
            _ => ValueKind::Integer,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// The physical type of a primitive Polars dtype, if it is one.
    pub fn of_primitive(dtype: &DataType) -> Option<DType> {
        DType::ALL.into_iter().find(|d| &d.polars() == dtype)
    }
}

/// numpy's common dtype of arrays of these types (`numpy.result_type`): the dtype of the
/// sample `histogramdd` stacks its columns into.
#[cfg(test)]
pub fn promote(dtypes: impl IntoIterator<Item = DType>) -> DType {
    dtypes
        .into_iter()
        .reduce(promote_pair)
        .unwrap_or(DType::F64)
}

/// numpy's sample of columns read as `readings`, as `histogramdd` stacks them: the physical type
/// each column is cast to and the kind its bins are made for. A Float16 column stays float16
/// beside float16 and 8-bit integer columns (read widened to float32, which holds them exactly)
/// and promotes as float32 beside anything wider, pairwise from the left as numpy stacks.
pub fn sample(readings: impl IntoIterator<Item = Reading>) -> (DType, ValueKind) {
    let half = |d: DType| matches!(d, DType::I8 | DType::U8);
    let mut out: Option<Reading> = None;
    for r in readings {
        out = Some(match (out, r) {
            (None, r) => r,
            (Some(Reading::Float16), Reading::Float16) => Reading::Float16,
            (Some(Reading::Float16), other) | (Some(other), Reading::Float16) => {
                if half(other.dtype()) {
                    Reading::Float16
                } else {
                    Reading::Physical(promote_pair(DType::F32, other.dtype()))
                }
            }
            (Some(a), b) => Reading::Physical(promote_pair(a.dtype(), b.dtype())),
        });
    }
    let sample = out.unwrap_or(Reading::Physical(DType::F64));
    (sample.dtype(), sample.kind())
}

fn promote_pair(a: DType, b: DType) -> DType {
    use DType::*;
    let signed = |d: DType| matches!(d, I8 | I16 | I32 | I64);
    let signed_of = |size: usize| match size {
        1 => I8,
        2 => I16,
        4 => I32,
        _ => I64,
    };
    match (a, b) {
        _ if a == b => a,
        (F64, _) | (_, F64) => F64,
        // float32 holds every 8- and 16-bit integer exactly; wider ones need float64.
        (F32, i) | (i, F32) => {
            if i.size() <= 2 {
                F32
            } else {
                F64
            }
        }
        _ if signed(a) == signed(b) => {
            if a.size() >= b.size() {
                a
            } else {
                b
            }
        }
        _ => {
            let (s, u) = if signed(a) { (a, b) } else { (b, a) };
            if u.size() < s.size() {
                s
            } else if u == U64 {
                F64
            } else {
                signed_of(2 * u.size())
            }
        }
    }
}

/// How the values of a Polars column reach a bin rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Its physical buffers as they are (numeric, Date, Datetime, Duration): no copy.
    Physical(DType),
    /// Its numbers as float64 (Decimal, Int128, UInt128): one cast, binned as numpy bins the
    /// same numbers in a float64 array.
    Float64,
    /// Float16: numpy's float16 edges and arithmetic, on the CPU.
    Float16,
}

impl Reading {
    /// How the values are binned.
    pub fn kind(self) -> ValueKind {
        match self {
            Reading::Float16 => ValueKind::Float16,
            other => other.dtype().kind(),
        }
    }

    /// The physical type the engine reads.
    pub fn dtype(self) -> DType {
        match self {
            Reading::Physical(d) => d,
            Reading::Float64 => DType::F64,
            Reading::Float16 => DType::F32,
        }
    }
}

/// How a column of `dtype` is binned, or an error naming the dtype and what to do instead.
pub fn reading(dtype: &DataType) -> HistResult<Reading> {
    use DataType as D;
    if let Some(d) = DType::of_primitive(dtype) {
        return Ok(Reading::Physical(d));
    }
    match dtype {
        D::Date => Ok(Reading::Physical(DType::I32)),
        D::Datetime(_, _) | D::Duration(_) => Ok(Reading::Physical(DType::I64)),
        D::Decimal(_, _) | D::Int128 | D::UInt128 => Ok(Reading::Float64),
        D::Float16 => Ok(Reading::Float16),
        other => Err(refused(other)),
    }
}

/// The error for a column that cannot be binned, with what to do instead.
fn refused(dtype: &DataType) -> HistError {
    use DataType as D;
    let hint = match dtype {
        D::Boolean => {
            "cast it to UInt8 first, which counts false as 0 and true as 1, as numpy does"
        }
        // Words both APIs share: their method names differ (`to_physical` in Python,
        // `to_physical_repr` in Rust).
        D::Categorical(..) | D::Enum(..) => {
            "count its categories (value counts), or histogram its physical codes"
        }
        D::String => "count its values with `value_counts()`",
        // pyo3-polars hands an Object column to the plugin as Binary (its pointers).
        D::Binary | D::BinaryOffset => {
            "count its values with `value_counts()` (an Object column reaches the plugin as \
             Binary: neither can be binned)"
        }
        D::List(_) | D::Array(..) => "flatten it first (`.explode()` or `.arr.explode()`)",
        D::Struct(_) => "histogram one of its fields (`.struct.field(name)`)",
        D::Time => {
            "numpy has no time of day: histogram its hour (`.dt.hour()`, bins=\"integer\") or \
             its nanoseconds since midnight (`.to_physical()`)"
        }
        D::Null => "the column holds only nulls: give it a numeric dtype",
        _ => "use a numeric, Date, Datetime or Duration column",
    };
    HistError::UnsupportedDtype(format!("{}: {hint}", name(dtype)))
}

/// A dtype's name as Polars' Python API spells it (`String`, `Categorical`,
/// `Datetime(time_unit='us', time_zone=None)`), never Rust's (`str`, `cat`).
pub fn name(dtype: &DataType) -> String {
    use polars::prelude::TimeUnit;
    use DataType as D;
    let unit = |u: &TimeUnit| match u {
        TimeUnit::Nanoseconds => "ns",
        TimeUnit::Microseconds => "us",
        TimeUnit::Milliseconds => "ms",
    };
    match dtype {
        D::Categorical(..) => "Categorical".into(),
        D::Enum(..) => "Enum".into(),
        D::List(inner) => format!("List({})", name(inner)),
        D::Array(inner, width) => format!("Array({}, shape=({width},))", name(inner)),
        D::Struct(_) => "Struct".into(),
        D::BinaryOffset => "Binary".into(),
        D::Datetime(u, None) => format!("Datetime(time_unit='{}', time_zone=None)", unit(u)),
        D::Datetime(u, Some(tz)) => {
            format!("Datetime(time_unit='{}', time_zone='{tz}')", unit(u))
        }
        D::Duration(u) => format!("Duration(time_unit='{}')", unit(u)),
        D::Decimal(precision, scale) => format!("Decimal(precision={precision}, scale={scale})"),
        other => format!("{other:?}"),
    }
}

/// Runs `$body` with `$t` bound to the native Rust type of a [`DType`] (crate internal).
#[doc(hidden)]
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, |$t:ident| $body:expr) => {{
        use $crate::dtype::DType as D;
        match $dtype {
            D::F32 => {
                #[allow(dead_code)]
                type $t = f32;
                $body
            }
            D::F64 => {
                #[allow(dead_code)]
                type $t = f64;
                $body
            }
            D::I8 => {
                #[allow(dead_code)]
                type $t = i8;
                $body
            }
            D::I16 => {
                #[allow(dead_code)]
                type $t = i16;
                $body
            }
            D::I32 => {
                #[allow(dead_code)]
                type $t = i32;
                $body
            }
            D::I64 => {
                #[allow(dead_code)]
                type $t = i64;
                $body
            }
            D::U8 => {
                #[allow(dead_code)]
                type $t = u8;
                $body
            }
            D::U16 => {
                #[allow(dead_code)]
                type $t = u16;
                $body
            }
            D::U32 => {
                #[allow(dead_code)]
                type $t = u32;
                $body
            }
            D::U64 => {
                #[allow(dead_code)]
                type $t = u64;
                $body
            }
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typestrs_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_typestr(&d.typestr()).unwrap(), d);
            assert_eq!(DType::of_primitive(&d.polars()), Some(d));
        }
        assert_eq!(DType::from_typestr("|i1").unwrap(), DType::I8);
        assert!(DType::from_typestr(">f8").is_err());
        assert!(DType::from_typestr("<c8").is_err());
    }

    #[test]
    fn promotion_is_numpys() {
        use DType::*;
        let cases = [
            (vec![I16, U16, F32], F64),
            (vec![I8, U8, F32], F32),
            (vec![I8, U8], I16),
            (vec![I32, U32], I64),
            (vec![I64, U64], F64),
            (vec![U8, U16], U16),
            (vec![F32, F32], F32),
            (vec![U32, F32], F64),
            (vec![I64, F64], F64),
        ];
        for (dtypes, expected) in cases {
            assert_eq!(promote(dtypes.clone()), expected, "{dtypes:?}");
        }
    }

    #[test]
    fn float16_samples_are_numpys() {
        use Reading::*;
        let f16 = Float16;
        let cases = [
            (vec![f16, f16], (DType::F32, ValueKind::Float16)),
            (
                vec![f16, Physical(DType::I8)],
                (DType::F32, ValueKind::Float16),
            ),
            (
                vec![Physical(DType::U8), f16],
                (DType::F32, ValueKind::Float16),
            ),
            (
                vec![f16, Physical(DType::I16)],
                (DType::F32, ValueKind::Float32),
            ),
            (
                vec![f16, Physical(DType::I32)],
                (DType::F64, ValueKind::Float64),
            ),
            (
                vec![f16, Physical(DType::F32)],
                (DType::F32, ValueKind::Float32),
            ),
            (vec![f16, Float64], (DType::F64, ValueKind::Float64)),
            (
                vec![Physical(DType::I64), Float64],
                (DType::F64, ValueKind::Float64),
            ),
        ];
        for (readings, expected) in cases {
            assert_eq!(sample(readings.clone()), expected, "{readings:?}");
        }
    }

    #[test]
    fn every_refusal_names_the_dtype() {
        for dtype in [
            DataType::Boolean,
            DataType::String,
            DataType::Null,
            DataType::Time,
        ] {
            let text = reading(&dtype).unwrap_err().to_string();
            assert!(text.contains(&name(&dtype)), "{text}");
        }
    }
}
