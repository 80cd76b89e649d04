//! The CUDA backend: one shared context per process, kernels compiled by NVRTC on first use,
//! and the dispatch of a [`Plan`] over device buffers. Everything here fails with an error,
//! never a panic: a machine without a driver simply has no GPU.

pub mod cache;
pub mod compile;
pub mod plan;
pub mod transfer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::{CUdevice_attribute as Attr, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, DriverError,
    LaunchConfig, PushKernelArg,
};

pub use plan::{DeviceProps, Family, Plan};
pub use transfer::Transfer;

use crate::bins::BinSpec;
use crate::cpu::Counts;
use crate::error::{HistError, HistResult};

/// Runs `$body` with `$t` bound to the native type of a [`crate::DataTypeTag`].
macro_rules! with_tag {
    ($tag:expr, |$t:ident| $body:expr) => {{
        use crate::DataTypeTag as D;
        match $tag {
            D::Float32 => {
                type $t = f32;
                $body
            }
            D::Float64 => {
                type $t = f64;
                $body
            }
            D::Int8 => {
                type $t = i8;
                $body
            }
            D::Int16 => {
                type $t = i16;
                $body
            }
            D::Int32 => {
                type $t = i32;
                $body
            }
            D::Int64 => {
                type $t = i64;
                $body
            }
            D::UInt8 => {
                type $t = u8;
                $body
            }
            D::UInt16 => {
                type $t = u16;
                $body
            }
            D::UInt32 => {
                type $t = u32;
                $body
            }
            D::UInt64 => {
                type $t = u64;
                $body
            }
        }
    }};
}

/// The process's GPU, opened on first use.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    pub props: DeviceProps,
    arch: u32,
    modules: Mutex<HashMap<&'static str, Arc<CudaModule>>>,
}

static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();

/// The GPU, or why there is none (no driver, no device, a failed context).
pub fn get() -> HistResult<&'static Gpu> {
    GPU.get_or_init(|| {
        Gpu::open().map_err(|e| match e {
            HistError::Gpu(why) => why,
            other => other.to_string(),
        })
    })
    .as_ref()
    .map_err(|why| HistError::Gpu(why.clone()))
}

/// Whether a GPU can be used in this process.
pub fn available() -> bool {
    get().is_ok()
}

/// The driver's handle for the legacy default stream (`CU_STREAM_LEGACY` in cuda.h).
const CU_STREAM_LEGACY: cudarc::driver::sys::CUstream = 0x1 as cudarc::driver::sys::CUstream;

static LAST_FALLBACK: Mutex<Option<String>> = Mutex::new(None);

/// Remembers why the GPU failed when `device="auto"` fell back to the CPU (shown by `explain`).
pub fn record_fallback(error: &HistError) {
    *LAST_FALLBACK.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.to_string());
}

static LAST_ROUTE: Mutex<Option<String>> = Mutex::new(None);

/// Remembers how the last host column reached the GPU (shown by `explain`).
pub fn record_route(route: &Route) {
    *LAST_ROUTE.lock().unwrap_or_else(|p| p.into_inner()) = Some(route.to_string());
}

/// How the last host column reached the GPU.
pub fn last_route() -> Option<String> {
    LAST_ROUTE.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Whether the values of `column` are in the device cache.
pub fn is_cached<T>(column: &crate::input::Column<'_, T>) -> bool {
    let key: Vec<cache::SegmentKey> = column.segments.iter().map(segment_key).collect();
    cache::contains(&key)
}

/// The last GPU failure that `device="auto"` recovered from on the CPU.
pub fn last_fallback() -> Option<String> {
    LAST_FALLBACK
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

fn driver(what: &str) -> impl Fn(DriverError) -> HistError + '_ {
    move |e| {
        let text = format!("{e:?}");
        if text.contains("OUT_OF_MEMORY") {
            HistError::Gpu(format!("out of device memory ({what})"))
        } else {
            HistError::Gpu(format!("{what}: {text}"))
        }
    }
}

impl Gpu {
    fn open() -> HistResult<Gpu> {
        // SAFETY: only tries to dlopen libcuda; cudarc panics on first use without it.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(HistError::Gpu(
                "no NVIDIA driver (libcuda) was found".into(),
            ));
        }
        let ctx = std::panic::catch_unwind(|| CudaContext::new(0))
            .map_err(|_| HistError::Gpu("the CUDA driver failed to initialize".into()))?
            .map_err(driver("no usable CUDA device"))?;
        let attr = |a: Attr| {
            ctx.attribute(a)
                .map(|v| v as u32)
                .map_err(driver("device query"))
        };
        let (major, minor) = ctx.compute_capability().map_err(driver("device query"))?;
        let props = DeviceProps {
            name: ctx.name().map_err(driver("device query"))?,
            compute_capability: (major as u32, minor as u32),
            sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            shared_per_block_optin: attr(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            shared_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            max_threads_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            pageable_memory_access: attr(Attr::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)? != 0,
            total_memory: cudarc::driver::result::mem_get_info()
                .map_err(driver("device query"))?
                .1 as u64,
        };
        Ok(Gpu {
            ctx,
            arch: major as u32 * 10 + minor as u32,
            props,
            modules: Mutex::new(HashMap::new()),
        })
    }

    /// A new stream: concurrent callers (Polars' threads) each get their own.
    pub fn stream(&self) -> HistResult<Arc<CudaStream>> {
        self.ctx.new_stream().map_err(driver("stream"))
    }

    /// A new stream ordered after the work queued so far on the legacy default stream. Our
    /// streams do not block on it, but that is where CuPy, for one, copies an array in: a
    /// kernel that read the array without waiting raced the copy (miscounts seen on an H200).
    pub fn stream_after_default(&self) -> HistResult<Arc<CudaStream>> {
        let stream = self.stream()?;
        // SAFETY: CU_STREAM_LEGACY is a valid handle in every context and is never destroyed.
        let legacy = unsafe { self.ctx.wrap_borrowed_stream(CU_STREAM_LEGACY) };
        stream
            .join(&legacy)
            .map_err(driver("ordering after the default stream"))?;
        Ok(stream)
    }

    fn function(&self, value_type: &'static str, name: &str) -> HistResult<CudaFunction> {
        let module = {
            let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
            match modules.get(value_type) {
                Some(m) => m.clone(),
                None => {
                    let cubin = compile::cubin_cached(value_type, self.arch)?;
                    let m = self
                        .ctx
                        .load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
                        .map_err(driver("loading the kernels"))?;
                    modules.insert(value_type, m.clone());
                    m
                }
            }
        };
        module
            .load_function(name)
            .map_err(driver("looking up a kernel"))
    }
}

