//! The arguments of every histogram, as users give them (Python kwargs arrive here through
//! serde), and their translation into the bin contract's inputs for a column of a given dtype.

use polars::prelude::{DataType, TimeUnit};
use serde::{Deserialize, Serialize};

use crate::bins::{Binning, Closed, ExactInt, Range};
use crate::error::{HistError, HistResult, Spelling};
use crate::estimators::Estimator;
use crate::family::Family;

/// Where a histogram is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    /// The fastest available backend for the input.
    #[default]
    Auto,
    Cpu,
    Gpu,
}

/// A number as given: a float, an integer (compared exactly with an integer or temporal
/// column's values; Python sends `{"int": "<decimal>"}`), a numpy float32 scalar (numpy then
/// computes equal edges in float32), a numpy float64 scalar (numpy then keeps float64 bins for
/// float32 data), or a temporal value, converted to a column's physical units when it is binned.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Float(f64),
    Int { int: ExactInt },
    Float16 { float16: f64 },
    Float32 { float32: f64 },
    Float64 { float64: f64 },
    Temporal(Temporal),
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}

/// A date, datetime or duration as an exact integer count of `unit` since the Unix epoch (or
/// of length); `aware`: a datetime given with a time zone (converted to UTC).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Temporal {
    pub temporal: TemporalKind,
    pub value: i64,
    pub unit: Unit,
    #[serde(default)]
    pub aware: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TemporalKind {
    Date,
    Datetime,
    Duration,
}

/// Units of a temporal value, as numpy names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    #[serde(rename = "D")]
    Days,
    #[serde(rename = "h")]
    Hours,
    #[serde(rename = "m")]
    Minutes,
    #[serde(rename = "s")]
    Seconds,
    #[serde(rename = "ms")]
    Milliseconds,
    #[serde(rename = "us")]
    Microseconds,
    #[serde(rename = "ns")]
    Nanoseconds,
}

impl Unit {
    fn nanoseconds(self) -> i128 {
        match self {
            Unit::Days => 86_400_000_000_000,
            Unit::Hours => 3_600_000_000_000,
            Unit::Minutes => 60_000_000_000,
            Unit::Seconds => 1_000_000_000,
            Unit::Milliseconds => 1_000_000,
            Unit::Microseconds => 1_000,
            Unit::Nanoseconds => 1,
        }
    }

    fn of(unit: &TimeUnit) -> Unit {
        match unit {
            TimeUnit::Nanoseconds => Unit::Nanoseconds,
            TimeUnit::Microseconds => Unit::Microseconds,
            TimeUnit::Milliseconds => Unit::Milliseconds,
        }
    }
}

/// `value` in `from` units expressed in `to` units, where that is a whole number.
fn convert_exact(value: i64, from: Unit, to: Unit) -> Option<i128> {
    let (f, t) = (from.nanoseconds(), to.nanoseconds());
    if f >= t {
        Some(value as i128 * (f / t))
    } else {
        let value = value as i128;
        (value % (t / f) == 0).then(|| value / (t / f))
    }
}

/// `value` in `from` units expressed in `to` units: exact when `to` is finer, else rounded once.
fn convert(value: i64, from: Unit, to: Unit) -> f64 {
    let (f, t) = (from.nanoseconds(), to.nanoseconds());
    if f >= t {
        (value as i128 * (f / t)) as f64
    } else {
        let whole = (value as i128).div_euclid(t / f);
        let rest = (value as i128).rem_euclid(t / f);
        whole as f64 + rest as f64 / (t / f) as f64
    }
}

impl Scalar {
    /// This number in the physical units of a column of `dtype` (days for Date, its time unit
    /// for Datetime and Duration, the number itself otherwise); `what` names the argument.
    pub fn physical(self, dtype: &DataType, what: &str) -> HistResult<f64> {
        let t = match self {
            Scalar::Float(v)
            | Scalar::Float16 { float16: v }
            | Scalar::Float32 { float32: v }
            | Scalar::Float64 { float64: v } => return Ok(v),
            Scalar::Int { int } => return Ok(int.0 as f64),
            Scalar::Temporal(t) => t,
        };
        let unit = Self::unit_for(t, dtype, what)?;
        Ok(convert(t.value, t.unit, unit))
    }

