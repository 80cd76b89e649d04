//! The CPU backend: privatized histograms, one per task, over contiguous row ranges, merged at
//! the end. A task turns a block of rows into cell indices axis by axis (SIMD index loops in
//! `simd`), masks the rows not counted, then scatters increments into several interleaved copies
//! of its histogram (`index`) so that runs of one value (degenerate data) do not serialize.

pub mod extremes;
pub mod index;
pub mod simd;
pub mod table;

use rayon::prelude::*;

use crate::bins::BinSpec;
use crate::counts::{zeroed, Counts};
use crate::error::HistResult;
use crate::fixed::{self, FixedSum, Sums};
use crate::input::{Chunk, Value, Values};
use crate::job::{Axis, Counter, FlowBins, GroupKeys, HostRows, Job, Rule, Strays};

/// Rows handled per block (fits in L1 beside a small histogram).
pub const BLOCK: usize = 2048;
/// Below this many rows a single task on the caller's thread is fastest; Polars often calls us
/// from its own threads (one call per group), so small calls must not queue on the pool.
const MIN_ROWS_PER_TASK: usize = 1 << 16;
/// Bound on the memory all private histograms of one call may take.
const PRIVATE_BYTES_BUDGET: usize = 512 << 20;
/// Interleaved copies of a small histogram.
const REPLICAS: usize = 4;
/// A u32 private counter may overflow after 2^32 rows: flush to u64 well before.
const FLUSH_ROWS: usize = 1 << 30;
/// Above this many bins [`count_blocks`] counts in u64 directly (as it does for fewer rows than
/// bins).
const DIRECT_BINS: usize = 1 << 22;

/// The counts of a job whose rows are in host memory, on all cores of the current rayon pool.
pub fn count(job: &Job<'_>, rows: &HostRows<'_>) -> HistResult<Counts> {
    if let Some((by_value, values_job)) = job.by_value(Counter::Cpu)? {
        let Counts::Exact(value_counts) = count(&values_job, rows)? else {
            unreachable!("counting by value is unweighted")
        };
        let value_bins = table::value_bins(&job.axes[0], by_value)?;
        return Ok(Counts::Exact(table::fold(
            &value_counts,
            &value_bins,
            job.cells,
        )?));
    }
    // Equal bins make their edges on first use: here, where running out of memory is an error.
    for spec in job.axes.iter().filter_map(|a| a.spec()) {
        spec.make_edges()?;
        spec.prove();
    }
    let cells = job.cells;
    let cell_bytes = match rows.weights {
        Some(_) if fixed::sums() == Sums::Fixed => std::mem::size_of::<FixedSum>(),
        _ => 8,
    };
    let tasks = task_ranges(rows.len, cells, cell_bytes);
    if rows.weights.is_some() && fixed::sums() == Sums::Float {
        let partial = |&(a, b): &(usize, usize)| -> HistResult<Vec<f64>> {
            let mut blocks = Blocks::new(job, rows, a, b);
            let sums = float_sum_blocks(cells, |idx, amounts| blocks.next(idx, Some(amounts)))?;
            crate::interrupt::check()?;
            Ok(sums)
        };
        return Ok(Counts::Weighted(match tasks.as_slice() {
            [one] => partial(one)?,
            _ => merge(tasks.par_iter().map(partial).collect::<HistResult<_>>()?),
        }));
    }
    if let Some(weights) = &rows.weights {
        // One grid for every task: their sums add exactly, whatever the tasks.
        let k = fixed::exponent(fixed::largest_magnitude(weights), rows.len as u64);
        let partial = |&(a, b): &(usize, usize)| -> HistResult<Vec<FixedSum>> {
            let mut blocks = Blocks::new(job, rows, a, b);
            let sums = sum_blocks(cells, k, |idx, amounts| blocks.next(idx, Some(amounts)))?;
            crate::interrupt::check()?;
            Ok(sums)
        };
        let sums = match tasks.as_slice() {
            [one] => partial(one)?,
            _ => merge(tasks.par_iter().map(partial).collect::<HistResult<_>>()?),
        };
        return Ok(Counts::Weighted(
            sums.par_iter().map(|c| c.value(k)).collect(),
        ));
    }
    let partial = |&(a, b): &(usize, usize)| -> HistResult<Vec<u64>> {
        let mut blocks = Blocks::new(job, rows, a, b);
        let counts = count_blocks(cells, b - a, |idx| blocks.next(idx, None))?;
        // Blocks end early on Ctrl-C: such counts are never returned.
        crate::interrupt::check()?;
        Ok(counts)
    };
    Ok(Counts::Exact(match tasks.as_slice() {
        [one] => partial(one)?,
        _ => merge(tasks.par_iter().map(partial).collect::<HistResult<_>>()?),
    }))
}

