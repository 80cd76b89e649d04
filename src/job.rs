//! A histogram to count: its axes, each binned by a rule, and where its rows are. 1-D is the
//! rank-1 case; n-D adds binned axes and `by=` a group axis; the engine takes any job to a
//! backend and returns counts in row-major order of the axes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::bins::{BinSpec, MAX_BINS};
use crate::dtype::DType;
use crate::error::{HistError, HistResult};
use crate::input::{HostColumn, Piece};

/// The most axes a job has (`histogramdd`'s dimensions; `by=` has two).
pub const MAX_RANK: usize = 8;

/// How the values of one axis become its bins.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// The bin contract (`bins.rs`).
    Bins(BinSpec),
    /// Group ids of a `by=` key: one bin per group.
    Groups(Groups),
    /// Each value of a narrow integer column is its own bin, `x - lo` (a [`ByValue`] count).
    Values { lo: i64, count: usize },
}

/// A `by=` key's groups, in order of first appearance.
#[derive(Clone, Debug, PartialEq)]
pub struct Groups {
    pub count: usize,
    pub keys: GroupKeys,
}

/// How a row's key becomes its group id.
#[derive(Clone, Debug, PartialEq)]
pub enum GroupKeys {
    /// The axis column holds the ids themselves (UInt32, no nulls).
    Ids,
    /// The axis column holds integer keys (no nulls) of a narrow span: the id of `x` is
    /// `table[x - lo]`. A table read from the first rows only comes with `strays`: every reader
    /// of the keys checks each against the table's span, leaves a key outside it uncounted and
    /// marks `strays`, and the count is then not the answer.
    Table {
        lo: i64,
        table: Vec<u32>,
        strays: Option<Strays>,
    },
}

/// Marked by whoever reads a key outside a table made from the first rows (see
/// [`GroupKeys::Table`]); shared by the job's clones.
#[derive(Clone, Debug, Default)]
pub struct Strays(Arc<AtomicBool>);

impl Strays {
    pub fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn seen(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl PartialEq for Strays {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl GroupKeys {
    /// Whether a key fell outside a table made from the first rows.
    pub fn strayed(&self) -> bool {
        matches!(self, GroupKeys::Table { strays: Some(s), .. } if s.seen())
    }
}

/// The flow bins of an axis: what falls outside its bins, counted in the same pass as the rest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FlowBins {
    /// Rows outside the bins, and NaN, are not counted.
    #[default]
    None = 0,
    /// Two more bins, first and last, for what falls below and above the edges (NaN above), as
    /// boost-histogram's flow bins.
    Outside = 1,
    /// Those two and a third, last, for NaN apart: a `Histogram`'s flow (`accumulator::flow`).
    OutsideAndNan = 2,
}

impl FlowBins {
    /// The bins it adds to an axis.
    pub fn extra(self) -> usize {
        match self {
            FlowBins::None => 0,
            FlowBins::Outside => 2,
            FlowBins::OutsideAndNan => 3,
        }
    }
}

impl From<bool> for FlowBins {
    /// The expressions' `flow=`: boost-histogram's two flow bins, or none.
    fn from(flow: bool) -> Self {
        match flow {
            true => FlowBins::Outside,
            false => FlowBins::None,
        }
    }
}

/// One axis of a histogram.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub rule: Rule,
    pub flow: FlowBins,
}

impl Axis {
    pub fn bins(spec: BinSpec, flow: impl Into<FlowBins>) -> Self {
        let flow = flow.into();
        Axis {
            rule: Rule::Bins(spec),
            flow,
        }
    }

    /// Bins of this axis, flow bins included.
    pub fn len(&self) -> usize {
        let n = match &self.rule {
            Rule::Bins(spec) => spec.len(),
            Rule::Groups(g) => g.count,
            Rule::Values { count, .. } => *count,
        };
        n + self.flow.extra()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn spec(&self) -> Option<&BinSpec> {
        match &self.rule {
            Rule::Bins(spec) => Some(spec),
            Rule::Groups(_) | Rule::Values { .. } => None,
        }
    }
}

/// A 1-D count of a narrow integer column (8 or 16 bits) that goes value by value: one counter
/// per value of the type, folded into the axis's bins afterwards by a table of every value's bin
/// (`cpu::table`). The bin rule then runs once per value of the type instead of once per row,
/// and the answer is exact by construction: the table is the CPU's own rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByValue {
    /// The type's least value: counter `i` holds the rows of value `lo + i`.
    pub lo: i64,
    /// Values of the type (256 or 65,536).
    pub values: usize,
}

/// Which backend a count by value is for: where it pays differs (BENCHMARKS.md, issue 37).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    Cpu,
    Gpu,
}