    /// This number as an exact integer in the physical units of an integer or temporal column
    /// of `dtype`, where it is one: an integer, or a temporal value that is a whole number of
    /// the column's units. `None` for floats (numpy compares those in float64).
    pub fn exact(self, dtype: &DataType, what: &str) -> HistResult<Option<i128>> {
        match self {
            Scalar::Int { int } => Ok(Some(int.0)),
            Scalar::Temporal(t) => {
                let unit = Self::unit_for(t, dtype, what)?;
                Ok(convert_exact(t.value, t.unit, unit))
            }
            _ => Ok(None),
        }
    }

    /// The unit of a temporal column of `dtype` for a temporal value `t`, after checking they
    /// agree.
    fn unit_for(t: Temporal, dtype: &DataType, what: &str) -> HistResult<Unit> {
        let mismatch = || {
            HistError::InvalidArgument(format!(
                "{what} is a {:?} value, which cannot bin a column of dtype {}: give \
                 numbers in the column's units, or values of its own kind",
                t.temporal,
                crate::dtype::name(dtype)
            ))
        };
        let (kind, unit) = match dtype {
            DataType::Date => (TemporalKind::Date, Unit::Days),
            DataType::Datetime(unit, tz) => {
                if t.temporal == TemporalKind::Datetime && t.aware != tz.is_some() {
                    return Err(HistError::InvalidArgument(format!(
                        "{what} is a {} datetime but the column is {}: give {} datetime",
                        if t.aware { "time-zone-aware" } else { "naive" },
                        crate::dtype::name(dtype),
                        if tz.is_some() { "an aware" } else { "a naive" }
                    )));
                }
                (TemporalKind::Datetime, Unit::of(unit))
            }
            DataType::Duration(unit) => (TemporalKind::Duration, Unit::of(unit)),
            _ => return Err(mismatch()),
        };
        let compatible = match kind {
            TemporalKind::Duration => t.temporal == TemporalKind::Duration,
            _ => t.temporal != TemporalKind::Duration,
        };
        if !compatible {
            return Err(mismatch());
        }
        Ok(unit)
    }

    fn is_float16(self) -> bool {
        matches!(self, Scalar::Float16 { .. })
    }

    fn is_float32(self) -> bool {
        matches!(self, Scalar::Float32 { .. })
    }

    fn is_float64(self) -> bool {
        matches!(self, Scalar::Float64 { .. })
    }
}

/// A rule that picks the bins from the data: one of numpy's estimators, or one bin per integer.
/// It travels as the name users give (`"fd"`, `"integer"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinRule {
    Estimator(Estimator),
    /// One bin per integer over the range: `numpy.histogram(x, bins=np.arange(lo, hi + 2))`.
    Integer,
}

impl BinRule {
    /// The name users give.
    pub fn name(self) -> &'static str {
        match self {
            BinRule::Estimator(e) => e.name(),
            BinRule::Integer => "integer",
        }
    }

    /// The rule as `spelling`'s API asks for it, for error messages:
    /// `Bins::Rule(BinRule::Integer)` in Rust, `bins="integer"` in Python.
    pub fn spelled(self, spelling: Spelling) -> String {
        match (self, spelling) {
            (BinRule::Estimator(e), _) => e.spelled(spelling),
            (BinRule::Integer, Spelling::Rust) => "`Bins::Rule(BinRule::Integer)`".to_string(),
            (BinRule::Integer, Spelling::Python) => "`bins=\"integer\"`".to_string(),
        }
    }

    /// numpy's estimator of this name, `None` for `Integer`.
    pub fn estimator(self) -> Option<Estimator> {
        match self {
            BinRule::Estimator(e) => Some(e),
            BinRule::Integer => None,
        }
    }
}

impl std::str::FromStr for BinRule {
    type Err = HistError;

