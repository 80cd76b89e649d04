//! Host columns to the device. A Polars column lives in pageable memory, which the GPU copies
//! from at about 10 GB/s through the driver's own bounce buffer; pinned memory copies at about
//! 55 GB/s. Two ways to get there, both measured in BENCHMARKS.md:
//! - `Staged`: CPU threads copy the column, a chunk at a time, into a ring of pinned buffers
//!   allocated once per process, while the DMA engine drains the previous chunk.
//! - `Registered`: the Arrow buffers are page-locked where they are (`cuMemHostRegister`), copied
//!   at pinned speed, and unlocked.
//!
//! Large results come back through the same ring ([`download`]).

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DriverError};
use serde::{Deserialize, Serialize};

use super::{driver, Gpu};
use crate::error::{HistError, HistResult};

/// How host values reach the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transfer {
    /// The faster of the two below for this host (see [`Transfer::AUTO_CHOICE`]).
    #[default]
    Auto,
    /// `cuMemcpyHtoD` straight from pageable memory.
    Pageable,
    /// Through the pinned staging ring.
    Staged,
    /// Page-lock the column's own buffers in place.
    Registered,
}

impl Transfer {
    /// What `Auto` means: on an H200 host a 1 GiB column took 26-34 ms staged, 75-85 ms
    /// page-locked in place and 127-174 ms pageable, end to end (BENCHMARKS.md, 2026-11-22).
    pub const AUTO_CHOICE: Transfer = Transfer::Staged;

    pub fn resolved(self) -> Transfer {
        match self {
            Transfer::Auto => Self::AUTO_CHOICE,
            other => other,
        }
    }

    /// The copy's cost, ns a byte: end-to-end first calls on the H200 host for 1 GiB columns
    /// (BENCHMARKS.md, 2026-11-22): staged 26-34 ms, page-locked in place 75-85 ms, pageable
    /// 127-174 ms.
    pub fn ns_per_byte(self) -> f64 {
        match self.resolved() {
            Transfer::Pageable => 0.14,
            Transfer::Registered => 0.075,
            _ => 0.028,
        }
    }

    pub fn name(self) -> &'static str {
        match self.resolved() {
            Transfer::Pageable => "pageable copy",
            Transfer::Staged => "pinned staging ring",
            Transfer::Registered => "page-locked in place",
            Transfer::Auto => unreachable!("resolved"),
        }
    }
}

/// Bytes of one turn of the ring (and of each of its buffers), and how many buffers it holds:
/// two keep the CPU copy and the DMA busy at once; a third absorbs jitter between them. Each turn
/// costs the threads' copy 0.1-0.2 ms beyond its bytes (waking the pool, the slowest piece); on
/// H100 hosts 128 MiB went up at 16-20 GB/s in 4 MiB turns, 25-38 in 8 MiB turns, 38-43 in 16 MiB
/// turns and 36-40 in 32 MiB turns (`examples/staging_ring.rs`, BENCHMARKS.md 2026-11-27).
pub const TURN_BYTES: usize = 16 << 20;
pub const STAGE_DEPTH: usize = 3;
/// Bytes one thread copies (or makes) at a time in a turn of the ring.
const PIECE_BYTES: usize = 256 << 10;
/// Chunk size for page-locking in place: registration and copy of consecutive chunks overlap.
const REGISTER_BYTES: usize = 64 << 20;

/// Page-locked host memory from `cuMemHostAlloc`, freed on drop.
pub(crate) struct PageLocked {
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
}

// SAFETY: plain memory; the ring's mutex serializes its users.
unsafe impl Send for PageLocked {}

impl PageLocked {
    pub(crate) fn new(len: usize) -> HistResult<PageLocked> {
        // SAFETY: allocates `len` bytes of page-locked memory, cached, and portable: page-locked
        // for every GPU's context (the ring serves them all), not only the current one's.
        let ptr =
            unsafe { cudarc::driver::result::malloc_host(len, sys::CU_MEMHOSTALLOC_PORTABLE) }
                .map_err(driver("allocating page-locked host memory"))?;
        Ok(PageLocked {
            ptr: ptr as *mut u8,
            len,
        })
    }
}

impl Drop for PageLocked {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc above; no copy reads it once the ring is dropped
        // (every use synchronizes on its slot's event first).
        unsafe {
            let _ = cudarc::driver::result::free_host(self.ptr as _);
        }
    }
}

/// A slot of the ring: its buffer, and the event after the last copy into or out of it.
struct Slot {
    buffer: PageLocked,
    copied: Option<cudarc::driver::CudaEvent>,
}

