//! Which kernels run, on what grid, with how much shared memory: one plain, printable value
//! computed from the device's properties, the job's axes and its size (the CUB "dispatch"). No
//! CUDA needed here. The dispatch reads top-down as CUB's does: what the job needs of a device
//! ([`Needs`]), the family that counts it ([`choose_family`], a pure function a table tests),
//! that family's launch shape (one function a family), all by the constants of the device's
//! architecture ([`Tuning`]).

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

/// The constants the plan chooses by, one set a compute capability (CUB's tuning policies):
/// sm_90's as measured on H100 and H200 (the benchmark beside each), and one default for every
/// other architecture. Families that only the kernel lab has measured are chosen by name here,
/// so that a measurement moves a choice by one constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuning {
    /// The architecture these constants were measured on ("sm_90"), or "default".
    pub arch: &'static str,
    /// Threads of a block where several share an SM (16 warps: 4 blocks fill 2048 threads).
    pub block_threads: u32,
    /// Threads of a block that has an SM to itself, to keep more loads in flight.
    pub big_block_threads: u32,
    /// The shared family's copies of its counters at most (one a warp of a block).
    pub most_replicas: u32,
    /// Blocks an SM at most for the 16-bit counters and the partition pass.
    pub most_big_blocks: u32,
    /// Mean run of one cell (in consecutive rows of a sample) from which the global family,
    /// adding a thread's run at once, beats the partition families.
    pub runs_for_global: f64,
    /// A partition of the partition families is 2^bits bins, whose u32 counters (128 KB at 15)
    /// fit one block.
    pub partition_bits: u32,
    /// The family of 8-bit columns counted by value (256 counters): shared, banked or private.
    pub bytes: Family,
    /// The family of more bins than 16-bit counters hold in one block: batched or radix.
    pub large_bins: Family,
    /// The radix family's count pass.
    pub radix_count: CountPass,
    /// Blocks an SM of the banked family at most: 4 (512 threads, one replica each at 256
    /// counters) or 1 (1,024 threads and seven replicas).
    pub most_banked_blocks: u32,
    /// The rows of one (n, d) device array are read whole rows a 16-byte load
    /// (`InterleavedCells`) instead of a column at a time.
    pub interleaved: bool,
}

/// sm_90 (H100, H200).
pub const SM90: Tuning = Tuning {
    arch: "sm_90",
    // Kernel lab, H100, 2^29 float32 (2026-11-22): 512 threads and 4 blocks an SM kept the
    // shared family at 94-100% of the read roofline up to 32,768 bins.
    block_threads: 512,
    big_block_threads: 1024,
    most_replicas: 16,
    // Two blocks of the partition pass (96 KB each) fit an SM; the ranked pass at one block an
    // SM lost (H200 lab, 2026-11-28: 2.69 against 1.86 ms at 1M bins).
    most_big_blocks: 2,
    // H100, 2^27 rows (BENCHMARKS.md, 2026-11-27): sorted and one-valued rows took the global
    // family 2-5x faster than the segmented passes at 1M-16M bins.
    runs_for_global: 4.0,
    partition_bits: 15,
    // H200 kernel lab (`gpu_check.sh lab50`, 2026-12-02, benches/results/h200_2026-12-02_lab50):
    // 2^30 uint8 into 256 counters, bare launches banked 0.252 / 0.253 / 0.252 ms (uniform /
    // normal / one value) against shared 0.462 / 0.377 / 0.251, 1.01x the read; private (8-bit
    // counters, no atomics) 0.50 lost. Whole calls 0.334 / 0.335 / 0.367 against 0.540 / 0.450 /
    // 0.325 (1.24-1.29x `cupy.sum` of the same bytes).
    bytes: Family::Banked,
    // The same lab: 2^29 float32 into 1M bins, radix's partition then the batched count 2.43 /
    // 2.71 ms against batched 2.65 / 2.84 (16M bins 2.79 / 2.76 against 2.95 / 2.92); radix
    // with its paired count pass 0.01-0.03 ms behind.
    large_bins: Family::Radix,
    radix_count: CountPass::Batched,
    // Banked at one block an SM lost to four (0.268 against 0.252 ms).
    most_banked_blocks: 4,
    // The same lab: 2^27 float32 pairs into 1024 x 1024 through radix, rows read whole 0.751 /
    // 0.886 ms against a column at a time 0.840 / 0.987.
    interleaved: true,
};