/// A run of rows in device memory: the values and their optional validity bitmap.
#[derive(Clone, Copy, Debug)]
pub struct DeviceRows {
    pub values: u64,
    pub len: u64,
    pub elem_bytes: u64,
    /// Device address of the validity bytes, 0 when every row is valid.
    pub validity: u64,
    pub validity_offset: u64,
    /// f64 weights and their validity, when weighted.
    pub weights: Option<(u64, u64, u64)>,
}

impl DeviceRows {
    fn slice(&self, start: u64, len: u64) -> DeviceRows {
        DeviceRows {
            values: self.values + start * self.elem_bytes,
            len,
            validity_offset: self.validity_offset + start,
            weights: self
                .weights
                .map(|(w, wv, wo)| (w + start * 8, wv, wo + start)),
            ..*self
        }
    }
}

// Rule parameters by value, laid out as the kernels' structs (static_asserts there).
#[repr(C)]
#[derive(Clone, Copy)]
struct UniformRule32 {
    edges: u64,
    n: u32,
    literal: u32,
    denom: f32,
    n_f: f32,
    scale: f32,
    margin: f32,
    formula: u32,
    pad: u32,
    start: f64,
    step: f64,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct UniformRule64 {
    edges: u64,
    n: u32,
    literal: u32,
    denom: f64,
    n_f: f64,
    scale: f64,
    margin: f64,
    formula: u32,
    pad: u32,
    start: f64,
    step: f64,
}

/// How the kernels get edge i of equal bins (`UniformBins::formula` in kernels/bin_rule.cuh):
/// read from the array while it stays in cache (a quarter of L2), else recomputed from the
/// formula that made it (two float64 operations, where a read would miss).
fn edge_formula<F>(u: &crate::bins::UniformBins<F>, l2_bytes: u32) -> (u32, f64, f64) {
    let bytes = std::mem::size_of_val(u.edges.as_slice()) as u64;
    match u.linspace {
        Some(f) if bytes > l2_bytes as u64 / 4 => (if f.single { 2 } else { 1 }, f.start, f.step),
        _ => (0, 0.0, 0.0),
    }
}
#[repr(C)]
#[derive(Clone, Copy)]
struct EdgeRule {
    edges: u64,
    n: u32,
}
/// `Segments` in kernels/segmented.cuh.
#[repr(C)]
#[derive(Clone, Copy)]
struct Segments {
    keys: u64,
    starts: u64,
    cum: u64,
    totals: u64,
    partitions: u32,
    width_bits: u32,
    tiles: u32,
    rows_per_item: u32,
}
// SAFETY: plain-old-data, layouts checked against the kernels.
unsafe impl DeviceRepr for Segments {}
unsafe impl DeviceRepr for UniformRule32 {}
unsafe impl DeviceRepr for UniformRule64 {}
unsafe impl DeviceRepr for EdgeRule {}

/// The rule's parameters; `_edges` keeps the device copy of the edges alive while they are used.
enum DeviceRule {
    U32 {
        rule: UniformRule32,
        _edges: CudaSlice<f32>,
    },
    U64 {
        rule: UniformRule64,
        _edges: CudaSlice<f64>,
    },
    Edges {
        rule: EdgeRule,
        _edges: CudaSlice<f64>,
    },
}

fn device_rule(stream: &Arc<CudaStream>, spec: &BinSpec, l2_bytes: u32) -> HistResult<DeviceRule> {
    use cudarc::driver::DevicePtr;
    let n = spec.len() as u32;
    let copy = |what| driver(what);
    Ok(match spec {
        BinSpec::Uniform32(u) => {
            let e = stream.clone_htod(&u.edges).map_err(copy("copying edges"))?;
            let ptr = e.device_ptr(stream).0;
            let (formula, start, step) = edge_formula(u, l2_bytes);
            let rule = UniformRule32 {
                edges: ptr,
                n,
                literal: u.literal as u32,
                denom: u.denom,
                n_f: u.n_f,
                scale: u.scale,
                margin: u.margin,
                formula,
                pad: 0,
                start,
                step,
            };
            DeviceRule::U32 { rule, _edges: e }
        }
        BinSpec::Uniform64(u) => {
            let e = stream.clone_htod(&u.edges).map_err(copy("copying edges"))?;
            let ptr = e.device_ptr(stream).0;
            let (formula, start, step) = edge_formula(u, l2_bytes);
            let rule = UniformRule64 {
                edges: ptr,
                n,
                literal: u.literal as u32,
                denom: u.denom,
                n_f: u.n_f,
                scale: u.scale,
                margin: u.margin,
                formula,
                pad: 0,
                start,
                step,
            };
            DeviceRule::U64 { rule, _edges: e }
        }
        BinSpec::Edges(b) => {
            let e = stream.clone_htod(&b.edges).map_err(copy("copying edges"))?;
            let ptr = e.device_ptr(stream).0;
            let rule = EdgeRule { edges: ptr, n };
            DeviceRule::Edges { rule, _edges: e }
        }
    })
}

/// A kernel with `shared_bytes` of dynamic shared memory allowed.
fn function_with_shared(
    gpu: &Gpu,
    value_type: &'static str,
    name: &str,
    shared_bytes: u32,
) -> HistResult<CudaFunction> {
    let func = gpu.function(value_type, name)?;
    if shared_bytes > 48 * 1024 {
        use cudarc::driver::sys::CUfunction_attribute as F;
        func.set_attribute(
            F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            shared_bytes as i32,
        )
        .map_err(driver("asking for shared memory"))?;
    }
    Ok(func)
}

/// The plan's grid and block, cut to what the compiled kernel can run: a kernel with many
/// registers (their number varies with the NVRTC version) may not take 1024 threads a block,
/// or as many blocks per SM as shared memory allows, and a grid past what is resident at once
/// runs in two waves.
fn resident_launch(gpu: &Gpu, func: &CudaFunction, plan: &Plan) -> HistResult<LaunchConfig> {
    let query = driver("querying the kernel");
    let most = func.max_threads_per_block().map_err(&query)? as u32;
    let block = plan.block.min(most / 32 * 32);
    let per_sm = func
        .occupancy_max_active_blocks_per_multiprocessor(block, plan.shared_bytes as usize, None)
        .map_err(&query)?
        .max(1);
    Ok(LaunchConfig {
        grid_dim: (plan.grid.min(gpu.props.sm_count * per_sm), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: plan.shared_bytes,
    })
}

/// The segmented family's scratch, sized for its largest launch: keys, tile starts, running
/// counts and totals (see kernels/segmented.cuh).
struct SegmentScratch {
    keys: CudaSlice<u16>,
    starts: CudaSlice<u16>,
    cum: CudaSlice<u32>,
    totals: CudaSlice<u32>,
}

impl SegmentScratch {
    fn new(stream: &Arc<CudaStream>, layout: &plan::SegmentLayout, rows: u64) -> HistResult<Self> {
        let tiles = plan::SegmentLayout::tiles(rows) as usize;
        let p = layout.partitions as usize;
        let alloc = driver("allocating the segmented kernels' scratch");
        // SAFETY: every element a kernel reads is written before, in the same launch sequence.
        unsafe {
            Ok(SegmentScratch {
                keys: stream
                    .alloc::<u16>(tiles * plan::SEG_TILE_ROWS as usize)
                    .map_err(&alloc)?,
                starts: stream.alloc::<u16>(tiles * (p + 1)).map_err(&alloc)?,
                cum: stream.alloc::<u32>(tiles * p).map_err(&alloc)?,
                totals: stream.alloc::<u32>(p).map_err(&alloc)?,
            })
        }
    }

    fn segments(
        &self,
        stream: &Arc<CudaStream>,
        layout: &plan::SegmentLayout,
        rows: u64,
    ) -> Segments {
        use cudarc::driver::DevicePtr;
        Segments {
            keys: self.keys.device_ptr(stream).0,
            starts: self.starts.device_ptr(stream).0,
            cum: self.cum.device_ptr(stream).0,
            totals: self.totals.device_ptr(stream).0,
            partitions: layout.partitions,
            width_bits: layout.width_bits,
            tiles: plan::SegmentLayout::tiles(rows) as u32,
            rows_per_item: layout.rows_per_item,
        }
    }
}

/// The histogram of `pieces` (all of one value type) under `plan`, accumulated on the device.
pub fn run(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    value_type: &'static str,
    spec: &BinSpec,
    plan: &Plan,
    pieces: &[DeviceRows],
) -> HistResult<(Counts, f32)> {
    let n = spec.len();
    let weighted = plan.kernel.contains("_weighted_");
    let func = function_with_shared(gpu, value_type, &plan.kernel, plan.shared_bytes)?;
    let rule = device_rule(stream, spec, gpu.props.l2_bytes)?;
    let cfg = resident_launch(gpu, &func, plan)?;
    let rows_per_launch = if plan.family == Family::Segmented {
        plan.rows_per_launch
    } else {
        cfg.grid_dim.0 as u64 * plan::MAX_ROWS_PER_BLOCK
    };
    // The segmented family's two later passes, and its scratch for the largest launch.
    let segmented = match &plan.segments {
        Some(layout) => {
            let largest = pieces
                .iter()
                .map(|p| p.len.min(rows_per_launch))
                .max()
                .unwrap_or(0);
            Some((
                layout,
                gpu.function(value_type, "seg_scan")?,
                function_with_shared(gpu, value_type, "seg_count", layout.count_shared_bytes)?,
                SegmentScratch::new(stream, layout, largest)?,
            ))
        }
        None => None,
    };
    let timer = |what| driver(what);
    let start_event = gpu
        .ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(timer("creating an event"))?;
    let end_event = gpu
        .ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(timer("creating an event"))?;
    let mut exact = if weighted {
        None
    } else {
        Some(
            stream
                .alloc_zeros::<u64>(n)
                .map_err(driver("allocating the histogram"))?,
        )
    };
    let mut sums = if weighted {
        Some(
            stream
                .alloc_zeros::<f64>(n)
                .map_err(driver("allocating the histogram"))?,
        )
    } else {
        None
    };
    start_event
        .record(stream)
        .map_err(timer("recording an event"))?;
    for piece in pieces {
        let mut start = 0;
        while start < piece.len {
            let rows = piece.slice(start, (piece.len - start).min(rows_per_launch));
            start += rows.len;
            let segments = segmented
                .as_ref()
                .map(|(layout, _, _, scratch)| scratch.segments(stream, layout, rows.len));
            let mut launch = stream.launch_builder(&func);
            launch
                .arg(&rows.values)
                .arg(&rows.len)
                .arg(&rows.validity)
                .arg(&rows.validity_offset);
            let (w, wv, wo) = rows.weights.unwrap_or((0, 0, 0));
            if weighted {
                launch.arg(&w).arg(&wv).arg(&wo);
            }
            match &rule {
                DeviceRule::U32 { rule, .. } => launch.arg(rule),
                DeviceRule::U64 { rule, .. } => launch.arg(rule),
                DeviceRule::Edges { rule, .. } => launch.arg(rule),
            };
            if plan.family == Family::Shared {
                launch.arg(&plan.replicas).arg(&plan.stride);
            }
            if let Some(segments) = &segments {
                launch.arg(segments);
            }
            match (&mut exact, &mut sums) {
                (Some(out), _) => launch.arg(out),
                (_, Some(out)) => launch.arg(out),
                _ => unreachable!("one output is allocated"),
            };
            // SAFETY: arguments match the kernel's parameter list (see kernels/histogram.cu);
            // every device address stays valid until the stream is synchronized below.
            unsafe { launch.launch(cfg) }.map_err(driver("launching the kernel"))?;

            if let (Some((layout, scan, count, _)), Some(segments), Some(out)) =
                (&segmented, &segments, &mut exact)
            {
                let scan_cfg = LaunchConfig {
                    grid_dim: (layout.partitions, 1, 1),
                    block_dim: (1024, 1, 1),
                    shared_mem_bytes: 0,
                };
                let count_cfg = LaunchConfig {
                    grid_dim: (layout.count_grid, 1, 1),
                    block_dim: (layout.count_block, 1, 1),
                    shared_mem_bytes: layout.count_shared_bytes,
                };
                let bins = n as u32;
                // SAFETY: `Segments` matches the kernels' struct; its buffers live in `scratch`
                // until the stream is synchronized below.
                unsafe {
                    stream
                        .launch_builder(scan)
                        .arg(segments)
                        .launch(scan_cfg)
                        .map_err(driver("launching the kernel"))?;
                    stream
                        .launch_builder(count)
                        .arg(segments)
                        .arg(&bins)
                        .arg(out)
                        .launch(count_cfg)
                        .map_err(driver("launching the kernel"))?;
                }
            }
        }
    }
    end_event
        .record(stream)
        .map_err(timer("recording an event"))?;
    let counts = match (exact, sums) {
        (Some(out), _) => Counts::Exact(
            stream
                .clone_dtoh(&out)
                .map_err(driver("reading the histogram"))?,
        ),
        (_, Some(out)) => Counts::Weighted(
            stream
                .clone_dtoh(&out)
                .map_err(driver("reading the histogram"))?,
        ),
        _ => unreachable!("one output is allocated"),
    };
    stream.synchronize().map_err(driver("running the kernel"))?;
    let kernel_ms = start_event
        .elapsed_ms(&end_event)
        .map_err(timer("reading an event"))?;
    drop(rule);
    drop(segmented);
    Ok((counts, kernel_ms))
}

/// How a host column got to the device for one histogram (explain and benchmarks report it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// Read from the device cache: no copy at all.
    Cached,
    /// Copied whole (and kept in the cache when `cached`).
    Uploaded { transfer: Transfer, cached: bool },
    /// Larger than the device memory the call may use: copied and counted window by window.
    Streamed { transfer: Transfer, windows: usize },
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Route::Cached => write!(f, "read from the device cache (no copy)"),
            Route::Uploaded { transfer, cached } => write!(
                f,
                "copied by {}{}",
                transfer.name(),
                if *cached {
                    ", then kept in the device cache"
                } else {
                    ""
                }
            ),
            Route::Streamed { transfer, windows } => write!(
                f,
                "streamed in {windows} windows by {} (larger than the device memory to use)",
                transfer.name()
            ),
        }
    }
}

