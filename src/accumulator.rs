//! A mergeable histogram: one binning, resolved once, filled by any number of batches and
//! merged with other histograms of the same binning. Counts are exact (`u64`), so filling in
//! batches, on several GPUs or on several machines gives the same counts as one call over all
//! the data; weighted histograms sum `f64` weights (exact for integer weights below 2^53,
//! otherwise equal up to the order of additions).
//!
//! The binning is [`BinSpec::resolve`]'s, as for [`crate::histogram`], with two rules that make
//! it the same for every batch:
//! - A range taken from each batch's own data would differ from batch to batch, so `bins=n`
//!   needs a range: a fixed `(min, max)` ([`Histogram::new`]), or the extremes of the whole data
//!   found beforehand ([`Histogram::with_data_range`], what `histogram_scan(range="auto")` does).
//! - numpy's edges depend on the dtype (a Float32 column is binned with float32 edges in float32
//!   arithmetic). The first fill fixes the histogram's dtype; a later fill (or a merge) whose
//!   dtype would give other edges or another arithmetic is refused, as are temporal fills of
//!   another dtype than the first (their physical units differ). The counts therefore equal
//!   `numpy.histogram` over the concatenation of the batches.
//!
//! The histogram holds a list of axes so that n-D binnings (one axis per column, counts
//! row-major) fit the same state and serialized form; only 1-D fills exist so far.

use std::ops::Add;

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bins::{BinSpec, Bins, Closed, Extremes, ValueKind};
use crate::cpu::Counts;
use crate::error::{HistError, HistResult};
use crate::{gpu, input, output, Device, DeviceArray, HistogramOptions};

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

/// [`Extremes`] in a serializable form (integers as decimal text: they may need 65 bits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataExtremes {
    Empty,
    Float32(f32, f32),
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
            &DataExtremes::Float32(lo, hi) => Extremes::Float32(lo, hi),
            &DataExtremes::Float64(lo, hi) => Extremes::Float64(lo, hi),
            DataExtremes::Integer(lo, hi) => Extremes::Integer(int(lo)?, int(hi)?),
        })
    }

    /// The value kind the extremes were taken from, if any.
    fn kind(&self) -> Option<ValueKind> {
        match self {
            DataExtremes::Empty => None,
            DataExtremes::Float32(..) => Some(ValueKind::Float32),
            DataExtremes::Float64(..) => Some(ValueKind::Float64),
            DataExtremes::Integer(..) => Some(ValueKind::Integer),
        }
    }
}

/// One axis of the binning, as the user gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub bins: Bins,
    pub span: Span,
}

/// The dtype that fixed an axis' binning, in a serializable form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ValueDtype {
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
    fn of(dtype: &DataType) -> HistResult<Self> {
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
            D::Date => ValueDtype::Date,
            D::Datetime(unit, tz) => {
                ValueDtype::Datetime(unit_name(unit), tz.as_ref().map(|t| t.as_str().to_string()))
            }
            D::Duration(unit) => ValueDtype::Duration(unit_name(unit)),
            other => return Err(HistError::UnsupportedDtype(format!("{other:?}"))),
        })
    }

    fn dtype(&self) -> HistResult<DataType> {
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
            ValueDtype::Date => D::Date,
            ValueDtype::Datetime(unit, tz) => D::Datetime(
                unit_of(unit)?,
                TimeZone::opt_try_new(tz.as_deref()).map_err(HistError::Polars)?,
            ),
            ValueDtype::Duration(unit) => D::Duration(unit_of(unit)?),
        })
    }

    fn is_temporal(&self) -> bool {
        matches!(
            self,
            ValueDtype::Date | ValueDtype::Datetime(..) | ValueDtype::Duration(..)
        )
    }
}

/// An axis' resolved binning and the dtype (if any fill fixed it) it was resolved for.
#[derive(Clone, Debug)]
struct Resolved {
    spec: BinSpec,
    dtype: Option<(ValueDtype, DataType)>,
    /// Value kinds known to resolve to `spec` (a cache: resolving costs O(bins)).
    agrees: Vec<ValueKind>,
}