/// Every other architecture: sm_90's choices among the families measured on more than one
/// architecture (the shared, packed, batched and global families were measured on H100s before
/// the H200s), and the families measured on sm_90 alone left out.
pub const DEFAULT: Tuning = Tuning {
    arch: "default",
    bytes: Family::Shared,
    large_bins: Family::Batched,
    radix_count: CountPass::Batched,
    interleaved: false,
    ..SM90
};

/// The variable that overrides the families a tuning chooses by name, for benchmarks (the
/// kernel lab's candidates timed through whole calls before a measurement moves a constant):
/// `bytes=banked,large_bins=radix,radix_count=batched,interleaved=yes`.
pub const TUNING_ENV: &str = "POLARS_GPU_HIST_TUNING";

impl Tuning {
    /// The constants of a device of compute capability `cc`.
    pub fn of(cc: (u32, u32)) -> Tuning {
        match cc {
            (9, 0) => SM90,
            _ => DEFAULT,
        }
    }

    /// These constants with the choices `overrides` names (`TUNING_ENV`'s form; empty: none).
    pub fn overridden(mut self, overrides: &str) -> Result<Tuning, String> {
        let family = |key: &str, value: &str, allowed: &[Family]| {
            allowed
                .iter()
                .copied()
                .find(|f| f.name() == value)
                .ok_or_else(|| {
                    let names: Vec<&str> = allowed.iter().map(|f| f.name()).collect();
                    format!(
                        "{TUNING_ENV}: {key}={value:?}: use one of {}",
                        names.join(", ")
                    )
                })
        };
        for part in overrides
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            let (key, value) = (key.trim(), value.trim());
            match key {
                "bytes" => {
                    self.bytes = family(
                        key,
                        value,
                        &[Family::Shared, Family::Banked, Family::Private],
                    )?
                }
                "large_bins" => {
                    self.large_bins = family(key, value, &[Family::Batched, Family::Radix])?
                }
                "banked_blocks" => {
                    self.most_banked_blocks = match value.parse::<u32>() {
                        Ok(b) if (1..=4).contains(&b) => b,
                        _ => {
                            return Err(format!(
                                "{TUNING_ENV}: banked_blocks={value:?}: use 1 to 4"
                            ))
                        }
                    }
                }
                "interleaved" => {
                    self.interleaved = match value {
                        "yes" => true,
                        "no" => false,
                        _ => {
                            return Err(format!(
                                "{TUNING_ENV}: interleaved={value:?}: use yes or no"
                            ))
                        }
                    }
                }
                "radix_count" => {
                    self.radix_count = match value {
                        "batched" => CountPass::Batched,
                        "paired" => CountPass::Paired,
                        _ => {
                            return Err(format!(
                                "{TUNING_ENV}: radix_count={value:?}: use batched or paired"
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "{TUNING_ENV}: {key:?} is not a choice: use bytes, banked_blocks, \
                         large_bins, radix_count or interleaved"
                    ))
                }
            }
        }
        Ok(self)
    }
}

/// A block's u32 counters must not wrap: each launch gives a block fewer rows than this.
pub const MAX_ROWS_PER_BLOCK: u64 = 1 << 31;

/// The segmented families' constants, as `kernels/segmented.cuh` defines them (a test checks).
pub const SEG_TILE_ROWS: u64 = 16384;
pub const SEG_PARTITION_THREADS: u32 = 512;
/// Rows one segmented launch takes at least, and at most: its keys are 2 bytes a row.
pub const SEG_ROWS_PER_LAUNCH: std::ops::RangeInclusive<u64> = (1 << 28)..=(1 << 30);
/// Threads of the private family's group of four warps, whose counters share words
/// (`kernels/counters.cuh`).
pub const PRIVATE_GROUP_THREADS: u32 = 128;

/// Rows one segmented launch takes on a device of `total_memory` bytes: as many as keep its keys
/// within a 64th of the memory (2^29 rows on an 80 GB H100), a power of two in
/// `SEG_ROWS_PER_LAUNCH`. One launch of 2^29 rows took 0.12 ms less than two of 2^28 on an H100.
pub fn seg_rows_per_launch(total_memory: u64) -> u64 {
    let fits = (total_memory / 64 / 2).max(1);
    let pow2 = 1u64 << fits.ilog2();
    pow2.clamp(*SEG_ROWS_PER_LAUNCH.start(), *SEG_ROWS_PER_LAUNCH.end())
}

/// The partition families' count pass (`kernels/segmented.cuh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CountPass {
    /// A warp a tile (`seg_count`: the segmented family's).
    Tile,
    /// A warp 32 tiles at once (`seg_count_batched`).
    Batched,
    /// The batched pass taking two long runs at once (`seg_count_batched` with
    /// `SEG_RUNS_AT_ONCE=2`).
    Paired,
}