impl Slot {
    /// Waits for the last copy into or out of it.
    fn wait(&mut self) -> Result<(), DriverError> {
        match self.copied.take() {
            Some(done) => done.synchronize(),
            None => Ok(()),
        }
    }

    /// The first `len` bytes of its buffer (at most all of it), once no copy uses them.
    fn free(&mut self, len: usize) -> Result<&mut [u8], DriverError> {
        self.wait()?;
        // SAFETY: no copy uses the buffer any more (waited for above), and the ring's mutex,
        // held by whoever has `&mut self`, keeps other callers out.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.buffer.ptr, len.min(self.buffer.len)) })
    }

    /// Marks the slot in use until the work queued on `stream` so far is done.
    fn in_use_until(&mut self, gpu: &Gpu, stream: &Arc<CudaStream>) -> HistResult<()> {
        let event = gpu
            .ctx
            .new_event(None)
            .map_err(driver("creating an event"))?;
        event.record(stream).map_err(driver("recording an event"))?;
        self.copied = Some(event);
        Ok(())
    }
}

/// The process's pinned staging ring (STAGE_DEPTH x TURN_BYTES).
static RING: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

/// The staging ring, allocated on first use; holding it keeps other callers out.
fn ring() -> HistResult<MutexGuard<'static, Vec<Slot>>> {
    let mut ring = RING.lock().unwrap_or_else(|p| p.into_inner());
    while ring.len() < STAGE_DEPTH {
        ring.push(Slot {
            buffer: PageLocked::new(TURN_BYTES)?,
            copied: None,
        });
    }
    Ok(ring)
}

/// Copies `src` (host) into `dst` (device) on `stream` as `how` says. Returns when the copy is
/// queued; the host memory may be reused once this returns.
pub fn upload(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    src: &[u8],
    dst: &mut CudaSlice<u8>,
    how: Transfer,
) -> HistResult<()> {
    let (dst, _record) = dst.device_ptr_mut(stream);
    // SAFETY: `dst` holds `src.len()` bytes (the caller's slice of that length).
    unsafe { upload_all(gpu, stream, &[(Outgoing::Copied(src), dst)], how) }
}

/// Makes bytes `at..at + out.len()` of a host column that exists only on its way to the device
/// (`at` any multiple of the size of the column's values).
pub type Maker<'a> = Box<dyn Fn(usize, &mut [u8]) + Sync + 'a>;

