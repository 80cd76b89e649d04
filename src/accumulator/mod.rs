//! A mergeable histogram: one binning of one or more axes, resolved once, filled by any number
//! of batches and merged with other histograms of the same binning. Counts are exact (`u64`), so
//! filling in batches, on several GPUs or on several machines gives the same counts as one call
//! over all the data; weighted histograms sum `f64` weights and their squares (exact for integer
//! weights below 2^53, otherwise equal up to the order of additions).
//!
//! One axis bins as [`crate::histogram`] (`numpy.histogram`), several as [`crate::histogramdd`]
//! (`numpy.histogramdd` of the sample the columns make), with two rules that make the binning
//! the same for every batch:
//! - A range taken from each batch's own data would differ from batch to batch, so `bins=n`
//!   needs a range: a fixed `(min, max)` ([`Axis::regular`]), or the extremes of the whole data
//!   found beforehand ([`Axis::data_range`], what `histogram_scan(range="auto")` does).
//! - numpy's edges depend on the dtype (a Float32 column is binned with float32 edges in float32
//!   arithmetic). The first fill fixes each axis' dtype; a later fill (or a merge) whose dtype
//!   would give other edges or another arithmetic is refused, as are temporal fills of another
//!   dtype than the first (their physical units differ). The counts therefore equal numpy's over
//!   the concatenation of the batches.

mod axis;
mod binning;
mod fill;
mod flow;
mod reshape;
mod sink;
mod state;
#[cfg(test)]
mod tests;

use std::ops::Add;

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use axis::written;
pub use axis::{Axis, DataExtremes, Span};
pub use fill::{DeviceCells, Filled};
pub use flow::{outside_cells, Flow};
pub use sink::{Counting, Sink, BATCH_ROWS};

use crate::alloc;
use crate::bins::{BinSpec, Binning, Closed};
use crate::counts::Counts;
use crate::error::{HistError, HistResult};
use crate::options::Device;
use crate::output::{self, AxisOut};
use binning::{checked_cells, resolve_axes, Resolved};

/// What a [`Histogram`] keeps per cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Storage {
    /// Exact counts of rows (`u64`).
    #[default]
    Count,
    /// Sums of weights and sums of squared weights (the variances of the sums), as
    /// boost-histogram's weighted storage.
    Weight,
}

/// How a [`Histogram`] bins, stores and counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AccumulatorOptions {
    /// `Left`: numpy's `[a, b)` bins; `Right`: Polars' `(a, b]`.
    pub closed: Closed,
    pub storage: Storage,
    /// Where fills run; not part of the binning (histograms of any devices merge).
    pub device: Device,
    /// Pins the GPU kernel family of fills (benchmarks and tests).
    pub kernel: Option<crate::family::Family>,
}

/// The flow cells of a histogram of several axes: boost-histogram's flow bins, the cells of
/// the grid with a flow bin on each side of every axis (`(n + 2) x (m + 2)` for two) that are
/// not bins, in that grid's row-major order ([`outside_cells`] of them): the rows (or, weighted,
/// the sums of weights and of their squares) that fell outside the bins, cell by cell, so that
/// a slice or a projection keeps what a fill put outside. A histogram of one axis has two,
/// below and above: its [`Flow`]'s.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowCells {
    pub counts: Counts,
    pub squares: Option<Vec<f64>>,
}

impl FlowCells {
    fn zeros(cells: usize, storage: Storage) -> HistResult<FlowCells> {
        let weighted = storage == Storage::Weight;
        Ok(FlowCells {
            counts: Counts::zeros(cells, weighted)?,
            squares: weighted.then(|| crate::counts::zeroed(cells)).transpose()?,
        })
    }

    fn try_clone(&self) -> HistResult<FlowCells> {
        Ok(FlowCells {
            counts: self.counts.try_clone()?,
            squares: self.squares.as_deref().map(alloc::copied).transpose()?,
        })
    }

    /// The sum of both, cell by cell (exact counts never wrap).
    fn plus(&self, other: &FlowCells) -> HistResult<FlowCells> {
        let mut sum = self.try_clone()?;
        sum.counts.add(&other.counts)?;
        if let (Some(mine), Some(theirs)) = (&mut sum.squares, &other.squares) {
            mine.iter_mut().zip(theirs).for_each(|(m, t)| *m += t);
        }
        Ok(sum)
    }
}