impl CountPass {
    /// The pass's kernel.
    pub fn kernel(self) -> KernelId {
        match self {
            CountPass::Tile => KernelId::SegCount,
            CountPass::Batched => KernelId::SegCountBatched,
            CountPass::Paired => KernelId::SegCountPaired,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            CountPass::Tile => "a warp a tile",
            CountPass::Batched => "a warp 32 tiles at once",
            CountPass::Paired => "a warp 32 tiles at once, two long runs at a time",
        }
    }
}

/// How a partition family cuts a launch (see `kernels/segmented.cuh`).
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
    /// The count pass.
    pub count: CountPass,
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
    /// Copies of the histogram per block (shared and banked families), each `stride` counters
    /// apart (shared).
    pub replicas: u32,
    pub stride: u32,
    pub shared_bytes: u32,
    /// Rows one launch may take before the block counters could wrap (or, segmented, before
    /// its scratch grows past its bound).
    pub rows_per_launch: u64,
    /// The partition families' passes.
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
            (Family::Banked, _) => writeln!(
                f,
                "shared   {} bytes per block: {} replica(s) of {} counters a lane",
                self.shared_bytes,
                self.replicas,
                self.bins + 1
            )?,
            (Family::Private, _) => writeln!(
                f,
                "shared   {} bytes per block: {} 8-bit counters a thread",
                self.shared_bytes,
                self.bins + 1
            )?,
            (Family::Segmented | Family::Batched | Family::Radix, Some(s)) => writeln!(
                f,
                "segments {} partition(s) of {} bins, tiles of {} rows; count ({}): {} blocks \
                 x {} threads, {} bytes each, items of {} rows",
                s.partitions,
                1u64 << s.width_bits,
                SEG_TILE_ROWS,
                s.count.describe(),
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

/// The plan of `job` on `props`, the CUB "dispatch": which counting kernel, on what grid. A
/// narrow integer column that counts by value (`job::ByValue`) plans its value axis, folded
/// into the bins after; `force` pins the family (benchmarks, tests), and the rows are then
/// binned row by row; `mean_run`, where the rows were sampled, is the mean run of one cell in
/// consecutive rows; `tuning` is the device's (`Gpu::tuning`). Calls and `explain` plan here
/// alike.
pub fn plan(
    props: &DeviceProps,
    tuning: &Tuning,
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
            Ok(row_by_row(props, tuning, &counted, None, mean_run)?.folded(
                by_value,
                job.dtypes[0],
                job.cells,
            ))
        }
        None => row_by_row(props, tuning, job, force, mean_run),
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
    tuning: &Tuning,
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
    // Bytes counted value by value: one 8-bit column, one counter a value.
    let bytes_by_value = matches!(kernels.as_slice(), [k] if k.rule.kind == RuleKind::Index
        && k.dtype.size() == 1
        && matches!(axes[0].rule, crate::job::Rule::Values { .. }));
    let needs = Needs {
        bins: job.cells,
        weighted: job.weighted,
        edge_bytes,
        bytes_by_value,
        rows: job.rows as u64,
        mean_run,
        optin: props.shared_per_block_optin as u64,
    };
    let (family, reason) = choose_family(&needs, tuning, force, &props.name)?;
    let shape = match family {
        Family::Shared => shared_shape(props, tuning, &needs),
        Family::Packed | Family::Spill => packed_shape(props, tuning, &needs),
        Family::Banked => banked_shape(props, tuning, &needs),
        Family::Private => private_shape(props, &needs),
        Family::Segmented | Family::Batched | Family::Radix => {
            partition_shape(props, tuning, &needs, family)?
        }
        Family::Global => global_shape(props, tuning),
    };
    let full_grid = props.sm_count * shape.blocks_per_sm;
    // Small inputs: no more blocks than 8 rows a thread can keep busy.
    let needed = needs.rows.div_ceil(shape.block as u64 * 8).max(1);
    let grid = (full_grid as u64).min(needed) as u32;
    Ok(Plan {
        kernel: KernelId::Count {
            family,
            weighted: job.weighted,
            axes: AxisKernels::new(&kernels).interleaved(job.interleaved && tuning.interleaved),
        },
        family,
        bins: job.cells,
        rows: needs.rows,
        grid,
        block: shape.block,
        replicas: shape.replicas,
        stride: shape.stride,
        shared_bytes: shape.shared_bytes,
        rows_per_launch: shape
            .rows_per_launch
            .unwrap_or(grid as u64 * MAX_ROWS_PER_BLOCK),
        segments: shape.segments,
        device: props.name.clone(),
        reason: format!("{reason}; {}", shape.note),
        forced: force.is_some(),
        fold: None,
    })
}

