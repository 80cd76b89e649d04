//! How a [`super::Histogram`]'s axes are given and what fixed their binning, in forms that
//! serialize: the binning as the user gave it (resolved again, bit for bit, when read back).

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bins::{Binning, Extremes, ValueKind};
use crate::error::{HistError, HistResult};

/// One axis of the binning, as the user gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub bins: Binning,
    pub span: Span,
}

impl Axis {
    /// A copy, or an out-of-memory error (explicit edges may be many).
    pub fn try_clone(&self) -> HistResult<Axis> {
        Ok(Axis {
            bins: match &self.bins {
                Binning::Count(n) => Binning::Count(*n),
                Binning::Edges(e) => Binning::Edges(crate::alloc::copied(e)?),
                Binning::Integers(e) => Binning::Integers(crate::alloc::copied(e)?),
            },
            span: self.span.clone(),
        })
    }

    /// `bins` equal bins over `[lo, hi]`, as numpy's `bins=n, range=(lo, hi)`.
    pub fn regular(bins: usize, lo: f64, hi: f64) -> Axis {
        Axis {
            bins: Binning::Count(bins),
            span: Span::Range(lo, hi),
        }
    }

    /// Explicit, strictly increasing edges.
    pub fn variable(edges: Vec<f64>) -> Axis {
        Axis {
            bins: Binning::Edges(edges),
            span: Span::None,
        }
    }

    /// `bins` equal bins over the extremes of all the data, found before the first fill: numpy's
    /// bins for `numpy.histogram(all_data, bins=bins)`. Fills must have the kind of values the
    /// extremes were taken from.
    pub fn data_range(bins: usize, extremes: Extremes) -> Axis {
        Axis {
            bins: Binning::Count(bins),
            span: Span::Data(DataExtremes::from_extremes(extremes)),
        }
    }
}

/// Where the edges of `bins=n` come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Span {
    /// Explicit edges need no range.
    None,
    /// A fixed `(min, max)`, as numpy's `range=`.
    Range(f64, f64),
    /// The extremes of all the data, found before the first fill: the bins are numpy's for
    /// `numpy.histogram(all_data, bins=n)` (float32 linspace for Float32 data, and so on).
    Data(DataExtremes),
}

/// The data's extremes (`Extremes`) in a serializable form (integers as decimal text: they may need 65 bits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataExtremes {
    Empty,
    Float32(f32, f32),
    /// The extremes of a Float16 column (exact in float32): numpy's float16 bins.
    Float16(f32, f32),
    Float64(f64, f64),
    Integer(String, String),
}

impl DataExtremes {
    pub fn from_extremes(e: Extremes) -> Self {
        match e {
            Extremes::Empty => DataExtremes::Empty,
            Extremes::Float32(lo, hi) => DataExtremes::Float32(lo, hi),
            Extremes::Float64(lo, hi) => DataExtremes::Float64(lo, hi),
            Extremes::Integer(lo, hi) => DataExtremes::Integer(lo.to_string(), hi.to_string()),
        }
    }

    pub fn to_extremes(&self) -> HistResult<Extremes> {
        let int = |s: &str| {
            s.parse::<i128>().map_err(|_| {
                HistError::InvalidArgument(format!("integer extremes must be integers, got {s:?}"))
            })
        };
        Ok(match self {
            DataExtremes::Empty => Extremes::Empty,
            &DataExtremes::Float32(lo, hi) | &DataExtremes::Float16(lo, hi) => {
                Extremes::Float32(lo, hi)
            }
            &DataExtremes::Float64(lo, hi) => Extremes::Float64(lo, hi),
            DataExtremes::Integer(lo, hi) => Extremes::Integer(int(lo)?, int(hi)?),
        })
    }

    /// The value kind the extremes were taken from, if any.
    pub(super) fn kind(&self) -> Option<ValueKind> {
        match self {
            DataExtremes::Empty => None,
            DataExtremes::Float32(..) => Some(ValueKind::Float32),
            DataExtremes::Float16(..) => Some(ValueKind::Float16),
            DataExtremes::Float64(..) => Some(ValueKind::Float64),
            DataExtremes::Integer(..) => Some(ValueKind::Integer),
        }
    }
}

/// The extremes as a user writes a range: `(-43, 1301)`, `(0.5, 2.25)`, `(0, 1e300)` (numbers in
/// their shortest form), or `(no values)`.
impl std::fmt::Display for DataExtremes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataExtremes::Empty => write!(f, "(no values)"),
            DataExtremes::Float32(lo, hi) | DataExtremes::Float16(lo, hi) => {
                write!(f, "({}, {})", written(*lo), written(*hi))
            }
            DataExtremes::Float64(lo, hi) => write!(f, "({}, {})", written(*lo), written(*hi)),
            DataExtremes::Integer(lo, hi) => write!(f, "({lo}, {hi})"),
        }
    }
}