/// A histogram with a fixed binning that batches fill and other histograms merge into.
///
/// ```
/// use polars::prelude::*;
/// use polars_gpu_hist::accumulator::Histogram;
/// use polars_gpu_hist::{Bins, Closed};
///
/// let mut a = Histogram::new(Bins::Count(4), Some((0.0, 4.0)), Closed::Left, false).unwrap();
/// let mut b = a.clone();
/// a.fill(&Series::new("x".into(), [0.5, 1.5, 4.0]), None).unwrap();
/// b.fill(&Series::new("x".into(), [3.0, 9.0]), None).unwrap();
/// let total = (a + &b).unwrap();
/// assert_eq!(total.exact_counts().unwrap(), [1, 1, 0, 2]);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "State", try_from = "State")]
pub struct Histogram {
    axes: Vec<Axis>,
    closed: Closed,
    weighted: bool,
    /// Where fills run; not part of the binning (histograms of any devices merge).
    device: Device,
    kernel: Option<gpu::Family>,
    resolved: Vec<Resolved>,
    counts: Counts,
}

impl Histogram {
    /// A 1-D histogram of `bins` over a fixed `range` (required for `Bins::Count`: a range taken
    /// from each batch would bin every batch differently), counting rows or, with `weighted`,
    /// summing the weights given to [`Histogram::fill`].
    pub fn new(
        bins: Bins,
        range: Option<(f64, f64)>,
        closed: Closed,
        weighted: bool,
    ) -> HistResult<Self> {
        let span = match (&bins, range) {
            (Bins::Count(n), None) => {
                return Err(HistError::InvalidArgument(format!(
                    "a mergeable histogram of bins={n} needs `range=(min, max)` or explicit \
                     edges: a range taken from each batch's data would bin every batch \
                     differently (histogram_scan(range=\"auto\") finds the range of all the \
                     data first)"
                )))
            }
            (_, Some((lo, hi))) => Span::Range(lo, hi),
            (Bins::Edges(_), None) => Span::None,
        };
        Self::from_axes(vec![Axis { bins, span }], closed, weighted)
    }

    /// A 1-D histogram of `bins` equal bins over the extremes of all the data (found in a pass
    /// before the first fill): numpy's bins for `numpy.histogram(all_data, bins=bins)`. Fills
    /// must have the kind of values the extremes were taken from.
    pub fn with_data_range(
        bins: usize,
        extremes: Extremes,
        closed: Closed,
        weighted: bool,
    ) -> HistResult<Self> {
        let axis = Axis {
            bins: Bins::Count(bins),
            span: Span::Data(DataExtremes::from_extremes(extremes)),
        };
        Self::from_axes(vec![axis], closed, weighted)
    }

    fn from_axes(axes: Vec<Axis>, closed: Closed, weighted: bool) -> HistResult<Self> {
        if axes.len() != 1 {
            return Err(HistError::InvalidArgument(format!(
                "a Histogram has one axis so far, got {}",
                axes.len()
            )));
        }
        let resolved = axes
            .iter()
            .map(|axis| {
                let kind = match &axis.span {
                    Span::Data(e) => e.kind().unwrap_or(ValueKind::Float64),
                    _ => ValueKind::Float64,
                };
                Ok(Resolved {
                    spec: resolve(axis, closed, kind)?,
                    dtype: None,
                    agrees: vec![kind],
                })
            })
            .collect::<HistResult<Vec<_>>>()?;
        let cells = resolved.iter().map(|r| r.spec.len()).product();
        let counts = if weighted {
            Counts::Weighted(vec![0.0; cells])
        } else {
            Counts::Exact(vec![0; cells])
        };
        Ok(Histogram {
            axes,
            closed,
            weighted,
            device: Device::Auto,
            kernel: None,
            resolved,
            counts,
        })
    }

    /// Where later fills run (`Device::Auto` by default, as for [`crate::histogram`]).
    pub fn with_device(mut self, device: Device) -> Self {
        self.device = device;
        self
    }

    /// Pins the GPU kernel family of later fills (benchmarks and tests).
    pub fn with_kernel(mut self, kernel: Option<gpu::Family>) -> Self {
        self.kernel = kernel;
        self
    }

