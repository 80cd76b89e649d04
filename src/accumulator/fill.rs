//! Filling a [`Histogram`]: columns (host or device) checked against the binning, read as
//! numpy's sample, counted by the engine, and added only when every step succeeded.

use polars::prelude::*;

use super::binning::Resolved;
use super::flow::{split_flow, Flow};
use super::{DeviceWeights, FlowCells, Histogram};
use crate::api::axes::{numpy_sample, weights_f64};
use crate::api::device::{gpu_holding, one_dtype_and_length};
use crate::bins::BinSpec;
use crate::counts::Counts;
use crate::engine::{self, Placement};
use crate::error::{HistError, HistResult};
use crate::gpu;
use crate::input::HostColumn;
use crate::job::{self, DeviceColumn, DeviceRows, FlowBins, HostRows, Job, Rows};
use crate::DeviceArray;

/// What one fill adds to a histogram, counted but not yet added: the counts (or sums of
/// weights) per cell, the sums of squared weights, the flow (and, with several axes, the flow
/// cells), and the binnings of the fill's dtypes. A fill of no rows has no cells (it adds
/// nothing but the binnings).
pub struct Filled {
    pub counts: Counts,
    pub squares: Option<Vec<f64>>,
    pub flow: Flow,
    /// Several axes: what fell outside the bins, cell by cell ([`FlowCells`]).
    pub cells: Option<FlowCells>,
    resolved: Vec<Option<Resolved>>,
}

impl Histogram {
    /// Counts `columns` (one per axis, of one length) into the histogram, and with
    /// `Storage::Weight` sums `weights` and their squares (required there, refused otherwise).
    /// A row with a null anywhere is not counted. Nothing changes on error.
    pub fn fill(&mut self, columns: &[Series], weights: Option<&Series>) -> HistResult<()> {
        let filled = self.counted(columns, weights)?;
        self.add_filled(filled)
    }

    /// Counts arrays in GPU memory (one per axis, of one dtype and length) where they lie into
    /// the histogram, as [`Histogram::fill`] counts host columns.
    pub fn fill_device(
        &mut self,
        columns: &[DeviceArray],
        weights: Option<DeviceWeights>,
    ) -> HistResult<()> {
        let filled = self.counted_device(columns, weights)?;
        self.add_filled(filled)
    }

    /// What [`Histogram::fill`] would add, without adding it: a partial that is sent on (a
    /// Dask partition's) needs no histogram of its own, nor its zeros.
    pub fn counted(&self, columns: &[Series], weights: Option<&Series>) -> HistResult<Filled> {
        self.check_fill(columns.len(), weights.is_some())?;
        let len = columns[0].len();
        if let Some(c) = columns.iter().find(|c| c.len() != len) {
            return Err(HistError::InvalidArgument(format!(
                "the columns of a fill must have one length: {:?} has {} rows, {:?} has {len}",
                c.name().as_str(),
                c.len(),
                columns[0].name().as_str()
            )));
        }
        let (sample, kind) = numpy_sample(columns)?;
        let dtypes: Vec<&DataType> = columns.iter().map(|c| c.dtype()).collect();
        let resolved = self.binnings_for(&dtypes, kind)?;
        let specs = self.specs_with(&resolved);
        let weights = weights.map(|w| weights_f64(len, w)).transpose()?;
        if len == 0 {
            // Nothing to count: the dtypes' binnings are what a zero-row fill gives (a million
            // cells are not counted, split and added for nothing).
            return Ok(Filled {
                counts: Counts::zeros(0, weights.is_some())?,
                squares: self.squares.as_ref().map(|_| Vec::new()),
                flow: Flow::default(),
                cells: None,
                resolved,
            });
        }
        let placement = self.placement();
        if let Some(w) = &weights {
            // Weighted storage on the CPU: the rows, weights and squares in one pass.
            let job = job_of(
                &specs,
                FlowBins::OutsideAndNan,
                host_rows(&sample, Some(w))?,
            )?;
            if let Some(storage) = one_pass(&job, &placement)? {
                let squares = self.squares.is_some().then_some(storage.squares);
                let (counts, squares, flow, cells) = split_cells(
                    len as u64,
                    &specs,
                    storage.rows,
                    Some((storage.sums, squares)),
                );
                return Ok(Filled {
                    counts,
                    squares,
                    flow,
                    cells,
                    resolved,
                });
            }
        }
        let squared = match &weights {
            Some(w) if self.squares.is_some() => {
                let w = w.f64()?;
                Some((w * w).into_series())
            }
            _ => None,
        };
        // The rows are counted with the first column null where a weight is: such a row is in
        // no bin, and its flow reason is the null.
        let mut rows_sample = sample.clone();
        if let Some(w) = weights.as_ref().filter(|w| w.null_count() > 0) {
            let first = &sample[0];
            let nulls = Series::full_null(first.name().clone(), len, first.dtype());
            rows_sample[0] = first.zip_with(&w.is_not_null(), &nulls)?;
        }
        let (counts, squares, flow, cells) = counted_with_flow(
            len as u64,
            &specs,
            weights.as_ref().map(|w| (w, squared.as_ref())),
            |w| {
                let rows = match w {
                    None => host_rows(&rows_sample, None)?,
                    Some(w) => host_rows(&sample, Some(w))?,
                };
                self.count(&specs, FlowBins::OutsideAndNan, rows, &placement)
            },
        )?;
        Ok(Filled {
            counts,
            squares,
            flow,
            cells,
            resolved,
        })
    }

