//! Which kernels run, on what grid, with how much shared memory: one plain, printable value
//! computed from the device's properties, the job's axes and its size (the CUB "dispatch"). No
//! CUDA needed here.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::dtype::DType;
use crate::error::{HistError, HistResult};
use crate::family::Family;
use crate::gpu::kernel::{AxisKernel, AxisKernels, KernelId, RuleKind, RuleVariant};
use crate::job::{ByValue, Counter, Outline};

/// Why a Float16 column is not counted on the GPU.
pub fn float16_on_cpu() -> HistError {
    HistError::argument(|s| {
        format!(
            "Float16 columns are binned on the CPU (numpy's float16 arithmetic): use {} or {}, or \
             cast the column to Float32",
            s.device("cpu"),
            s.device("auto")
        )
    })
}

/// What the plan needs to know of a device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceProps {
    pub name: String,
    pub compute_capability: (u32, u32),
    pub sm_count: u32,
    /// Largest dynamic shared memory one block may opt into.
    pub shared_per_block_optin: u32,
    pub shared_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub l2_bytes: u32,
    pub total_memory: u64,
    /// Whether kernels may read pageable host memory directly (HMM/ATS systems such as Grace
    /// Hopper); PCIe hosts report false and a column must be copied.
    pub pageable_memory_access: bool,
}

impl DeviceProps {
    /// An H100 SXM as the driver reports it, for tests.
    #[cfg(test)]
    pub fn h100() -> Self {
        DeviceProps {
            name: "NVIDIA H100 80GB HBM3 (assumed)".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            shared_per_block_optin: 232_448,
            shared_per_sm: 233_472,
            max_threads_per_sm: 2048,
            l2_bytes: 52_428_800,
            total_memory: 85_029_158_912,
            pageable_memory_access: false,
        }
    }
}

/// Threads per block: 16 warps, so 4 blocks fill an SM of 2048 threads; a histogram so large
/// that only one block fits per SM gets 1024 threads instead, to keep more loads in flight.
pub const BLOCK_THREADS: u32 = 512;
const BIG_BLOCK_THREADS: u32 = 1024;
/// A block's u32 counters must not wrap: each launch gives a block fewer rows than this.
pub const MAX_ROWS_PER_BLOCK: u64 = 1 << 31;

/// The segmented family's constants, as `kernels/segmented.cuh` defines them (a test checks).
pub const SEG_TILE_ROWS: u64 = 16384;
pub const SEG_PARTITION_THREADS: u32 = 512;
/// A partition is 2^15 bins: its u32 counters (128 KB) fit one block on Ampere and Hopper.
pub const SEG_WIDTH_BITS: u32 = 15;
/// Rows one segmented launch takes at least, and at most: its keys are 2 bytes a row.
pub const SEG_ROWS_PER_LAUNCH: std::ops::RangeInclusive<u64> = (1 << 28)..=(1 << 30);

/// Rows one segmented launch takes on a device of `total_memory` bytes: as many as keep its keys
/// within a 64th of the memory (2^29 rows on an 80 GB H100), a power of two in
/// `SEG_ROWS_PER_LAUNCH`. One launch of 2^29 rows took 0.12 ms less than two of 2^28 on an H100.
pub fn seg_rows_per_launch(total_memory: u64) -> u64 {
    let fits = (total_memory / 64 / 2).max(1);
    let pow2 = 1u64 << fits.ilog2();
    pow2.clamp(*SEG_ROWS_PER_LAUNCH.start(), *SEG_ROWS_PER_LAUNCH.end())
}

/// How the segmented family cuts a launch (see `kernels/segmented.cuh`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentLayout {
    /// Partitions of 2^width_bits bins each.
    pub partitions: u32,
    pub width_bits: u32,
    pub count_grid: u32,
    pub count_block: u32,
    pub count_shared_bytes: u32,
    /// Rows of one partition a count block takes at a time (so a hot partition spreads out).
    pub rows_per_item: u32,
    /// The count pass reads a warp's 32 tiles at once (`seg_count_batched`, the batched
    /// family) rather than a tile at a time.
    pub batched: bool,
}

impl SegmentLayout {
    /// Tiles of a launch of `rows` rows.
    pub fn tiles(rows: u64) -> u64 {
        rows.div_ceil(SEG_TILE_ROWS).max(1)
    }

    /// Device bytes of the scratch for a launch of `rows` rows: keys, tile starts, running
    /// counts and totals.
    pub fn scratch_bytes(&self, rows: u64) -> u64 {
        let p = self.partitions as u64;
        Self::tiles(rows) * (SEG_TILE_ROWS * 2 + (p + 1) * 2 + p * 4) + p * 4
    }
}