impl ByValue {
    /// Rows per value of an 8-bit type from which counting by value pays for the table and the
    /// fold (their cost is one rule and one add per value): 4,096 rows.
    pub const MIN_ROWS_PER_VALUE: usize = 16;
    /// Rows of a 16-bit column from which the GPU counts by value into explicit edges or many
    /// equal bins (fewer: `MIN_ROWS_16_BIT_GPU_FEW_BINS`): each block then zeroes and
    /// merges 65,536 counters, which below this cost more than binning row by row (an H100:
    /// 0.49 ms for 2^20 rows by value, beside CuPy's 0.16). The CPU never does: 65,536 counters
    /// a thread live in L2, and its SIMD binning into counters in L1 was as fast or faster
    /// (16 cores: 10.7-13 ms against 14.6-15.4 ms for 2^26 rows).
    pub const MIN_ROWS_16_BIT_GPU: usize = 1 << 24;
    /// Rows of a 16-bit column from which the GPU counts by value into at most
    /// `FEW_EQUAL_BINS` equal bins: the shared family's counters hold those bins row by row,
    /// which cost less below this and more above (an H200, 2,048 bins: 2^24 uint16 rows 0.11 ms
    /// row by row against 0.55 by value; 2^28 rows 0.62 against 0.44).
    pub const MIN_ROWS_16_BIT_GPU_FEW_BINS: usize = 1 << 28;
    /// Equal bins that the shared family holds as u32 counters (`MIN_ROWS_16_BIT_GPU_FEW_BINS`).
    pub const FEW_EQUAL_BINS: usize = 32_768;

    /// Whether an unweighted 1-D count of `rows` values of `dtype` binned by `axis` goes by
    /// value on `counter`.
    pub fn of(
        axis: &Axis,
        dtype: DType,
        rows: usize,
        weighted: bool,
        counter: Counter,
    ) -> Option<ByValue> {
        let Rule::Bins(spec) = &axis.rule else {
            return None;
        };
        // Explicit edges (floats, or integers compared exactly) search for a row's bin.
        let sixteen_bit_rows = match spec {
            BinSpec::Edges(_) | BinSpec::Integers(_) => Self::MIN_ROWS_16_BIT_GPU,
            _ if spec.len() > Self::FEW_EQUAL_BINS => Self::MIN_ROWS_16_BIT_GPU,
            _ => Self::MIN_ROWS_16_BIT_GPU_FEW_BINS,
        };
        let (lo, values, min_rows) = match (dtype, counter) {
            (DType::I8, _) => (i8::MIN as i64, 1 << 8, Self::MIN_ROWS_PER_VALUE << 8),
            (DType::U8, _) => (0, 1 << 8, Self::MIN_ROWS_PER_VALUE << 8),
            (DType::I16, Counter::Gpu) => (i16::MIN as i64, 1 << 16, sixteen_bit_rows),
            (DType::U16, Counter::Gpu) => (0, 1 << 16, sixteen_bit_rows),
            _ => return None,
        };
        (!weighted && rows >= min_rows).then_some(ByValue { lo, values })
    }

    /// What counting by value does, as `explain` says it.
    pub fn describe(&self, dtype: DType, bins: usize) -> String {
        format!(
            "one counter per {} value ({}), each then added into its bin of {bins} by a table \
             of every value's bin, made by the CPU's rule",
            dtype.name(),
            self.values
        )
    }

    /// The axis counted: one bin per value.
    pub fn axis(&self) -> Axis {
        Axis {
            rule: Rule::Values {
                lo: self.lo,
                count: self.values,
            },
            flow: FlowBins::None,
        }
    }
}

/// Row-major strides of axes of these lengths, and the number of cells (at most `MAX_BINS`).
pub fn row_major(lengths: &[usize]) -> HistResult<(Vec<usize>, usize)> {
    let mut strides = vec![0; lengths.len()];
    let mut cells = 1usize;
    for (d, &n) in lengths.iter().enumerate().rev() {
        strides[d] = cells;
        cells = cells
            .checked_mul(n)
            .filter(|&c| c <= MAX_BINS)
            .ok_or_else(|| {
                let shape: Vec<String> = lengths.iter().map(|n| n.to_string()).collect();
                HistError::InvalidArgument(format!(
                    "the histogram would have {} cells, more than the {MAX_BINS} it can hold: \
                     ask for fewer bins",
                    shape.join(" x ")
                ))
            })?;
    }
    Ok((strides, cells))
}