    /// What [`Histogram::fill_device`] would add, without adding it. The flow is counted in the
    /// same pass as the bins: every axis gets flow bins for what falls below and above it and
    /// for NaN ([`FlowBins::OutsideAndNan`]), split off on the host ([`split_flow`]). A weighted
    /// fill counts the rows, the weights and their squares in three launches (a host fill
    /// counted on the CPU takes one pass: [`crate::cpu::weight_storage`]).
    pub fn counted_device(
        &self,
        columns: &[DeviceArray],
        weights: Option<DeviceWeights>,
    ) -> HistResult<Filled> {
        let fill = self.device_fill(columns, weights)?;
        let placement = self.placement();
        let (counts, squares, flow, cells) = counted_with_flow(
            fill.len,
            &fill.specs(),
            weights.map(|w| (w.values, self.squares.is_some().then_some(w.squares))),
            |w| Ok(engine::count(&fill.job(w)?, &placement)?.0),
        )?;
        Ok(Filled {
            counts,
            squares,
            flow,
            cells,
            resolved: fill.resolved,
        })
    }

    /// Counts a column in GPU memory into the caller's arrays `out`, on its stream: the bins
    /// with the axis' three flow bins, `[below, bins.., above, NaN]` ([`FlowBins::OutsideAndNan`]),
    /// the rows into `out.rows` and, for a weighted fill, the weights and their squares into
    /// `out.sums`. Returns the flow, read from the flow bins (a few values copied); the bins stay
    /// where the rows lie: a Dask partial merged on its GPU is copied to the host once, at the
    /// end, not once a partition. One axis: the flow bins of several are spread over the cells.
    pub fn count_device_into(
        &self,
        columns: &[DeviceArray],
        weights: Option<DeviceWeights>,
        out: &DeviceCells,
    ) -> HistResult<Flow> {
        if columns.len() != 1 || weights.is_some() != out.sums.is_some() {
            return Err(HistError::Internal(
                "device cells take one column, and room for the sums of a weighted fill".into(),
            ));
        }
        let fill = self.device_fill(columns, weights)?;
        let gpu = gpu::on(fill.ordinal)?;
        let stream = gpu.borrowed_stream(out.stream);
        let clock = gpu::Clock::start();
        let placement = self.placement();
        let n = fill.specs()[0].len();
        let count = |w: Option<u64>, ptr: u64| -> HistResult<()> {
            let job = fill.job(w)?;
            if job.cells != out.cells || out.cells != n + 3 {
                return Err(HistError::Internal(format!(
                    "room for {} cells, but the fill has {}",
                    out.cells, job.cells
                )));
            }
            gpu.check_readable(ptr, "the cells' array")?;
            engine::count_into(&job, &placement, &stream, ptr, &clock).map(drop)
        };
        count(None, out.rows)?;
        let [below, above, nan] = flow_cells::<u64>(gpu, &stream, out.rows, n)?;
        let mut flow = Flow {
            rows: fill.len,
            nan,
            underflow: below,
            overflow: above,
            ..Flow::default()
        };
        if let (Some(w), Some((sums, squares))) = (weights, out.sums) {
            count(Some(w.values), sums)?;
            count(Some(w.squares), squares)?;
            [flow.underflow_weight, flow.overflow_weight, _] = flow_cells(gpu, &stream, sums, n)?;
            [flow.underflow_squares, flow.overflow_squares, _] =
                flow_cells(gpu, &stream, squares, n)?;
        }
        Ok(flow)
    }