    /// A histogram of the same binning, device and dtype with every count zero.
    pub fn empty_like(&self) -> Self {
        let mut h = self.clone();
        match &mut h.counts {
            Counts::Exact(c) => c.iter_mut().for_each(|c| *c = 0),
            Counts::Weighted(s) => s.iter_mut().for_each(|s| *s = 0.0),
        }
        h
    }

    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    pub fn closed(&self) -> Closed {
        self.closed
    }

    pub fn is_weighted(&self) -> bool {
        self.weighted
    }

    pub fn device(&self) -> Device {
        self.device
    }

    /// The number of bins (cells, for n-D).
    pub fn len(&self) -> usize {
        match &self.counts {
            Counts::Exact(c) => c.len(),
            Counts::Weighted(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The dtype the first fill fixed, if any.
    pub fn dtype(&self) -> Option<&DataType> {
        self.resolved[0].dtype.as_ref().map(|(_, d)| d)
    }

    /// The resolved binning of the first axis.
    pub fn spec(&self) -> &BinSpec {
        &self.resolved[0].spec
    }

    /// Counts per bin (`Counts::Weighted`: sums of weights).
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// The exact counts, or `None` for a weighted histogram.
    pub fn exact_counts(&self) -> Option<&[u64]> {
        match &self.counts {
            Counts::Exact(c) => Some(c),
            Counts::Weighted(_) => None,
        }
    }

    /// The edges of the first axis as float64 (float32 edges widen exactly). Before any fill,
    /// those of a Float64 column (of the data's kind for a data range).
    pub fn edges(&self) -> Vec<f64> {
        self.resolved[0].spec.edges_f64()
    }

    /// Counts `values` (and sums `weights`, which a weighted histogram requires and a counting
    /// one refuses) into the histogram, on the device it was made for. Nothing changes on error.
    pub fn fill(&mut self, values: &Series, weights: Option<&Series>) -> HistResult<()> {
        self.check_weights(weights.is_some())?;
        let resolved = self.binning_for(0, values.dtype())?;
        let spec = &resolved.as_ref().unwrap_or(&self.resolved[0]).spec;
        let weights = weights.map(|w| input::weights_f64(values, w)).transpose()?;
        let (device, kernel) = (self.device, self.kernel);
        let counts = crate::with_physical!(values, |ca: T| {
            let column = input::Column::<T>::new(ca, weights.as_ref());
            crate::count_host(&column, spec, device, kernel, None)?
        });
        self.add_counts(counts)?;
        if let Some(r) = resolved {
            self.resolved[0] = r;
        }
        Ok(())
    }

    /// Counts an array in GPU memory (and sums float64 `weights` there) where it lies.
    pub fn fill_device(&mut self, values: DeviceArray, weights: Option<u64>) -> HistResult<()> {
        self.check_weights(weights.is_some())?;
        let dtype = values.dtype.dtype();
        let resolved = self.binning_for(0, &dtype)?;
        let axis = &self.axes[0];
        if let Span::Data(_) = &axis.span {
            // The device path would take its range from this array alone, not from all the data.
            return Err(HistError::InvalidArgument(
                "a histogram whose range comes from the data (range=\"auto\") cannot be filled \
                 from GPU memory: give it a fixed `range=(min, max)`"
                    .into(),
            ));
        }
        let options = HistogramOptions {
            bins: axis.bins.clone(),
            range: match &axis.span {
                Span::Range(lo, hi) => Some((*lo, *hi)),
                _ => None,
            },
            density: false,
            closed: self.closed,
            device: self.device,
            kernel: self.kernel,
        };
        let (series, _plan, _ms) = crate::histogram_device("x", values, weights, &options)?;
        let count = series.struct_()?.field_by_name(output::COUNT)?;
        let counts = match count.dtype() {
            DataType::UInt64 => Counts::Exact(count.u64()?.into_no_null_iter().collect()),
            _ => Counts::Weighted(count.f64()?.into_no_null_iter().collect()),
        };
        self.add_counts(counts)?;
        if let Some(r) = resolved {
            self.resolved[0] = r;
        }
        Ok(())
    }

    /// Adds `other`'s counts, after checking that both have the same binning.
    pub fn merge(&mut self, other: &Histogram) -> HistResult<()> {
        if self.axes != other.axes || self.closed != other.closed {
            return Err(HistError::InvalidArgument(format!(
                "cannot merge histograms of different binning: {} and {}",
                self.describe(),
                other.describe()
            )));
        }
        if self.weighted != other.weighted {
            return Err(HistError::InvalidArgument(
                "cannot merge a weighted histogram (sums of weights) with a counting one".into(),
            ));
        }
        let mut take = Vec::new();
        for (i, (mine, theirs)) in self.resolved.iter().zip(&other.resolved).enumerate() {
            match (&mine.dtype, &theirs.dtype) {
                (_, None) => {}
                (None, Some(_)) => take.push(i),
                (Some((a, da)), Some((b, db))) => {
                    let temporal_mismatch = (a.is_temporal() || b.is_temporal()) && a != b;
                    if temporal_mismatch || mine.spec != theirs.spec {
                        return Err(HistError::InvalidArgument(format!(
                            "cannot merge a histogram filled with {da:?} with one filled with \
                             {db:?}: numpy bins them differently"
                        )));
                    }
                }
            }
        }
        self.add_counts(other.counts.clone())?;
        for i in take {
            self.resolved[i] = other.resolved[i].clone();
        }
        Ok(())
    }

    /// The histogram as a Struct Series named `name`: the rows of [`crate::histogram`]
    /// (`bin_start`, `bin_end`, `count`; numpy's density of the totals with `density`).
    pub fn to_series(&self, name: &str, density: bool) -> HistResult<Series> {
        let input = self.dtype().cloned().unwrap_or(DataType::Float64);
        Ok(output::to_struct(
            name.into(),
            &self.resolved[0].spec,
            self.counts.clone(),
            density,
            &input,
        )?)
    }

    /// [`Histogram::to_series`] as a DataFrame with columns `bin_start`, `bin_end`, `count`.
    pub fn to_frame(&self, density: bool) -> HistResult<DataFrame> {
        let fields = self
            .to_series("histogram", density)?
            .struct_()?
            .fields_as_series();
        Ok(DataFrame::new_infer_height(
            fields.into_iter().map(Column::from).collect(),
        )?)
    }

    fn describe(&self) -> String {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|a| {
                let bins = match &a.bins {
                    Bins::Count(n) => format!("bins={n}"),
                    Bins::Edges(e) if e.len() <= 6 => format!("bins={e:?}"),
                    Bins::Edges(e) => format!(
                        "bins=[{}, {}, ... {}] ({} edges)",
                        e[0],
                        e[1],
                        e[e.len() - 1],
                        e.len()
                    ),
                };
                match &a.span {
                    Span::None => bins,
                    Span::Range(lo, hi) => format!("{bins}, range=({lo}, {hi})"),
                    Span::Data(e) => format!("{bins}, range from the data {e:?}"),
                }
            })
            .collect();
        let closed = match self.closed {
            Closed::Left => "left",
            Closed::Right => "right",
        };
        format!("({}, closed={closed:?})", axes.join("; "))
    }

    fn check_weights(&self, given: bool) -> HistResult<()> {
        match (self.weighted, given) {
            (true, false) => Err(HistError::InvalidArgument(
                "this histogram sums weights (weights=True): every fill needs `weights`".into(),
            )),
            (false, true) => Err(HistError::InvalidArgument(
                "this histogram counts rows (weights=False): make it with weights=True to sum \
                 weights"
                    .into(),
            )),
            _ => Ok(()),
        }
    }

    /// Checks that values of `dtype` bin like the histogram's earlier fills on axis `i`; returns
    /// the axis' new resolution when this fill changes it (the first fill), without applying it.
    fn binning_for(&self, i: usize, dtype: &DataType) -> HistResult<Option<Resolved>> {
        let kind = input::value_kind(dtype)?;
        let value_dtype = ValueDtype::of(dtype)?;
        let axis = &self.axes[i];
        let current = &self.resolved[i];
        if let Span::Data(e) = &axis.span {
            if let Some(k) = e.kind().filter(|&k| k != kind) {
                return Err(HistError::InvalidArgument(format!(
                    "this histogram's range was taken from {k:?} data; a {dtype:?} column bins \
                     differently (cast it, or take the range from this column)"
                )));
            }
        }
        match &current.dtype {
            Some((first, first_dtype)) => {
                if (first.is_temporal() || value_dtype.is_temporal()) && *first != value_dtype {
                    return Err(HistError::InvalidArgument(format!(
                        "this histogram was first filled with {first_dtype:?}; a {dtype:?} column \
                         cannot be added to it (its values have other units)"
                    )));
                }
                if current.agrees.contains(&kind)
                    || resolve(axis, self.closed, kind)? == current.spec
                {
                    // A cache miss here costs one resolution per call; kinds are few.
                    return Ok(None);
                }
                Err(HistError::InvalidArgument(format!(
                    "this histogram was first filled with {first_dtype:?}, which numpy bins with \
                     other edges than a {dtype:?} column (float32 data gets float32 edges): cast \
                     the column to {first_dtype:?}, or use one histogram per dtype"
                )))
            }
            None => {
                let spec = if current.agrees.contains(&kind) {
                    current.spec.clone()
                } else {
                    resolve(axis, self.closed, kind)?
                };
                Ok(Some(Resolved {
                    spec,
                    dtype: Some((value_dtype, dtype.clone())),
                    agrees: vec![kind],
                }))
            }
        }
    }

    fn add_counts(&mut self, counts: Counts) -> HistResult<()> {
        let len = self.len();
        let mismatch =
            || HistError::InvalidArgument(format!("internal: {len} bins expected from a fill"));
        match (&mut self.counts, counts) {
            (Counts::Exact(total), Counts::Exact(c)) if c.len() == len => {
                total.iter_mut().zip(c).for_each(|(t, c)| *t += c)
            }
            (Counts::Weighted(total), Counts::Weighted(s)) if s.len() == len => {
                total.iter_mut().zip(s).for_each(|(t, s)| *t += s)
            }
            // A weighted fill of no rows comes back as (zero) counts.
            (Counts::Weighted(total), Counts::Exact(c)) if c.len() == len => {
                total.iter_mut().zip(c).for_each(|(t, c)| *t += c as f64)
            }
            _ => return Err(mismatch()),
        }
        Ok(())
    }
}

impl Add<&Histogram> for Histogram {
    type Output = HistResult<Histogram>;

    /// The merged histogram, or why the two cannot be merged.
    fn add(mut self, rhs: &Histogram) -> HistResult<Histogram> {
        self.merge(rhs)?;
        Ok(self)
    }
}

impl Add for Histogram {
    type Output = HistResult<Histogram>;

    fn add(self, rhs: Histogram) -> HistResult<Histogram> {
        self + &rhs
    }
}

fn resolve(axis: &Axis, closed: Closed, kind: ValueKind) -> HistResult<BinSpec> {
    match &axis.span {
        Span::None => BinSpec::resolve(&axis.bins, None, closed, kind, || Extremes::Empty),
        &Span::Range(lo, hi) => {
            BinSpec::resolve(&axis.bins, Some((lo, hi)), closed, kind, || Extremes::Empty)
        }
        Span::Data(e) => {
            let extremes = e.to_extremes()?;
            BinSpec::resolve(&axis.bins, None, closed, kind, || extremes)
        }
    }
}

/// The serialized form: the binning as given, the dtype of the first fill, the counts. The
/// resolved edges are not stored: resolving again gives the same, bit for bit.
#[derive(Serialize, Deserialize)]
struct State {
    format: u32,
    axes: Vec<Axis>,
    closed: Closed,
    weighted: bool,
    device: Device,
    kernel: Option<gpu::Family>,
    dtypes: Vec<Option<ValueDtype>>,
    counts: Option<Vec<u64>>,
    sums: Option<Vec<f64>>,
}

const STATE_FORMAT: u32 = 1;

impl From<Histogram> for State {
    fn from(h: Histogram) -> State {
        let (counts, sums) = match h.counts {
            Counts::Exact(c) => (Some(c), None),
            Counts::Weighted(s) => (None, Some(s)),
        };
        State {
            format: STATE_FORMAT,
            dtypes: h
                .resolved
                .into_iter()
                .map(|r| r.dtype.map(|(v, _)| v))
                .collect(),
            axes: h.axes,
            closed: h.closed,
            weighted: h.weighted,
            device: h.device,
            kernel: h.kernel,
            counts,
            sums,
        }
    }
}

impl TryFrom<State> for Histogram {
    type Error = HistError;

    fn try_from(s: State) -> HistResult<Histogram> {
        if s.format != STATE_FORMAT {
            return Err(HistError::InvalidArgument(format!(
                "a serialized histogram of format {} cannot be read by this version (format {})",
                s.format, STATE_FORMAT
            )));
        }
        let mut h = Histogram::from_axes(s.axes, s.closed, s.weighted)?
            .with_device(s.device)
            .with_kernel(s.kernel);
        if s.dtypes.len() != h.axes.len() {
            return Err(HistError::InvalidArgument(
                "a serialized histogram has a dtype per axis".into(),
            ));
        }
        for (i, d) in s.dtypes.into_iter().enumerate() {
            if let Some(d) = d {
                let dtype = d.dtype()?;
                if let Some(r) = h.binning_for(i, &dtype)? {
                    h.resolved[i] = r;
                }
            }
        }
        let len = h.len();
        h.counts = match (s.counts, s.sums) {
            (Some(c), None) if !s.weighted && c.len() == len => Counts::Exact(c),
            (None, Some(w)) if s.weighted && w.len() == len => Counts::Weighted(w),
            _ => {
                return Err(HistError::InvalidArgument(format!(
                    "a serialized histogram's counts do not match its {len} bins"
                )))
            }
        };
        Ok(h)
    }
}

impl std::fmt::Display for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dtype = self
            .dtype()
            .map(|d| format!(", dtype={d:?}"))
            .unwrap_or_default();
        let total = match &self.counts {
            Counts::Exact(c) => format!("{}", c.iter().sum::<u64>()),
            Counts::Weighted(s) => format!("{}", s.iter().sum::<f64>()),
        };
        write!(
            f,
            "Histogram{}{dtype}, weighted={}, total={total}",
            self.describe(),
            self.weighted
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64]) -> Series {
        Series::new("x".into(), values)
    }