/// The launches of one histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The counting kernel (every axis of the job).
    pub kernel: KernelId,
    pub family: Family,
    /// Bins (cells, n-D) counted.
    pub bins: usize,
    pub rows: u64,
    pub grid: u32,
    pub block: u32,
    /// Copies of the histogram per block (shared family), each `stride` counters apart.
    pub replicas: u32,
    pub stride: u32,
    pub shared_bytes: u32,
    /// Rows one launch may take before the block counters could wrap (or, segmented, before
    /// its scratch grows past its bound).
    pub rows_per_launch: u64,
    /// The segmented family's passes.
    pub segments: Option<SegmentLayout>,
    pub device: String,
    pub reason: String,
    /// The family was pinned by the caller: no look at the rows changes it.
    pub forced: bool,
    /// Counted by value, then folded into the axis's bins (`job::ByValue`).
    pub fold: Option<Fold>,
}

/// A count by value folded into bins: `values` counters, one per value of `dtype`, into `bins`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    pub by_value: ByValue,
    pub dtype: DType,
    pub bins: usize,
}

impl Plan {
    /// This plan of a count by value, folded into `bins` bins.
    pub fn folded(mut self, by_value: ByValue, dtype: DType, bins: usize) -> Plan {
        self.fold = Some(Fold {
            by_value,
            dtype,
            bins,
        });
        self
    }

    /// Device bytes the launches need besides the input and the histogram: the segmented
    /// scratch.
    pub fn scratch_bytes(&self) -> u64 {
        let launch_rows = self.rows.min(self.rows_per_launch);
        self.segments
            .as_ref()
            .map_or(0, |s| s.scratch_bytes(launch_rows))
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "kernel   {} ({} family) on {}",
            self.kernel,
            self.family.name(),
            self.device
        )?;
        writeln!(f, "input    {} rows, {} bins", self.rows, self.bins)?;
        if let Some(fold) = &self.fold {
            writeln!(
                f,
                "fold     {}",
                fold.by_value.describe(fold.dtype, fold.bins)
            )?;
        }
        writeln!(f, "grid     {} blocks x {} threads", self.grid, self.block)?;
        match (self.family, &self.segments) {
            (Family::Shared, _) => writeln!(
                f,
                "shared   {} bytes per block: {} replica(s) of {} counters",
                self.shared_bytes, self.replicas, self.stride
            )?,
            (Family::Packed | Family::Spill, _) => writeln!(
                f,
                "shared   {} bytes per block: {} 16-bit counters",
                self.shared_bytes,
                self.bins.next_multiple_of(8)
            )?,
            (Family::Segmented | Family::Batched, Some(s)) => writeln!(
                f,
                "segments {} partition(s) of {} bins, tiles of {} rows; count ({}): {} blocks \
                 x {} threads, {} bytes each, items of {} rows",
                s.partitions,
                1u64 << s.width_bits,
                SEG_TILE_ROWS,
                if s.batched {
                    "a warp 32 tiles at once"
                } else {
                    "a warp a tile"
                },
                s.count_grid,
                s.count_block,
                s.count_shared_bytes,
                s.rows_per_item
            )?,
            _ => {}
        }
        write!(f, "why      {}", self.reason)
    }
}

/// Mean runs of one cell (in consecutive rows) from which the global family, adding a thread's
/// run at once, beats the segmented passes.
pub const RUNS_FOR_GLOBAL: f64 = 4.0;

/// The plan of `job` on `props`, the CUB "dispatch": which counting kernel, on what grid. A
/// narrow integer column that counts by value (`job::ByValue`) plans its value axis, folded
/// into the bins after; `force` pins the family (benchmarks, tests), and the rows are then
/// binned row by row; `mean_run`, where the rows were sampled, is the mean run of one cell in
/// consecutive rows. Calls and `explain` plan here alike.
pub fn plan(
    props: &DeviceProps,
    job: &Outline<'_>,
    force: Option<Family>,
    mean_run: Option<f64>,
) -> HistResult<Plan> {
    match by_value(job, force) {
        Some(by_value) => {
            let values = [by_value.axis()];
            let counted = Outline {
                axes: &values,
                cells: by_value.values,
                ..job.clone()
            };
            Ok(row_by_row(props, &counted, None, mean_run)?.folded(
                by_value,
                job.dtypes[0],
                job.cells,
            ))
        }
        None => row_by_row(props, job, force, mean_run),
    }
}

/// Whether `job` counts by value on the GPU: where it pays, unless the family is pinned (a
/// pinned family bins row by row: it is what was asked to run).
pub fn by_value(job: &Outline<'_>, force: Option<Family>) -> Option<ByValue> {
    job.by_value(Counter::Gpu).filter(|_| force.is_none())
}