/// Host bytes on their way to the device: copied as they are, or made on the way (several
/// threads at once, each making a piece).
pub enum Outgoing<'a> {
    Copied(&'a [u8]),
    Made { len: usize, make: Maker<'a> },
}

impl<'a> Outgoing<'a> {
    pub fn len(&self) -> usize {
        match self {
            Outgoing::Copied(bytes) => bytes.len(),
            Outgoing::Made { len, .. } => *len,
        }
    }

    /// The bytes of `items` one after the other, as one item: a column of many chunks (a
    /// scan's batch of morsels) goes up as one copy into one buffer, its turns of the staging
    /// ring full, instead of a turn, an event and a wake of the pool for every chunk.
    pub fn side_by_side(mut items: Vec<Outgoing<'a>>) -> Outgoing<'a> {
        if items.len() == 1 {
            return items.pop().expect("one item");
        }
        let starts: Vec<usize> = items
            .iter()
            .scan(0, |next, item| {
                let start = *next;
                *next += item.len();
                Some(start)
            })
            .collect();
        let len = items.iter().map(Outgoing::len).sum();
        Outgoing::Made {
            len,
            make: Box::new(move |at, out| {
                // The last item starting at or before `at` holds it (`starts[0]` is 0).
                let mut item = starts.partition_point(|&start| start <= at) - 1;
                let mut done = 0;
                while done < out.len() {
                    let offset = at + done - starts[item];
                    let n = (items[item].len() - offset).min(out.len() - done);
                    items[item].write(offset, &mut out[done..done + n]);
                    done += n;
                    item += 1;
                }
            }),
        }
    }

    /// Writes its bytes `at..at + out.len()` into `out`.
    pub(crate) fn write(&self, at: usize, out: &mut [u8]) {
        match self {
            Outgoing::Copied(bytes) => out.copy_from_slice(&bytes[at..at + out.len()]),
            Outgoing::Made { make, .. } => make(at, out),
        }
    }
}

/// Copies each item to the device address beside it on `stream`, as `how` says. Through the
/// staging ring all items go in one pass, so that the DMA engine never waits between them.
/// Returns when the copies are queued; the host memory may be reused once this returns.
///
/// # Safety
/// Each device address must have room for its item's bytes, and stay allocated until the copies
/// queued on `stream` are done.
pub unsafe fn upload_all(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    items: &[(Outgoing<'_>, sys::CUdeviceptr)],
    how: Transfer,
) -> HistResult<()> {
    use rayon::prelude::*;
    let copy = driver("copying the column to the device");
    if how.resolved() == Transfer::Staged {
        return staged(gpu, stream, items);
    }
    for (item, dst) in items {
        let made: Vec<u8>;
        let bytes = match item {
            Outgoing::Copied(bytes) => *bytes,
            Outgoing::Made { len, make } => {
                made = {
                    let mut out: Vec<u8> = crate::alloc::zeroed(*len)?;
                    out.par_chunks_mut(PIECE_BYTES)
                        .enumerate()
                        .for_each(|(k, piece)| make(k * PIECE_BYTES, piece));
                    out
                };
                &made
            }
        };
        match how.resolved() {
            Transfer::Pageable => {
                // SAFETY: the caller's contract for `dst`; a copy from pageable memory has read
                // its source when it returns (the driver stages it).
                unsafe {
                    cudarc::driver::result::memcpy_htod_async(*dst, bytes, stream.cu_stream())
                }
                .map_err(&copy)?
            }
            // SAFETY: the caller's contract for `dst`.
            Transfer::Registered => unsafe { registered(gpu, stream, bytes, *dst) }?,
            Transfer::Auto | Transfer::Staged => unreachable!("resolved, staged above"),
        }
    }
    Ok(())
}

/// The items' bytes made in the pinned ring a turn at a time, each turn copied to its device
/// address while the next is made.
fn staged(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    items: &[(Outgoing<'_>, sys::CUdeviceptr)],
) -> HistResult<()> {
    use rayon::prelude::*;
    let mut ring = ring()?;
    let copy = driver("copying the column to the device");
    let mut turns = 0;
    for (item, dst) in items {
        let len = item.len();
        for start in (0..len).step_by(TURN_BYTES) {
            let slot = &mut ring[turns % STAGE_DEPTH];
            turns += 1;
            let staging = slot.free(TURN_BYTES.min(len - start)).map_err(&copy)?;
            // Several threads: one thread's memcpy reaches about a third of host memory bandwidth.
            staging
                .par_chunks_mut(PIECE_BYTES)
                .enumerate()
                .for_each(|(k, out)| item.write(start + k * PIECE_BYTES, out));
            // SAFETY: `dst` holds `len` bytes (the caller's contract); the staging buffer outlives
            // the copy (the slot is marked in use until it is done, and the ring is never shrunk).
            unsafe {
                cudarc::driver::result::memcpy_htod_async(
                    dst + start as u64,
                    &staging[..],
                    stream.cu_stream(),
                )
            }
            .map_err(&copy)?;
            slot.in_use_until(gpu, stream)?;
        }
    }
    // The caller's stream orders the copies before its kernels; the slots' events let the next
    // caller reuse them. Return only when the last copy has left the staging memory so that the
    // ring's mutex also bounds how long another caller waits.
    for slot in ring.iter_mut() {
        slot.wait().map_err(&copy)?;
    }
    Ok(())
}

/// Below this many bytes a result is copied straight into pageable memory: the ring's events and
/// threads cost more than they save.
const DIRECT_DOWNLOAD_BYTES: usize = 1 << 20;

/// `len` values of `T` at device address `src`, copied to a new host vector once the work queued
/// before on `stream` is done; returns when they are there. Large results come through the
/// staging ring: the driver's own copy into pageable memory writes a page at a time through its
/// bounce buffer (16M counts, 128 MB, took 25-33 ms on an H100 host), where CPU threads copy
/// out of pinned memory at host memory speed while the next chunk is in flight.
pub fn download<T: cudarc::driver::DeviceRepr>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    src: sys::CUdeviceptr,
    len: usize,
) -> HistResult<Vec<T>> {
    use rayon::prelude::*;
    let copy = driver("copying the histogram to the host");
    let mut out: Vec<T> = crate::alloc::with_capacity(len)?;
    let bytes = len * std::mem::size_of::<T>();
    // SAFETY: the vector's spare room holds `bytes` bytes; they are only written here.
    let dst = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), bytes) };
    if bytes < DIRECT_DOWNLOAD_BYTES {
        // SAFETY: `dst` holds `bytes` bytes, as the device memory at `src` does; the copy is
        // waited for before `dst` is read.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, src, stream.cu_stream()) }
            .map_err(&copy)?;
        stream.synchronize().map_err(&copy)?;
    } else {
        let mut ring = ring()?;
        let turn = TURN_BYTES;
        let chunks: Vec<&mut [u8]> = dst.chunks_mut(turn).collect();
        // Chunk `i` goes through slot `i % STAGE_DEPTH`: every slot's copy is queued before the
        // first is read out, and a slot takes its next chunk as soon as it is emptied.
        let queue_chunk = |slot: &mut Slot, i: usize, len: usize| -> HistResult<()> {
            let staging = slot.free(len).map_err(&copy)?;
            // SAFETY: the device range lies within the `len` values at `src`; the slot is marked
            // in use until the copy is done.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(
                    staging,
                    src + (i * turn) as u64,
                    stream.cu_stream(),
                )
            }
            .map_err(&copy)?;
            slot.in_use_until(gpu, stream)
        };
        for (i, chunk) in chunks.iter().enumerate().take(STAGE_DEPTH) {
            queue_chunk(&mut ring[i], i, chunk.len())?;
        }
        let count = chunks.len();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let slot = &mut ring[i % STAGE_DEPTH];
            let staged = slot.free(chunk.len()).map_err(&copy)?;
            // Several threads: one thread's memcpy reaches about a third of host memory
            // bandwidth, and the first touch of fresh pages is paid on every core at once.
            chunk
                .par_chunks_mut(PIECE_BYTES)
                .zip(staged.par_chunks(PIECE_BYTES))
                .for_each(|(d, s)| d.copy_from_slice(s));
            let next = i + STAGE_DEPTH;
            if next < count {
                queue_chunk(slot, next, turn.min(bytes - next * turn))?;
            }
        }
    }
    // SAFETY: all `len` values were written above (the bytes of plain device values).
    unsafe { out.set_len(len) };
    Ok(out)
}