/// How `histogram_host` moves a column: the transfer, and the column itself when it may be
/// cached (its clone keeps the buffers alive while cached).
#[derive(Clone, Copy, Default)]
pub struct HostOptions<'a> {
    pub force: Option<Family>,
    pub transfer: Transfer,
    pub owner: Option<&'a polars::prelude::Series>,
}

/// Device memory a call may fill with a column: what is free now less a reserve, or
/// `POLARS_GPU_HIST_DEVICE_BYTES` when set (tests use it to force the streaming path).
fn usable_device_bytes() -> usize {
    if let Some(cap) = std::env::var("POLARS_GPU_HIST_DEVICE_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        return cap;
    }
    let free = cudarc::driver::result::mem_get_info().map_or(0, |(free, _)| free);
    free.saturating_sub(1 << 30) / 10 * 9
}

fn segment_key<T>(seg: &crate::input::Segment<'_, T>) -> cache::SegmentKey {
    let (validity, offset) = seg
        .validity
        .map_or((0, 0), |v| (v.bytes.as_ptr() as usize, v.offset));
    (
        seg.values.as_ptr() as usize,
        std::mem::size_of_val(seg.values),
        validity,
        offset,
    )
}

/// Device copies of `segments` (values and validity; the weights apart, never cached).
fn upload_segments<T: crate::input::Value>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    segments: &[crate::input::Segment<'_, T>],
    transfer: Transfer,
) -> HistResult<(cache::DeviceColumn, Vec<CudaSlice<u8>>)> {
    let alloc = driver("allocating device memory for the column");
    let mut column = cache::DeviceColumn {
        values: Vec::with_capacity(segments.len()),
        validity: Vec::with_capacity(segments.len()),
        bytes: 0,
    };
    let mut weights = Vec::new();
    let send = |bytes: &[u8]| -> HistResult<CudaSlice<u8>> {
        // SAFETY: filled by the copy before any kernel reads it (same stream).
        let mut d = unsafe { stream.alloc::<u8>(bytes.len().max(1)) }.map_err(&alloc)?;
        transfer::upload(gpu, stream, bytes, &mut d, transfer)?;
        Ok(d)
    };
    for seg in segments {
        let values = transfer::bytes_of(seg.values);
        column.bytes += values.len();
        column.values.push(send(values)?);
        let validity = match seg.validity {
            Some(v) => {
                let bits = &v.bytes[v.offset / 8..(v.offset + seg.len()).div_ceil(8)];
                column.bytes += bits.len();
                Some(send(bits)?)
            }
            None => None,
        };
        column.validity.push(validity);
        if let Some((w, wv)) = seg.weights {
            weights.push(send(transfer::bytes_of(w))?);
            if let Some(v) = wv {
                weights.push(send(
                    &v.bytes[v.offset / 8..(v.offset + seg.len()).div_ceil(8)],
                )?);
            }
        }
    }
    Ok((column, weights))
}