    fn from_str(s: &str) -> HistResult<Self> {
        match s {
            "integer" => Ok(BinRule::Integer),
            _ => s.parse().map(BinRule::Estimator).map_err(|_| {
                HistError::InvalidArgument(format!(
                    "{s:?} names no bin rule: numpy's estimators are {}, and \"integer\" one bin \
                     per integer",
                    Estimator::names()
                ))
            }),
        }
    }
}

impl Serialize for BinRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for BinRule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// What the user asked for: a number of equal bins, explicit edges, or a rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bins {
    Count(usize),
    Edges(Vec<Scalar>),
    Rule(BinRule),
    /// Width or calendar bins of a temporal column (Python sends `{"every": "1w"}`).
    Every(Every),
}

/// Time bins: a Polars duration string (`"1h"`, `"90m"`, `"1d12h"`, `"1w"`, `"1mo"`, `"1q"`,
/// `"1y"`); the edges follow the column's time zone as `pl.datetime_range` steps
/// (`crate::api::time_bins`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Every {
    pub every: String,
}

impl Default for Bins {
    fn default() -> Self {
        Bins::Count(10)
    }
}

impl Bins {
    /// Explicit edges from numbers.
    pub fn edges(edges: impl IntoIterator<Item = f64>) -> Bins {
        Bins::Edges(edges.into_iter().map(Scalar::Float).collect())
    }

    /// Time bins of a Polars duration: `Bins::every("1w")`.
    pub fn every(every: impl Into<String>) -> Bins {
        Bins::Every(Every {
            every: every.into(),
        })
    }
}

/// A `range` as given, converted for a column of `dtype`.
pub fn range_for(range: Option<(Scalar, Scalar)>, dtype: &DataType) -> HistResult<Option<Range>> {
    range
        .map(|(lo, hi)| {
            let temporal = matches!(lo, Scalar::Temporal(_)) || matches!(hi, Scalar::Temporal(_));
            // numpy's linspace and norm_denom are in the scalars' own type (NEP 50: a Python
            // float defers to a numpy scalar, the wider of two numpy scalars wins).
            let wide = lo.is_float64() || hi.is_float64();
            let single = (lo.is_float32() || hi.is_float32()) && !temporal && !wide;
            let half = (lo.is_float16() || hi.is_float16()) && !temporal && !wide && !single;
            Ok(Range {
                lo: lo.physical(dtype, "`range`")?,
                hi: hi.physical(dtype, "`range`")?,
                half,
                single,
                wide,
            })
        })
        .transpose()
}

/// Whether a column of `dtype` is read as exact integers (its physical values).
pub fn integer_column(dtype: &DataType) -> bool {
    (dtype.is_integer() && !matches!(dtype, DataType::Int128 | DataType::UInt128))
        || matches!(
            dtype,
            DataType::Date | DataType::Datetime(..) | DataType::Duration(_)
        )
}

/// Explicit edges as given, converted for a column of `dtype`: exact integers where the column
/// is read as integers and every edge is a whole number of its units (numpy's common type is
/// then an integer type), else float64.
pub fn edges_for(edges: &[Scalar], dtype: &DataType) -> HistResult<Binning> {
    if integer_column(dtype) {
        let exact = edges
            .iter()
            .enumerate()
            .map(|(i, e)| e.exact(dtype, &format!("`bins` edge {i}")))
            .collect::<HistResult<Option<Vec<i128>>>>()?;
        if let Some(exact) = exact {
            return Ok(Binning::Integers(exact));
        }
    }
    Ok(Binning::Edges(
        edges
            .iter()
            .enumerate()
            .map(|(i, e)| e.physical(dtype, &format!("`bins` edge {i}")))
            .collect::<HistResult<_>>()?,
    ))
}