/// Bytes of one shared-memory counter: a u32 count, or a weighted sum's fixed-point cell
/// (kernels/fixed.cuh, `abi::FIXED_WORDS` u64; a double for the float sums).
fn counter_bytes(weighted: bool) -> u64 {
    match (weighted, crate::fixed::sums()) {
        (false, _) => 4,
        (true, crate::fixed::Sums::Fixed) => 8 * crate::gpu::abi::FIXED_WORDS as u64,
        (true, crate::fixed::Sums::Float) => 8,
    }
}

/// What the family choice reads of a job on a device: a plain value, so that a table can test
/// the choice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Needs {
    /// Bins (cells, n-D) counted, without the spare counter for rows not counted.
    pub bins: usize,
    pub weighted: bool,
    /// Shared memory of the explicit edges the shared family stages before its counters.
    pub edge_bytes: u64,
    /// One 8-bit column counted by value (256 counters, a row's bin an add and a compare).
    pub bytes_by_value: bool,
    pub rows: u64,
    /// The mean run of one cell in consecutive rows of a sample, where the rows were sampled.
    pub mean_run: Option<f64>,
    /// Shared memory a block may have.
    pub optin: u64,
}

impl Needs {
    /// Bytes of one copy of the shared family's counters (staged edges, the spare counter, an
    /// odd stride), and that stride.
    fn shared_copy(&self) -> (u64, u64) {
        let counter_bytes = counter_bytes(self.weighted);
        let stride = (self.bins as u64 + 1) | 1;
        (self.edge_bytes + stride * counter_bytes, stride)
    }

    /// Bytes of the 16-bit families' counters: two bins a word, in whole 16-byte groups (the
    /// packed family sweeps them 16 bytes a read).
    fn packed(&self) -> u64 {
        (self.bins as u64).div_ceil(8) * 16
    }

    /// Bytes of one replica of the banked family's counters (`BankedCounters::replica_bytes`).
    fn banked(&self) -> u64 {
        (self.bins as u64 + 1) * 128
    }

    /// Bytes of the private family's totals and one group's counters
    /// (`PrivateCounters::totals_bytes`, `region_bytes`).
    fn private(&self) -> (u64, u64) {
        let n = self.bins as u64;
        ((n + 1).div_ceil(4) * 16, (n + 1) * 128)
    }