/// A weighted job's cells as Boost.Histogram's weighted storage keeps them, each summed in one
/// pass over the rows: the rows counted, the weights and their squares, summed the process's
/// way ([`fixed::sums`]; in fixed point each on its own grid as [`count`] sums a column of
/// weights and one of their squares, so the bits are those two counts give). Cell `job.cells`
/// holds the rows not counted (a null).
pub struct WeightStorage {
    pub rows: Vec<u64>,
    pub sums: Vec<f64>,
    pub squares: Vec<f64>,
}

/// A cell's sum of weights: fixed point on a grid 2^-k, or float64 additions.
trait WeightSum: Copy + Default + Send + Sync {
    fn add(&mut self, w: f64, k: i32);
    fn merge(&mut self, other: &Self);
    fn value(&self, k: i32) -> f64;
}

impl WeightSum for FixedSum {
    #[inline(always)]
    fn add(&mut self, w: f64, k: i32) {
        FixedSum::add(self, w, k);
    }
    fn merge(&mut self, other: &Self) {
        FixedSum::merge(self, other);
    }
    fn value(&self, k: i32) -> f64 {
        FixedSum::value(self, k)
    }
}

impl WeightSum for f64 {
    #[inline(always)]
    fn add(&mut self, w: f64, _: i32) {
        *self += w;
    }
    fn merge(&mut self, other: &Self) {
        *self += other;
    }
    fn value(&self, _: i32) -> f64 {
        *self
    }
}

/// One cell of [`WeightStorage`] in a task; tasks merge in task order (fixed point: exactly).
#[derive(Clone, Copy, Default)]
struct StorageCell<S> {
    rows: u64,
    sum: S,
    squares: S,
}

impl<S: WeightSum> Merge for StorageCell<S> {
    fn merge(&mut self, other: &StorageCell<S>) {
        self.rows += other.rows;
        self.sum.merge(&other.sum);
        self.squares.merge(&other.squares);
    }
}

/// The [`WeightStorage`] of a weighted job whose rows are in host memory, on all cores of the
/// current rayon pool: one pass where counting the rows, the weights and the squared weights
/// apart would read every row three times.
pub fn weight_storage(job: &Job<'_>, rows: &HostRows<'_>) -> HistResult<WeightStorage> {
    for spec in job.axes.iter().filter_map(|a| a.spec()) {
        spec.make_edges()?;
        spec.prove();
    }
    match fixed::sums() {
        Sums::Fixed => {
            let weights = rows.weights.as_ref().expect("a weighted job");
            let largest = fixed::largest_magnitude(weights);
            // Squaring is monotone in |w|: the largest finite square is the largest
            // magnitude's square, unless that one overflows.
            let largest_square = match largest * largest {
                q if q.is_finite() => q,
                _ => largest_finite_square(weights),
            };
            let n = rows.len as u64;
            let grids = (
                fixed::exponent(largest, n),
                fixed::exponent(largest_square, n),
            );
            storage_of::<FixedSum>(job, rows, grids)
        }
        Sums::Float => storage_of::<f64>(job, rows, (0, 0)),
    }
}

