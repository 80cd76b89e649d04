//! One launch loop for every family and every rank: a job's rows, piece by piece, in launches
//! the block counters cannot overflow, each one kernel over every axis (a row's cell is
//! computed where its coordinates are read); the segmented family's two later passes follow
//! each of its launches.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use crate::counts::Counts;
use crate::error::HistResult;
use crate::family::Family;
use crate::gpu::abi::{self, CountParams, DeviceRule};
use crate::gpu::context::{driver, Gpu};
use crate::gpu::kernel::KernelId;
use crate::gpu::plan::{self, Fold, Plan, SegmentLayout};
use crate::gpu::scratch::{Scratch, ScratchPool};
use crate::gpu::settings::Settings;
use crate::gpu::transfer::download;
use crate::gpu::upload::{self, DeviceLayout, DevicePiece, Route};
use crate::job::{Job, Location, Outline, Rows};

/// What a GPU count did: its plan, how host rows reached the device, the kernels' time (when
/// the call waited for them), and where the host's time went (ms per phase), so that a slow
/// call shows its cause.
#[derive(Clone, Debug)]
pub struct Run {
    pub plan: Plan,
    pub route: Option<Route>,
    pub kernel_ms: Option<f32>,
    pub phases: Vec<(&'static str, f32)>,
}

/// Counts per bin in device memory, allocated here (the numpy drop-in's counts when their
/// number is known only once the bins are resolved).
pub enum DeviceCounts {
    Exact(Scratch<u64>),
    Weighted(Scratch<f64>),
}

impl DeviceCounts {
    /// `n` counts (or sums) on `stream`; the count zeroes them.
    pub fn alloc(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        n: usize,
        weighted: bool,
    ) -> HistResult<Self> {
        let alloc = driver("allocating the histogram");
        let pool = gpu.scratch.as_ref();
        // SAFETY: `queue` zeroes every count before a kernel reads it.
        Ok(unsafe {
            match weighted {
                true => DeviceCounts::Weighted(ScratchPool::alloc(pool, stream, n).map_err(alloc)?),
                false => DeviceCounts::Exact(ScratchPool::alloc(pool, stream, n).map_err(alloc)?),
            }
        })
    }

    /// The device address of the first count.
    pub fn ptr(&self, stream: &Arc<CudaStream>) -> u64 {
        match self {
            DeviceCounts::Exact(s) => s.ptr(stream),
            DeviceCounts::Weighted(s) => s.ptr(stream),
        }
    }