    /// A device fill's columns checked against the binning, and the GPU that holds them.
    fn device_fill<'c>(
        &'c self,
        columns: &'c [DeviceArray],
        weights: Option<DeviceWeights>,
    ) -> HistResult<DeviceFill<'c>> {
        self.check_fill(columns.len(), weights.is_some())?;
        let (dtype, len) = one_dtype_and_length(columns.iter().copied())?;
        let polars = dtype.polars();
        let resolved = self.binnings_for(&vec![&polars; columns.len()], dtype.kind())?;
        let ptrs: Vec<u64> = columns.iter().map(|c| c.ptr).collect();
        let ordinal = gpu_holding(&ptrs, weights.map(|w| w.values), len)?.ordinal();
        Ok(DeviceFill {
            histogram: self,
            columns,
            dtype,
            len,
            ordinal,
            resolved,
        })
    }

    /// Adds a fill counted by this histogram; nothing changes on error.
    fn add_filled(&mut self, filled: Filled) -> HistResult<()> {
        let flow = self.flow.plus(&filled.flow)?;
        if filled.flow.rows > 0 {
            let cells = self.cells_plus(filled.cells.as_ref())?;
            self.add_owned(filled.counts, filled.squares)?;
            self.cells = cells;
        }
        self.flow = flow;
        self.take(filled.resolved);
        Ok(())
    }

    /// Where this histogram counts, with the settings the environment gives now (once a fill).
    fn placement(&self) -> Placement {
        Placement::asked(self.options.device, self.options.kernel)
    }

    fn count(
        &self,
        specs: &[&BinSpec],
        flow: FlowBins,
        rows: Rows<'_>,
        placement: &Placement,
    ) -> HistResult<Counts> {
        Ok(engine::count(&job_of(specs, flow, rows)?, placement)?.0)
    }
}

/// Where [`Histogram::count_device_into`] counts, in the caller's GPU memory.
pub struct DeviceCells {
    /// The caller's stream (0: the legacy default stream).
    pub stream: u64,
    /// How many cells each array has room for: the axis' bins and its three flow bins.
    pub cells: usize,
    /// u64 row counts per cell.
    pub rows: u64,
    /// f64 sums of the weights and of their squares per cell, for a weighted fill.
    pub sums: Option<(u64, u64)>,
}

/// A device fill checked against the binning: its columns, the GPU holding them, and the
/// binnings of their dtype.
struct DeviceFill<'c> {
    histogram: &'c Histogram,
    columns: &'c [DeviceArray],
    dtype: crate::DType,
    len: u64,
    ordinal: i32,
    resolved: Vec<Option<Resolved>>,
}

impl DeviceFill<'_> {
    fn specs(&self) -> Vec<&BinSpec> {
        self.histogram.specs_with(&self.resolved)
    }

    /// The job counting the rows (`weights` None) or summing the weights at `weights`, with
    /// flow bins on every axis.
    fn job(&self, weights: Option<u64>) -> HistResult<Job<'_>> {
        let rows = Rows::Device(DeviceRows {
            columns: self
                .columns
                .iter()
                .map(|c| DeviceColumn {
                    ptr: c.ptr,
                    dtype: self.dtype,
                    stride: 1,
                })
                .collect(),
            weights,
            len: self.len,
            ordinal: self.ordinal,
        });
        job_of(&self.specs(), FlowBins::OutsideAndNan, rows)
    }
}

