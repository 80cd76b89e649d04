//! What every front end does before counting: read a column as the engine reads it, check its
//! weights, and resolve an axis's bins (numbers, edges, estimators, integer bins) from the data.

use polars::prelude::*;

use crate::bins::{check_strictly_increasing, BinSpec, Binning, Closed, Extremes, Range, MAX_BINS};
use crate::dtype::{self, Reading, ValueKind};
use crate::error::{HistError, HistResult};
use crate::input::Value;
use crate::options::{edges_for, range_for, BinRule, Bins, HistogramOptions, Scalar};

/// What resolving an axis may ask of its data.
pub(crate) trait AxisData {
    /// Minimum and maximum of the values that count (valid, not NaN).
    fn extremes(&self) -> HistResult<Extremes>;
    /// numpy's number of equal bins for `rule` (an estimator) over the values that count, read
    /// as `kind` (a Float16 column, widened to float32, computes in float16 as numpy does),
    /// over `range` in its scalars' own type.
    fn estimate(&self, rule: BinRule, range: Option<Range>, kind: ValueKind) -> HistResult<usize>;
}

/// How an axis is resolved: as `numpy.histogram` (1-D and `by=`) or `numpy.histogramdd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavour {
    Histogram,
    Histogramdd,
}

/// The bins a 1-D histogram's `options` (`bins`, `range`, `closed`) give a column of `dtype` read
/// as `kind`: the value axis of `histogram`, `by=`, the device entry points and `explain` alike.
pub(crate) fn histogram_axis(
    options: &HistogramOptions,
    dtype: &DataType,
    kind: ValueKind,
    weighted: bool,
    data: &dyn AxisData,
) -> HistResult<BinSpec> {
    let flavour = Flavour::Histogram;
    let (bins, range, closed) = (&options.bins, options.range, options.closed);
    let order = EdgeOrder::of(options.repeated_edges);
    resolve_axis(
        bins, range, closed, dtype, kind, flavour, order, weighted, data,
    )
}

/// What explicit edges a front end takes: strictly increasing (Polars' rule), or numpy's, where
/// an edge may repeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EdgeOrder {
    Strict,
    Repeats,
}

impl EdgeOrder {
    pub(crate) fn of(repeated_edges: bool) -> EdgeOrder {
        match repeated_edges {
            true => EdgeOrder::Repeats,
            false => EdgeOrder::Strict,
        }
    }
}

/// The bins of one axis over a column of `dtype` read as `kind`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn resolve_axis(
    bins: &Bins,
    range: Option<(Scalar, Scalar)>,
    closed: Closed,
    dtype: &DataType,
    kind: ValueKind,
    flavour: Flavour,
    order: EdgeOrder,
    weighted: bool,
    data: &dyn AxisData,
) -> HistResult<BinSpec> {
    let given_range = range;
    let exact_range = integer_range(range, dtype)?;
    let range = range_for(range, dtype)?;
    let binning = match bins {
        &Bins::Count(n) => Binning::Count(n),
        Bins::Edges(edges) => {
            let binning = edges_for(edges, dtype)?;
            match (&binning, order) {
                (Binning::Edges(e), EdgeOrder::Strict) => check_strictly_increasing(e)?,
                (Binning::Integers(e), EdgeOrder::Strict) => {
                    crate::bins::integer::check_strictly_increasing(e)?
                }
                _ => {}
            }
            binning
        }
        Bins::Rule(BinRule::Integer) => {
            integer_edges(range.map(|r| (r.lo, r.hi)), exact_range, kind, dtype, data)?
        }
        Bins::Every(every) => {
            super::time_bins::time_edges(&every.every, given_range, dtype, || data.extremes())?
        }
        &Bins::Rule(rule) => {
            if weighted {
                let estimator = rule
                    .estimator()
                    .ok_or_else(|| HistError::Internal(format!("{rule:?} is no estimator")))?;
                return Err(crate::estimators::weighted_error(estimator));
            }
            Binning::Count(data.estimate(rule, range, kind)?)
        }
    };
    // An integer rule and time bins name their edges themselves: the range is in them already.
    let range = match bins {
        Bins::Rule(BinRule::Integer) | Bins::Every(_) => None,
        _ => range,
    };
    match flavour {
        Flavour::Histogram => BinSpec::resolve(&binning, range, closed, kind, || data.extremes()),
        Flavour::Histogramdd => {
            BinSpec::resolve_dd(&binning, range, closed, kind, || data.extremes())
        }
    }
}