/// Weights of a fill from GPU memory: float64 arrays of the values' length, the weights and
/// their squares (the squares feed the variances).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceWeights {
    pub values: u64,
    pub squares: u64,
}

/// A histogram with a fixed binning that batches fill and other histograms merge into.
///
/// ```
/// use polars::prelude::*;
/// use polars_gpu_hist::accumulator::{AccumulatorOptions, Axis, Histogram};
///
/// let mut a = Histogram::new(vec![Axis::regular(4, 0.0, 4.0)], AccumulatorOptions::default())?;
/// let mut b = a.clone();
/// a.fill(&[Series::new("x".into(), [0.5, 1.5, 4.0])], None)?;
/// b.fill(&[Series::new("x".into(), [3.0, 9.0])], None)?;
/// let total = (a + &b)?;
/// assert_eq!(total.exact_counts().unwrap(), [1, 1, 0, 2]);
/// # Ok::<(), polars_gpu_hist::HistError>(())
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "state::State", try_from = "state::State")]
pub struct Histogram {
    axes: Vec<Axis>,
    options: AccumulatorOptions,
    resolved: Vec<Resolved>,
    counts: Counts,
    /// Sums of squared weights per cell, with `Storage::Weight`.
    squares: Option<Vec<f64>>,
    /// The rows the fills saw, and those not counted (null, NaN, under- and overflow).
    flow: Flow,
    /// Several axes: the flow cells; `None` for one axis (its flow bins are the flow's), and
    /// for a state written before they were kept (format 4 and before: not known).
    cells: Option<FlowCells>,
    /// Every count is zero: nothing was added since it was made empty, so a fill moves its
    /// counts in instead of adding them (a million bins are megabytes).
    zero: bool,
}

impl Histogram {
    /// A histogram of 1 to [`crate::MAX_DIMS`] axes (cells row-major over them, at most 2^28 in
    /// all). `bins=n` needs a range ([`Axis::regular`] or
    /// [`Axis::data_range`]): a range taken from each batch would bin every batch differently.
    pub fn new(axes: Vec<Axis>, options: AccumulatorOptions) -> HistResult<Self> {
        let cells = checked_cells(&axes)?;
        let resolved = resolve_axes(&axes, options)?;
        let weighted = options.storage == Storage::Weight;
        let flow_cells = match axes.len() {
            1 => None,
            _ => Some(FlowCells::zeros(
                outside_cells(&shape_of(&resolved)),
                options.storage,
            )?),
        };
        Ok(Histogram {
            cells: flow_cells,
            counts: Counts::zeros(cells, weighted)?,
            squares: if weighted {
                Some(crate::counts::zeroed(cells)?)
            } else {
                None
            },
            axes,
            options,
            resolved,
            flow: Flow::default(),
            zero: true,
        })
    }

    /// Replaces the counts, the squared weights, the flow and (several axes) the flow cells,
    /// keeping the binning: a total summed elsewhere (a Dask reduction's partials), a slice or
    /// a projection. They must be this histogram's cells, of its storage's kinds; without flow
    /// cells, those of several axes are not known from then on.
    pub fn set_contents(
        &mut self,
        counts: Counts,
        squares: Option<Vec<f64>>,
        flow: Flow,
        cells: Option<FlowCells>,
    ) -> HistResult<()> {
        let cells = match (self.axes.len(), cells) {
            (1, _) | (_, None) => None,
            (_, Some(c)) => {
                let n = outside_cells(&self.shape());
                let weighted = self.is_weighted();
                let fits = c.counts.len() == n
                    && c.counts.is_weighted() == weighted
                    && c.squares.as_ref().map(Vec::len) == weighted.then_some(n);
                if !fits {
                    return Err(HistError::InvalidArgument(format!(
                        "the flow cells of this histogram are {n} {}",
                        if weighted {
                            "sums of weights and as many sums of their squares"
                        } else {
                            "counts"
                        }
                    )));
                }
                Some(c)
            }
        };
        if !self.fits(&counts, squares.as_deref()) {
            let what = match self.squares {
                Some(_) => "sums of weights per cell and as many sums of their squares",
                None => "counts per cell",
            };
            return Err(HistError::InvalidArgument(format!(
                "the contents of this histogram are {} {what}",
                self.counts.len()
            )));
        }
        self.counts = counts;
        self.squares = squares;
        self.flow = flow;
        self.cells = cells;
        self.zero = false;
        Ok(())
    }