/// Rows in host memory: one column per axis, optional Float64 weights, cut into pieces where all
/// of them are contiguous. A row counts when it is valid in every column and the weights.
#[derive(Clone)]
pub struct HostRows<'a> {
    pub columns: Vec<HostColumn<'a>>,
    pub weights: Option<HostColumn<'a>>,
    pub pieces: Vec<Piece>,
    pub len: usize,
}

impl<'a> HostRows<'a> {
    pub fn new(columns: Vec<HostColumn<'a>>, weights: Option<HostColumn<'a>>) -> HistResult<Self> {
        let len = columns.first().map_or(0, HostColumn::len);
        let all: Vec<&HostColumn> = columns.iter().chain(&weights).collect();
        if let Some(other) = all.iter().find(|c| c.len() != len) {
            return Err(HistError::InvalidArgument(format!(
                "all columns (and the weights) must have the same length: {} rows beside {len}",
                other.len()
            )));
        }
        if weights.as_ref().is_some_and(|w| w.dtype != DType::F64) {
            return Err(HistError::InvalidArgument(
                "weights must be read as Float64".into(),
            ));
        }
        let pieces = crate::input::pieces(&all);
        Ok(HostRows {
            columns,
            weights,
            pieces,
            len,
        })
    }

    /// Every column, the weights last.
    pub fn all(&self) -> Vec<&HostColumn<'a>> {
        self.columns.iter().chain(&self.weights).collect()
    }
}

/// A column in GPU memory: `stride` values apart (1 for an array of its own, `d` for column `j`
/// of a C-contiguous `(n, d)` array offset by `j`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceColumn {
    pub ptr: u64,
    pub dtype: DType,
    pub stride: u64,
}

/// Rows in GPU memory (no nulls): one column per axis, optional float64 weights.
#[derive(Clone, Debug)]
pub struct DeviceRows {
    pub columns: Vec<DeviceColumn>,
    pub weights: Option<u64>,
    pub len: u64,
    /// The GPU whose memory holds them.
    pub ordinal: i32,
}

/// Where a job's rows are.
#[derive(Clone)]
pub enum Rows<'a> {
    Host(HostRows<'a>),
    Device(DeviceRows),
}

/// Where a job's rows lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// Host columns, copied to the GPU if they go there.
    Host,
    /// Host columns with copies in GPU memory (`gpu::pin`), no weights: nothing to copy.
    Pinned,
    /// Arrays in GPU memory.
    Device,
}

/// A job as the engine decides from it, without a row read: its axes, the type each column
/// reaches the GPU as, its size and where its rows lie. A call takes it from its job
/// (`gpu::outline`); `explain`, which has no rows, from the dtype and length it is given. Both
/// then take the one decision (`engine::decide`).
#[derive(Clone, Debug)]
pub struct Outline<'j> {
    pub axes: &'j [Axis],
    pub dtypes: Vec<DType>,
    pub rows: usize,
    pub cells: usize,
    pub weighted: bool,
    /// Bytes a row takes in memory (values and weights): what a copy to the device moves.
    pub row_bytes: usize,
    pub location: Location,
    /// The GPU the job counts on, if it goes to one (see `gpu::device`).
    pub ordinal: i32,
    /// The rows are one (n, d) array in GPU memory, row-major, of one type, each row aligned to
    /// its size, whose 16-byte loads hold whole rows (`gpu::launch::outline`).
    pub interleaved: bool,
}

impl Outline<'_> {
    /// Whether this job goes by value on `counter` (see [`ByValue`]): 1-D only.
    pub fn by_value(&self, counter: Counter) -> Option<ByValue> {
        match (self.axes, self.dtypes.as_slice()) {
            ([axis], [dtype]) => ByValue::of(axis, *dtype, self.rows, self.weighted, counter),
            _ => None,
        }
    }
}

/// A histogram to count.
pub struct Job<'a> {
    pub axes: Vec<Axis>,
    pub rows: Rows<'a>,
    pub strides: Vec<usize>,
    pub cells: usize,
}