/// The rows of `segments` as the kernels see them, over their device copies.
fn device_rows<T: crate::input::Value>(
    stream: &Arc<CudaStream>,
    segments: &[crate::input::Segment<'_, T>],
    column: &cache::DeviceColumn,
    weights: &[CudaSlice<u8>],
) -> Vec<DeviceRows> {
    use cudarc::driver::DevicePtr;
    let ptr = |d: &CudaSlice<u8>| d.device_ptr(stream).0;
    let mut next_weights = weights.iter();
    segments
        .iter()
        .enumerate()
        .map(|(i, seg)| {
            let weights = seg.weights.map(|(_, wv)| {
                let w = ptr(next_weights.next().expect("uploaded with the segment"));
                match wv {
                    Some(v) => (
                        w,
                        ptr(next_weights.next().expect("uploaded with the segment")),
                        (v.offset % 8) as u64,
                    ),
                    None => (w, 0, 0),
                }
            });
            let (validity, validity_offset) = match (&column.validity[i], seg.validity) {
                (Some(d), Some(v)) => (ptr(d), (v.offset % 8) as u64),
                _ => (0, 0),
            };
            DeviceRows {
                values: ptr(&column.values[i]),
                len: seg.len() as u64,
                elem_bytes: std::mem::size_of::<T>() as u64,
                validity,
                validity_offset,
                weights,
            }
        })
        .collect()
}

fn add_counts(total: Option<Counts>, more: Counts) -> Counts {
    match (total, more) {
        (None, more) => more,
        (Some(Counts::Exact(mut a)), Counts::Exact(b)) => {
            a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
            Counts::Exact(a)
        }
        (Some(Counts::Weighted(mut a)), Counts::Weighted(b)) => {
            a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
            Counts::Weighted(a)
        }
        (Some(_), _) => unreachable!("one kind of counts per histogram"),
    }
}

/// The histogram of a host column on the GPU: from the device cache when the column is there,
/// else copied whole (and cached when `options.owner` is given), or window by window when it is
/// larger than the device memory at hand.
pub fn histogram_host<T: crate::input::Value>(
    gpu: &Gpu,
    column: &crate::input::Column<'_, T>,
    spec: &BinSpec,
    options: HostOptions<'_>,
) -> HistResult<(Counts, Plan, Route)> {
    let weighted = column.segments.iter().any(|s| s.weights.is_some());
    let plan = plan::plan(
        &gpu.props,
        spec,
        weighted,
        column.len() as u64,
        options.force,
    )?;
    let stream = gpu.stream()?;
    let transfer = options.transfer.resolved();
    let key: Vec<cache::SegmentKey> = column.segments.iter().map(segment_key).collect();
    let cacheable = options.owner.is_some() && !weighted;
    if cacheable {
        if let Some(cached) = cache::get(&key) {
            let pieces = device_rows(&stream, &column.segments, &cached, &[]);
            let (counts, _ms) = run(gpu, &stream, T::C_TYPE, spec, &plan, &pieces)?;
            return Ok((counts, plan, Route::Cached));
        }
    }

    let row_bytes = std::mem::size_of::<T>() + if weighted { 8 } else { 0 };
    let usable = usable_device_bytes()
        .saturating_sub(spec.len() * 8)
        .saturating_sub(plan.scratch_bytes() as usize);
    let total = column.len() * row_bytes;
    if total <= usable {
        let (device, weights) = upload_segments(gpu, &stream, &column.segments, transfer)?;
        let pieces = device_rows(&stream, &column.segments, &device, &weights);
        let (counts, _ms) = run(gpu, &stream, T::C_TYPE, spec, &plan, &pieces)?;
        let budget = cache::budget(gpu.props.total_memory as usize);
        let cached = match options.owner {
            Some(owner) if cacheable => cache::insert(key, owner.clone(), Arc::new(device), budget),
            _ => false,
        };
        return Ok((counts, plan, Route::Uploaded { transfer, cached }));
    }

    // Window by window: each window's copy is freed before the next is made.
    let window_rows = (usable / row_bytes / 2).max(1 << 16);
    let mut counts = None;
    let mut windows = 0;
    let mut pending: Vec<crate::input::Segment<'_, T>> = Vec::new();
    let mut pending_rows = 0;
    let mut flush = |pending: &mut Vec<crate::input::Segment<'_, T>>| -> HistResult<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let (device, weights) = upload_segments(gpu, &stream, pending, transfer)?;
        let pieces = device_rows(&stream, pending, &device, &weights);
        let (more, _ms) = run(gpu, &stream, T::C_TYPE, spec, &plan, &pieces)?;
        counts = Some(add_counts(counts.take(), more));
        windows += 1;
        pending.clear();
        Ok(())
    };
    for seg in &column.segments {
        let mut start = 0;
        while start < seg.len() {
            let take = (window_rows - pending_rows).min(seg.len() - start);
            pending.push(seg.slice(start, start + take));
            pending_rows += take;
            start += take;
            if pending_rows == window_rows {
                flush(&mut pending)?;
                pending_rows = 0;
            }
        }
    }
    flush(&mut pending)?;
    let counts = counts.unwrap_or_else(|| match weighted {
        true => Counts::Weighted(vec![0.0; spec.len()]),
        false => Counts::Exact(vec![0; spec.len()]),
    });
    Ok((counts, plan, Route::Streamed { transfer, windows }))
}

