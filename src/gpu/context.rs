//! The process's GPUs: each device's primary context (the one CuPy and PyTorch use) opened on
//! its first use, never by a panic (a machine without a driver simply has no GPU), with the
//! device's properties and the kernels loaded into it so far. Which device a call uses is
//! decided in [`super::device`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, DriverError, LaunchConfig,
};

use crate::error::{HistError, HistResult};
use crate::gpu::kernel::KernelId;
use crate::gpu::made_once::MadeOnce;
use crate::gpu::plan::{DeviceProps, Tuning, TUNING_ENV};
use crate::gpu::scratch::ScratchPool;
use crate::gpu::settings::Settings;
use crate::gpu::{bundle, compile};

/// One GPU of the process, opened on first use.
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    pub props: DeviceProps,
    /// The plan's constants for this device's architecture, with the overrides
    /// `POLARS_GPU_HIST_TUNING` names (benchmarks).
    pub tuning: Tuning,
    /// Compute capability as `major * 10 + minor` (the `sm_XX` kernels are built for).
    pub arch: u32,
    /// The driver's CUDA version, 1000 major + 10 minor (13000 for 13.0), or the older one
    /// `POLARS_GPU_HIST_DRIVER_VERSION` asks the kernels to be chosen for (tests of the CUDA 12
    /// path on a newer driver).
    pub driver_version: u32,
    /// Which kernel images may be used (`POLARS_GPU_HIST_KERNELS`: see [`bundle::Source`]).
    pub kernel_source: bundle::Source,
    /// Where the kernels' scratch comes from (None: the driver's default pool).
    pub(crate) scratch: Option<ScratchPool>,
    /// Kernels loaded so far: a first use compiles outside the map's lock.
    kernels: MadeOnce<KernelId, Loaded>,
    /// Where compiled kernels are kept (the settings' when the GPU was opened: kernels load
    /// once a process).
    pub kernel_cache: Option<PathBuf>,
}

/// A kernel loaded once, with what the driver said of it: each is a call that every launch
/// paid before (about 0.15 ms of a 0.7 ms histogram).
struct Loaded {
    _module: Arc<CudaModule>,
    func: CudaFunction,
    /// The dynamic shared memory the kernel was allowed so far.
    shared_allowed: u32,
    /// (block asked, shared bytes) -> (block the kernel can run, resident blocks per SM).
    occupancy: HashMap<(u32, u32), (u32, u32)>,
}

/// A GPU opened on first use, or why it could not be.
type Slot = OnceLock<Result<Gpu, String>>;

/// Each device's slot, by ordinal; or why the process has no GPU (no driver, no device).
static GPUS: OnceLock<Result<Vec<Slot>, String>> = OnceLock::new();

/// A thread's stream, and the event that orders it after the legacy default stream.
#[derive(Clone)]
struct ThreadStream {
    stream: Arc<CudaStream>,
    default_done: Arc<CudaEvent>,
}

thread_local! {
    /// The calling thread's stream on each device it used, by ordinal.
    static THREAD_STREAMS: RefCell<Vec<Option<ThreadStream>>> = const { RefCell::new(Vec::new()) };
}

fn why(e: HistError) -> String {
    match e {
        HistError::Gpu(why) => why,
        other => other.to_string(),
    }
}

/// Whether the driver library (libcuda) can be loaded: cudarc panics on first use without it.
pub(crate) fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen libcuda.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// How many GPUs the process sees, or why it sees none (no driver, no device).
pub fn device_count() -> HistResult<usize> {
    GPUS.get_or_init(|| {
        if !driver_present() {
            return Err("no NVIDIA driver (libcuda) was found".into());
        }
        let count = std::panic::catch_unwind(CudaContext::device_count)
            .map_err(|_| "the CUDA driver failed to initialize".to_string())?
            .map_err(|e| why(driver("no usable CUDA device")(e)))?;
        match count {
            0 => Err("the driver sees no CUDA device".into()),
            n => Ok((0..n).map(|_| OnceLock::new()).collect()),
        }
    })
    .as_ref()
    .map(Vec::len)
    .map_err(|why| HistError::Gpu(why.clone()))
}