    /// The flow cells ([`FlowCells`]): of several axes as the fills counted them (`None` where
    /// not known: a state written before they were kept), of one axis below and above.
    pub fn flow_cells(&self) -> HistResult<Option<FlowCells>> {
        if self.axes.len() > 1 {
            return self.cells.as_ref().map(FlowCells::try_clone).transpose();
        }
        let f = &self.flow;
        Ok(Some(match self.squares {
            Some(_) => FlowCells {
                counts: Counts::Weighted(vec![f.underflow_weight, f.overflow_weight]),
                squares: Some(vec![f.underflow_squares, f.overflow_squares]),
            },
            None => FlowCells {
                counts: Counts::Exact(vec![f.underflow, f.overflow]),
                squares: None,
            },
        }))
    }

    /// The flow cells with `theirs` added (several axes; unknown where either is).
    fn cells_plus(&self, theirs: Option<&FlowCells>) -> HistResult<Option<FlowCells>> {
        match (&self.cells, theirs) {
            (Some(mine), Some(theirs)) => mine.plus(theirs).map(Some),
            _ => Ok(None),
        }
    }

    /// Whether `counts` and `squares` have this histogram's cells and kinds.
    fn fits(&self, counts: &Counts, squares: Option<&[f64]>) -> bool {
        let same_kind = matches!(
            (&self.counts, counts),
            (Counts::Exact(_), Counts::Exact(_)) | (Counts::Weighted(_), Counts::Weighted(_))
        );
        let same_squares = match (&self.squares, squares) {
            (Some(mine), Some(theirs)) => mine.len() == theirs.len(),
            (None, None) => true,
            _ => false,
        };
        same_kind && counts.len() == self.counts.len() && same_squares
    }

    /// A copy, or an out-of-memory error (counts and edges may take gigabytes).
    pub fn try_clone(&self) -> HistResult<Self> {
        let squares = self.squares.as_deref().map(alloc::copied).transpose()?;
        let cells = self.cells.as_ref().map(FlowCells::try_clone).transpose()?;
        self.binned_like(
            self.counts.try_clone()?,
            squares,
            self.flow,
            cells,
            self.zero,
        )
    }

    /// A histogram of the same binning, options and dtypes with every count zero (new zeroed
    /// memory: nothing of this one's counts is read).
    pub fn empty_like(&self) -> HistResult<Self> {
        let cells = self.counts.len();
        let weighted = matches!(self.counts, Counts::Weighted(_));
        let squares = match self.squares {
            Some(_) => Some(crate::counts::zeroed(cells)?),
            None => None,
        };
        let flow_cells = match self.axes.len() {
            1 => None,
            _ => Some(FlowCells::zeros(
                outside_cells(&self.shape()),
                self.options.storage,
            )?),
        };
        self.binned_like(
            Counts::zeros(cells, weighted)?,
            squares,
            Flow::default(),
            flow_cells,
            true,
        )
    }

    /// This histogram's binning (axes, options, resolved dtypes) around these contents.
    fn binned_like(
        &self,
        counts: Counts,
        squares: Option<Vec<f64>>,
        flow: Flow,
        cells: Option<FlowCells>,
        zero: bool,
    ) -> HistResult<Self> {
        Ok(Histogram {
            axes: self
                .axes
                .iter()
                .map(Axis::try_clone)
                .collect::<HistResult<_>>()?,
            options: self.options,
            resolved: self
                .resolved
                .iter()
                .map(Resolved::try_clone)
                .collect::<HistResult<_>>()?,
            counts,
            squares,
            flow,
            cells,
            zero,
        })
    }

    pub fn axes(&self) -> &[Axis] {
        &self.axes
    }

    pub fn options(&self) -> &AccumulatorOptions {
        &self.options
    }

    pub fn is_weighted(&self) -> bool {
        self.options.storage == Storage::Weight
    }

    /// The number of cells (bins of a 1-D histogram).
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of bins of each axis.
    pub fn shape(&self) -> Vec<usize> {
        shape_of(&self.resolved)
    }

