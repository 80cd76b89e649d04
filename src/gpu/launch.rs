//! One launch loop for every family and every rank: a job's rows, piece by piece, in launches
//! the block counters cannot overflow; n-D rows are first linearized axis by axis into a column
//! of cells, which the counting family then reads like any column; the segmented family's two
//! later passes follow each of its launches.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};

use crate::counts::Counts;
use crate::error::HistResult;
use crate::gpu::abi::{self, CountParams, DeviceRule, LinearizeParams};
use crate::gpu::context::{driver, Gpu};
use crate::gpu::kernel::Family;
use crate::gpu::kernel::KernelId;
use crate::gpu::plan::{self, Plan, SegmentLayout};
use crate::gpu::upload::{self, DevicePiece, Route};
use crate::job::{Job, Rows};

/// What a GPU count did: its plan, how host rows reached the device, the kernels' time.
#[derive(Clone, Debug)]
pub struct Run {
    pub plan: Plan,
    pub route: Option<Route>,
    pub kernel_ms: f32,
}

/// Counts per bin left in device memory (the numpy drop-in's counts never visit the host).
pub enum DeviceCounts {
    Exact(CudaSlice<u64>),
    Weighted(CudaSlice<f64>),
}

impl DeviceCounts {
    fn zeros(stream: &Arc<CudaStream>, n: usize, weighted: bool) -> HistResult<Self> {
        let alloc = driver("allocating the histogram");
        Ok(match weighted {
            true => DeviceCounts::Weighted(stream.alloc_zeros::<f64>(n).map_err(alloc)?),
            false => DeviceCounts::Exact(stream.alloc_zeros::<u64>(n).map_err(alloc)?),
        })
    }

    /// The device address of the first count.
    pub fn ptr(&self, stream: &Arc<CudaStream>) -> u64 {
        match self {
            DeviceCounts::Exact(s) => s.device_ptr(stream).0,
            DeviceCounts::Weighted(s) => s.device_ptr(stream).0,
        }
    }

    fn to_host(&self, stream: &Arc<CudaStream>) -> HistResult<Counts> {
        let read = driver("reading the histogram");
        // Host memory for the counts may run out where the device's did not: an error, not an
        // abort (cudarc's `clone_dtoh` allocates infallibly).
        Ok(match self {
            DeviceCounts::Exact(s) => {
                let mut host = crate::alloc::zeroed(s.len())?;
                stream.memcpy_dtoh(s, &mut host).map_err(read)?;
                Counts::Exact(host)
            }
            DeviceCounts::Weighted(s) => {
                let mut host = crate::alloc::zeroed(s.len())?;
                stream.memcpy_dtoh(s, &mut host).map_err(read)?;
                Counts::Weighted(host)
            }
        })
    }
}

/// The counts of `job` on the GPU, back on the host.
pub fn count(
    gpu: &Gpu,
    job: &Job<'_>,
    force: Option<crate::gpu::Family>,
) -> HistResult<(Counts, Run)> {
    let (stream, out, run) = run(gpu, job, force)?;
    let counts = out.to_host(&stream)?;
    stream
        .synchronize()
        .map_err(driver("running the kernels"))?;
    Ok((counts, run))
}

/// The counts of `job` on the GPU, left there (on the returned stream, which has finished).
pub fn count_on_device(
    gpu: &Gpu,
    job: &Job<'_>,
    force: Option<crate::gpu::Family>,
) -> HistResult<(DeviceCounts, Arc<CudaStream>, Run)> {
    let (stream, out, run) = run(gpu, job, force)?;
    stream
        .synchronize()
        .map_err(driver("running the kernels"))?;
    Ok((out, stream, run))
}