/// GPU `ordinal`, opened on its first use and bound to the calling thread (the driver calls
/// that name no context act on it), or why it cannot be used.
pub fn on(ordinal: i32) -> HistResult<&'static Gpu> {
    let count = device_count()?;
    let index = super::device::checked_ordinal(ordinal as i64, count)?;
    let gpus = GPUS.get().and_then(|g| g.as_ref().ok()).expect("counted");
    let gpu = gpus[index]
        .get_or_init(|| Gpu::open(index).map_err(why))
        .as_ref()
        .map_err(|why| HistError::Gpu(why.clone()))?;
    gpu.ctx
        .bind_to_thread()
        .map_err(driver("binding the context"))?;
    Ok(gpu)
}

/// The GPU that host rows go to: the calling thread's current device (see
/// [`super::device::current`]).
pub fn get() -> HistResult<&'static Gpu> {
    device_count()?;
    on(super::device::current())
}

/// Whether a GPU can be used in this process.
pub fn available() -> bool {
    get().is_ok()
}

/// The driver's handle for the legacy default stream (`CU_STREAM_LEGACY` in cuda.h).
const CU_STREAM_LEGACY: cudarc::driver::sys::CUstream = 0x1 as cudarc::driver::sys::CUstream;

/// A driver error as ours, naming what failed; out-of-memory said plainly.
pub(crate) fn driver(what: &str) -> impl Fn(DriverError) -> HistError + '_ {
    move |e| {
        let text = format!("{e:?}");
        if text.contains("OUT_OF_MEMORY") {
            HistError::Gpu(format!("out of device memory ({what})"))
        } else {
            HistError::Gpu(format!("{what}: {text}"))
        }
    }
}

/// The driver's version (1000 major + 10 minor), or the older one that
/// `POLARS_GPU_HIST_DRIVER_VERSION` names (e.g. 12040): kernels are then chosen as under that
/// driver. A newer one than the driver's is refused (the driver could not load its kernels).
fn chosen_driver_version(actual: u32) -> HistResult<u32> {
    let Ok(asked) = std::env::var("POLARS_GPU_HIST_DRIVER_VERSION") else {
        return Ok(actual);
    };
    match asked.trim().parse::<u32>() {
        Ok(v) if (1000..=actual).contains(&v) => Ok(v),
        _ => Err(HistError::Gpu(format!(
            "POLARS_GPU_HIST_DRIVER_VERSION={asked:?}: give a CUDA version as the driver reports \
             it (1000 major + 10 minor, e.g. 12040 for 12.4), at most the driver's own ({actual})"
        ))),
    }
}

impl Gpu {
    /// Device `ordinal`'s primary context (the driver is present: [`device_count`] said so).
    fn open(ordinal: usize) -> HistResult<Gpu> {
        let ctx = std::panic::catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| HistError::Gpu("the CUDA driver failed to initialize".into()))?
            .map_err(driver(&format!("opening GPU {ordinal}")))?;
        ctx.bind_to_thread()
            .map_err(driver("binding the context"))?;
        let attr = |a: Attr| {
            ctx.attribute(a)
                .map(|v| v as u32)
                .map_err(driver("device query"))
        };
        // SAFETY: each call synchronizes its stream before it returns, and a buffer is used on
        // the stream that made it (or after that stream was synchronized): the wrapper's
        // events per buffer and per use ordered nothing more, at several driver calls each.
        unsafe { ctx.disable_event_tracking() };
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
        let mut driver_version = 0;
        // SAFETY: one valid out-pointer; the driver is loaded (the context exists).
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .map_err(driver("device query"))?;
        let kernel_source =
            bundle::Source::parse(&std::env::var("POLARS_GPU_HIST_KERNELS").unwrap_or_default())
                .map_err(HistError::Gpu)?;
        let tuning = Tuning::of(props.compute_capability)
            .overridden(&std::env::var(TUNING_ENV).unwrap_or_default())
            .map_err(HistError::Gpu)?;
        Ok(Gpu {
            tuning,
            scratch: ScratchPool::new(ctx.ordinal() as i32, props.total_memory),
            ctx,
            arch: major as u32 * 10 + minor as u32,
            driver_version: chosen_driver_version(driver_version as u32)?,
            kernel_source,
            props,
            kernels: MadeOnce::default(),
            kernel_cache: Settings::from_env().kernel_cache,
        })
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> i32 {
        self.ctx.ordinal() as i32
    }