/// [`weight_storage`] in sums of type `S`, the weights on grid `k.0` and the squares on `k.1`.
fn storage_of<S: WeightSum>(
    job: &Job<'_>,
    rows: &HostRows<'_>,
    (k, k2): (i32, i32),
) -> HistResult<WeightStorage> {
    let cells = job.cells;
    let partial = |&(a, b): &(usize, usize)| -> HistResult<Vec<StorageCell<S>>> {
        let mut blocks = Blocks::new(job, rows, a, b);
        let mut part: Vec<StorageCell<S>> = zeroed(cells + 1)?;
        let mut idx = Box::new([0u32; BLOCK]);
        let mut amounts = Box::new([0f64; BLOCK]);
        loop {
            let len = blocks.next(&mut idx, Some(&mut *amounts));
            if len == 0 {
                break;
            }
            for (&i, &w) in idx[..len].iter().zip(&amounts[..len]) {
                let cell = &mut part[i as usize];
                cell.rows += 1;
                cell.sum.add(w, k);
                cell.squares.add(w * w, k2);
            }
        }
        crate::interrupt::check()?;
        Ok(part)
    };
    let tasks = task_ranges(rows.len, cells, std::mem::size_of::<StorageCell<S>>());
    let total = match tasks.as_slice() {
        [one] => partial(one)?,
        _ => merge(tasks.par_iter().map(partial).collect::<HistResult<_>>()?),
    };
    let total = &total[..cells];
    Ok(WeightStorage {
        rows: total.par_iter().map(|c| c.rows).collect(),
        sums: total.par_iter().map(|c| c.sum.value(k)).collect(),
        squares: total.par_iter().map(|c| c.squares.value(k2)).collect(),
    })
}

/// The largest finite square of a float64 column's valid values (0 where there is none).
fn largest_finite_square(weights: &crate::input::HostColumn<'_>) -> f64 {
    let mut largest = 0f64;
    for chunk in &weights.chunks {
        let Values::F64(w) = chunk.values else {
            unreachable!("weights are Float64")
        };
        for (i, &x) in w.iter().enumerate() {
            let q = x * x;
            let valid = chunk.validity.as_ref().is_none_or(|v| v.is_valid(i));
            if valid && q.is_finite() && q > largest {
                largest = q;
            }
        }
    }
    largest
}

/// Partial counts (or fixed-point sums) added up, in parallel over bins: integer adds, so the
/// total does not depend on how the rows were split.
fn merge<A: Merge>(parts: Vec<Vec<A>>) -> Vec<A> {
    let mut iter = parts.into_iter();
    let mut total = iter.next().expect("at least one task");
    for part in iter {
        total
            .par_chunks_mut(1 << 14)
            .zip(part.par_chunks(1 << 14))
            .for_each(|(t, p)| t.iter_mut().zip(p).for_each(|(t, p)| t.merge(p)));
    }
    total
}

/// A partial result of one bin, added exactly to another's.
trait Merge: Copy + Send + Sync {
    fn merge(&mut self, other: &Self);
}

impl Merge for u64 {
    fn merge(&mut self, other: &u64) {
        *self += other;
    }
}

impl Merge for f64 {
    fn merge(&mut self, other: &f64) {
        *self += other;
    }
}

impl Merge for FixedSum {
    fn merge(&mut self, other: &FixedSum) {
        FixedSum::merge(self, other);
    }
}

/// Contiguous row ranges, one per task: as many as there are threads, fewer for small inputs or
/// where the private histograms would take too much memory.
fn task_ranges(rows: usize, cells: usize, cell_bytes: usize) -> Vec<(usize, usize)> {
    let by_rows = rows / MIN_ROWS_PER_TASK;
    let by_memory = PRIVATE_BYTES_BUDGET / ((cells + 1) * cell_bytes).max(1);
    let tasks = rayon::current_num_threads()
        .min(by_rows)
        .min(by_memory)
        .max(1);
    let per_task = rows.div_ceil(tasks).max(1);
    (0..tasks)
        .map(|t| ((t * per_task).min(rows), ((t + 1) * per_task).min(rows)))
        .collect()
}

/// Cell indices of a task's rows, a block at a time (`cells` where a row is not counted).
struct Blocks<'j, 'a> {
    job: &'j Job<'a>,
    rows: &'j HostRows<'a>,
    /// Next piece and row within it, and the task's last row.
    piece: usize,
    offset: usize,
    end: usize,
    /// The bins of axes after the first (none for one axis: a small call zeroed it for nothing).
    scratch: Option<Box<[u32; BLOCK]>>,
}