/// Page-locks `src` in chunks on all threads, copies each at pinned speed, unlocks them.
///
/// # Safety
/// `dst` must have room for `src.len()` bytes.
unsafe fn registered(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    src: &[u8],
    dst_ptr: sys::CUdeviceptr,
) -> HistResult<()> {
    use rayon::prelude::*;
    let chunks: Vec<&[u8]> = src.chunks(REGISTER_BYTES).collect();
    let locked: Vec<HistResult<bool>> = chunks.par_iter().map(|c| lock(gpu, c)).collect();
    let mut result = Ok(());
    for (i, (chunk, locked)) in chunks.iter().zip(&locked).enumerate() {
        if let Err(e) = locked {
            result = Err(HistError::Gpu(e.to_string()));
            break;
        }
        // SAFETY: `dst` holds src.len() bytes; `chunk` stays valid (and locked) until the stream
        // has been synchronized below.
        let queued = unsafe {
            cudarc::driver::result::memcpy_htod_async(
                dst_ptr + (i * REGISTER_BYTES) as u64,
                chunk,
                stream.cu_stream(),
            )
        };
        if let Err(e) = queued {
            result = Err(driver("copying the column to the device")(e));
            break;
        }
    }
    let synced = stream
        .synchronize()
        .map_err(driver("copying the column to the device"));
    chunks
        .par_iter()
        .zip(&locked)
        .filter(|(_, l)| matches!(l, Ok(true)))
        .for_each(|(c, _)| unlock(gpu, c));
    result.and(synced)
}

/// Page-locks the pages of `chunk`; `Ok(false)` when they already were (someone else's lock,
/// which the copy may use as well).
fn lock(gpu: &Gpu, chunk: &[u8]) -> HistResult<bool> {
    // Registration needs the context current on this (pool) thread.
    gpu.ctx
        .bind_to_thread()
        .map_err(driver("page-locking the column in place"))?;
    // SAFETY: registers existing, live host memory; unregistered by `unlock` before returning.
    // Portable: another GPU's call may find the pages locked (`Ok(false)`) and copy from them.
    let rc = unsafe {
        sys::cuMemHostRegister_v2(
            chunk.as_ptr() as *mut _,
            chunk.len(),
            sys::CU_MEMHOSTREGISTER_PORTABLE,
        )
    };
    match rc {
        sys::CUresult::CUDA_SUCCESS => Ok(true),
        sys::CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => Ok(false),
        other => Err(HistError::Gpu(format!(
            "page-locking the column in place failed: {other:?}"
        ))),
    }
}

fn unlock(gpu: &Gpu, chunk: &[u8]) {
    let _ = gpu.ctx.bind_to_thread();
    // SAFETY: `chunk` was registered by `lock`.
    unsafe {
        let _ = sys::cuMemHostUnregister(chunk.as_ptr() as *mut _);
    }
}