    /// Refuses an address the kernels here cannot read: memory CUDA does not know (a host
    /// buffer handed over as device memory), or device memory of another GPU, which a kernel
    /// here would fault on (and a fault poisons the context for every later call). Page-locked
    /// host memory and managed memory are read through unified addressing.
    pub fn check_readable(&self, ptr: u64, what: &str) -> HistResult<()> {
        let homes = [
            (
                "the data".to_string(),
                super::device::Home::Device(self.ordinal()),
            ),
            (what.to_string(), super::device::home_of(ptr, what)?),
        ];
        super::device::one_device(homes, self.ordinal()).map(|_| ())
    }

    /// The calling thread's stream, made on its first use: concurrent callers (Polars'
    /// threads) each have their own, and every call synchronizes it before returning. Made
    /// once rather than per call: the driver wrapper synchronizes the whole context whenever a
    /// context's first stream is made, which a stream made and dropped per call paid each time.
    pub fn stream(&self) -> HistResult<Arc<CudaStream>> {
        Ok(self.thread_stream()?.stream)
    }

    /// The caller's own stream (`handle` 0: the legacy default stream), borrowed: work queued on
    /// it runs in the caller's order, and it is never destroyed here.
    pub fn borrowed_stream(&self, handle: u64) -> Arc<CudaStream> {
        let handle = match handle {
            0 => CU_STREAM_LEGACY,
            h => h as cudarc::driver::sys::CUstream,
        };
        // SAFETY: the caller's stream outlives the call that queues work on it; a borrowed
        // stream is never destroyed by cudarc.
        unsafe { self.ctx.wrap_borrowed_stream(handle) }
    }

    /// The calling thread's stream, ordered after the work queued so far on the legacy default
    /// stream. Our streams do not block on it, but that is where CuPy, for one, copies an array
    /// in: a kernel that read the array without waiting raced the copy (miscounts seen on an
    /// H200).
    pub fn stream_after_default(&self) -> HistResult<Arc<CudaStream>> {
        let ThreadStream {
            stream,
            default_done,
        } = self.thread_stream()?;
        // SAFETY: CU_STREAM_LEGACY is a valid handle in every context and is never destroyed.
        let legacy = unsafe { self.ctx.wrap_borrowed_stream(CU_STREAM_LEGACY) };
        let order = driver("ordering after the default stream");
        default_done.record(&legacy).map_err(&order)?;
        stream.wait(&default_done).map_err(&order)?;
        Ok(stream)
    }

    fn thread_stream(&self) -> HistResult<ThreadStream> {
        let index = self.ordinal() as usize;
        THREAD_STREAMS.with(|cell| {
            if let Some(Some(made)) = cell.borrow().get(index) {
                return Ok(made.clone());
            }
            let made = ThreadStream {
                stream: self.ctx.new_stream().map_err(driver("stream"))?,
                default_done: Arc::new(
                    self.ctx
                        .new_event(None)
                        .map_err(driver("creating an event"))?,
                ),
            };
            let mut streams = cell.borrow_mut();
            if streams.len() <= index {
                streams.resize(index + 1, None);
            }
            streams[index] = Some(made.clone());
            Ok(made)
        })
    }