    /// The counts on the host, once the kernels queued before on `stream` are done.
    fn to_host(&self, gpu: &Gpu, stream: &Arc<CudaStream>) -> HistResult<Counts> {
        Ok(match self {
            DeviceCounts::Exact(s) => Counts::Exact(download(gpu, stream, s.ptr(stream), s.len())?),
            DeviceCounts::Weighted(s) => {
                Counts::Weighted(download(gpu, stream, s.ptr(stream), s.len())?)
            }
        })
    }
}

/// The counts of `job` on the GPU by `plan`, back on the host (the calling thread's stream,
/// waited for).
pub fn count(
    gpu: &Gpu,
    job: &Job<'_>,
    plan: Plan,
    settings: &Settings,
    clock: &Clock,
) -> HistResult<(Counts, Run)> {
    let stream = gpu.stream_after_default()?;
    let out = DeviceCounts::alloc(gpu, &stream, job.cells, job.is_weighted())?;
    let queued = queue(gpu, &stream, job, plan, settings, out.ptr(&stream), clock)?;
    let counts = out.to_host(gpu, &stream)?;
    Ok((counts, queued.finished(clock)?))
}

/// The plan of `job` on this GPU ([`plan::plan`]), the proofs of its axes settled on the device
/// first where it bins row by row, as its rule variants read them (a walk on the host could
/// take longer than the count).
pub fn plan_job(gpu: &Gpu, job: &Outline<'_>, force: Option<Family>) -> HistResult<Plan> {
    if plan::by_value(job, force).is_none() {
        crate::gpu::proof::settle(gpu, job.axes)?;
    }
    plan::plan(&gpu.props, &gpu.tuning, job, force, None)
}

/// `job` as the plan reads it: its columns' types as they reach the device (group keys may
/// travel narrower: `DeviceLayout`), and where its rows lie.
pub fn outline<'j>(job: &'j Job<'_>) -> Outline<'j> {
    let ordinal = device_of(&job.rows);
    let layout = DeviceLayout::of(&job.rows, &job.axes, ordinal);
    let location = match &job.rows {
        Rows::Device(_) => Location::Device,
        Rows::Host(_) if layout.all_pinned() => Location::Pinned,
        Rows::Host(_) => Location::Host,
    };
    Outline {
        axes: &job.axes,
        dtypes: layout.dtypes,
        rows: job.len(),
        cells: job.cells,
        weighted: job.is_weighted(),
        row_bytes: job.row_bytes(),
        location,
        ordinal,
        interleaved: interleaved(&job.rows),
    }
}

/// Whether the rows are one (n, d) device array of one type, row-major (column j at offset j,
/// stride d), each row aligned to its size and 16 bytes a whole number of rows: a 16-byte load
/// then holds whole rows (`InterleavedCells`, kernels/cells.cuh).
fn interleaved(rows: &Rows<'_>) -> bool {
    let Rows::Device(rows) = rows else {
        return false;
    };
    let Some(first) = rows.columns.first() else {
        return false;
    };
    let d = rows.columns.len() as u64;
    let size = first.dtype.size() as u64;
    let row_bytes = size * d;
    d > 1
        && 16 % row_bytes == 0
        && first.ptr % row_bytes == 0
        && rows
            .columns
            .iter()
            .zip(0..)
            .all(|(c, j)| c.dtype == first.dtype && c.stride == d && c.ptr == first.ptr + j * size)
}

/// The GPU that counts `rows`: the one holding them, or for host rows the one a column is
/// pinned to, else the calling thread's current device.
fn device_of(rows: &Rows<'_>) -> i32 {
    match rows {
        Rows::Device(rows) => rows.ordinal,
        Rows::Host(rows) => rows
            .columns
            .iter()
            .find_map(|c| crate::gpu::pin::find(c).map(|p| p.ordinal))
            .unwrap_or_else(crate::gpu::device::current),
    }
}

/// A count queued on a stream, with the events around its kernels.
pub struct Queued {
    run: Run,
    start: CudaEvent,
    end: CudaEvent,
}

impl Queued {
    /// The run, with its kernels' time: the caller has waited for the stream.
    pub fn finished(mut self, clock: &Clock) -> HistResult<Run> {
        self.run.phases.push(("wait", clock.lap()));
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(driver("reading an event"))?;
        self.run.kernel_ms = Some(ms);
        Ok(self.run)
    }