    #[test]
    fn batches_equal_one_call() {
        let data: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919) % 1013) as f64 / 101.3)
            .collect();
        let opts = HistogramOptions {
            bins: Bins::Count(17),
            range: Some((0.5, 9.0)),
            ..Default::default()
        };
        let whole = crate::histogram_frame(&series(&data), None, &opts).unwrap();
        let expected: Vec<u64> = whole
            .column("count")
            .unwrap()
            .u64()
            .unwrap()
            .into_no_null_iter()
            .collect();
        let mut h = Histogram::new(Bins::Count(17), Some((0.5, 9.0)), Closed::Left, false).unwrap();
        for chunk in data.chunks(97) {
            h.fill(&series(chunk), None).unwrap();
        }
        assert_eq!(h.exact_counts().unwrap(), &expected[..]);
        assert_eq!(h.to_frame(false).unwrap(), whole);
    }

    #[test]
    fn an_int_bin_count_needs_a_range() {
        let e = Histogram::new(Bins::Count(3), None, Closed::Left, false).unwrap_err();
        assert!(e.to_string().contains("needs `range=(min, max)`"), "{e}");
    }

    #[test]
    fn bad_arguments_are_errors_at_construction() {
        assert!(Histogram::new(Bins::Count(0), Some((0.0, 1.0)), Closed::Left, false).is_err());
        assert!(Histogram::new(Bins::Count(3), Some((1.0, 0.0)), Closed::Left, false).is_err());
        assert!(Histogram::new(Bins::Edges(vec![1.0, 0.0]), None, Closed::Left, false).is_err());
    }

    #[test]
    fn merge_refuses_other_binning_and_kinds() {
        let a = Histogram::new(Bins::Count(3), Some((0.0, 1.0)), Closed::Left, false).unwrap();
        let b = Histogram::new(Bins::Count(4), Some((0.0, 1.0)), Closed::Left, false).unwrap();
        let e = (a.clone() + &b).unwrap_err().to_string();
        assert!(e.contains("different binning"), "{e}");
        let c = Histogram::new(Bins::Count(3), Some((0.0, 1.0)), Closed::Right, false).unwrap();
        assert!(a.clone().merge(&c).is_err());
        let w = Histogram::new(Bins::Count(3), Some((0.0, 1.0)), Closed::Left, true).unwrap();
        assert!(a
            .clone()
            .merge(&w)
            .unwrap_err()
            .to_string()
            .contains("weighted"));

        let mut f32h = a.clone();
        f32h.fill(&Series::new("x".into(), [0.1f32, 0.7]), None)
            .unwrap();
        let mut f64h = a.clone();
        f64h.fill(&series(&[0.2]), None).unwrap();
        let e = (f32h.clone() + &f64h).unwrap_err().to_string();
        assert!(
            e.contains("f32") || e.contains("Float32") || e.contains("float32"),
            "{e}"
        );
        // A later fill of another float width is refused, and changes nothing.
        let before = f32h.exact_counts().unwrap().to_vec();
        assert!(f32h.fill(&series(&[0.5]), None).is_err());
        assert_eq!(f32h.exact_counts().unwrap(), &before[..]);
        // Integers bin like float64.
        f64h.fill(&Series::new("x".into(), [0i64, 1]), None)
            .unwrap();
        assert_eq!(f64h.exact_counts().unwrap(), [2, 0, 1]);
        // An unfilled histogram takes the other's dtype.
        let mut fresh = a.clone();
        fresh.merge(&f32h).unwrap();
        assert_eq!(fresh.dtype(), Some(&DataType::Float32));
        assert!(fresh.fill(&series(&[0.5]), None).is_err());
    }

    #[test]
    fn weights_are_required_or_refused() {
        let mut c = Histogram::new(Bins::Count(2), Some((0.0, 1.0)), Closed::Left, false).unwrap();
        let w = series(&[2.0]);
        assert!(c.fill(&series(&[0.1]), Some(&w)).is_err());
        let mut s = Histogram::new(Bins::Count(2), Some((0.0, 1.0)), Closed::Left, true).unwrap();
        assert!(s.fill(&series(&[0.1]), None).is_err());
        s.fill(&series(&[0.1, 0.9, 0.95]), Some(&series(&[2.0, 0.5, 0.25])))
            .unwrap();
        s.fill(&series(&[]), Some(&series(&[]))).unwrap();
        assert_eq!(s.counts(), &Counts::Weighted(vec![2.0, 0.75]));
    }

    #[test]
    fn data_range_reproduces_numpy_float32_edges() {
        // np.histogram(np.float32([0.1, 0.7]), bins=3): float32 linspace over the data.
        let mut h = Histogram::with_data_range(3, Extremes::Float32(0.1, 0.7), Closed::Left, false)
            .unwrap();
        let x = Series::new("x".into(), [0.1f32, 0.3, 0.7]);
        h.fill(&x, None).unwrap();
        let opts = HistogramOptions {
            bins: Bins::Count(3),
            ..Default::default()
        };
        assert_eq!(
            h.to_frame(false).unwrap(),
            crate::histogram_frame(&x, None, &opts).unwrap()
        );
        assert!(h.fill(&series(&[0.5]), None).is_err());
    }

    #[test]
    fn temporal_fills_keep_their_dtype() {
        let dates = Series::new("d".into(), [0i32, 10, 20])
            .cast(&DataType::Date)
            .unwrap();
        let mut h = Histogram::new(Bins::Count(2), Some((0.0, 20.0)), Closed::Left, false).unwrap();
        h.fill(&dates, None).unwrap();
        assert_eq!(
            h.to_series("d", false)
                .unwrap()
                .struct_()
                .unwrap()
                .fields_as_series()[0]
                .dtype(),
            &DataType::Date
        );
        assert!(h.fill(&Series::new("x".into(), [1i32]), None).is_err());
    }

    #[test]
    fn serde_round_trip_keeps_everything() {
        let mut h = Histogram::new(Bins::Edges(vec![0.0, 1.0, 3.0]), None, Closed::Right, true)
            .unwrap()
            .with_device(Device::Cpu);
        let dt = DataType::Datetime(TimeUnit::Microseconds, None);
        let x = Series::new("t".into(), [1i64, 2, 3]).cast(&dt).unwrap();
        h.fill(&x, Some(&series(&[1.5, 2.0, 4.0]))).unwrap();
        let json = serde_json::to_string(&h).unwrap();
        let back: Histogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back.counts(), h.counts());
        assert_eq!(back.dtype(), Some(&dt));
        assert_eq!(back.device(), Device::Cpu);
        assert_eq!(back.to_frame(false).unwrap(), h.to_frame(false).unwrap());
    }
}