impl<'j, 'a> Blocks<'j, 'a> {
    fn new(job: &'j Job<'a>, rows: &'j HostRows<'a>, start: usize, end: usize) -> Self {
        let piece = rows.pieces.partition_point(|p| p.start + p.len <= start);
        let offset = rows.pieces.get(piece).map_or(0, |p| start - p.start);
        Blocks {
            job,
            rows,
            piece,
            offset,
            end,
            scratch: (job.axes.len() > 1).then(|| Box::new([0; BLOCK])),
        }
    }

    /// Fills the next block's cell indices (and weights), returns its length, 0 at the end.
    fn next(&mut self, idx: &mut [u32; BLOCK], amounts: Option<&mut [f64; BLOCK]>) -> usize {
        if crate::interrupt::pending() {
            return 0; // Ctrl-C: `count` discards what was counted
        }
        let Some(piece) = self.rows.pieces.get(self.piece) else {
            return 0;
        };
        if piece.start + self.offset >= self.end {
            return 0;
        }
        let len = BLOCK
            .min(piece.len - self.offset)
            .min(self.end - piece.start - self.offset);
        let (start, job, rows) = (self.offset, self.job, self.rows);
        let cells = job.cells as u32;
        for (d, (axis, column)) in job.axes.iter().zip(&rows.columns).enumerate() {
            let part = piece.part(column, d).slice(start, len);
            let stride = job.strides[d] as u32;
            if d == 0 {
                axis_cells(axis, &part, &mut idx[..len]);
                let n = axis.len() as u32;
                // A lone axis is its own cell index: no pass (it cost a tenth of a 1-D call).
                if stride != 1 || n != cells {
                    for i in &mut idx[..len] {
                        *i = if *i == n { cells } else { *i * stride };
                    }
                }
            } else {
                let scratch = self.scratch.as_mut().expect("made for several axes");
                let bins = &mut scratch[..len];
                axis_cells(axis, &part, bins);
                let n = axis.len() as u32;
                for (i, &b) in idx[..len].iter_mut().zip(bins.iter()) {
                    *i = if *i == cells || b == n {
                        cells
                    } else {
                        *i + b * stride
                    };
                }
            }
        }
        if let (Some(amounts), Some(weights)) = (amounts, &rows.weights) {
            let part = piece.part(weights, job.axes.len()).slice(start, len);
            let Values::F64(w) = part.values else {
                unreachable!("weights are Float64")
            };
            amounts[..len].copy_from_slice(w);
            mask_invalid(&part, &mut idx[..len], cells);
        }
        self.offset += len;
        if self.offset == piece.len {
            self.piece += 1;
            self.offset = 0;
        }
        len
    }
}

/// The bins of one axis for a run of rows, `axis.len()` where a row is not counted (null, NaN,
/// outside the edges without flow bins).
pub(crate) fn axis_cells(axis: &Axis, part: &Chunk<'_>, out: &mut [u32]) {
    let n = axis.len() as u32;
    match &axis.rule {
        Rule::Bins(spec) => {
            spec_bins(spec, part.values, out);
            if axis.flow != FlowBins::None {
                flow_bins(spec, axis.flow, part.values, out);
            }
        }
        Rule::Groups(groups) => match &groups.keys {
            GroupKeys::Ids => {
                let Values::U32(ids) = part.values else {
                    unreachable!("group ids are UInt32")
                };
                out.copy_from_slice(ids);
            }
            GroupKeys::Table { lo, table, strays } => crate::with_values!(part.values, |v: T| {
                let mut strayed = false;
                for (o, &x) in out.iter_mut().zip(v) {
                    *o = match table.get(x.as_i64().wrapping_sub(*lo) as usize) {
                        Some(&id) => id,
                        None => {
                            strayed = true;
                            n
                        }
                    };
                }
                if strayed {
                    debug_assert!(strays.is_some(), "a key outside a table of every key");
                    strays.iter().for_each(Strays::mark);
                }
            }),
        },
        Rule::Values { lo, .. } => crate::with_values!(part.values, |v: T| {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = (x.as_i64() - lo) as u32;
            }
        }),
    }
    mask_invalid(part, out, n);
}