/// Minimum and maximum of the non-NaN values of a device array (numpy's automatic range):
/// per-block partial results from the `extremes` kernel, finished on the host.
pub fn extremes_device(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    tag: crate::DataTypeTag,
    rows: &DeviceRows,
) -> HistResult<crate::bins::Extremes> {
    use crate::input::Value;

    fn finish<T: Value + cudarc::driver::ValidAsZeroBits>(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        rows: &DeviceRows,
    ) -> HistResult<crate::bins::Extremes> {
        let grid = (gpu.props.sm_count * 4).min(rows.len.div_ceil(256).max(1) as u32);
        let func = gpu.function(T::C_TYPE, "extremes")?;
        let alloc = driver("allocating partial extremes");
        let mut mins = stream.alloc_zeros::<T>(grid as usize).map_err(&alloc)?;
        let mut maxs = stream.alloc_zeros::<T>(grid as usize).map_err(&alloc)?;
        let mut found = stream.alloc_zeros::<u32>(grid as usize).map_err(&alloc)?;
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&func);
        launch
            .arg(&rows.values)
            .arg(&rows.len)
            .arg(&mut mins)
            .arg(&mut maxs)
            .arg(&mut found);
        // SAFETY: matches `extremes(const Value*, u64, Value*, Value*, unsigned*)`.
        unsafe { launch.launch(cfg) }.map_err(driver("launching the extremes kernel"))?;
        let read = driver("reading partial extremes");
        let mins = stream.clone_dtoh(&mins).map_err(&read)?;
        let maxs = stream.clone_dtoh(&maxs).map_err(&read)?;
        let found = stream.clone_dtoh(&found).map_err(&read)?;
        stream
            .synchronize()
            .map_err(driver("running the extremes kernel"))?;
        let mut acc: Option<(T, T)> = None;
        for ((&lo, &hi), &f) in mins.iter().zip(&maxs).zip(&found) {
            if f != 0 {
                acc = Some(match acc {
                    None => (lo, hi),
                    Some((a, b)) => (if lo < a { lo } else { a }, if hi > b { hi } else { b }),
                });
            }
        }
        Ok(acc.map_or(crate::bins::Extremes::Empty, |(lo, hi)| T::extremes(lo, hi)))
    }

    with_tag!(tag, |T| finish::<T>(gpu, stream, rows))
}