/// The arguments of a 1-D histogram (and of `by=`), as `pl.col(..).gpu_hist.histogram(...)`
/// takes them: start from `Default` (10 equal bins over the data's range, numpy's bins) and
/// set what differs.
///
/// ```
/// use polars_gpu_hist::{Bins, Closed, HistogramOptions};
///
/// let options = HistogramOptions::default().bins(Bins::Count(64)).range(0.0, 1.0).closed(Closed::Right);
/// assert_eq!(options.bins, Bins::Count(64));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct HistogramOptions {
    pub bins: Bins,
    /// Lower and upper edge of equal bins; the data's [min, max] when `None`.
    pub range: Option<(Scalar, Scalar)>,
    /// numpy's density: `count / bin width / total`.
    pub density: bool,
    pub closed: Closed,
    /// An underflow bin first and an overflow bin last.
    pub flow: bool,
    pub device: Device,
    /// Pins the GPU kernel family (benchmarks and tests); the plan chooses when `None`.
    #[doc(hidden)]
    pub kernel: Option<Family>,
    /// Explicit edges under numpy's rule, which lets an edge repeat (the numpy drop-in sets
    /// it); otherwise they must increase strictly, as Polars' `hist` asks.
    #[doc(hidden)]
    pub repeated_edges: bool,
}

/// The arguments of an n-D histogram: one `bins` (and optionally one `range`) per dimension,
/// or one for all; start from `Default` (10 equal bins per dimension) and set what differs.
///
/// ```
/// use polars_gpu_hist::{Bins, HistogramDdOptions};
///
/// let options = HistogramDdOptions::default()
///     .bins([Bins::Count(4), Bins::Count(8)])
///     .ranges([Some((0.0, 1.0)), None]);
/// assert_eq!(options.bins.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct HistogramDdOptions {
    pub bins: Vec<Bins>,
    /// Per dimension, the range of equal bins (`None`: the data's); empty means all `None`.
    pub range: Vec<Option<(Scalar, Scalar)>>,
    pub density: bool,
    pub closed: Closed,
    pub flow: bool,
    pub device: Device,
    #[doc(hidden)]
    pub kernel: Option<Family>,
    /// Explicit edges under numpy's rule (an edge may repeat), for every dimension.
    #[doc(hidden)]
    pub repeated_edges: bool,
}

/// Setters that take and return the options, so that they chain from `Default`.
macro_rules! setters {
    ($options:ty) => {
        impl $options {
            /// numpy's density: `count / bin width / total` (the histogram integrates to 1).
            pub fn density(mut self, density: bool) -> Self {
                self.density = density;
                self
            }
            /// `Left`: numpy's `[a, b)` bins; `Right`: Polars' `(a, b]`.
            pub fn closed(mut self, closed: Closed) -> Self {
                self.closed = closed;
                self
            }
            /// An underflow bin first and an overflow bin last (on every axis).
            pub fn flow(mut self, flow: bool) -> Self {
                self.flow = flow;
                self
            }
            /// Where it is computed: the fastest available (`Auto`), the CPU or the GPU.
            pub fn device(mut self, device: Device) -> Self {
                self.device = device;
                self
            }
            /// Pins the GPU kernel family (benchmarks and tests).
            #[doc(hidden)]
            pub fn kernel(mut self, kernel: Option<Family>) -> Self {
                self.kernel = kernel;
                self
            }
            /// Explicit edges under numpy's rule, which lets an edge repeat.
            #[doc(hidden)]
            pub fn repeated_edges(mut self, repeated: bool) -> Self {
                self.repeated_edges = repeated;
                self
            }
        }
    };
}
setters!(HistogramOptions);
setters!(HistogramDdOptions);

impl HistogramOptions {
    /// A number of equal bins, explicit edges, or a rule ([`Bins`]).
    pub fn bins(mut self, bins: impl Into<Bins>) -> Self {
        self.bins = bins.into();
        self
    }
    /// The lower and upper edge of equal bins (numbers, or temporal [`Scalar`]s).
    pub fn range(mut self, min: impl Into<Scalar>, max: impl Into<Scalar>) -> Self {
        self.range = Some((min.into(), max.into()));
        self
    }
}

