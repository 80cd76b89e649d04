//! Device memory for the kernels' scratch (the segmented family's keys: 1 GiB for a launch of
//! 2^29 rows) and for the histograms counted on the device, from a pool of this process's own
//! that keeps what it held between calls, up to a bound. The driver's default pool gives its memory back at every
//! synchronization, so each call mapped its scratch anew: about 0.7 ms of a 5.6 ms call at 1M
//! bins on an H100. A pool of our own leaves the default pool, which CuPy or PyTorch may share,
//! as its owners set it.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUmemoryPool};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, DriverError};

/// The most scratch a pool keeps between calls on a device of `total_memory` bytes: the
/// largest segmented launch's keys twice over (with its tile tables and the counts of a large
/// histogram beside them), never more than a sixteenth of the memory.
fn retain_bytes(total_memory: u64) -> u64 {
    (4 * crate::gpu::plan::seg_rows_per_launch(total_memory)).min(total_memory / 16)
}

/// The process's scratch pool on one device.
pub struct ScratchPool(CUmemoryPool);

// SAFETY: a memory pool handle may be used from any thread (the driver serializes its use).
unsafe impl Send for ScratchPool {}
unsafe impl Sync for ScratchPool {}

impl ScratchPool {
    /// A pool on device `ordinal` keeping at most `retain_bytes(total_memory)`; None where the
    /// device has no stream-ordered pools.
    pub fn new(ordinal: i32, total_memory: u64) -> Option<Self> {
        // SAFETY: zeroed props are the driver's defaults (no IPC handles, no size limit); the
        // fields set below are the documented ones for a pinned device pool.
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = ordinal;
        let mut pool: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: valid out-pointer and props; the context of `ordinal` is current.
        unsafe { sys::cuMemPoolCreate(&mut pool, &props) }
            .result()
            .ok()?;
        let mut keep: u64 = retain_bytes(total_memory);
        // SAFETY: the release threshold is a u64 attribute of a pool just made.
        let kept = unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast(),
            )
        };
        if kept.result().is_err() {
            // SAFETY: nothing was allocated from it.
            let _ = unsafe { sys::cuMemPoolDestroy(pool) }.result();
            return None;
        }
        Some(ScratchPool(pool))
    }

    /// `len` values of `T` on `stream`, uninitialized, from `pool` where there is one (or from
    /// the driver's default pool).
    ///
    /// # Safety
    /// Every value a kernel reads must have been written before, in stream order.
    pub unsafe fn alloc<T: DeviceRepr>(
        pool: Option<&ScratchPool>,
        stream: &Arc<CudaStream>,
        len: usize,
    ) -> Result<Scratch<T>, DriverError> {
        let Some(pool) = pool else {
            return Ok(Scratch::Driver(stream.alloc::<T>(len)?));
        };
        stream.context().bind_to_thread()?;
        let mut ptr: sys::CUdeviceptr = 0;
        let bytes = (len * std::mem::size_of::<T>()).max(1);
        sys::cuMemAllocFromPoolAsync(&mut ptr, bytes, pool.0, stream.cu_stream()).result()?;
        Ok(Scratch::Pooled {
            ptr,
            len,
            stream: stream.clone(),
            marker: PhantomData,
        })
    }
}

/// Scratch from [`ScratchPool::alloc`], given back in stream order when dropped.
pub enum Scratch<T: DeviceRepr> {
    Pooled {
        ptr: sys::CUdeviceptr,
        len: usize,
        stream: Arc<CudaStream>,
        marker: PhantomData<T>,
    },
    Driver(CudaSlice<T>),
}

impl<T: DeviceRepr> Scratch<T> {
    /// The device address of the first value.
    pub fn ptr(&self, stream: &Arc<CudaStream>) -> u64 {
        match self {
            Scratch::Pooled { ptr, .. } => *ptr,
            Scratch::Driver(slice) => slice.device_ptr(stream).0,
        }
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        match self {
            Scratch::Pooled { len, .. } => *len,
            Scratch::Driver(slice) => slice.len(),
        }
    }
}

impl<T: DeviceRepr> Drop for Scratch<T> {
    fn drop(&mut self) {
        if let Scratch::Pooled { ptr, stream, .. } = self {
            // SAFETY: `ptr` came from this pool on `stream`; the kernels that use it were
            // queued on `stream` before, so the free waits for them. A failure here (a context
            // already torn down at exit) leaves nothing to free.
            let _ = stream.context().bind_to_thread();
            let _ = unsafe { sys::cuMemFreeAsync(*ptr, stream.cu_stream()) }.result();
        }
    }
}