    /// Whether `family`'s counters for these bins fit one block (the partition families always
    /// do; their shape checks their passes' own memory).
    fn fits(&self, family: Family) -> bool {
        let (private_totals, private_group) = self.private();
        match family {
            Family::Shared => self.shared_copy().0 <= self.optin,
            Family::Packed | Family::Spill => self.packed() <= self.optin,
            // Only the shared family stages edges (binners.cuh): the others read them from L2.
            Family::Banked => self.banked() <= self.optin,
            Family::Private => private_totals + private_group <= self.optin,
            Family::Segmented | Family::Batched | Family::Radix | Family::Global => true,
        }
    }
}

/// The family that counts a job of `needs` by `tuning`, and why (as `explain` says it), or why
/// the family pinned by `force` cannot.
pub fn choose_family(
    needs: &Needs,
    tuning: &Tuning,
    force: Option<Family>,
    device: &str,
) -> HistResult<(Family, String)> {
    let refuse = |why: String| Err(HistError::InvalidArgument(why));
    let bins = needs.bins;
    let optin = needs.optin;
    let (one_copy, _) = needs.shared_copy();
    let packed = needs.packed();
    if let Some(family) = force {
        if needs.weighted && !family.weighs() {
            return refuse(format!(
                "the {} kernel counts rows; weighted sums take \"shared\" or \"global\"",
                family.name()
            ));
        }
        if !needs.fits(family) {
            let bytes = match family {
                Family::Shared => one_copy,
                Family::Banked => needs.banked(),
                Family::Private => needs.private().0 + needs.private().1,
                _ => packed,
            };
            return refuse(format!(
                "the {} kernel cannot hold {bins} bins ({bytes} bytes) in the {optin} bytes of \
                 shared memory a block may have on {device}",
                if family == Family::Shared {
                    "shared-memory"
                } else {
                    family.name()
                }
            ));
        }
        return Ok((family, "forced by the caller".to_string()));
    }
    if needs.fits(Family::Shared) {
        if needs.bytes_by_value && tuning.bytes != Family::Shared && needs.fits(tuning.bytes) {
            let how = match tuning.bytes {
                Family::Banked => {
                    "a copy of the counters a lane, so that no two lanes' adds meet \
                                   in a bank"
                }
                _ => "8-bit counters a thread, no atomics",
            };
            return Ok((
                tuning.bytes,
                format!("{bins} counters of 8-bit values fit in shared memory: {how}"),
            ));
        }
        return Ok((
            Family::Shared,
            format!("{bins} bins fit in shared memory ({one_copy} of {optin} bytes a block)"),
        ));
    }
    if needs.weighted {
        return Ok((
            Family::Global,
            format!(
                "{bins} weighted sums ({one_copy} bytes) exceed the {optin} bytes of shared \
                 memory a block may have: atomic sums in global memory"
            ),
        ));
    }
    // Measured on an H200 (kernel lab, 2^29 rows, 65,536 bins): packed 0.95 ms against spill's
    // 1.26 for float32 rows binned one by one; 0.59-0.61 against 0.85-0.86 for uniform and
    // image-like uint16 values counted by value, 0.40-0.45 against 0.34-0.39 for one value or
    // sorted ones.
    if needs.fits(Family::Packed) {
        return Ok((
            Family::Packed,
            format!(
                "{bins} u32 counters exceed the {optin} bytes of shared memory a block may \
                 have; as 16-bit counters they fit ({packed} bytes), swept into the histogram \
                 every few steps"
            ),
        ));
    }
    if let Some(run) = needs.mean_run.filter(|&r| r >= tuning.runs_for_global) {
        return Ok((
            Family::Global,
            format!(
                "{bins} bins exceed one block's shared memory even as 16-bit counters, and a \
                 sample of the rows runs {run:.0} rows in one bin on average (sorted data, or \
                 few values): atomics in global memory, a thread's run added at once"
            ),
        ));
    }
    let how = match tuning.large_bins {
        Family::Radix => {
            "each tile's rows grouped by the high bits of their bins, the rows not \
                          counted apart"
        }
        _ => "a tile read ahead and a warp counting 32 tiles at once",
    };
    Ok((
        tuning.large_bins,
        format!(
            "{bins} bins exceed one block's shared memory even as 16-bit counters ({packed} of \
             {optin} bytes): bins grouped into partitions of {} and counted a partition at a \
             time, {how}",
            1u64 << tuning.partition_bits
        ),
    ))
}

