//! The CPU backend: privatized histograms, one per task, over contiguous row ranges, merged at
//! the end. Each task computes bin indices for a block of rows in a tight loop, masks the nulls,
//! then scatters increments into several interleaved copies of its histogram so that runs of one
//! value (degenerate data) do not serialize on one counter.

use rayon::prelude::*;

use crate::bins::{BinSpec, EdgeBins, UniformBins};
use crate::input::{Column, Segment, Value};

/// Rows handled per bin-index block (fits in L1 beside a small histogram).
pub(crate) const BLOCK: usize = 2048;
/// Below this many rows a single task on the caller's thread is fastest; Polars often calls us
/// from its own threads (one call per group), so small calls must not queue on the pool.
const MIN_ROWS_PER_TASK: usize = 1 << 16;
/// Bound on the memory all private histograms of one call may take.
const PRIVATE_BYTES_BUDGET: usize = 512 << 20;
/// Interleaved copies of a small histogram.
const REPLICAS: usize = 4;
/// A u32 private counter may overflow after 2^32 rows: flush to u64 well before.
const FLUSH_ROWS: usize = 1 << 30;

/// Counts per bin: exact integers, or sums of weights.
#[derive(Clone, Debug, PartialEq)]
pub enum Counts {
    Exact(Vec<u64>),
    Weighted(Vec<f64>),
}

/// A value-to-bin rule for values of type `T`: returns `bins()` for rows that are not counted.
pub trait Rule<T>: Sync {
    fn bins(&self) -> usize;
    fn bin(&self, x: T) -> usize;
}

impl<T: Value> Rule<T> for UniformBins<f64> {
    #[inline(always)]
    fn bins(&self) -> usize {
        UniformBins::len(self)
    }
    #[inline(always)]
    fn bin(&self, x: T) -> usize {
        UniformBins::bin(self, x.to_f64())
    }
}

impl<T: Value> Rule<T> for UniformBins<f32> {
    #[inline(always)]
    fn bins(&self) -> usize {
        UniformBins::len(self)
    }
    #[inline(always)]
    fn bin(&self, x: T) -> usize {
        UniformBins::bin(self, x.to_f32())
    }
}

impl<T: Value> Rule<T> for EdgeBins {
    #[inline(always)]
    fn bins(&self) -> usize {
        EdgeBins::len(self)
    }
    #[inline(always)]
    fn bin(&self, x: T) -> usize {
        EdgeBins::bin(self, x.to_f64())
    }
}

/// The histogram of `column` under `spec`, on all cores of the current rayon pool.
pub fn histogram<T: Value>(column: &Column<'_, T>, spec: &BinSpec) -> Counts {
    match spec {
        BinSpec::Uniform32(u) => run(column, u),
        BinSpec::Uniform64(u) => run(column, u),
        BinSpec::Edges(e) => run(column, e),
    }
}

fn run<T: Value, R: Rule<T>>(column: &Column<'_, T>, rule: &R) -> Counts {
    let weighted = column.segments.iter().any(|s| s.weights.is_some());
    let tasks = split(column, rule.bins());
    if weighted {
        Counts::Weighted(merge(tasks, |range| weighted_task(range, rule)))
    } else {
        Counts::Exact(merge(tasks, |range| count_task(range, rule)))
    }
}

/// Runs `partial` on every task (in parallel when there are several) and sums the results.
pub(crate) fn merge<P, A, F>(tasks: Vec<P>, partial: F) -> Vec<A>
where
    P: Sync,
    A: Copy + Send + Sync + std::ops::Add<Output = A>,
    F: Fn(&P) -> Vec<A> + Sync + Send,
{
    if tasks.len() == 1 {
        return partial(&tasks[0]);
    }
    let parts: Vec<Vec<A>> = tasks.par_iter().map(&partial).collect();
    let mut iter = parts.into_iter();
    let mut total = iter.next().expect("at least one task");
    for part in iter {
        total
            .par_chunks_mut(1 << 14)
            .zip(part.par_chunks(1 << 14))
            .for_each(|(t, p)| t.iter_mut().zip(p).for_each(|(t, &p)| *t = *t + p));
    }
    total
}

/// How many tasks `rows` rows over `bins` bins are split into: as many as there are threads,
/// fewer for small inputs or where the private histograms would take too much memory.
pub(crate) fn task_count(rows: usize, bins: usize) -> usize {
    let by_rows = rows / MIN_ROWS_PER_TASK;
    let by_memory = PRIVATE_BYTES_BUDGET / ((bins + 1) * 8).max(1);
    rayon::current_num_threads()
        .min(by_rows)
        .min(by_memory)
        .max(1)
}