/// The plan of `job` binned row by row: one kernel counts every axis, each row's cell computed
/// where its coordinates are read.
fn row_by_row(
    props: &DeviceProps,
    job: &Outline<'_>,
    force: Option<Family>,
    mean_run: Option<f64>,
) -> HistResult<Plan> {
    let axes = job.axes;
    if axes
        .iter()
        .any(|a| matches!(a.spec(), Some(crate::bins::BinSpec::Half(_))))
    {
        return Err(float16_on_cpu());
    }
    let kernels: Vec<AxisKernel> = axes
        .iter()
        .zip(&job.dtypes)
        .map(|(axis, &dtype)| AxisKernel {
            dtype,
            rule: RuleVariant::of(axis),
        })
        .collect();
    // The shared family stages explicit edges in shared memory; the others read them from L2.
    let edge_bytes: u64 = axes
        .iter()
        .zip(&kernels)
        .filter(|(_, k)| matches!(k.rule.kind, RuleKind::Edges | RuleKind::Integers))
        .map(|(axis, _)| {
            let n = axis.spec().map_or(0, |s| s.len()) as u64;
            ((n + 1) * 8).div_ceil(16) * 16
        })
        .sum();
    let kernels = AxisKernels::new(&kernels);
    layout(
        props,
        job.cells,
        edge_bytes,
        job.weighted,
        kernels,
        job.rows as u64,
        force,
        mean_run,
    )
}

/// Bytes of one replica of the shared family's counters (with the spare counter for rows not
/// counted, and an odd stride), after `edge_bytes` of staged edges.
fn shared_bytes(bins: usize, edge_bytes: u64, weighted: bool) -> (u64, u64) {
    let counter_bytes: u64 = if weighted { 8 } else { 4 };
    let stride = (bins as u64 + 1) | 1;
    (stride, edge_bytes + stride * counter_bytes)
}

/// Bytes of the 16-bit families' counters: two bins a word, in whole 16-byte groups (the packed
/// family sweeps them 16 bytes a read).
fn packed_bytes(bins: usize) -> u64 {
    (bins as u64).div_ceil(8) * 16
}