// ---- Linearized n-D histograms (kernels/histogramdd.cuh) ----

/// One dimension's rule, laid out as the kernels' `DimRule` (static_asserts there).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct DimRule {
    values: u64,
    edges: u64,
    n: u32,
    kind: u32,
    right: u32,
    literal: u32,
    cell_stride: u32,
    value_stride: u32,
    lo: f64,
    hi: f64,
    denom: f64,
    n_f: f64,
    scale: f64,
    margin: f64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct DimRules {
    dim: [DimRule; crate::nd::MAX_DIMS],
    dims: u32,
    cells: u32,
}
// SAFETY: plain-old-data, layouts checked against the kernels.
unsafe impl DeviceRepr for DimRules {}

const DIM_U32: u32 = 0;
const DIM_U64: u32 = 1;
const DIM_EDGES: u32 = 2;
const DIM_GROUPS: u32 = 3;

/// Device buffers that must outlive the kernels reading them.
type Keep = Vec<Box<dyn std::any::Any>>;

/// The rule of one binned dimension over device values at `values`, `value_stride` apart; the
/// edges are copied to the device and kept in `keep`.
fn dim_rule(
    stream: &Arc<CudaStream>,
    spec: &BinSpec,
    values: u64,
    value_stride: u32,
    cell_stride: usize,
    keep: &mut Keep,
) -> HistResult<DimRule> {
    use cudarc::driver::DevicePtr;
    let copy = driver("copying edges");
    let mut rule = DimRule {
        values,
        n: spec.len() as u32,
        right: (spec.closed() == crate::bins::Closed::Right) as u32,
        cell_stride: cell_stride as u32,
        value_stride,
        ..Default::default()
    };
    match spec {
        BinSpec::Uniform32(u) => {
            let e = stream.clone_htod(&u.edges).map_err(copy)?;
            rule.edges = e.device_ptr(stream).0;
            keep.push(Box::new(e));
            rule.kind = DIM_U32;
            rule.literal = u.literal as u32;
            (rule.lo, rule.hi) = (u.edges[0] as f64, u.edges[u.len()] as f64);
            (rule.denom, rule.n_f) = (u.denom as f64, u.n_f as f64);
            (rule.scale, rule.margin) = (u.scale as f64, u.margin as f64);
        }
        BinSpec::Uniform64(u) => {
            let e = stream.clone_htod(&u.edges).map_err(copy)?;
            rule.edges = e.device_ptr(stream).0;
            keep.push(Box::new(e));
            rule.kind = DIM_U64;
            rule.literal = u.literal as u32;
            (rule.lo, rule.hi) = (u.edges[0], u.edges[u.len()]);
            (rule.denom, rule.n_f, rule.scale, rule.margin) = (u.denom, u.n_f, u.scale, u.margin);
        }
        BinSpec::Edges(b) => {
            let e = stream.clone_htod(&b.edges).map_err(copy)?;
            rule.edges = e.device_ptr(stream).0;
            keep.push(Box::new(e));
            rule.kind = DIM_EDGES;
        }
    }
    Ok(rule)
}