/// The flow bins of `n` bins counted at `cells` (`[below, bins.., above, NaN]`), once the work
/// queued on `stream` is done: below, above, NaN.
fn flow_cells<T: cudarc::driver::DeviceRepr + Copy>(
    gpu: &gpu::Gpu,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    cells: u64,
    n: usize,
) -> HistResult<[T; 3]> {
    let size = std::mem::size_of::<T>() as u64;
    let below = gpu::transfer::download::<T>(gpu, stream, cells, 1)?;
    let rest = gpu::transfer::download::<T>(gpu, stream, cells + size * (n as u64 + 1), 2)?;
    Ok([below[0], rest[0], rest[1]])
}

/// A weighted host job's [`WeightStorage`](crate::cpu::WeightStorage) where the engine counts
/// it on the CPU; None where the GPU does (it counts the rows, the weights and their squares
/// apart).
fn one_pass(job: &Job<'_>, placement: &Placement) -> HistResult<Option<crate::cpu::WeightStorage>> {
    let Rows::Host(rows) = &job.rows else {
        return Ok(None);
    };
    match engine::decide(&gpu::outline(job), placement)?.backend {
        engine::Backend::Cpu => crate::cpu::weight_storage(job, rows).map(Some),
        engine::Backend::Gpu => Ok(None),
    }
}

fn job_of<'r>(specs: &[&BinSpec], flow: FlowBins, rows: Rows<'r>) -> HistResult<Job<'r>> {
    let axes = specs
        .iter()
        .map(|s| Ok(job::Axis::bins(s.try_clone()?, flow)))
        .collect::<HistResult<_>>()?;
    Job::new(axes, rows)
}

fn host_rows<'a>(columns: &'a [Series], weights: Option<&'a Series>) -> HistResult<Rows<'a>> {
    let columns = columns
        .iter()
        .map(HostColumn::new)
        .collect::<HistResult<_>>()?;
    Ok(Rows::Host(HostRows::new(
        columns,
        weights.map(HostColumn::new).transpose()?,
    )?))
}

/// A fill's counts, squared weights, flow and flow cells (several axes).
type Counted = (Counts, Option<Vec<f64>>, Flow, Option<FlowCells>);

/// The counts, squared weights, flow and flow cells of one fill, each counted with flow bins on
/// every axis (below, above, NaN: [`FlowBins::OutsideAndNan`]) and split off ([`split_flow`]),
/// so that the flow is counted in the same pass as the bins. `count(None)` counts the fill's
/// rows (a row with a null is in no bin: its reason is the null), `count(Some(w))` sums the
/// weights `w`: the values, then their squares where given. The flow cells of a weighted fill
/// hold the weights, as its bins do.
fn counted_with_flow<W: Copy>(
    len: u64,
    specs: &[&BinSpec],
    weights: Option<(W, Option<W>)>,
    count: impl Fn(Option<W>) -> HistResult<Counts>,
) -> HistResult<Counted> {
    let Counts::Exact(rows) = count(None)? else {
        unreachable!("an unweighted count")
    };
    let sums = |w| -> HistResult<Vec<f64>> {
        match count(Some(w))? {
            Counts::Weighted(s) => Ok(s),
            Counts::Exact(_) => unreachable!("a weighted count"),
        }
    };
    let weighted = match weights {
        Some((values, squares)) => Some((sums(values)?, squares.map(sums).transpose()?)),
        None => None,
    };
    Ok(split_cells(len, specs, rows, weighted))
}

/// A fill of `len` rows as [`counted_with_flow`] gives it, from its cells counted with flow
/// bins: the rows, and for a weighted fill the sums of the weights and of their squares.
fn split_cells(
    len: u64,
    specs: &[&BinSpec],
    rows: Vec<u64>,
    weighted: Option<(Vec<f64>, Option<Vec<f64>>)>,
) -> Counted {
    let bins: Vec<usize> = specs.iter().map(|s| s.len()).collect();
    let several = bins.len() > 1;
    let rows = split_flow(rows, &bins);
    let seen = sum_of(&rows.bins) + rows.below + rows.above + rows.nan;
    let mut flow = Flow {
        rows: len,
        null: len - seen,
        nan: rows.nan,
        underflow: rows.below,
        overflow: rows.above,
        ..Flow::default()
    };
    let Some((values, squares)) = weighted else {
        let cells = several.then_some(FlowCells {
            counts: Counts::Exact(rows.outside),
            squares: None,
        });
        return (Counts::Exact(rows.bins), None, flow, cells);
    };
    let sums_of_values = split_flow(values, &bins);
    (flow.underflow_weight, flow.overflow_weight) = (sums_of_values.below, sums_of_values.above);
    let squares = squares.map(|q| split_flow(q, &bins));
    if let Some(q) = &squares {
        (flow.underflow_squares, flow.overflow_squares) = (q.below, q.above);
    }
    let (squares, outside_squares) = match squares {
        Some(q) => (Some(q.bins), Some(q.outside)),
        None => (None, None),
    };
    let cells = several.then_some(FlowCells {
        counts: Counts::Weighted(sums_of_values.outside),
        squares: outside_squares,
    });
    (Counts::Weighted(sums_of_values.bins), squares, flow, cells)
}