/// A family's launch on a device: its blocks, their shared memory, and what `explain` adds.
struct Shape {
    blocks_per_sm: u32,
    block: u32,
    replicas: u32,
    /// The shared family's counters between copies.
    stride: u32,
    shared_bytes: u32,
    /// Rows one launch takes at most (None: as many as keep a block's u32 counters exact).
    rows_per_launch: Option<u64>,
    segments: Option<SegmentLayout>,
    note: String,
}

impl Shape {
    fn new(blocks_per_sm: u32, block: u32, shared_bytes: u64) -> Shape {
        Shape {
            blocks_per_sm,
            block,
            replicas: 1,
            stride: 0,
            shared_bytes: shared_bytes as u32,
            rows_per_launch: None,
            segments: None,
            note: format!(
                "{blocks_per_sm} block(s) of {block} threads per SM, {shared_bytes} bytes of \
                 shared memory each"
            ),
        }
    }
}

/// The shared family: as many blocks an SM as shared memory allows (up to its threads), then as
/// many replicas as fit each block's share, at most one a warp.
fn shared_shape(props: &DeviceProps, tuning: &Tuning, needs: &Needs) -> Shape {
    let per_sm = props.shared_per_sm as u64;
    let (one_copy, stride) = needs.shared_copy();
    let blocks = (1..=props.max_threads_per_sm / tuning.block_threads)
        .rev()
        .find(|&b| (one_copy + 1024) * b as u64 <= per_sm)
        .unwrap_or(1);
    let budget = (per_sm / blocks as u64)
        .saturating_sub(1024)
        .min(needs.optin);
    let block = if blocks == 1 {
        tuning.big_block_threads
    } else {
        tuning.block_threads
    };
    let counter_bytes = counter_bytes(needs.weighted);
    let replicas = ((budget - needs.edge_bytes) / (stride * counter_bytes)).clamp(
        1,
        (tuning.block_threads / 32).min(tuning.most_replicas) as u64,
    ) as u32;
    let bytes = needs.edge_bytes + replicas as u64 * stride * counter_bytes;
    Shape {
        replicas,
        stride: stride as u32,
        note: format!(
            "{blocks} block(s) per SM, {replicas} replica(s) so that one hot bin does not \
             serialize a block"
        ),
        ..Shape::new(blocks, block, bytes)
    }
}

/// The 16-bit families: one histogram a block of the big block's threads, up to two an SM.
fn packed_shape(props: &DeviceProps, tuning: &Tuning, needs: &Needs) -> Shape {
    let packed = needs.packed();
    let blocks = (props.shared_per_sm as u64 / (packed + 1024))
        .clamp(1, tuning.most_big_blocks as u64) as u32;
    Shape::new(blocks, tuning.big_block_threads, packed)
}

/// The banked family: as many blocks an SM as its counters fit, up to `most_banked_blocks`,
/// then as many replicas of the lane-banked counters as each block's share holds (more
/// replicas, fewer warps adding into each: one value's rows meet in fewer places).
fn banked_shape(props: &DeviceProps, tuning: &Tuning, needs: &Needs) -> Shape {
    let per_sm = props.shared_per_sm as u64;
    let one = needs.banked();
    let most = (props.max_threads_per_sm / tuning.block_threads).min(tuning.most_banked_blocks);
    let blocks = (1..=most.max(1))
        .rev()
        .find(|&b| (one + 1024) * b as u64 <= per_sm)
        .unwrap_or(1);
    let block = if blocks == 1 {
        tuning.big_block_threads
    } else {
        tuning.block_threads
    };
    let budget = (per_sm / blocks as u64)
        .saturating_sub(1024)
        .min(needs.optin);
    let replicas = (budget / one).clamp(1, block as u64 / 32) as u32;
    Shape {
        replicas,
        ..Shape::new(blocks, block, replicas as u64 * one)
    }
}