    /// The dtype the first fill fixed on `axis`, if any.
    pub fn dtype(&self, axis: usize) -> Option<&DataType> {
        self.resolved[axis].dtype.as_ref().map(|(_, d)| d)
    }

    /// The resolved binning of `axis`.
    pub fn spec(&self, axis: usize) -> &BinSpec {
        &self.resolved[axis].spec
    }

    /// Counts per cell, row-major (`Counts::Weighted`: sums of weights).
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

    /// The sums of squared weights per cell (the variances of the sums), or `None` for a
    /// counting histogram (whose variances are its counts).
    pub fn squared_weights(&self) -> Option<&[f64]> {
        self.squares.as_deref()
    }

    /// The rows the fills saw and those not counted, by reason (boost-histogram's flow bins,
    /// with nulls and NaN): `rows = counted + null + nan + underflow + overflow`.
    pub fn flow(&self) -> &Flow {
        &self.flow
    }

    /// The edges of `axis` as float64 (float32 edges widen exactly). Before any fill, those of a
    /// Float64 column (of the data's kind for a data range).
    pub fn edges(&self, axis: usize) -> HistResult<Vec<f64>> {
        self.resolved[axis].spec.edges_f64()
    }

    /// Adds `other`'s counts, after checking that both have the same binning.
    pub fn merge(&mut self, other: &Histogram) -> HistResult<()> {
        if self.axes != other.axes || self.options.closed != other.options.closed {
            return Err(HistError::InvalidArgument(format!(
                "cannot merge histograms of different binning: ({}) and ({})",
                self.describe(),
                other.describe()
            )));
        }
        if self.options.storage != other.options.storage {
            return Err(HistError::InvalidArgument(
                "cannot merge a weighted histogram (sums of weights) with a counting one".into(),
            ));
        }
        let mut take = vec![None; self.axes.len()];
        for (i, (mine, theirs)) in self.resolved.iter().zip(&other.resolved).enumerate() {
            match (&mine.dtype, &theirs.dtype) {
                (_, None) => {}
                (None, Some(_)) => take[i] = Some(theirs.try_clone()?),
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
        let flow = self.flow.plus(&other.flow)?;
        let cells = self.cells_plus(other.cells.as_ref())?;
        self.add(&other.counts, other.squares.as_deref())?;
        self.flow = flow;
        self.cells = cells;
        self.take(take);
        Ok(())
    }

    /// The histogram as a Struct Series named `name`: the rows of [`crate::histogram`]
    /// (`bin_start`, `bin_end`, `count`) for one axis, of [`crate::histogramdd`] for several
    /// (`<axis>_start`, `<axis>_end` per axis, named by `axis_names`, then `count`); numpy's
    /// density of the totals with `density`.
    pub fn to_series(&self, name: &str, axis_names: &[&str], density: bool) -> HistResult<Series> {
        let input = |i: usize| self.dtype(i).cloned().unwrap_or(DataType::Float64);
        let axes: Vec<AxisOut> = if let [r] = &self.resolved[..] {
            vec![AxisOut::bins(&r.spec, input(0), false)]
        } else {
            if axis_names.len() != self.axes.len() {
                return Err(HistError::InvalidArgument(format!(
                    "{} axis names for a histogram of {} axes",
                    axis_names.len(),
                    self.axes.len()
                )));
            }
            self.resolved
                .iter()
                .zip(axis_names)
                .enumerate()
                .map(|(i, (r, n))| AxisOut::named(n, &r.spec, input(i), false))
                .collect()
        };
        output::to_struct(name.into(), &axes, self.counts.try_clone()?, density)
    }

    /// [`Histogram::to_series`] as a DataFrame of its fields.
    pub fn to_frame(&self, axis_names: &[&str], density: bool) -> HistResult<DataFrame> {
        let fields = self
            .to_series("histogram", axis_names, density)?
            .struct_()?
            .fields_as_series();
        Ok(DataFrame::new_infer_height(
            fields.into_iter().map(Column::from).collect(),
        )?)
    }

    /// The binning as given: `bins=4, range=(0, 1); bins=[0, 1, 5]; closed=left`.
    fn describe(&self) -> String {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|a| {
                let bins = match &a.bins {
                    Binning::Count(n) => format!("bins={n}"),
                    Binning::Edges(e) if e.len() <= 6 => format!("bins={e:?}"),
                    Binning::Edges(e) => format!(
                        "bins=[{}, {}, ..., {}] ({} edges)",
                        written(e[0]),
                        written(e[1]),
                        written(e[e.len() - 1]),
                        e.len()
                    ),
                    Binning::Integers(e) => format!("bins={e:?}"),
                };
                match &a.span {
                    Span::None => bins,
                    Span::Range(lo, hi) => {
                        format!("{bins}, range=({}, {})", written(*lo), written(*hi))
                    }
                    Span::Data(DataExtremes::Empty) => {
                        format!("{bins}, range from the data (no values)")
                    }
                    Span::Data(e) => format!("{bins}, range={e} (from the data)"),
                }
            })
            .collect();
        let closed = match self.options.closed {
            Closed::Left => "left",
            Closed::Right => "right",
        };
        format!("{}; closed={closed}", axes.join("; "))
    }

    /// Adds counts (and squared weights) of the same shape; exact counts past 2^64 - 1 are an
    /// error, never a wrap (and leave the histogram as it was).
    fn add(&mut self, counts: &Counts, squares: Option<&[f64]>) -> HistResult<()> {
        self.counts.add(counts)?;
        if let (Some(mine), Some(theirs)) = (&mut self.squares, squares) {
            mine.iter_mut().zip(theirs).for_each(|(m, t)| *m += t);
        }
        self.zero = false;
        Ok(())
    }

    /// [`Histogram::add`] of counts it may keep: moved in where every count is zero (and the
    /// shapes are this histogram's), added otherwise.
    fn add_owned(&mut self, counts: Counts, squares: Option<Vec<f64>>) -> HistResult<()> {
        if self.zero && self.fits(&counts, squares.as_deref()) {
            self.counts = counts;
            self.squares = squares;
            self.zero = false;
            return Ok(());
        }
        self.add(&counts, squares.as_deref())
    }
}

/// The number of bins of each resolved axis.
fn shape_of(resolved: &[Resolved]) -> Vec<usize> {
    resolved.iter().map(|r| r.spec.len()).collect()
}

/// A histogram from the bytes of `serde_pickle` (what `polars_gpu_hist.Histogram` pickles):
/// a state that asks for more memory than there is is an out-of-memory error.
#[cfg(feature = "python")]
pub(crate) fn from_pickle(bytes: &[u8]) -> HistResult<Histogram> {
    let state: state::State = serde_pickle::from_slice(bytes, Default::default()).map_err(|e| {
        // Out of memory while serde_pickle reads the bytes, or while the counts are made
        // (`alloc` says so in its message).
        let oom = match &e {
            serde_pickle::Error::Io(io) => io.kind() == std::io::ErrorKind::OutOfMemory,
            other => other
                .to_string()
                .contains("out of memory: could not allocate"),
        };
        match oom {
            true => HistError::OutOfMemory(bytes.len()),
            false => HistError::InvalidArgument(format!("not a serialized Histogram: {e}")),
        }
    })?;
    Histogram::try_from(state)
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

impl std::fmt::Display for Histogram {
    /// `Histogram(bins=4, range=(0, 1); closed=left; dtype=Float64; storage=count; total=17)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dtypes: Vec<String> = (0..self.axes.len())
            .filter_map(|i| self.dtype(i).map(|d| format!("{d:?}")))
            .collect();
        let dtype = if dtypes.is_empty() {
            String::new()
        } else {
            format!("; dtype={}", dtypes.join(" x "))
        };
        let (storage, total) = match &self.counts {
            Counts::Exact(c) => ("count", c.iter().sum::<u64>().to_string()),
            Counts::Weighted(s) => ("weight", s.iter().sum::<f64>().to_string()),
        };
        let fl = &self.flow;
        let flow = if fl.rows == fl.counted() {
            String::new()
        } else {
            format!(
                "; not counted: null={}, nan={}, underflow={}, overflow={}",
                fl.null, fl.nan, fl.underflow, fl.overflow
            )
        };
        write!(
            f,
            "Histogram({}{dtype}; storage={storage}; total={total}{flow})",
            self.describe()
        )
    }
}