/// Sets `out[i] = n` where row `i` of `part` is null.
fn mask_invalid(part: &Chunk<'_>, out: &mut [u32], n: u32) {
    if let Some(v) = part.validity {
        for (j, o) in out.iter_mut().enumerate() {
            if !v.is_valid(j) {
                *o = n;
            }
        }
    }
}

/// Bins of `values` under `spec`, `spec.len()` where a value is not counted.
fn spec_bins(spec: &BinSpec, values: Values<'_>, out: &mut [u32]) {
    crate::with_values!(values, |v: T| match spec {
        BinSpec::Uniform32(u) => simd::uniform_bins(u, v, out),
        BinSpec::Uniform64(u) => simd::uniform_bins(u, v, out),
        BinSpec::Edges(e) => simd::edge_bins(e, v, out),
        BinSpec::Integers(b) => {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = b.bin(index::exact_int(x)) as u32;
            }
        }
        BinSpec::Half(h) => {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = h.bin(x.to_f32()) as u32;
            }
        }
    })
}

/// Moves bins one up and puts the values not counted in the flow bins: below the first edge in
/// bin 0, above the last edge in bin n + 1, NaN there too or, with `OutsideAndNan`, in n + 2.
fn flow_bins(spec: &BinSpec, flow: FlowBins, values: Values<'_>, out: &mut [u32]) {
    let n = spec.len() as u32;
    let nan = match flow {
        FlowBins::OutsideAndNan => n + 2,
        _ => n + 1,
    };
    // Every bin one up, in one pass that also finds whether any row was not counted (most
    // blocks have none: then that pass is all). An equality, not an unsigned maximum, so that
    // it vectorizes on the baseline x86-64 (SSE2 has no unsigned 32-bit max).
    let mut uncounted = 0u32;
    out.iter_mut().for_each(|o| {
        uncounted |= u32::from(*o == n);
        *o += 1;
    });
    if uncounted == 0 {
        return;
    }
    let n = n + 1; // a row not counted reads n + 1 now
    let lo = spec.edge(0);
    if let BinSpec::Integers(b) = spec {
        return crate::with_values!(values, |v: T| {
            for (o, &x) in out.iter_mut().zip(v) {
                *o = if *o < n {
                    *o
                } else if b.below(index::exact_int(x)) {
                    0
                } else {
                    n
                };
            }
        });
    }
    // Without branches (a row outside is no rarer than one inside here), so that it vectorizes.
    crate::with_values!(values, |v: T| {
        for (o, &x) in out.iter_mut().zip(v) {
            let x = x.to_f64();
            let below = u32::from(x < lo);
            let is_nan = u32::from(x.is_nan());
            let outside = (1 - below) * (is_nan * nan + (1 - is_nan) * n);
            let inside = u32::from(*o < n);
            *o = inside * *o + (1 - inside) * outside;
        }
    })
}

/// Counts cell indices handed over a block at a time by `next_block`, which fills the block
/// (`n` for rows not counted) and returns its length, 0 at the end; `rows` of them in all.
pub fn count_blocks(
    n: usize,
    rows: usize,
    mut next_block: impl FnMut(&mut [u32; BLOCK]) -> usize,
) -> HistResult<Vec<u64>> {
    let stride = n + 1;
    if stride > DIRECT_BINS || rows < stride {
        // Past the caches u32 counters save nothing, and flushing them walks every bin (with
        // fewer rows than bins, as `by=` of many groups makes, the walk costs more than the
        // rows): count into the totals themselves.
        let mut total: Vec<u64> = zeroed(stride)?;
        let mut idx = Box::new([0u32; BLOCK]);
        loop {
            let len = next_block(&mut idx);
            if len == 0 {
                break;
            }
            for &i in &idx[..len] {
                total[i as usize] += 1;
            }
        }
        total.truncate(n);
        return Ok(total);
    }
    let replicas = if stride <= 4096 { REPLICAS } else { 1 };
    let mut private: Vec<u32> = zeroed(stride * replicas)?;
    let mut total: Vec<u64> = zeroed(n)?;
    let mut since_flush = 0usize;
    let mut idx = Box::new([0u32; BLOCK]);
    let flush = |private: &mut Vec<u32>, total: &mut Vec<u64>| {
        for r in 0..replicas {
            for (t, c) in total
                .iter_mut()
                .zip(&mut private[r * stride..r * stride + n])
            {
                *t += *c as u64;
                *c = 0;
            }
        }
    };
    loop {
        let len = next_block(&mut idx);
        if len == 0 {
            break;
        }
        if replicas == REPLICAS {
            index::count_interleaved(&idx[..len], &mut private, stride);
        } else {
            index::count_plain(&idx[..len], &mut private);
        }
        since_flush += len;
        if since_flush >= FLUSH_ROWS {
            flush(&mut private, &mut total);
            since_flush = 0;
        }
    }
    flush(&mut private, &mut total);
    Ok(total)
}