/// The private family: one block an SM of as many groups of four warps as its counters fit
/// (each group's take the bins' bytes of 128 threads), up to 1,024 threads.
fn private_shape(props: &DeviceProps, needs: &Needs) -> Shape {
    let (totals, group) = needs.private();
    let room = needs.optin.min(props.shared_per_sm as u64 - 1024) - totals;
    let groups = (room / group).clamp(1, 1024 / PRIVATE_GROUP_THREADS as u64);
    let bytes = totals + groups * group;
    let blocks = (props.shared_per_sm as u64 / (bytes + 1024)).max(1) as u32;
    let threads = groups as u32 * PRIVATE_GROUP_THREADS;
    Shape::new(
        blocks.min(props.max_threads_per_sm / threads),
        threads,
        bytes,
    )
}

/// The partition families: partitions of 2^bits bins, the pass's shared memory for a tile, and
/// the count pass's grid (a block an SM, about two items of rows a block).
fn partition_shape(
    props: &DeviceProps,
    tuning: &Tuning,
    needs: &Needs,
    family: Family,
) -> HistResult<Shape> {
    let bins = needs.bins;
    let bits = tuning.partition_bits;
    let partitions = bins.div_ceil(1 << bits) as u32;
    // `seg_partition_words`, `radix_partition_words` (the radix pass counts the rows not
    // counted in a partition of their own).
    let counters = match family {
        Family::Radix => (partitions + 1).next_multiple_of(4),
        _ => partitions.next_multiple_of(4),
    } as u64;
    let partition_bytes = 4 * (32 + counters + SEG_TILE_ROWS * 3 / 2);
    let count_bytes = 4 * (32 + partitions as u64 + 1 + (1u64 << bits));
    let most = partition_bytes.max(count_bytes);
    if most > needs.optin {
        return Err(HistError::InvalidArgument(format!(
            "{bins} bins need {most} bytes of shared memory a block in the segmented kernels, \
             more than the {} bytes a block may have on {}",
            needs.optin, props.name
        )));
    }
    let blocks = (props.shared_per_sm as u64 / (partition_bytes + 1024))
        .clamp(1, tuning.most_big_blocks as u64) as u32;
    let rows_per_launch = seg_rows_per_launch(props.total_memory);
    let launch_rows = needs.rows.min(rows_per_launch);
    let count_grid = props.sm_count;
    // About two items a count block: a hot partition is cut into as many.
    let rows_per_item = (launch_rows / (2 * count_grid as u64)).max(SEG_TILE_ROWS) as u32;
    let count = match family {
        Family::Segmented => CountPass::Tile,
        Family::Radix => tuning.radix_count,
        _ => CountPass::Batched,
    };
    Ok(Shape {
        rows_per_launch: Some(rows_per_launch),
        segments: Some(SegmentLayout {
            partitions,
            width_bits: bits,
            count_grid,
            count_block: tuning.big_block_threads,
            count_shared_bytes: count_bytes as u32,
            rows_per_item,
            count,
        }),
        note: format!(
            "{blocks} block(s) of {SEG_PARTITION_THREADS} threads per SM in the first pass"
        ),
        ..Shape::new(blocks, SEG_PARTITION_THREADS, partition_bytes)
    })
}

/// The global family: no shared memory, the SM's threads in blocks of the small size.
fn global_shape(props: &DeviceProps, tuning: &Tuning) -> Shape {
    let blocks = props.max_threads_per_sm / tuning.block_threads;
    Shape {
        note: format!(
            "{blocks} block(s) of {} threads per SM",
            tuning.block_threads
        ),
        ..Shape::new(blocks, tuning.block_threads, 0)
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