/// Family, grid, replicas and shared memory for `bins` counters (and `edge_bytes` of edges
/// staged before them), and the counting kernel of that family over `axes`.
#[allow(clippy::too_many_arguments)]
fn layout(
    props: &DeviceProps,
    bins: usize,
    edge_bytes: u64,
    weighted: bool,
    axes: AxisKernels,
    rows: u64,
    force: Option<Family>,
    mean_run: Option<f64>,
) -> HistResult<Plan> {
    let optin = props.shared_per_block_optin as u64;
    let per_sm = props.shared_per_sm as u64;
    let (stride, one_copy) = shared_bytes(bins, edge_bytes, weighted);
    let packed = packed_bytes(bins);
    let refuse = |why: String| Err(HistError::InvalidArgument(why));

    let (family, mut reason) = match force {
        Some(Family::Shared) if one_copy > optin => {
            return refuse(format!(
                "the shared-memory kernel cannot hold {bins} bins ({one_copy} bytes) in the \
                 {optin} bytes of shared memory a block may have on {}",
                props.name
            ))
        }
        Some(f @ (Family::Packed | Family::Spill | Family::Segmented | Family::Batched))
            if weighted =>
        {
            return refuse(format!(
                "the {} kernel counts rows; weighted sums take \"shared\" or \"global\"",
                f.name()
            ))
        }
        Some(f @ (Family::Packed | Family::Spill)) if packed > optin => {
            return refuse(format!(
                "the {} kernel cannot hold {bins} bins ({packed} bytes) in the {optin} bytes \
                 of shared memory a block may have on {}",
                f.name(),
                props.name
            ))
        }
        Some(family) => (family, "forced by the caller".to_string()),
        None if one_copy <= optin => (
            Family::Shared,
            format!("{bins} bins fit in shared memory ({one_copy} of {optin} bytes a block)"),
        ),
        None if weighted => (
            Family::Global,
            format!(
                "{bins} weighted sums ({one_copy} bytes) exceed the {optin} bytes of shared \
                 memory a block may have: f64 atomics in global memory"
            ),
        ),
        // Measured on an H200 (kernel lab, 2^29 rows, 65,536 bins): packed 0.95 ms against spill's
        // 1.26 for float32 rows binned one by one; 0.59-0.61 against 0.85-0.86 for uniform and
        // image-like uint16 values counted by value, 0.40-0.45 against 0.34-0.39 for one value
        // or sorted ones.
        None if packed <= optin => (
            Family::Packed,
            format!(
                "{bins} u32 counters exceed the {optin} bytes of shared memory a block may \
                 have; as 16-bit counters they fit ({packed} bytes), swept into the histogram \
                 every few steps"
            ),
        ),
        None if mean_run.is_some_and(|r| r >= RUNS_FOR_GLOBAL) => (
            Family::Global,
            format!(
                "{bins} bins exceed one block's shared memory even as 16-bit counters, and a \
                 sample of the rows runs {:.0} rows in one bin on average (sorted data, or few \
                 values): atomics in global memory, a thread's run added at once",
                mean_run.unwrap_or_default()
            ),
        ),
        None => (
            Family::Batched,
            format!(
                "{bins} bins exceed one block's shared memory even as 16-bit counters ({packed} \
                 of {optin} bytes): bins grouped into partitions of {} and counted a \
                 partition at a time, a tile read ahead and a warp counting 32 tiles at once",
                1u64 << SEG_WIDTH_BITS
            ),
        ),
    };

    let mut segments = None;
    let mut rows_per_launch = MAX_ROWS_PER_BLOCK;
    let (grid_per_sm, block, replicas, shared) = match family {
        Family::Shared => {
            // As many blocks per SM as shared memory allows (up to 4 of 512 threads), then as
            // many replicas as fit in each block's share, at most one per warp.
            let blocks = (1..=props.max_threads_per_sm / BLOCK_THREADS)
                .rev()
                .find(|&b| (one_copy + 1024) * b as u64 <= per_sm)
                .unwrap_or(1);
            let budget = (per_sm / blocks as u64).saturating_sub(1024).min(optin);
            let block = if blocks == 1 {
                BIG_BLOCK_THREADS
            } else {
                BLOCK_THREADS
            };
            let counter_bytes = if weighted { 8 } else { 4 };
            let replicas = ((budget - edge_bytes) / (stride * counter_bytes))
                .clamp(1, BLOCK_THREADS as u64 / 32) as u32;
            let bytes = edge_bytes + replicas as u64 * stride * counter_bytes;
            reason.push_str(&format!(
                "; {blocks} block(s) per SM, {replicas} replica(s) so that one hot bin \
                 does not serialize a block"
            ));
            (blocks, block, replicas, bytes as u32)
        }
        Family::Packed | Family::Spill => {
            let blocks = (per_sm / (packed + 1024)).clamp(1, 2) as u32;
            reason.push_str(&format!(
                "; {blocks} block(s) of {BIG_BLOCK_THREADS} threads per SM"
            ));
            (blocks, BIG_BLOCK_THREADS, 1, packed as u32)
        }
        Family::Segmented | Family::Batched => {
            let partitions = bins.div_ceil(1 << SEG_WIDTH_BITS) as u32;
            let partition_bytes =
                4 * (32 + partitions.next_multiple_of(4) as u64 + SEG_TILE_ROWS * 3 / 2);
            let count_bytes = 4 * (32 + partitions as u64 + 1 + (1u64 << SEG_WIDTH_BITS));
            if partition_bytes.max(count_bytes) > optin {
                return refuse(format!(
                    "{bins} bins need {} bytes of shared memory a block in the segmented \
                     kernels, more than the {optin} bytes a block may have on {}",
                    partition_bytes.max(count_bytes),
                    props.name
                ));
            }
            let blocks = (per_sm / (partition_bytes + 1024)).clamp(1, 2) as u32;
            rows_per_launch = seg_rows_per_launch(props.total_memory);
            let launch_rows = rows.min(rows_per_launch);
            let count_grid = props.sm_count;
            // About two items a count block: a hot partition is cut into as many.
            let rows_per_item = (launch_rows / (2 * count_grid as u64)).max(SEG_TILE_ROWS) as u32;
            segments = Some(SegmentLayout {
                partitions,
                width_bits: SEG_WIDTH_BITS,
                count_grid,
                count_block: BIG_BLOCK_THREADS,
                count_shared_bytes: count_bytes as u32,
                rows_per_item,
                batched: family == Family::Batched,
            });
            (blocks, SEG_PARTITION_THREADS, 1, partition_bytes as u32)
        }
        Family::Global => (
            props.max_threads_per_sm / BLOCK_THREADS,
            BLOCK_THREADS,
            1,
            0,
        ),
    };
    let full_grid = props.sm_count * grid_per_sm;
    // Small inputs: no more blocks than 8 rows a thread can keep busy.
    let needed = rows.div_ceil(block as u64 * 8).max(1);
    let grid = (full_grid as u64).min(needed) as u32;
    Ok(Plan {
        kernel: KernelId::Count {
            family,
            weighted,
            axes,
        },
        family,
        bins,
        rows,
        grid,
        block,
        replicas,
        stride: stride as u32,
        shared_bytes: shared,
        rows_per_launch: if family.is_segmented() {
            rows_per_launch
        } else {
            grid as u64 * rows_per_launch
        },
        segments,
        device: props.name.clone(),
        reason,
        forced: force.is_some(),
        fold: None,
    })
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
