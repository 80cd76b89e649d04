//! The row-binning expressions: Polars 2's `bin_intervals`, `bin_quantiles` and `bin_ranks`,
//! and `cut`/`qcut` (Polars 1 and 2), as plugin calls of the crate's row binning
//! (`crate::rows`). Each gives the frame Polars gives: a UInt32 bin per row, an Enum of the
//! labels, or a Struct with the bin's edges; `qcut`'s Categorical crosses the boundary as
//! String (a plugin cannot hand over Polars' global categories) and the Python wrapper casts it.

use polars::prelude::*;

use crate::bins::Closed;
use crate::error::{HistError, HistResult};
use crate::options::Device;
use crate::python::for_python;
use crate::python::plugin::plugin;
use crate::rows::{self, breaks, NanRows};

plugin!(
    _polars_plugin_field_row_bins,
    _polars_plugin_row_bins,
    RowKwargs,
    row_bins_field,
    row_bins
);

/// Which call, and how its breakpoints are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Call {
    /// `bin_intervals` of explicit breakpoints (`breaks`) or `count` equal intervals.
    BinIntervals,
    /// `bin_quantiles` of `fractions` or `count` bins.
    BinQuantiles,
    /// `bin_ranks` of `fractions` or `count` bins.
    BinRanks,
    /// `cut` of `breaks` (Float64).
    Cut,
    /// `qcut` of `fractions`.
    Qcut,
}

/// The kwargs the Python wrapper pickles (`_expr/row_binning.py`).
#[derive(Clone, serde::Deserialize)]
struct RowKwargs {
    call: Call,
    #[serde(default)]
    breaks: Option<BreaksArg>,
    #[serde(default)]
    count: Option<usize>,
    #[serde(default)]
    fractions: Option<Vec<f64>>,
    /// The Enum's categories (`None`: `labels=False`, a UInt32 bin; `cut`'s own when absent).
    #[serde(default)]
    labels: Option<Vec<String>>,
    /// `include_intervals` (`bin_*`) or `include_breaks` (`cut`, `qcut`).
    #[serde(default)]
    include_intervals: bool,
    #[serde(default)]
    right_closed: bool,
    #[serde(default)]
    allow_duplicates: bool,
    #[serde(default)]
    device: Device,
}

/// Explicit breakpoints: their dtype and physical values (one of the vectors, by dtype).
#[derive(Clone, serde::Deserialize)]
struct BreaksArg {
    dtype: String,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    precision: Option<usize>,
    #[serde(default)]
    scale: Option<usize>,
    #[serde(default)]
    floats: Vec<f64>,
    #[serde(default)]
    ints: Vec<i64>,
    /// Unsigned breakpoints' bits as int64 (the pickle decoder refuses integers past 2^63).
    #[serde(default)]
    uints: Vec<i64>,
    /// 128-bit integers (and decimals' physical values) in decimal digits.
    #[serde(default)]
    wide: Vec<String>,
    #[serde(default)]
    bools: Vec<bool>,
}

/// Field names of the Struct outputs, Polars' own.
const BIN: &str = "bin";
const LEFT: &str = "left";
const RIGHT: &str = "right";
const BREAKPOINT: &str = "breakpoint";
const CATEGORY: &str = "category";

fn time_unit(unit: Option<&str>) -> HistResult<TimeUnit> {
    Ok(match unit {
        Some("ns") => TimeUnit::Nanoseconds,
        Some("us") => TimeUnit::Microseconds,
        Some("ms") => TimeUnit::Milliseconds,
        other => {
            return Err(HistError::Internal(format!(
                "row binning: time unit {other:?}"
            )))
        }
    })
}