    /// The run of a count the caller does not wait for (its kernels' time unknown).
    pub fn pending(self) -> Run {
        self.run
    }
}

/// Queues the count of `job` by `plan` on `stream` into the `job.cells` counts (u64, or f64 sums
/// when weighted, summed in fixed point and converted at the end) at `out`, zeroing them first;
/// returns without waiting. Every buffer the
/// kernels use is freed in stream order, after them.
pub fn queue(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    job: &Job<'_>,
    plan: Plan,
    settings: &Settings,
    out: u64,
    clock: &Clock,
) -> HistResult<Queued> {
    if plan.fold.is_some() {
        return queue_by_value(gpu, stream, job, plan, settings, out, clock);
    }
    let mut phases = vec![("plan", clock.lap())];
    let layout = DeviceLayout::of(&job.rows, &job.axes, gpu.ordinal());
    gpu.ctx
        .bind_to_thread()
        .map_err(driver("binding the context"))?;
    let mut plan = plan;
    if plan.family.is_segmented() && !plan.forced {
        // Too many bins for shared memory: a look at the rows may find runs in one bin.
        if let Some(run) = crate::gpu::sample::mean_run(gpu, stream, job)? {
            plan = plan::plan(&gpu.props, &gpu.tuning, &outline(job), None, Some(run))?;
        }
        phases.push(("look", clock.lap()));
    }
    let sums = match job.is_weighted() && crate::fixed::sums() == crate::fixed::Sums::Fixed {
        true => Some(FixedCells::new(gpu, stream, job)?),
        false => None,
    };
    // Counts go to `out`, weighted sums to the fixed-point cells first.
    let (counters, words) = match &sums {
        Some(s) => (s.cells.ptr(stream), abi::FIXED_WORDS),
        None => (out, 1),
    };
    // SAFETY: `counters` holds `job.cells` counts of 8 bytes (the caller's contract), or the
    // fixed-point cells allocated for them.
    unsafe {
        cudarc::driver::result::memset_d8_async(
            counters,
            0,
            job.cells * 8 * words,
            stream.cu_stream(),
        )
    }
    .map_err(driver("zeroing the histogram"))?;
    let exponent = sums.as_ref().map_or(0, |s| s.exponent);
    let launcher = Launcher::new(gpu, stream, job, &plan, &layout, counters, exponent)?;
    phases.push(("setup", clock.lap()));
    let event = || {
        gpu.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("creating an event"))
    };
    let (start, end) = (event()?, event()?);
    start.record(stream).map_err(driver("recording an event"))?;
    let route = match &job.rows {
        Rows::Device(rows) => {
            let piece = DevicePiece {
                len: rows.len,
                columns: rows
                    .columns
                    .iter()
                    .map(|c| abi::Column {
                        values: c.ptr,
                        len: rows.len,
                        stride: c.stride,
                        ..Default::default()
                    })
                    .collect(),
                weights: abi::WeightColumn {
                    values: rows.weights.unwrap_or(0),
                    ..Default::default()
                },
            };
            launcher.launch(&piece)?;
            None
        }
        Rows::Host(rows) => Some(upload::each_window(
            gpu,
            stream,
            rows,
            &layout,
            &plan,
            settings,
            |pieces| pieces.iter().try_for_each(|p| launcher.launch(p)),
        )?),
    };
    if let Some(sums) = &sums {
        sums.finish(gpu, stream, job.cells, out)?;
    }
    end.record(stream).map_err(driver("recording an event"))?;
    phases.push(("launch", clock.lap()));
    Ok(Queued {
        run: Run {
            plan,
            route,
            kernel_ms: None,
            phases,
        },
        start,
        end,
    })
}