/// Launches `plan` over `len` rows under `rules`, optionally weighted; returns the counts and the
/// kernels' time in ms.
fn run_linear(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    value_type: &'static str,
    rules: &DimRules,
    plan: &Plan,
    len: u64,
    weights: Option<u64>,
) -> HistResult<(Counts, f32)> {
    let cells = rules.cells as usize;
    let func = function_with_shared(gpu, value_type, &plan.kernel, plan.shared_bytes)?;
    let cfg = resident_launch(gpu, &func, plan)?;
    let rows_per_launch = cfg.grid_dim.0 as u64 * plan::MAX_ROWS_PER_BLOCK;
    let event = |what| {
        gpu.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver(what))
    };
    let (start_event, end_event) = (event("creating an event")?, event("creating an event")?);
    let alloc = driver("allocating the histogram");
    let mut exact = match weights {
        None => Some(stream.alloc_zeros::<u64>(cells).map_err(&alloc)?),
        Some(_) => None,
    };
    let mut sums = match weights {
        Some(_) => Some(stream.alloc_zeros::<f64>(cells).map_err(&alloc)?),
        None => None,
    };
    start_event
        .record(stream)
        .map_err(driver("recording an event"))?;
    // Shared-memory counters are u32: no block may see 2^32 rows in one launch.
    let mut start = 0u64;
    while start < len {
        let rows = (len - start).min(rows_per_launch);
        let mut shifted = *rules;
        for d in &mut shifted.dim[..rules.dims as usize] {
            let elem = if d.kind == DIM_GROUPS {
                4
            } else {
                plan_elem_bytes(value_type)
            };
            d.values += start * d.value_stride as u64 * elem;
        }
        let w = weights.map(|w| w + start * 8);
        let mut launch = stream.launch_builder(&func);
        launch.arg(&shifted).arg(&rows);
        if let Some(w) = &w {
            launch.arg(w);
        }
        if plan.family == Family::Shared {
            launch.arg(&plan.replicas).arg(&plan.stride);
        }
        match (&mut exact, &mut sums) {
            (Some(out), _) => launch.arg(out),
            (_, Some(out)) => launch.arg(out),
            _ => unreachable!("one output is allocated"),
        };
        // SAFETY: arguments match kernels/histogramdd.cuh; the buffers outlive the synchronize.
        unsafe { launch.launch(cfg) }.map_err(driver("launching the kernel"))?;
        start += rows;
    }
    end_event
        .record(stream)
        .map_err(driver("recording an event"))?;
    let read = driver("reading the histogram");
    let counts = match (exact, sums) {
        (Some(out), _) => Counts::Exact(stream.clone_dtoh(&out).map_err(&read)?),
        (_, Some(out)) => Counts::Weighted(stream.clone_dtoh(&out).map_err(&read)?),
        _ => unreachable!("one output is allocated"),
    };
    stream.synchronize().map_err(driver("running the kernel"))?;
    let ms = start_event
        .elapsed_ms(&end_event)
        .map_err(driver("reading an event"))?;
    Ok((counts, ms))
}

/// Bytes of one value of the module compiled for `value_type`.
fn plan_elem_bytes(value_type: &str) -> u64 {
    match value_type {
        "double" | "long long" | "unsigned long long" => 8,
        "float" | "int" | "unsigned int" => 4,
        "short" | "unsigned short" => 2,
        _ => 1,
    }
}

/// A linearized histogram of host columns on the GPU: the dense coordinates (and weights) are
/// copied to the device and counted in one pass.
pub(crate) fn histogram_linear(
    gpu: &Gpu,
    linear: &crate::nd::Linear,
    force: Option<Family>,
) -> HistResult<(Counts, Plan)> {
    use crate::nd::{dense, Dim};
    use cudarc::driver::DevicePtr;
    let weighted = linear.weights.is_some();
    let plan = plan::plan_linear(
        &gpu.props,
        linear.cells,
        weighted,
        linear.rows as u64,
        force,
    )?;
    let stream = gpu.stream()?;
    let mut keep: Keep = Vec::new();
    let transfer = Transfer::from_env();
    // Each coordinate column (and the weights) through the same host-to-device path as 1-D.
    let send = |bytes: &[u8], keep: &mut Keep| -> HistResult<u64> {
        let alloc = driver("allocating device memory for the columns");
        // SAFETY: filled by the copy before the kernel reads it (same stream).
        let mut d = unsafe { stream.alloc::<u8>(bytes.len().max(1)) }.map_err(alloc)?;
        transfer::upload(gpu, &stream, bytes, &mut d, transfer)?;
        let ptr = d.device_ptr(&stream).0;
        keep.push(Box::new(d));
        Ok(ptr)
    };
    let mut rules = DimRules {
        dims: linear.dims.len() as u32,
        cells: linear.cells as u32,
        ..Default::default()
    };
    let mut value_type = "double";
    for (d, (dim, &cell_stride)) in linear.dims.iter().zip(&linear.strides).enumerate() {
        rules.dim[d] = match dim {
            Dim::F32(spec, ca) => {
                value_type = "float";
                let ptr = send(transfer::bytes_of(dense(ca)), &mut keep)?;
                dim_rule(&stream, spec, ptr, 1, cell_stride, &mut keep)?
            }
            Dim::F64(spec, ca) => {
                let ptr = send(transfer::bytes_of(dense(ca)), &mut keep)?;
                dim_rule(&stream, spec, ptr, 1, cell_stride, &mut keep)?
            }
            Dim::Groups(groups, ids) => DimRule {
                values: send(transfer::bytes_of(dense(ids)), &mut keep)?,
                n: *groups as u32,
                kind: DIM_GROUPS,
                cell_stride: cell_stride as u32,
                value_stride: 1,
                ..Default::default()
            },
        };
    }
    let weights = match &linear.weights {
        Some(w) => Some(send(transfer::bytes_of(dense(w)), &mut keep)?),
        None => None,
    };
    let (counts, _ms) = run_linear(
        gpu,
        &stream,
        value_type,
        &rules,
        &plan,
        linear.rows as u64,
        weights,
    )?;
    drop(keep);
    Ok((counts, plan))
}