impl BreaksArg {
    /// The breakpoints as a Series of their own dtype.
    fn series(&self) -> HistResult<Series> {
        let name = PlSmallStr::from_static("breaks");
        let ints = || Int64Chunked::from_slice(name.clone(), &self.ints).into_series();
        let wide = || -> HistResult<Series> {
            let values = self
                .wide
                .iter()
                .map(|v| v.parse::<i128>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| HistError::Internal(format!("row binning: {e}")))?;
            Ok(Int128Chunked::from_vec(name.clone(), values).into_series())
        };
        let s = match self.dtype.as_str() {
            "Float64" | "Float32" | "Float16" => {
                let f = Float64Chunked::from_slice(name.clone(), &self.floats).into_series();
                f.cast(&dtype_named(&self.dtype)?)?
            }
            "Int8" | "Int16" | "Int32" | "Int64" => ints().cast(&dtype_named(&self.dtype)?)?,
            "UInt8" | "UInt16" | "UInt32" | "UInt64" => {
                let bits = self.uints.iter().map(|&v| v as u64).collect();
                let u = UInt64Chunked::from_vec(name.clone(), bits).into_series();
                u.cast(&dtype_named(&self.dtype)?)?
            }
            "Int128" => wide()?,
            "UInt128" => {
                let values = self
                    .wide
                    .iter()
                    .map(|v| v.parse::<u128>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| HistError::Internal(format!("row binning: {e}")))?;
                UInt128Chunked::from_vec(name.clone(), values).into_series()
            }
            "Boolean" => BooleanChunked::from_slice(name.clone(), &self.bools).into_series(),
            "Date" => ints().cast(&DataType::Int32)?.cast(&DataType::Date)?,
            "Time" => ints().cast(&DataType::Time)?,
            "Datetime" => {
                let unit = time_unit(self.unit.as_deref())?;
                ints().cast(&DataType::Datetime(unit, None))?
            }
            "Duration" => {
                let unit = time_unit(self.unit.as_deref())?;
                ints().cast(&DataType::Duration(unit))?
            }
            "Decimal" => {
                let (precision, scale) = (self.precision.unwrap_or(38), self.scale.unwrap_or(0));
                let phys = wide()?;
                // SAFETY: Int128 is a decimal's physical type; the wrapper sent its values.
                unsafe { phys.from_physical_unchecked(&DataType::Decimal(precision, scale))? }
            }
            other => {
                return Err(HistError::Internal(format!(
                    "row binning: breakpoints of dtype {other}"
                )))
            }
        };
        Ok(s)
    }

    fn dtype(&self) -> HistResult<DataType> {
        Ok(match self.dtype.as_str() {
            "Datetime" => DataType::Datetime(time_unit(self.unit.as_deref())?, None),
            "Duration" => DataType::Duration(time_unit(self.unit.as_deref())?),
            "Decimal" => DataType::Decimal(self.precision.unwrap_or(38), self.scale.unwrap_or(0)),
            "Date" => DataType::Date,
            "Time" => DataType::Time,
            "Boolean" => DataType::Boolean,
            name => dtype_named(name)?,
        })
    }
}

fn dtype_named(name: &str) -> HistResult<DataType> {
    Ok(match name {
        "Float64" => DataType::Float64,
        "Float32" => DataType::Float32,
        "Float16" => DataType::Float16,
        "Int8" => DataType::Int8,
        "Int16" => DataType::Int16,
        "Int32" => DataType::Int32,
        "Int64" => DataType::Int64,
        "Int128" => DataType::Int128,
        "UInt8" => DataType::UInt8,
        "UInt16" => DataType::UInt16,
        "UInt32" => DataType::UInt32,
        "UInt64" => DataType::UInt64,
        "UInt128" => DataType::UInt128,
        other => {
            return Err(HistError::Internal(format!(
                "row binning: breakpoints of dtype {other}"
            )))
        }
    })
}

impl RowKwargs {
    fn closed(&self) -> Closed {
        match self.right_closed {
            true => Closed::Right,
            false => Closed::Left,
        }
    }

    fn call_name(&self) -> &'static str {
        match self.call {
            Call::BinIntervals => "bin_intervals",
            Call::BinQuantiles => "bin_quantiles",
            Call::BinRanks => "bin_ranks",
            Call::Cut => "cut",
            Call::Qcut => "qcut",
        }
    }

    fn breaks_arg(&self) -> HistResult<&BreaksArg> {
        self.breaks
            .as_ref()
            .ok_or_else(|| HistError::Internal("row binning: no breakpoints".into()))
    }

    /// The dtype of the bins' edges (`left`, `right`) for a column of `dtype`.
    fn edge_dtype(&self, dtype: &DataType) -> HistResult<DataType> {
        match (self.call, &self.breaks) {
            (Call::BinIntervals, Some(b)) => rows::compare_dtype(dtype, &b.dtype()?),
            (Call::BinIntervals | Call::BinQuantiles, None) => {
                rows::check_numeric(dtype, self.call_name())?;
                Ok(dtype.clone())
            }
            (Call::BinRanks, _) => {
                rows::check_orderable(dtype, self.call_name())?;
                Ok(dtype.clone())
            }
            _ => Ok(DataType::Float64),
        }
    }

    /// The dtype of the bin: UInt32, the labels' Enum, or String (`qcut`'s Categorical).
    fn bin_dtype(&self, labels: Option<&[String]>) -> HistResult<DataType> {
        Ok(match (self.call, labels) {
            (Call::Qcut, _) => DataType::String,
            (_, None) => DataType::UInt32,
            (_, Some(labels)) => enum_dtype(labels)?,
        })
    }

    fn output_dtype(&self, column: &DataType, labels: Option<&[String]>) -> HistResult<DataType> {
        let bin = self.bin_dtype(labels)?;
        let edge = self.edge_dtype(column)?;
        Ok(match (self.call, self.include_intervals) {
            (_, false) => bin,
            (Call::Cut | Call::Qcut, true) => DataType::Struct(vec![
                Field::new(BREAKPOINT.into(), DataType::Float64),
                Field::new(CATEGORY.into(), bin),
            ]),
            (_, true) => DataType::Struct(vec![
                Field::new(BIN.into(), bin),
                Field::new(LEFT.into(), edge.clone()),
                Field::new(RIGHT.into(), edge),
            ]),
        })
    }
}