/// Sums the amounts of rows handed over a block at a time, as [`count_blocks`] counts them, in
/// fixed point on the grid 2^-k ([`crate::fixed`]).
pub fn sum_blocks(
    n: usize,
    k: i32,
    next_block: impl FnMut(&mut [u32; BLOCK], &mut [f64; BLOCK]) -> usize,
) -> HistResult<Vec<FixedSum>> {
    add_blocks(n, |sum: &mut FixedSum, a| sum.add(a, k), next_block)
}

/// Sums the amounts as [`sum_blocks`] does, in float64 additions in row order
/// ([`Sums::Float`]: the tasks' split changes the last bits).
fn float_sum_blocks(
    n: usize,
    next_block: impl FnMut(&mut [u32; BLOCK], &mut [f64; BLOCK]) -> usize,
) -> HistResult<Vec<f64>> {
    add_blocks(n, |sum: &mut f64, a| *sum += a, next_block)
}

/// The one loop of both ways of summing: each block's amounts added into their cells.
fn add_blocks<T: Default + Clone + Send + Sync>(
    n: usize,
    add: impl Fn(&mut T, f64),
    mut next_block: impl FnMut(&mut [u32; BLOCK], &mut [f64; BLOCK]) -> usize,
) -> HistResult<Vec<T>> {
    let mut sums: Vec<T> = zeroed(n + 1)?;
    let mut idx = Box::new([0u32; BLOCK]);
    let mut amounts = Box::new([0f64; BLOCK]);
    loop {
        let len = next_block(&mut idx, &mut amounts);
        if len == 0 {
            break;
        }
        for (&i, &a) in idx[..len].iter().zip(&amounts[..len]) {
            add(&mut sums[i as usize], a);
        }
    }
    sums.truncate(n);
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every path of `count_blocks` (interleaved and plain private counters, direct totals)
    /// counts what a plain loop counts: random, sorted and one-valued cells, with rows not
    /// counted (`n`).
    #[test]
    fn every_counting_path_counts_each_row_once() {
        for n in [100usize, 70_000, 300_000, 5_000_000] {
            for rows in [n / 16, n / 4, n, 3 * n + 7] {
                for shape in ["random", "sorted", "one"] {
                    let mut state = (n as u64) ^ (rows as u64) << 20;
                    let cells: Vec<u32> = (0..rows)
                        .map(|r| {
                            state = state
                                .wrapping_mul(6364136223846793005)
                                .wrapping_add(1442695040888963407);
                            match shape {
                                "random" => ((state >> 33) % (n as u64 + 1)) as u32,
                                "sorted" => (r * (n + 1) / rows.max(1)) as u32,
                                _ => (n / 2) as u32,
                            }
                        })
                        .collect();
                    let mut expected = vec![0u64; n + 1];
                    cells.iter().for_each(|&c| expected[c as usize] += 1);
                    expected.truncate(n);
                    let mut at = 0;
                    let got = count_blocks(n, rows, |idx| {
                        let len = BLOCK.min(rows - at);
                        idx[..len].copy_from_slice(&cells[at..at + len]);
                        at += len;
                        len
                    })
                    .unwrap();
                    assert!(got == expected, "{n} cells, {rows} rows, {shape}");
                }
            }
        }
    }
}