fn run(
    gpu: &Gpu,
    job: &Job<'_>,
    force: Option<crate::gpu::Family>,
) -> HistResult<(Arc<CudaStream>, DeviceCounts, Run)> {
    let dtypes: Vec<_> = match &job.rows {
        Rows::Host(h) => h.columns.iter().map(|c| c.dtype).collect(),
        Rows::Device(d) => d.columns.iter().map(|c| c.dtype).collect(),
    };
    let plan = plan::plan(
        &gpu.props,
        &job.axes,
        &dtypes,
        job.cells,
        job.is_weighted(),
        job.len() as u64,
        force,
    )?;
    let stream = gpu.stream_after_default()?;
    let out = DeviceCounts::zeros(&stream, job.cells, job.is_weighted())?;
    let launcher = Launcher::new(gpu, &stream, job, &plan, &dtypes, out.ptr(&stream))?;
    let event = || {
        gpu.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("creating an event"))
    };
    let (start, end) = (event()?, event()?);
    start
        .record(&stream)
        .map_err(driver("recording an event"))?;
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
        Rows::Host(rows) => Some(upload::each_window(gpu, &stream, rows, &plan, |pieces| {
            pieces.iter().try_for_each(|p| launcher.launch(p))
        })?),
    };
    end.record(&stream).map_err(driver("recording an event"))?;
    stream
        .synchronize()
        .map_err(driver("running the kernels"))?;
    let kernel_ms = start.elapsed_ms(&end).map_err(driver("reading an event"))?;
    drop(launcher);
    Ok((
        stream,
        out,
        Run {
            plan,
            route,
            kernel_ms,
        },
    ))
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
    count_rule: DeviceRule,
    /// n-D: per axis, its kernel and rule, and the cells they fill.
    linearize: Vec<(Launch, DeviceRule)>,
    cells: Option<CudaSlice<u32>>,
    segmented: Option<Segmented>,
    out: u64,
    rows_per_launch: u64,
}

/// The segmented family's two later passes and its scratch, sized for the largest launch.
struct Segmented {
    layout: SegmentLayout,
    scan: CudaFunction,
    count: CudaFunction,
    keys: CudaSlice<u16>,
    starts: CudaSlice<u16>,
    cum: CudaSlice<u32>,
    totals: CudaSlice<u32>,
}