fn enum_dtype(labels: &[String]) -> HistResult<DataType> {
    let categories = FrozenCategories::new(labels.iter().map(String::as_str))?;
    Ok(DataType::from_frozen_categories(categories))
}

fn row_bins_field(inputs: &[Field], kwargs: &RowKwargs) -> PolarsResult<Field> {
    let x = &inputs[0];
    let dtype = for_python((|| {
        let labels = match (kwargs.call, &kwargs.labels) {
            (Call::Cut, None) => Some(cut_labels(&cut_breaks(kwargs)?, !kwargs.right_closed)),
            (_, labels) => labels.clone(),
        };
        kwargs.output_dtype(x.dtype(), labels.as_deref())
    })())?;
    Ok(Field::new(x.name().clone(), dtype))
}

fn row_bins(inputs: &[Series], kwargs: &RowKwargs) -> PolarsResult<Series> {
    for_python(run(&inputs[0], kwargs))
}

/// `s` cast to `dtype`, time zone included (polars-core's cast of a naive Datetime to one with
/// a zone keeps it naive: the instants are the same, so the zone is set on the result).
fn cast_exactly(s: &Series, dtype: &DataType) -> HistResult<Series> {
    let cast = s.strict_cast(dtype)?;
    if cast.dtype() == dtype {
        return Ok(cast);
    }
    let phys = cast.to_physical_repr().into_owned();
    // SAFETY: the physical values of `dtype` (a Datetime of the same unit, another zone).
    Ok(unsafe { phys.from_physical_unchecked(dtype)? })
}

/// `cut`'s breakpoints, checked and sorted.
fn cut_breaks(kwargs: &RowKwargs) -> HistResult<Vec<f64>> {
    breaks::cut_breaks(kwargs.breaks_arg()?.floats.clone())
}

/// `cut`'s and `qcut`'s labels: `(a, b]` (`[a, b)` left-closed) from -inf to inf, each edge
/// printed as Rust prints a float64 (as Polars does: `-1`, `0.0000001`, `inf`).
fn cut_labels(breaks: &[f64], left_closed: bool) -> Vec<String> {
    let lo = std::iter::once(f64::NEG_INFINITY).chain(breaks.iter().copied());
    let hi = breaks.iter().copied().chain(std::iter::once(f64::INFINITY));
    lo.zip(hi)
        .map(|(l, h)| match left_closed {
            true => format!("[{l}, {h})"),
            false => format!("({l}, {h}]"),
        })
        .collect()
}

fn run(column: &Series, kwargs: &RowKwargs) -> HistResult<Series> {
    let name = column.name().clone();
    let closed = kwargs.closed();
    let device = kwargs.device;
    rows::on_cpu(device)?;
    let (bins, edges, labels) = match kwargs.call {
        Call::BinIntervals => {
            let breaks = match &kwargs.breaks {
                Some(b) => {
                    let dtype = rows::compare_dtype(column.dtype(), &b.dtype()?)?;
                    let breaks = cast_exactly(&b.series()?, &dtype)?;
                    let values = column.strict_cast(&dtype)?;
                    let bins = rows::bin_rows(&values, &breaks, closed, NanRows::Bin, device)?;
                    return finish(name, bins, &breaks, kwargs.labels.as_deref(), kwargs);
                }
                None => breaks::equal_intervals(column, kwargs.count.unwrap_or(1), closed)?,
            };
            let bins = rows::bin_rows(column, &breaks, closed, NanRows::Bin, device)?;
            (bins, breaks, kwargs.labels.clone())
        }
        Call::BinQuantiles => {
            let breaks = match (&kwargs.fractions, kwargs.count) {
                (Some(q), _) => breaks::quantile_breaks(column, q)?,
                (None, k) => breaks::quantile_count_breaks(column, k.unwrap_or(1))?,
            };
            let bins = rows::bin_rows(column, &breaks, closed, NanRows::Bin, device)?;
            (bins, breaks, kwargs.labels.clone())
        }
        Call::BinRanks => {
            rows::check_orderable(column.dtype(), "bin_ranks")?;
            let (bins, starts) = match (&kwargs.fractions, kwargs.count) {
                (Some(r), _) => rows::ranks::rank_bins(column, |n| breaks::rank_positions(n, r))?,
                (None, k) => rows::ranks::rank_bins(column, |n| {
                    breaks::rank_count_positions(n, k.unwrap_or(1))
                })?,
            };
            (bins.with_name(name.clone()), starts, kwargs.labels.clone())
        }
        Call::Cut => {
            let sorted = cut_breaks(kwargs)?;
            let labels = match &kwargs.labels {
                Some(l) => l.clone(),
                None => cut_labels(&sorted, !kwargs.right_closed),
            };
            return cut_output(column, sorted, labels, kwargs);
        }
        Call::Qcut => {
            let probs = kwargs.fractions.clone().unwrap_or_default();
            let Some(sorted) = breaks::qcut_breaks(column, &probs, kwargs.allow_duplicates)? else {
                // No usable values: every row is null.
                let dtype = kwargs.output_dtype(column.dtype(), None)?;
                return Ok(Series::full_null(name, column.len(), &dtype));
            };
            let labels = match &kwargs.labels {
                Some(l) => l.clone(),
                None => cut_labels(&sorted, !kwargs.right_closed),
            };
            return cut_output(column, sorted, labels, kwargs);
        }
    };
    finish(name, bins, &edges, labels.as_deref(), kwargs)
}