/// The sum of `counts`, on every core when they are many (a million are 8 MB).
fn sum_of(counts: &[u64]) -> u64 {
    use rayon::prelude::*;
    if counts.len() < 1 << 18 {
        return counts.iter().sum();
    }
    counts
        .par_chunks(1 << 16)
        .map(|c| c.iter().sum::<u64>())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accumulator::{AccumulatorOptions, Axis, Storage};

    /// A fill's flow bins, split off, classify rows as masks over the columns do, and leave the
    /// bins as a count without flow bins has them: the same job counted here on the CPU (1 to 3
    /// axes, counts or weights, nulls in the columns and the weights, NaN and infinities on every
    /// axis, values on the edges and outside).
    #[test]
    fn flow_bins_split_as_the_masks_classify_rows() {
        let values = [
            -1.0,
            f64::NAN,
            0.0,
            0.25,
            0.5,
            1.0,
            1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.75,
            0.999,
            -0.0,
            0.3,
        ];
        for dims in 1..=3u32 {
            // Every combination of the values over the axes.
            let n = values.len().pow(dims);
            let columns: Vec<Series> = (0..dims)
                .map(|d| {
                    let step = values.len().pow(d);
                    // A null every 17 rows, at other rows on each axis.
                    let column: Vec<Option<f64>> = (0..n)
                        .map(|i| {
                            (i % 17 != 3 + d as usize).then(|| values[i / step % values.len()])
                        })
                        .collect();
                    Series::new(format!("x{d}").into(), column)
                })
                .collect();
            // Halves (sums exact in any order), with a null every 13 rows.
            let weights: Vec<Option<f64>> = (0..n)
                .map(|i| (i % 13 != 6).then_some((i % 7) as f64 * 0.5 - 1.0))
                .collect();
            let weights = Series::new("w".into(), weights);
            let squared = (&weights * &weights).unwrap();
            let dims = dims as usize;
            for weighted in [false, true] {
                let storage = if weighted {
                    Storage::Weight
                } else {
                    Storage::Count
                };
                let options = AccumulatorOptions {
                    storage,
                    ..Default::default()
                };
                let axes = (0..dims).map(|d| Axis::regular(3 + d, 0.0, 1.0)).collect();
                let mut host = Histogram::new(axes, options).unwrap();
                let w = weighted.then_some(&weights);
                host.fill(&columns, w).unwrap();
                let specs: Vec<&BinSpec> = (0..dims).map(|d| host.spec(d)).collect();
                let placement = host.placement();
                // Without flow bins: the bins counted plainly, the flow classified by masks.
                let plain = |w: Option<&Series>| {
                    let rows = host_rows(&columns, w).unwrap();
                    host.count(&specs, FlowBins::None, rows, &placement)
                        .unwrap()
                };
                let masks = super::super::flow::masks::host_flow(&specs, &columns, w).unwrap();
                let context = format!("{dims} axes, weighted {weighted}");
                assert_eq!(host.flow(), &masks, "{context}");
                assert!(masks.null > 0 && masks.nan > 0, "{context}");
                assert!(masks.underflow > 0 && masks.overflow > 0, "{context}");
                assert_eq!(host.counts(), &plain(w), "{context}");
                if weighted {
                    let squares = Counts::Weighted(host.squared_weights().unwrap().to_vec());
                    assert_eq!(squares, plain(Some(&squared)), "{context}");
                }
            }
        }
    }
}