impl<'j> Launcher<'j> {
    fn new(
        gpu: &Gpu,
        stream: &'j Arc<CudaStream>,
        job: &'j Job<'j>,
        plan: &'j Plan,
        dtypes: &[crate::dtype::DType],
        out: u64,
    ) -> HistResult<Self> {
        let count = resident(gpu, plan.kernel, plan.grid, plan.block, plan.shared_bytes)?;
        let rows_per_launch = match plan.family {
            Family::Segmented => plan.rows_per_launch,
            _ => count.cfg.grid_dim.0 as u64 * plan::MAX_ROWS_PER_BLOCK,
        };
        let largest = (job.len() as u64).min(rows_per_launch);
        let (count_rule, linearize, cells) = if plan.linearize.is_empty() {
            (
                DeviceRule::new(stream, &job.axes[0], plan.kernel.rule())?,
                Vec::new(),
                None,
            )
        } else {
            let linearize = plan
                .linearize
                .iter()
                .zip(&job.axes)
                .map(|(&id, axis)| {
                    let grid = gpu.props.sm_count * 4;
                    Ok((
                        resident(gpu, id, grid, plan::BLOCK_THREADS, 0)?,
                        DeviceRule::new(stream, axis, id.rule())?,
                    ))
                })
                .collect::<HistResult<Vec<_>>>()?;
            // SAFETY: every cell a count reads is written by the first axis's launch before.
            let cells = unsafe { stream.alloc::<u32>(largest.max(1) as usize) }
                .map_err(driver("allocating the cells of the rows"))?;
            (DeviceRule::index(job.cells), linearize, Some(cells))
        };
        let segmented = match &plan.segments {
            Some(layout) => Some(Segmented::new(gpu, stream, layout, largest)?),
            None => None,
        };
        Ok(Launcher {
            stream,
            job,
            plan,
            sizes: dtypes.iter().map(|d| d.size() as u64).collect(),
            count,
            count_rule,
            linearize,
            cells,
            segmented,
            out,
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
        let launch = driver("launching a kernel");
        let counted = match &self.cells {
            None => rows.columns[0],
            Some(cells) => {
                let cells_ptr = cells.device_ptr(self.stream).0;
                for (d, ((kernel, rule), column)) in
                    self.linearize.iter().zip(&rows.columns).enumerate()
                {
                    let params = LinearizeParams {
                        rows: *column,
                        rule: rule.rule,
                        cells: cells_ptr,
                        cell_stride: self.job.strides[d] as u32,
                        cells_total: self.job.cells as u32,
                        first: (d == 0) as u32,
                        pad: 0,
                    };
                    // SAFETY: `LinearizeParams` is the kernel's one parameter (abi.rs); the
                    // buffers it names live until the stream is synchronized.
                    unsafe {
                        self.stream
                            .launch_builder(&kernel.func)
                            .arg(&params)
                            .launch(kernel.cfg)
                            .map_err(&launch)?;
                    }
                }
                abi::Column {
                    values: cells_ptr,
                    len: rows.len,
                    stride: 1,
                    ..Default::default()
                }
            }
        };
        let seg = self
            .segmented
            .as_ref()
            .map(|s| s.params(self.stream, rows.len))
            .unwrap_or_default();
        let params = CountParams {
            rows: counted,
            weights: rows.weights,
            rule: self.count_rule.rule,
            shared: abi::SharedLayout {
                replicas: self.plan.replicas,
                stride: self.plan.stride,
            },
            seg,
            out: self.out,
        };
        // SAFETY: `CountParams` is the kernel's one parameter (abi.rs); the buffers it names
        // live until the stream is synchronized.
        unsafe {
            self.stream
                .launch_builder(&self.count.func)
                .arg(&params)
                .launch(self.count.cfg)
                .map_err(&launch)?;
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
        let (keys, starts, cum, totals) = unsafe {
            (
                stream
                    .alloc::<u16>(tiles * plan::SEG_TILE_ROWS as usize)
                    .map_err(&alloc)?,
                stream.alloc::<u16>(tiles * (p + 1)).map_err(&alloc)?,
                stream.alloc::<u32>(tiles * p).map_err(&alloc)?,
                stream.alloc::<u32>(p).map_err(&alloc)?,
            )
        };
        Ok(Segmented {
            layout: layout.clone(),
            scan: gpu.kernel(KernelId::SegScan, 0)?,
            count: gpu.kernel(KernelId::SegCount, layout.count_shared_bytes)?,
            keys,
            starts,
            cum,
            totals,
        })
    }

    fn params(&self, stream: &Arc<CudaStream>, rows: u64) -> abi::Segments {
        abi::Segments {
            keys: self.keys.device_ptr(stream).0,
            starts: self.starts.device_ptr(stream).0,
            cum: self.cum.device_ptr(stream).0,
            totals: self.totals.device_ptr(stream).0,
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

/// Kernel `id` on `grid` blocks of `block` threads, cut to what the compiled kernel can run: a
/// kernel with many registers (their number varies with the NVRTC version) may not take 1024
/// threads a block, or as many blocks per SM as shared memory allows, and a grid past what is
/// resident at once runs in two waves.
fn resident(gpu: &Gpu, id: KernelId, grid: u32, block: u32, shared: u32) -> HistResult<Launch> {
    let func = gpu.kernel(id, shared)?;
    let query = driver("querying the kernel");
    let most = func.max_threads_per_block().map_err(&query)? as u32;
    let block = block.min(most / 32 * 32);
    let per_sm = func
        .occupancy_max_active_blocks_per_multiprocessor(block, shared as usize, None)
        .map_err(&query)?
        .max(1);
    Ok(Launch {
        func,
        cfg: LaunchConfig {
            grid_dim: (grid.min(gpu.props.sm_count * per_sm).max(1), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: shared,
        },
    })
}