/// `cut`'s and `qcut`'s rows: each row's label (NaN: null), with its bin's right end.
fn cut_output(
    column: &Series,
    sorted: Vec<f64>,
    labels: Vec<String>,
    kwargs: &RowKwargs,
) -> HistResult<Series> {
    if labels.len() != sorted.len() + 1 {
        return Err(polars_err!(
            ShapeMismatch: "expected {} labels (len(breaks) + 1), got {}",
            sorted.len() + 1, labels.len()
        )
        .into());
    }
    let name = column.name().clone();
    let values = column.cast(&DataType::Float64)?;
    let breaks = Float64Chunked::from_vec("breaks".into(), sorted).into_series();
    let bins = rows::bin_rows(
        &values,
        &breaks,
        kwargs.closed(),
        NanRows::Null,
        kwargs.device,
    )?;
    let category = match kwargs.call {
        Call::Qcut => label_strings(&bins, &labels)?,
        _ => enum_of(&bins, &labels)?,
    };
    if !kwargs.include_intervals {
        return Ok(category.with_name(name));
    }
    let mut ends = breaks.clone();
    ends.append(&Float64Chunked::from_slice("breaks".into(), &[f64::INFINITY]).into_series())?;
    let breakpoint = ends.take(&bins)?.with_name(BREAKPOINT.into());
    let fields = [breakpoint, category.with_name(CATEGORY.into())];
    Ok(StructChunked::from_series(name, bins.len(), fields.iter())?.into_series())
}

/// The bins as `labels`' Enum (a bin is a category id).
fn enum_of(bins: &UInt32Chunked, labels: &[String]) -> HistResult<Series> {
    let dtype = enum_dtype(labels)?;
    let physical = dtype.to_physical();
    let ids = bins.clone().into_series().cast(&physical)?;
    // SAFETY: every bin is below the number of labels (checked by the caller's counts), in the
    // Enum's physical type.
    Ok(unsafe { ids.from_physical_unchecked(&dtype)? })
}

/// The bins as their labels' strings (`qcut`'s Categorical, cast by the wrapper).
fn label_strings(bins: &UInt32Chunked, labels: &[String]) -> HistResult<Series> {
    let out: StringChunked = bins
        .iter()
        .map(|b| b.map(|b| labels[b as usize].as_str()))
        .collect();
    Ok(out.with_name(bins.name().clone()).into_series())
}

/// The output of a `bin_*` call: the bins (UInt32 or the labels' Enum), with the edges of each
/// row's bin (`left`: the breakpoint below, `right`: the one above; null past either end).
fn finish(
    name: PlSmallStr,
    bins: UInt32Chunked,
    breaks: &Series,
    labels: Option<&[String]>,
    kwargs: &RowKwargs,
) -> HistResult<Series> {
    let bins = bins.with_name(name.clone());
    // The wrapper checked the labels against the bins asked for; a column without values has
    // fewer breakpoints (and no bins): an id past the labels would be an invalid Enum.
    if let Some(labels) = labels {
        if bins.max().is_some_and(|top| top as usize >= labels.len()) {
            return Err(polars_err!(
                ShapeMismatch: "`{}` produces {} bins but got {} labels",
                kwargs.call_name(), breaks.len() + 1, labels.len()
            )
            .into());
        }
    }
    let bin = match labels {
        Some(labels) => enum_of(&bins, labels)?,
        None => bins.clone().into_series(),
    };
    if !kwargs.include_intervals {
        return Ok(bin.with_name(name));
    }
    let (left, right) = rows::bin_edges(&bins, breaks)?;
    let (left, right) = (left.with_name(LEFT.into()), right.with_name(RIGHT.into()));
    let fields = [bin.with_name(BIN.into()), left, right];
    Ok(StructChunked::from_series(name, bins.len(), fields.iter())?.into_series())
}