/// A number as a user writes it: whole numbers of up to 16 digits without a fraction (`0`,
/// `1301`), others in their shortest round-trip form (`0.1`, `1e300`, `1e-300`), never the
/// hundreds of digits that `Display` gives a large or tiny float.
pub(super) fn written<T>(x: T) -> String
where
    T: Copy + Into<f64> + std::fmt::Display + std::fmt::Debug,
{
    let value: f64 = x.into();
    if value.fract() == 0.0 && value.abs() < 1e16 {
        format!("{x}")
    } else {
        format!("{x:?}")
    }
}

/// The dtype that fixed an axis' binning, in a serializable form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum ValueDtype {
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float32,
    Float64,
    /// Binned as numpy bins a float16 array (its own edges and arithmetic).
    Float16,
    /// Int128, UInt128 and Decimal are binned by their values as float64.
    Int128,
    UInt128,
    Decimal(usize, usize),
    Date,
    Datetime(String, Option<String>),
    Duration(String),
}

fn unit_name(unit: &TimeUnit) -> String {
    match unit {
        TimeUnit::Nanoseconds => "ns",
        TimeUnit::Microseconds => "us",
        TimeUnit::Milliseconds => "ms",
    }
    .into()
}

fn unit_of(name: &str) -> HistResult<TimeUnit> {
    match name {
        "ns" => Ok(TimeUnit::Nanoseconds),
        "us" => Ok(TimeUnit::Microseconds),
        "ms" => Ok(TimeUnit::Milliseconds),
        other => Err(HistError::InvalidArgument(format!(
            "unknown time unit {other:?} in a serialized histogram"
        ))),
    }
}

impl ValueDtype {
    pub(super) fn of(dtype: &DataType) -> HistResult<Self> {
        use DataType as D;
        Ok(match dtype {
            D::Int8 => ValueDtype::Int8,
            D::Int16 => ValueDtype::Int16,
            D::Int32 => ValueDtype::Int32,
            D::Int64 => ValueDtype::Int64,
            D::UInt8 => ValueDtype::UInt8,
            D::UInt16 => ValueDtype::UInt16,
            D::UInt32 => ValueDtype::UInt32,
            D::UInt64 => ValueDtype::UInt64,
            D::Float32 => ValueDtype::Float32,
            D::Float64 => ValueDtype::Float64,
            D::Float16 => ValueDtype::Float16,
            D::Int128 => ValueDtype::Int128,
            D::UInt128 => ValueDtype::UInt128,
            &D::Decimal(precision, scale) => ValueDtype::Decimal(precision, scale),
            D::Date => ValueDtype::Date,
            D::Datetime(unit, tz) => {
                ValueDtype::Datetime(unit_name(unit), tz.as_ref().map(|t| t.as_str().to_string()))
            }
            D::Duration(unit) => ValueDtype::Duration(unit_name(unit)),
            other => return Err(HistError::UnsupportedDtype(crate::dtype::name(other))),
        })
    }

    pub(super) fn dtype(&self) -> HistResult<DataType> {
        use DataType as D;
        Ok(match self {
            ValueDtype::Int8 => D::Int8,
            ValueDtype::Int16 => D::Int16,
            ValueDtype::Int32 => D::Int32,
            ValueDtype::Int64 => D::Int64,
            ValueDtype::UInt8 => D::UInt8,
            ValueDtype::UInt16 => D::UInt16,
            ValueDtype::UInt32 => D::UInt32,
            ValueDtype::UInt64 => D::UInt64,
            ValueDtype::Float32 => D::Float32,
            ValueDtype::Float64 => D::Float64,
            ValueDtype::Float16 => D::Float16,
            ValueDtype::Int128 => D::Int128,
            ValueDtype::UInt128 => D::UInt128,
            &ValueDtype::Decimal(precision, scale) => {
                if !(1..=38).contains(&precision) || scale > precision {
                    return Err(HistError::InvalidArgument(format!(
                        "a serialized histogram names Decimal({precision}, {scale}), which is \
                         no Polars dtype"
                    )));
                }
                D::Decimal(precision, scale)
            }
            ValueDtype::Date => D::Date,
            ValueDtype::Datetime(unit, tz) => D::Datetime(
                unit_of(unit)?,
                TimeZone::opt_try_new(tz.as_deref()).map_err(HistError::Polars)?,
            ),
            ValueDtype::Duration(unit) => D::Duration(unit_of(unit)?),
        })
    }

    pub(super) fn is_temporal(&self) -> bool {
        matches!(
            self,
            ValueDtype::Date | ValueDtype::Datetime(..) | ValueDtype::Duration(..)
        )
    }
}