/// A `range` of two exact integers (Python ints, or temporal values that are whole numbers of
/// the column's units) for an integer or temporal column, for `bins="integer"`.
fn integer_range(
    range: Option<(Scalar, Scalar)>,
    dtype: &DataType,
) -> HistResult<Option<(i128, i128)>> {
    let Some((lo, hi)) = range else {
        return Ok(None);
    };
    if !crate::options::integer_column(dtype) {
        return Ok(None);
    }
    let lo = lo.exact(dtype, "`range`")?;
    let hi = hi.exact(dtype, "`range`")?;
    Ok(lo.zip(hi))
}

/// `bins="integer"`: one bin per integer from `lo` to `hi` (the range, exact where it is given
/// as integers, or the data's), edges `lo, lo + 1, ..., hi + 1` as `numpy.arange(lo, hi + 2)`,
/// compared exactly.
fn integer_edges(
    range: Option<(f64, f64)>,
    exact_range: Option<(i128, i128)>,
    kind: ValueKind,
    dtype: &DataType,
    data: &dyn AxisData,
) -> HistResult<Binning> {
    if kind != ValueKind::Integer {
        return Err(HistError::argument(|s| {
            format!(
                "{} needs an integer, Date, Datetime or Duration column, got {}: give a number \
                 of bins or edges",
                BinRule::Integer.spelled(s),
                dtype::name(dtype)
            )
        }));
    }
    let (lo, hi) = match (exact_range, range) {
        (Some((lo, hi)), _) if lo <= hi => (lo, hi),
        (_, Some((lo, hi))) => {
            if lo.fract() != 0.0 || hi.fract() != 0.0 || lo > hi {
                return Err(HistError::argument(|s| {
                    format!(
                        "{} needs a `range` of two integers lo <= hi, got ({lo}, {hi})",
                        BinRule::Integer.spelled(s)
                    )
                }));
            }
            (lo as i128, hi as i128)
        }
        (_, None) => match data.extremes()? {
            Extremes::Integer(lo, hi) => (lo, hi),
            Extremes::Empty => (0, 0),
            other => {
                return Err(HistError::Internal(format!(
                    "integer extremes expected, got {other:?}"
                )))
            }
        },
    };
    let bins = hi - lo + 1;
    if bins as u128 > MAX_BINS as u128 {
        // Temporal columns count one bin per unit of their physical values: say so, and name
        // the way to calendar or width bins (edges from a date range, which follow time zones).
        let hint = match dtype {
            DataType::Datetime(unit, _) | DataType::Duration(unit) => format!(
                " (a {} column counts one bin per {unit}; for hourly, daily or monthly bins give \
                 time bins such as `bins=\"1h\"`, `\"1d\"` or `\"1mo\"`, or truncate the \
                 column first with `.dt.truncate(\"1h\")`)",
                dtype::name(dtype)
            ),
            _ => String::new(),
        };
        return Err(HistError::argument(|s| {
            format!(
                "{} would make {bins} bins (one per integer from {lo} to {hi}), more than the \
                 {MAX_BINS} a histogram holds: give a number of bins or a narrower `range`{hint}",
                BinRule::Integer.spelled(s)
            )
        }));
    }
    // `bins` + 1 edges, allocated fallibly: 2^28 bins is 2 GiB of edges.
    let mut edges = crate::alloc::with_capacity(bins as usize + 1)?;
    edges.extend(lo..=hi + 1);
    Ok(Binning::Integers(edges))
}

/// A column as the engine reads it: its physical values, cast only where the dtype needs it
/// (Decimal, Int128 and UInt128 to Float64; Float16 to Float32).
pub(crate) fn readable(series: &Series) -> HistResult<(Series, Reading)> {
    let reading = dtype::reading(series.dtype())?;
    let physical = match reading {
        Reading::Physical(_) => series.to_physical_repr().into_owned(),
        Reading::Float64 => series.cast(&DataType::Float64)?,
        Reading::Float16 => series.cast(&DataType::Float32)?,
    };
    Ok((physical, reading))
}

/// Columns as numpy's sample reads them: stacked into one array of their common dtype
/// ([`dtype::sample`]; a lone Float16 column keeps numpy's float16 bins), each column cast to it
/// where it differs. The one place `histogramdd` and `Histogram.fill` turn columns into a sample.
pub(crate) fn numpy_sample(columns: &[Series]) -> HistResult<(Vec<Series>, ValueKind)> {
    let readable = columns
        .iter()
        .map(readable)
        .collect::<HistResult<Vec<_>>>()?;
    let (common, kind) = dtype::sample(readable.iter().map(|&(_, r)| r));
    let physical = readable
        .into_iter()
        .map(|(s, _)| {
            if s.dtype() == &common.polars() {
                Ok(s)
            } else {
                Ok(s.cast(&common.polars())?)
            }
        })
        .collect::<HistResult<_>>()?;
    Ok((physical, kind))
}