/// Queues a 1-D count that goes by value (`plan.fold`, see `job::ByValue`): a job of one bin
/// per value counts each value of the column into scratch, then `fold` adds each value's count
/// into its bin of `job`'s axis, by the table the CPU's rule makes.
fn queue_by_value(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    job: &Job<'_>,
    plan: Plan,
    settings: &Settings,
    out: u64,
    clock: &Clock,
) -> HistResult<Queued> {
    let Some(Fold { by_value, .. }) = plan.fold else {
        unreachable!("a plan that folds")
    };
    let values_job = Job::new(vec![by_value.axis()], job.rows.clone())?;
    let alloc = driver("allocating the counts by value");
    // SAFETY: `queue` zeroes the counts before its kernels add to them.
    let value_counts =
        unsafe { ScratchPool::alloc::<u64>(gpu.scratch.as_ref(), stream, by_value.values) }
            .map_err(&alloc)?;
    let values_plan = Plan {
        fold: None,
        ..plan.clone()
    };
    let mut queued = queue(
        gpu,
        stream,
        &values_job,
        values_plan,
        settings,
        value_counts.ptr(stream),
        clock,
    )?;
    // Each value's bin is made by the host rule while the device counts: for 65,536 values the
    // table and its copy took 0.45 ms on an H200 host, within the count of 2^29 of them. (Its
    // copy through the pinned staging ring waited for the count instead: the ring returns once
    // its copies are done.)
    let value_bins = crate::cpu::table::value_bins(&job.axes[0], by_value)?;
    // From this process's pool, as the counts are: the driver's default pool would map the
    // memory anew each call.
    // SAFETY: written by the copy below before the fold reads it.
    let table = unsafe { ScratchPool::alloc::<u32>(gpu.scratch.as_ref(), stream, by_value.values) }
        .map_err(&alloc)?;
    // SAFETY: the table holds `values` u32s; a copy from pageable memory has read its source
    // when it returns.
    unsafe {
        cudarc::driver::result::memcpy_htod_async(
            table.ptr(stream),
            &value_bins,
            stream.cu_stream(),
        )
    }
    .map_err(driver("copying the bins of each value"))?;
    let fold = gpu.kernel(KernelId::Fold, 0)?;
    queued.run.phases.push(("table", clock.lap()));
    // SAFETY: `out` holds `job.cells` counts of 8 bytes (the caller's contract).
    unsafe { cudarc::driver::result::memset_d8_async(out, 0, job.cells * 8, stream.cu_stream()) }
        .map_err(driver("zeroing the histogram"))?;
    let params = abi::FoldParams {
        value_counts: value_counts.ptr(stream),
        value_bins: table.ptr(stream),
        values: by_value.values as u32,
        cells: job.cells as u32,
        out,
    };
    let cfg = LaunchConfig {
        grid_dim: ((by_value.values as u32).div_ceil(256), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `FoldParams` is the kernel's one parameter (abi.rs); its buffers are freed in
    // stream order, after the kernel.
    unsafe {
        stream
            .launch_builder(&fold)
            .arg(&params)
            .launch(cfg)
            .map_err(driver("launching a kernel"))?;
    }
    queued
        .end
        .record(stream)
        .map_err(driver("recording an event"))?;
    queued.run.plan = plan;
    Ok(queued)
}

/// A weighted job's sums in fixed point on the device (kernels/fixed.cuh, [`crate::fixed`]):
/// the grid's exponent, from the weights' largest finite magnitude and the job's rows, and the
/// cells the kernels add to.
struct FixedCells {
    exponent: i32,
    cells: Scratch<u64>,
}

impl FixedCells {
    fn new(gpu: &Gpu, stream: &Arc<CudaStream>, job: &Job<'_>) -> HistResult<Self> {
        let largest = match &job.rows {
            Rows::Device(rows) => {
                let weights = rows.weights.expect("a weighted job");
                crate::gpu::extremes::largest_magnitude(gpu, stream, weights, rows.len)?
            }
            Rows::Host(rows) => {
                crate::fixed::largest_magnitude(rows.weights.as_ref().expect("a weighted job"))
            }
        };
        // SAFETY: `queue` zeroes the cells before a kernel reads them.
        let cells = unsafe {
            ScratchPool::alloc::<u64>(gpu.scratch.as_ref(), stream, job.cells * abi::FIXED_WORDS)
        }
        .map_err(driver("allocating the weighted sums"))?;
        Ok(FixedCells {
            exponent: crate::fixed::exponent(largest, job.len() as u64),
            cells,
        })
    }

    /// Queues the conversion of the `cells` sums into float64 at `out`.
    fn finish(
        &self,
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        cells: usize,
        out: u64,
    ) -> HistResult<()> {
        const BLOCK: u32 = 256;
        let func = gpu.kernel(KernelId::FixedSums, 0)?;
        let params = abi::FixedSumsParams {
            fixed: self.cells.ptr(stream),
            out,
            cells: cells as u32,
            exponent: self.exponent,
        };
        let grid = (gpu.props.sm_count * 4).min((cells as u32).div_ceil(BLOCK).max(1));
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `FixedSumsParams` is the kernel's one parameter (abi.rs); the cells are freed
        // in stream order, after it, and `out` holds `cells` float64 (the caller's contract).
        unsafe {
            stream
                .launch_builder(&func)
                .arg(&params)
                .launch(cfg)
                .map_err(driver("launching a kernel"))?;
        }
        Ok(())
    }
}

/// Host milliseconds since the last lap.
pub struct Clock(std::cell::Cell<std::time::Instant>);

impl Clock {
    pub fn start() -> Self {
        Clock(std::cell::Cell::new(std::time::Instant::now()))
    }

    pub fn lap(&self) -> f32 {
        let now = std::time::Instant::now();
        (now - self.0.replace(now)).as_secs_f32() * 1e3
    }
}

/// A kernel with its launch configuration.
struct Launch {
    func: CudaFunction,
    cfg: LaunchConfig,
}

/// Everything a job's launches need, loaded and allocated once.
struct Launcher<'j> {
    stream: &'j Arc<CudaStream>,
    job: &'j Job<'j>,
    plan: &'j Plan,
    /// Bytes of one value of each column.
    sizes: Vec<u64>,
    count: Launch,
    /// Each axis's rule on the device.
    rules: Vec<DeviceRule>,
    segmented: Option<Segmented>,
    out: u64,
    /// The weighted sums' grid ([`crate::fixed`]).
    weight_exponent: i32,
    rows_per_launch: u64,
}

/// The partition families' two later passes and their scratch, sized for the largest launch.
struct Segmented {
    layout: SegmentLayout,
    scan: CudaFunction,
    count: CudaFunction,
    keys: Scratch<u16>,
    starts: Scratch<u16>,
    cum: Scratch<u32>,
    totals: Scratch<u32>,
}

impl<'j> Launcher<'j> {
    fn new(
        gpu: &Gpu,
        stream: &'j Arc<CudaStream>,
        job: &'j Job<'j>,
        plan: &'j Plan,
        layout: &DeviceLayout,
        out: u64,
        weight_exponent: i32,
    ) -> HistResult<Self> {
        let count = resident(gpu, plan.kernel, plan.grid, plan.block, plan.shared_bytes)?;
        let rows_per_launch = if plan.family.is_segmented() {
            plan.rows_per_launch
        } else {
            count.cfg.grid_dim.0 as u64 * plan::MAX_ROWS_PER_BLOCK
        };
        let largest = (job.len() as u64).min(rows_per_launch);
        let mut rules = job
            .axes
            .iter()
            .zip(plan.kernel.axes())
            .map(|(axis, &k)| DeviceRule::new(stream, axis, k))
            .collect::<HistResult<Vec<_>>>()?;
        for (d, rule) in rules.iter_mut().enumerate() {
            if layout.is_rebased(d) {
                rule.rule.lo = 0;
            }
        }
        let segmented = match &plan.segments {
            Some(layout) => Some(Segmented::new(gpu, stream, layout, largest)?),
            None => None,
        };
        Ok(Launcher {
            stream,
            job,
            plan,
            sizes: layout.dtypes.iter().map(|d| d.size() as u64).collect(),
            count,
            rules,
            segmented,
            out,
            weight_exponent,
            rows_per_launch,
        })
    }

    /// Every launch over the rows of `piece`.
    fn launch(&self, piece: &DevicePiece) -> HistResult<()> {
        let mut start = 0;
        while start < piece.len {
            let len = (piece.len - start).min(self.rows_per_launch);
            self.window(&piece.slice(start, len, &self.sizes))?;
            start += len;
        }
        Ok(())
    }

    fn window(&self, rows: &DevicePiece) -> HistResult<()> {
        let seg = self
            .segmented
            .as_ref()
            .map(|s| s.params(self.stream, rows.len))
            .unwrap_or_default();
        let mut params = CountParams {
            cells: self.job.cells as u32,
            weight_exponent: self.weight_exponent,
            weights: rows.weights,
            shared: abi::SharedLayout {
                replicas: self.plan.replicas,
                stride: self.plan.stride,
            },
            seg,
            out: self.out,
            ..Default::default()
        };
        for (d, rule) in self.rules.iter().enumerate() {
            params.columns[d] = rows.columns[d];
            params.rules[d] = rule.rule;
            params.cell_strides[d] = self.job.strides[d] as u32;
        }
        // SAFETY: `CountParams` is the kernel's one parameter (abi.rs); the buffers it names
        // live until the stream is synchronized.
        unsafe {
            self.stream
                .launch_builder(&self.count.func)
                .arg(&params)
                .launch(self.count.cfg)
                .map_err(driver("launching a kernel"))?;
        }
        if let Some(segmented) = &self.segmented {
            segmented.later_passes(self.stream, &seg, self.job.cells as u32, self.out)?;
        }
        Ok(())
    }
}

impl Segmented {
    fn new(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        layout: &SegmentLayout,
        rows: u64,
    ) -> HistResult<Self> {
        let tiles = SegmentLayout::tiles(rows) as usize;
        let p = layout.partitions as usize;
        let alloc = driver("allocating the segmented kernels' scratch");
        // SAFETY: every element a kernel reads is written before, in the same launch sequence.
        let pool = gpu.scratch.as_ref();
        let (keys, starts, cum, totals) = unsafe {
            (
                ScratchPool::alloc::<u16>(pool, stream, tiles * plan::SEG_TILE_ROWS as usize)
                    .map_err(&alloc)?,
                ScratchPool::alloc::<u16>(pool, stream, tiles * (p + 1)).map_err(&alloc)?,
                ScratchPool::alloc::<u32>(pool, stream, tiles * p).map_err(&alloc)?,
                ScratchPool::alloc::<u32>(pool, stream, p).map_err(&alloc)?,
            )
        };
        Ok(Segmented {
            layout: layout.clone(),
            scan: gpu.kernel(KernelId::SegScan, 0)?,
            count: gpu.kernel(layout.count.kernel(), layout.count_shared_bytes)?,
            keys,
            starts,
            cum,
            totals,
        })
    }

    fn params(&self, stream: &Arc<CudaStream>, rows: u64) -> abi::Segments {
        abi::Segments {
            keys: self.keys.ptr(stream),
            starts: self.starts.ptr(stream),
            cum: self.cum.ptr(stream),
            totals: self.totals.ptr(stream),
            partitions: self.layout.partitions,
            width_bits: self.layout.width_bits,
            tiles: SegmentLayout::tiles(rows) as u32,
            rows_per_item: self.layout.rows_per_item,
        }
    }

    fn later_passes(
        &self,
        stream: &Arc<CudaStream>,
        seg: &abi::Segments,
        bins: u32,
        out: u64,
    ) -> HistResult<()> {
        let launch = driver("launching a kernel");
        let scan = LaunchConfig {
            grid_dim: (self.layout.partitions, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 0,
        };
        let count = LaunchConfig {
            grid_dim: (self.layout.count_grid, 1, 1),
            block_dim: (self.layout.count_block, 1, 1),
            shared_mem_bytes: self.layout.count_shared_bytes,
        };
        // SAFETY: `Segments` matches the kernels' struct; its buffers live in `self` until the
        // stream is synchronized.
        unsafe {
            stream
                .launch_builder(&self.scan)
                .arg(seg)
                .launch(scan)
                .map_err(&launch)?;
            stream
                .launch_builder(&self.count)
                .arg(seg)
                .arg(&bins)
                .arg(&out)
                .launch(count)
                .map_err(&launch)?;
        }
        Ok(())
    }
}

/// Kernel `id` as the device can run it (see [`Gpu::launch_config`]).
fn resident(gpu: &Gpu, id: KernelId, grid: u32, block: u32, shared: u32) -> HistResult<Launch> {
    let (func, cfg) = gpu.launch_config(id, grid, block, shared)?;
    Ok(Launch { func, cfg })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::job::{DeviceColumn, DeviceRows};

    /// Device rows of columns (offset from a 256-byte aligned base, type, stride).
    fn rows(columns: &[(u64, DType, u64)]) -> Rows<'static> {
        Rows::Device(DeviceRows {
            columns: columns
                .iter()
                .map(|&(offset, dtype, stride)| DeviceColumn {
                    ptr: 0x7f00_0000_0000 + offset,
                    dtype,
                    stride,
                })
                .collect(),
            weights: None,
            len: 1000,
            ordinal: 0,
        })
    }

    /// An (n, d) array's columns are interleaved rows where a 16-byte load holds whole rows and
    /// every row starts on its alignment; anything else is read a column at a time.
    #[test]
    fn the_rows_of_one_array_are_found_interleaved() {
        let f32 = DType::F32;
        assert!(interleaved(&rows(&[(0, f32, 2), (4, f32, 2)])));
        // A view from row 3: still aligned to a row (8 bytes).
        assert!(interleaved(&rows(&[(24, f32, 2), (28, f32, 2)])));
        assert!(interleaved(&rows(&[
            (0, f32, 4),
            (4, f32, 4),
            (8, f32, 4),
            (12, f32, 4)
        ])));
        assert!(interleaved(&rows(&[
            (0, DType::F64, 2),
            (8, DType::F64, 2)
        ])));
        let bytes: Vec<(u64, DType, u64)> = (0..8).map(|j| (j, DType::U8, 8)).collect();
        assert!(interleaved(&rows(&bytes)));
        // Rows of 12 bytes do not tile 16; a view starting mid-row; columns out of order, of two
        // types, of two arrays (a stride of 1), one column alone.
        assert!(!interleaved(&rows(&[
            (0, f32, 3),
            (4, f32, 3),
            (8, f32, 3)
        ])));
        assert!(!interleaved(&rows(&[(4, f32, 2), (8, f32, 2)])));
        assert!(!interleaved(&rows(&[(4, f32, 2), (0, f32, 2)])));
        assert!(!interleaved(&rows(&[(0, DType::I32, 2), (4, f32, 2)])));
        assert!(!interleaved(&rows(&[(0, f32, 1), (1 << 20, f32, 1)])));
        assert!(!interleaved(&rows(&[(0, f32, 1)])));
    }
}