impl<'a> Job<'a> {
    pub fn new(axes: Vec<Axis>, rows: Rows<'a>) -> HistResult<Self> {
        let columns = match &rows {
            Rows::Host(h) => h.columns.len(),
            Rows::Device(d) => d.columns.len(),
        };
        if columns != axes.len() || axes.is_empty() || axes.len() > MAX_RANK {
            return Err(HistError::Internal(format!(
                "a job of {} axes over {columns} columns",
                axes.len()
            )));
        }
        let lengths: Vec<usize> = axes.iter().map(Axis::len).collect();
        let (strides, cells) = row_major(&lengths)?;
        Ok(Job {
            axes,
            rows,
            strides,
            cells,
        })
    }

    pub fn len(&self) -> usize {
        match &self.rows {
            Rows::Host(h) => h.len,
            Rows::Device(d) => d.len as usize,
        }
    }

    pub fn is_weighted(&self) -> bool {
        match &self.rows {
            Rows::Host(h) => h.weights.is_some(),
            Rows::Device(d) => d.weights.is_some(),
        }
    }

    /// The value-by-value count of this job and the job that makes it, where it goes by value
    /// (see [`ByValue`]); the job's own axis then only folds.
    pub fn by_value(&self, counter: Counter) -> HistResult<Option<(ByValue, Job<'a>)>> {
        let Some(by_value) = self.counts_by_value(counter) else {
            return Ok(None);
        };
        let job = Job::new(vec![by_value.axis()], self.rows.clone())?;
        Ok(Some((by_value, job)))
    }

    /// Whether this job goes by value on `counter` (see [`ByValue`]).
    pub fn counts_by_value(&self, counter: Counter) -> Option<ByValue> {
        match self.axes.as_slice() {
            [axis] => ByValue::of(
                axis,
                self.rows_dtype(0),
                self.len(),
                self.is_weighted(),
                counter,
            ),
            _ => None,
        }
    }

    /// The type of column `c`'s values.
    pub fn rows_dtype(&self, c: usize) -> DType {
        match &self.rows {
            Rows::Host(h) => h.columns[c].dtype,
            Rows::Device(d) => d.columns[c].dtype,
        }
    }

    /// Bytes a row takes in memory (what a copy to the device moves).
    pub fn row_bytes(&self) -> usize {
        let values: usize = match &self.rows {
            Rows::Host(h) => h.columns.iter().map(|c| c.dtype.size()).sum(),
            Rows::Device(d) => d.columns.iter().map(|c| c.dtype.size()).sum(),
        };
        values + 8 * self.is_weighted() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bins::{Binning, Closed, Range, ValueKind};

    /// On the GPU a 16-bit column counts by value into edges or many equal bins from 2^24 rows,
    /// into few equal bins from 2^28 (the shared family bins those row by row for less below);
    /// the CPU never counts 16-bit columns by value, and weighted counts never go by value.
    #[test]
    fn sixteen_bit_columns_count_by_value_where_it_pays() {
        let axis = |bins: Binning| {
            let range = matches!(bins, Binning::Count(_)).then(|| Range::new(0.0, 65_536.0));
            let spec = BinSpec::resolve(&bins, range, Closed::Left, ValueKind::Integer, || {
                unreachable!("the range is given")
            })
            .unwrap();
            Axis::bins(spec, false)
        };
        let few = axis(Binning::Count(2048));
        let many = axis(Binning::Count(40_000));
        let edges = axis(Binning::Edges(vec![0.0, 3.0, 50.0, 65_535.0]));
        let int_edges = axis(Binning::Integers(vec![0, 3, 50, 65_535]));
        let (low, high) = (1usize << 24, 1usize << 28);
        for (axis, rows, counter, weighted, goes) in [
            (&few, low, Counter::Gpu, false, false),
            (&few, high, Counter::Gpu, false, true),
            (&many, low, Counter::Gpu, false, true),
            (&edges, low, Counter::Gpu, false, true),
            (&edges, low - 1, Counter::Gpu, false, false),
            (&int_edges, low, Counter::Gpu, false, true),
            (&many, high, Counter::Cpu, false, false),
            (&many, high, Counter::Gpu, true, false),
        ] {
            for dtype in [DType::U16, DType::I16] {
                let got = ByValue::of(axis, dtype, rows, weighted, counter);
                assert_eq!(
                    got.is_some(),
                    goes,
                    "{dtype:?} {rows} {counter:?} {weighted}"
                );
            }
        }
    }
}