/// Weights beside `values` as Float64, after checking they fit.
pub(crate) fn weights_f64(len: usize, weights: &Series) -> HistResult<Series> {
    if weights.len() != len {
        return Err(HistError::InvalidArgument(format!(
            "`weights` has {} rows but the column has {len}: they must have the same length",
            weights.len()
        )));
    }
    let temporal = matches!(
        weights.dtype(),
        DataType::Date | DataType::Datetime(..) | DataType::Duration(_)
    );
    if temporal || dtype::reading(weights.dtype()).is_err() {
        // pyo3-polars hands an Object column to the plugin as Binary.
        let object = match weights.dtype() {
            DataType::Binary => " (or Object, which reaches the plugin as Binary)",
            _ => "",
        };
        return Err(HistError::InvalidArgument(format!(
            "`weights` must be numeric, got dtype {}{object}: cast them to a number",
            dtype::name(weights.dtype())
        )));
    }
    Ok(weights.cast(&DataType::Float64)?)
}

/// Room an estimator needs beside its sample (radix counts per part, per-bin histograms of
/// "stone", pools' scratch), checked before the sample is copied.
const ESTIMATOR_HEADROOM: usize = 64 << 20;

/// Axis `axis` of host rows, for resolving its bins from the data.
pub(crate) struct HostAxis<'r, 'a> {
    pub rows: &'r crate::job::HostRows<'a>,
    pub axis: usize,
}

impl AxisData for HostAxis<'_, '_> {
    fn extremes(&self) -> HistResult<Extremes> {
        crate::cpu::extremes::extremes(&self.rows.all(), &self.rows.pieces, self.axis)
    }

    fn estimate(&self, rule: BinRule, range: Option<Range>, kind: ValueKind) -> HistResult<usize> {
        let estimator = rule
            .estimator()
            .ok_or_else(|| HistError::Internal(format!("{rule:?} is no estimator")))?;
        let column = &self.rows.columns[self.axis];
        crate::with_dtype!(column.dtype, |T| {
            if let Some(bins) = self.estimate_from_summary::<T>(estimator, range, kind)? {
                return Ok(bins);
            }
            // The sample's copy, the copies an estimator makes of parts of it (at most as much
            // again) and its fixed buffers must all fit: a MemoryError now, not an abort in a
            // small allocation once the copy has taken what was left.
            let rows = self.rows.len;
            crate::alloc::ensure_room(
                rows.saturating_mul(2 * std::mem::size_of::<T>())
                    .saturating_add(ESTIMATOR_HEADROOM),
            )?;
            let sample: Vec<T> =
                crate::input::counted_values(&self.rows.all(), &self.rows.pieces, self.axis)?;
            crate::interrupt::check()?;
            let extremes = crate::input::extremes_of(sample.iter().map(|&x| (x, x)));
            // "stone" compares numpy histograms of the sample over the same range.
            let mut histogram = |bins: usize| -> HistResult<Vec<u64>> {
                let spec =
                    BinSpec::resolve(&Binning::Count(bins), range, Closed::Left, kind, || {
                        Ok(extremes)
                    })?;
                let mut counts = crate::alloc::zeroed::<u64>(bins + 1)?;
                // Up to sqrt(n) passes over the sample: Ctrl-C is read between pieces.
                for piece in sample.chunks(1 << 16) {
                    crate::interrupt::check()?;
                    for &x in piece {
                        counts[crate::cpu::index::bin_of(&spec, x)] += 1;
                    }
                }
                counts.truncate(bins);
                Ok(counts)
            };
            let estimate = match (kind, T::DTYPE) {
                // float16 values, widened to float32 exactly: narrowed back to compute in them.
                (ValueKind::Float16, crate::dtype::DType::F32) => {
                    let half = crate::alloc::collected(
                        sample.iter().map(|&x| crate::bins::f16_of(x.to_f64())),
                    )?;
                    crate::estimators::equal_bin_count(estimator, half, range, &mut histogram)?
                }
                _ => crate::estimators::equal_bin_count(
                    estimator,
                    &sample[..],
                    range,
                    &mut histogram,
                )?,
            };
            Ok(estimate.bins)
        })
    }
}