impl HistogramDdOptions {
    /// One entry for every dimension, or one per dimension.
    pub fn bins(mut self, bins: impl IntoIterator<Item = Bins>) -> Self {
        self.bins = bins.into_iter().collect();
        self
    }
    /// Per dimension, the range of its equal bins (`None`: the data's).
    pub fn ranges<S: Into<Scalar>>(
        mut self,
        ranges: impl IntoIterator<Item = Option<(S, S)>>,
    ) -> Self {
        self.range = ranges
            .into_iter()
            .map(|r| r.map(|(lo, hi)| (lo.into(), hi.into())))
            .collect();
        self
    }
}

impl From<usize> for Bins {
    fn from(count: usize) -> Bins {
        Bins::Count(count)
    }
}

impl From<BinRule> for Bins {
    fn from(rule: BinRule) -> Bins {
        Bins::Rule(rule)
    }
}

impl From<Estimator> for Bins {
    fn from(estimator: Estimator) -> Bins {
        Bins::Rule(BinRule::Estimator(estimator))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporal_values_convert_exactly_to_the_column_unit() {
        let day = Scalar::Temporal(Temporal {
            temporal: TemporalKind::Date,
            value: 19_000,
            unit: Unit::Days,
            aware: false,
        });
        let us = DataType::Datetime(TimeUnit::Microseconds, None);
        assert_eq!(day.physical(&us, "x").unwrap(), 19_000.0 * 86_400e6);
        assert_eq!(day.physical(&DataType::Date, "x").unwrap(), 19_000.0);
        let ns = Scalar::Temporal(Temporal {
            temporal: TemporalKind::Datetime,
            value: 1_500_000,
            unit: Unit::Nanoseconds,
            aware: false,
        });
        let ms = DataType::Datetime(TimeUnit::Milliseconds, None);
        assert_eq!(ns.physical(&ms, "x").unwrap(), 1.5);
        assert!(ns
            .physical(&DataType::Duration(TimeUnit::Milliseconds), "x")
            .is_err());
        assert!(ns.physical(&DataType::Float64, "x").is_err());
    }

    /// Integer edges (and temporal ones that are whole numbers of the column's unit) stay exact
    /// for integer and temporal columns; floats, or a column read as floats, make float edges.
    #[test]
    fn integer_edges_stay_exact_for_integer_columns() {
        let int = |v: i128| Scalar::Int { int: ExactInt(v) };
        let edges = [int(1 << 62), int((1 << 62) + 1)];
        let ns = DataType::Datetime(TimeUnit::Nanoseconds, None);
        for dtype in [DataType::Int64, DataType::UInt8, ns.clone()] {
            assert_eq!(
                edges_for(&edges, &dtype).unwrap(),
                Binning::Integers(vec![1 << 62, (1 << 62) + 1])
            );
        }
        for dtype in [DataType::Float64, DataType::Int128] {
            assert!(matches!(
                edges_for(&edges, &dtype).unwrap(),
                Binning::Edges(_)
            ));
        }
        let mixed = [int(0), Scalar::Float(1.5)];
        assert!(matches!(
            edges_for(&mixed, &DataType::Int64).unwrap(),
            Binning::Edges(_)
        ));
        let us = |value| {
            Scalar::Temporal(Temporal {
                temporal: TemporalKind::Datetime,
                value,
                unit: Unit::Microseconds,
                aware: false,
            })
        };
        assert_eq!(
            edges_for(&[us(1), us(2)], &ns).unwrap(),
            Binning::Integers(vec![1000, 2000])
        );
        // 1.5 ms is no whole number of milliseconds: float edges.
        let ms = DataType::Datetime(TimeUnit::Milliseconds, None);
        assert!(matches!(
            edges_for(&[us(1500), us(3000)], &ms).unwrap(),
            Binning::Edges(_)
        ));
        let parsed: Bins = serde_json::from_str(r#"[{"int": "-9223372036854775809"}, 2]"#).unwrap();
        assert_eq!(
            parsed,
            Bins::Edges(vec![int(i64::MIN as i128 - 1), Scalar::Float(2.0)])
        );
    }
}