    /// A launch of 256-thread blocks, one of `items` a thread, at most 8 blocks an SM: the
    /// kernel strides over the rest (the `edges` and `prove` kernels).
    pub fn strided_launch(&self, items: u64) -> LaunchConfig {
        const BLOCK: u32 = 256;
        let blocks = items.div_ceil(BLOCK as u64).max(1);
        LaunchConfig {
            grid_dim: (blocks.min(self.props.sm_count as u64 * 8) as u32, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// The kernel `id`, found prebuilt (the wheel's bundle), in the disk cache or compiled, and
    /// loaded on first use; `shared_bytes` of dynamic shared memory allowed.
    pub fn kernel(&self, id: KernelId, shared_bytes: u32) -> HistResult<CudaFunction> {
        self.with_kernel(id, shared_bytes, |loaded| Ok(loaded.func.clone()))
    }

    /// Kernel `id` on `grid` blocks of `block` threads with `shared` bytes, cut to what the
    /// compiled kernel can run: a kernel with many registers (their number varies with the
    /// NVRTC version) may not take 1024 threads a block, or as many blocks per SM as shared
    /// memory allows, and a grid past what is resident at once runs in two waves.
    pub fn launch_config(
        &self,
        id: KernelId,
        grid: u32,
        block: u32,
        shared: u32,
    ) -> HistResult<(CudaFunction, LaunchConfig)> {
        let sm_count = self.props.sm_count;
        self.with_kernel(id, shared, |loaded| {
            let (block, per_sm) = match loaded.occupancy.get(&(block, shared)) {
                Some(&known) => known,
                None => {
                    let query = driver("querying the kernel");
                    let most = loaded.func.max_threads_per_block().map_err(&query)? as u32;
                    let fitted = block.min(most / 32 * 32);
                    let per_sm = loaded
                        .func
                        .occupancy_max_active_blocks_per_multiprocessor(
                            fitted,
                            shared as usize,
                            None,
                        )
                        .map_err(&query)?
                        .max(1);
                    loaded.occupancy.insert((block, shared), (fitted, per_sm));
                    (fitted, per_sm)
                }
            };
            let cfg = LaunchConfig {
                grid_dim: (grid.min(sm_count * per_sm).max(1), 1, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: shared,
            };
            Ok((loaded.func.clone(), cfg))
        })
    }

    /// Kernel `id` as the driver loads it: prebuilt (a CUBIN, or PTX the driver compiles),
    /// else compiled by NVRTC, where NVRTC makes what this driver can load.
    fn kernel_image(&self, id: &KernelId) -> HistResult<cudarc::nvrtc::Ptx> {
        use cudarc::nvrtc::Ptx;
        match bundle::find(id, self.arch, self.driver_version, self.kernel_source) {
            Some(image) if image.format == bundle::Format::Cubin => {
                Ok(Ptx::from_binary(image.bytes))
            }
            Some(image) => String::from_utf8(image.bytes)
                .map(Ptx::from_src)
                .map_err(|_| HistError::Gpu(format!("the bundle's PTX of {id} is not text"))),
            None => {
                compile::check_driver(self.driver_version)?;
                Ok(Ptx::from_binary(compile::cubin(
                    id,
                    self.arch,
                    self.kernel_cache.as_deref(),
                )?))
            }
        }
    }

    fn with_kernel<T>(
        &self,
        id: KernelId,
        shared_bytes: u32,
        f: impl FnOnce(&mut Loaded) -> HistResult<T>,
    ) -> HistResult<T> {
        self.kernels.with(
            &id,
            || self.load(id),
            |loaded| Self::allow(loaded, shared_bytes, f),
        )
    }

    /// Kernel `id`, found prebuilt (the wheel's bundle: see [`Self::kernel_image`]), in the disk
    /// cache or compiled, and loaded into the context.
    fn load(&self, id: KernelId) -> HistResult<Loaded> {
        let image = self.kernel_image(&id)?;
        let module = self
            .ctx
            .load_module(image)
            .map_err(driver("loading a kernel"))?;
        let func = module
            .load_function(id.entry())
            .map_err(driver("looking up a kernel"))?;
        Ok(Loaded {
            _module: module,
            func,
            shared_allowed: 48 * 1024,
            occupancy: HashMap::new(),
        })
    }

    /// `f` of `loaded`, once it may take `shared_bytes` of dynamic shared memory.
    fn allow<T>(
        loaded: &mut Loaded,
        shared_bytes: u32,
        f: impl FnOnce(&mut Loaded) -> HistResult<T>,
    ) -> HistResult<T> {
        if shared_bytes > loaded.shared_allowed {
            use cudarc::driver::sys::CUfunction_attribute as F;
            loaded
                .func
                .set_attribute(
                    F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared_bytes as i32,
                )
                .map_err(driver("asking for shared memory"))?;
            loaded.shared_allowed = shared_bytes;
        }
        f(loaded)
    }
}