/// Splits the column's rows into `task_count` contiguous tasks.
fn split<'a, T: Value>(column: &Column<'a, T>, bins: usize) -> Vec<Vec<Segment<'a, T>>> {
    let rows = column.len();
    let tasks = task_count(rows, bins);
    let per_task = rows.div_ceil(tasks).max(1);
    let mut out: Vec<Vec<Segment<'a, T>>> = vec![Vec::new(); tasks];
    let mut task = 0;
    let mut room = per_task;
    for seg in &column.segments {
        let mut start = 0;
        while start < seg.len() {
            let take = room.min(seg.len() - start);
            out[task].push(seg.slice(start, start + take));
            start += take;
            room -= take;
            if room == 0 && task + 1 < tasks {
                task += 1;
                room = per_task;
            }
        }
    }
    out
}

/// Bin indices of one block of rows, with `n` for nulls and values not counted.
#[inline(always)]
fn block_bins<T: Value, R: Rule<T>>(
    rule: &R,
    seg: &Segment<'_, T>,
    start: usize,
    out: &mut [u32; BLOCK],
) -> usize {
    let end = (start + BLOCK).min(seg.len());
    let len = end - start;
    let values = &seg.values[start..end];
    for (o, &x) in out.iter_mut().zip(values) {
        *o = rule.bin(x) as u32;
    }
    let n = rule.bins() as u32;
    if let Some(v) = seg.validity {
        for (j, o) in out[..len].iter_mut().enumerate() {
            if !v.is_valid(start + j) {
                *o = n;
            }
        }
    }
    len
}

fn count_task<T: Value, R: Rule<T>>(segments: &[Segment<'_, T>], rule: &R) -> Vec<u64> {
    let mut blocks = segments
        .iter()
        .flat_map(|seg| (0..seg.len()).step_by(BLOCK).map(move |start| (seg, start)));
    count_blocks(rule.bins(), |idx| match blocks.next() {
        Some((seg, start)) => block_bins(rule, seg, start, idx),
        None => 0,
    })
}

fn weighted_task<T: Value, R: Rule<T>>(segments: &[Segment<'_, T>], rule: &R) -> Vec<f64> {
    let n = rule.bins() as u32;
    let mut blocks = segments
        .iter()
        .flat_map(|seg| (0..seg.len()).step_by(BLOCK).map(move |start| (seg, start)));
    sum_blocks(rule.bins(), |idx, amounts| {
        let Some((seg, start)) = blocks.next() else {
            return 0;
        };
        let len = block_bins(rule, seg, start, idx);
        let (weights, wvalid) = seg.weights.expect("every segment of a weighted column");
        amounts[..len].copy_from_slice(&weights[start..start + len]);
        if let Some(v) = wvalid {
            for (j, i) in idx[..len].iter_mut().enumerate() {
                if !v.is_valid(start + j) {
                    *i = n;
                }
            }
        }
        len
    })
}

/// Counts bin indices handed over a block at a time by `next_block`, which fills the block
/// (`n` for rows not counted) and returns its length, 0 at the end.
pub(crate) fn count_blocks(
    n: usize,
    mut next_block: impl FnMut(&mut [u32; BLOCK]) -> usize,
) -> Vec<u64> {
    let stride = n + 1;
    let replicas = if stride <= 4096 { REPLICAS } else { 1 };
    let mut private = vec![0u32; stride * replicas];
    let mut total = vec![0u64; n];
    let mut since_flush = 0usize;
    let mut idx = [0u32; BLOCK];
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
            let (h0, rest) = private.split_at_mut(stride);
            let (h1, rest) = rest.split_at_mut(stride);
            let (h2, h3) = rest.split_at_mut(stride);
            let mut quads = idx[..len].chunks_exact(4);
            for q in &mut quads {
                h0[q[0] as usize] += 1;
                h1[q[1] as usize] += 1;
                h2[q[2] as usize] += 1;
                h3[q[3] as usize] += 1;
            }
            for &i in quads.remainder() {
                h0[i as usize] += 1;
            }
        } else {
            for &i in &idx[..len] {
                private[i as usize] += 1;
            }
        }
        since_flush += len;
        if since_flush >= FLUSH_ROWS {
            flush(&mut private, &mut total);
            since_flush = 0;
        }
    }
    flush(&mut private, &mut total);
    total
}

/// Sums the amounts of rows handed over a block at a time, as [`count_blocks`] counts them.
pub(crate) fn sum_blocks(
    n: usize,
    mut next_block: impl FnMut(&mut [u32; BLOCK], &mut [f64; BLOCK]) -> usize,
) -> Vec<f64> {
    let mut sums = vec![0f64; n + 1];
    let mut idx = [0u32; BLOCK];
    let mut amounts = [0f64; BLOCK];
    loop {
        let len = next_block(&mut idx, &mut amounts);
        if len == 0 {
            break;
        }
        for (&i, &a) in idx[..len].iter().zip(&amounts[..len]) {
            sums[i as usize] += a;
        }
    }
    sums.truncate(n);
    sums
}