/// Rules for dimensions over device columns `(address, stride)` of the module's value type.
fn device_rules(
    stream: &Arc<CudaStream>,
    columns: &[(u64, u32)],
    specs: &[BinSpec],
    strides: &[usize],
    cells: usize,
    keep: &mut Keep,
) -> HistResult<DimRules> {
    let mut rules = DimRules {
        dims: columns.len() as u32,
        cells: cells as u32,
        ..Default::default()
    };
    for (d, &(ptr, value_stride)) in columns.iter().enumerate() {
        rules.dim[d] = match specs.get(d) {
            Some(spec) => dim_rule(stream, spec, ptr, value_stride, strides[d], keep)?,
            None => DimRule {
                values: ptr,
                value_stride,
                ..Default::default()
            },
        };
    }
    Ok(rules)
}

/// Per-dimension minimum and maximum of device columns over the rows with no NaN in any of them.
pub fn extremes_dd_device(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    tag: crate::DataTypeTag,
    columns: &[(u64, u32)],
    len: u64,
) -> HistResult<Vec<crate::bins::Extremes>> {
    use crate::input::Value;

    fn finish<T: Value + cudarc::driver::ValidAsZeroBits>(
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        columns: &[(u64, u32)],
        len: u64,
    ) -> HistResult<Vec<crate::bins::Extremes>> {
        let mut keep: Keep = Vec::new();
        let rules = device_rules(stream, columns, &[], &[], 0, &mut keep)?;
        let dims = columns.len();
        let grid = (gpu.props.sm_count * 4).min(len.div_ceil(256).max(1) as u32);
        let func = gpu.function(T::C_TYPE, "extremes_dd")?;
        let alloc = driver("allocating partial extremes");
        let per = grid as usize * dims;
        let mut mins = stream.alloc_zeros::<T>(per).map_err(&alloc)?;
        let mut maxs = stream.alloc_zeros::<T>(per).map_err(&alloc)?;
        let mut found = stream.alloc_zeros::<u32>(grid as usize).map_err(&alloc)?;
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&func);
        launch
            .arg(&rules)
            .arg(&len)
            .arg(&mut mins)
            .arg(&mut maxs)
            .arg(&mut found);
        // SAFETY: matches `extremes_dd(DimRules, u64, Value*, Value*, unsigned*)`.
        unsafe { launch.launch(cfg) }.map_err(driver("launching the extremes kernel"))?;
        let read = driver("reading partial extremes");
        let mins = stream.clone_dtoh(&mins).map_err(&read)?;
        let maxs = stream.clone_dtoh(&maxs).map_err(&read)?;
        let found = stream.clone_dtoh(&found).map_err(&read)?;
        stream
            .synchronize()
            .map_err(driver("running the extremes kernel"))?;
        let blocks = grid as usize;
        Ok((0..dims)
            .map(|d| {
                let mut acc: Option<(T, T)> = None;
                for b in (0..blocks).filter(|&b| found[b] != 0) {
                    let (lo, hi) = (mins[d * blocks + b], maxs[d * blocks + b]);
                    acc = Some(match acc {
                        None => (lo, hi),
                        Some((a, c)) => (if lo < a { lo } else { a }, if hi > c { hi } else { c }),
                    });
                }
                acc.map_or(crate::bins::Extremes::Empty, |(lo, hi)| T::extremes(lo, hi))
            })
            .collect())
    }

    with_tag!(tag, |T| finish::<T>(gpu, stream, columns, len))
}

/// The linearized histogram of device columns `(address, stride)` of dtype `tag`.
#[allow(clippy::too_many_arguments)]
pub fn linear_device(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    tag: crate::DataTypeTag,
    columns: &[(u64, u32)],
    specs: &[BinSpec],
    strides: &[usize],
    cells: usize,
    len: u64,
    weights: Option<u64>,
    force: Option<Family>,
) -> HistResult<(Counts, Plan, f32)> {
    let plan = plan::plan_linear(&gpu.props, cells, weights.is_some(), len, force)?;
    let mut keep: Keep = Vec::new();
    let rules = device_rules(stream, columns, specs, strides, cells, &mut keep)?;
    let (c_type, _) = tag.c_type_and_size();
    let (counts, ms) = run_linear(gpu, stream, c_type, &rules, &plan, len, weights)?;
    drop(keep);
    Ok((counts, plan, ms))
}