impl HostAxis<'_, '_> {
    /// The estimate of "sturges", "sqrt" and "rice", which need only how many values count (in
    /// `range`, where given) and their extremes: one pass, no copy of the sample. `None` for
    /// the other estimators.
    fn estimate_from_summary<T: Value + crate::estimators::SampleValue>(
        &self,
        estimator: crate::estimators::Estimator,
        range: Option<Range>,
        kind: ValueKind,
    ) -> HistResult<Option<usize>> {
        use crate::estimators::{equal_bin_count_from_extremes, window, Estimator};
        if !matches!(
            estimator,
            Estimator::Sturges | Estimator::Sqrt | Estimator::Rice
        ) {
            return Ok(None);
        }
        let columns = self.rows.all();
        let pieces = &self.rows.pieces;
        let estimate = match (kind, T::DTYPE) {
            // A Float16 column read as float32: kept and computed as float16, as numpy's.
            (ValueKind::Float16, crate::dtype::DType::F32) => {
                let kept = range
                    .map(window::<half::f16>)
                    .transpose()?
                    .map(|(lo, hi)| (lo.to_f32(), hi.to_f32()));
                let (n, extremes) =
                    crate::cpu::extremes::counted_in::<f32>(&columns, pieces, self.axis, kept)?;
                let half = |x: f32| half::f16::from_f32(x);
                let extremes = extremes.map(|(lo, hi)| (half(lo), half(hi)));
                equal_bin_count_from_extremes(estimator, n, extremes, range)?
            }
            _ => {
                let kept = range.map(window::<T>).transpose()?;
                let (n, extremes) =
                    crate::cpu::extremes::counted_in(&columns, pieces, self.axis, kept)?;
                equal_bin_count_from_extremes(estimator, n, extremes, range)?
            }
        };
        Ok(estimate.map(|e| e.bins))
    }
}

/// numpy's number of equal bins for `estimator` from a streaming pass's summary of a column,
/// for the estimators that need nothing else ("sturges", "rice", "sqrt"): `n` values counted
/// (with a `range`, those in it), `extremes` their min and max (two values of the column's
/// dtype, none when `n` is 0). `None` for the estimators that need every value.
pub fn estimate_from_extremes(
    estimator: crate::estimators::Estimator,
    n: usize,
    extremes: &Series,
    range: Option<(f64, f64)>,
) -> HistResult<Option<usize>> {
    let range = range.map(|(lo, hi)| Range::new(lo, hi));
    let (physical, reading) = readable(extremes)?;
    let column = crate::input::HostColumn::new(&physical)?;
    let columns = [&column];
    let pieces = crate::input::pieces(&columns);
    crate::with_dtype!(column.dtype, |T| {
        let values: Vec<T> = crate::input::counted_values(&columns, &pieces, 0)?;
        let pair = match values[..] {
            [lo, hi] => Some((lo, hi)),
            [] => None,
            _ => {
                return Err(HistError::InvalidArgument(format!(
                    "the extremes of a sample are its (min, max), or nothing for no values; got \
                     {} values",
                    values.len()
                )))
            }
        };
        let estimate = match (reading, pair) {
            // A Float16 column's extremes, widened to float32: float16 arithmetic, as numpy's.
            (Reading::Float16, Some((lo, hi))) => {
                let half = |x: T| crate::bins::f16_of(x.to_f64());
                let pair = Some((half(lo), half(hi)));
                crate::estimators::equal_bin_count_from_extremes(estimator, n, pair, range)?
            }
            (Reading::Float16, None) => crate::estimators::equal_bin_count_from_extremes::<
                half::f16,
            >(estimator, n, None, range)?,
            _ => crate::estimators::equal_bin_count_from_extremes(estimator, n, pair, range)?,
        };
        Ok(estimate.map(|e| e.bins))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_sample_reads_columns_as_their_common_dtype() {
        // numpy stacks int16, uint16 and float32 into float64 (pairwise from the left).
        let columns = [
            Series::new("a".into(), [1i16, 2]),
            Series::new("b".into(), [3u16, 4]),
            Series::new("c".into(), [0.5f32, 1.5]),
        ];
        let (sample, kind) = numpy_sample(&columns).unwrap();
        assert_eq!(kind, ValueKind::Float64);
        assert!(sample.iter().all(|s| s.dtype() == &DataType::Float64));
        // A lone Float16 column keeps numpy's float16 bins, its values read as float32.
        let half = Series::new("h".into(), [0.5f32, 1.5])
            .cast(&DataType::Float16)
            .unwrap();
        let (sample, kind) = numpy_sample(&[half]).unwrap();
        assert_eq!(kind, ValueKind::Float16);
        assert_eq!(sample[0].dtype(), &DataType::Float32);
        // A column already of the common dtype is not cast.
        let (sample, kind) = numpy_sample(&[Series::new("i".into(), [1i64, 2])]).unwrap();
        assert_eq!(
            (sample[0].dtype(), kind),
            (&DataType::Int64, ValueKind::Integer)
        );
    }
}
