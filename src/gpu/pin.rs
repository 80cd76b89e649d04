//! Columns kept in device memory because the user asked for it (`polars_gpu_hist.pin`): later
//! histograms of the same column, with other bins or ranges, read the device copy instead of
//! copying the column again.
//!
//! Nothing is kept without being asked: a column's memory may belong to numpy, pyarrow or a
//! memory-mapped file, which can change it in place behind Polars' back, and no plugin can
//! tell. Pinning is the user's promise that the column's memory stays as it is while pinned. A
//! pin is found by the addresses and lengths of the column's Arrow buffers and holds a clone of
//! the column, so the buffers cannot be freed or reused for other data while it lives.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use polars::prelude::Series;

use crate::error::HistResult;
use crate::gpu::context::{driver, Gpu};
use crate::gpu::settings::Settings;
use crate::gpu::{abi, transfer};
use crate::input::{Chunk, HostColumn};

/// A chunk's identity: values address and byte length, validity address and bit offset.
type ChunkKey = (usize, usize, usize, usize);

fn key_of(chunk: &Chunk<'_>) -> ChunkKey {
    let bytes = chunk.values.bytes();
    let (validity, offset) = chunk
        .validity
        .map_or((0, 0), |v| (v.bytes.as_ptr() as usize, v.offset));
    (bytes.as_ptr() as usize, bytes.len(), validity, offset)
}

/// A chunk's device copy: its values, and its validity bytes with the bit offset of its first row.
type DeviceChunk = (CudaSlice<u8>, Option<(CudaSlice<u8>, u64)>);

/// A pinned column: the device copy of each chunk.
pub struct Pinned {
    key: Vec<ChunkKey>,
    _owner: Series,
    chunks: Vec<DeviceChunk>,
    elem_bytes: u64,
    bytes: usize,
    /// The GPU holding the copy.
    pub ordinal: i32,
}

impl Pinned {
    /// Rows `offset..offset + len` of chunk `chunk` as the kernels read them.
    pub fn column(
        &self,
        stream: &Arc<CudaStream>,
        (chunk, offset): (usize, usize),
        len: usize,
    ) -> abi::Column {
        let (values, validity) = &self.chunks[chunk];
        let (validity, validity_offset) = validity
            .as_ref()
            .map_or((0, 0), |(v, o)| (v.device_ptr(stream).0, o + offset as u64));
        abi::Column {
            values: values.device_ptr(stream).0 + offset as u64 * self.elem_bytes,
            validity,
            validity_offset,
            len: len as u64,
            stride: 1,
        }
    }
}

static PINS: Mutex<Vec<Arc<Pinned>>> = Mutex::new(Vec::new());

fn pins() -> std::sync::MutexGuard<'static, Vec<Arc<Pinned>>> {
    PINS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Copies `series` (a column the engine reads as it is, physical values) to `gpu` and keeps it
/// there until [`unpin`] or [`clear`]. Returns the device bytes it takes. A column has one pin:
/// pinned to another GPU before, it moves.
pub fn pin(gpu: &Gpu, series: &Series, settings: &Settings) -> HistResult<usize> {
    let column = HostColumn::new(series)?;
    let key: Vec<ChunkKey> = column.chunks.iter().map(key_of).collect();
    {
        let mut pins = pins();
        if let Some(p) = pins.iter().find(|p| p.key == key) {
            if p.ordinal == gpu.ordinal() {
                return Ok(p.bytes);
            }
        }
        pins.retain(|p| p.key != key);
    }
    let stream = gpu.stream()?;
    let how = settings.transfer;
    let send = |bytes: &[u8]| -> HistResult<CudaSlice<u8>> {
        // SAFETY: filled by the copy before it is read (same stream, synchronized below).
        let mut d = unsafe { stream.alloc::<u8>(bytes.len().max(1)) }
            .map_err(driver("allocating device memory to pin a column"))?;
        transfer::upload(gpu, &stream, bytes, &mut d, how)?;
        Ok(d)
    };
    let mut bytes = 0;
    let mut chunks = Vec::with_capacity(column.chunks.len());
    for chunk in &column.chunks {
        let values = send(chunk.values.bytes())?;
        bytes += chunk.values.bytes().len();
        let validity = match chunk.validity {
            Some(v) => {
                let (bits, offset) = v.bytes_for(chunk.len());
                bytes += bits.len();
                Some((send(bits)?, offset as u64))
            }
            None => None,
        };
        chunks.push((values, validity));
    }
    stream
        .synchronize()
        .map_err(driver("copying a column to pin it"))?;
    pins().push(Arc::new(Pinned {
        key,
        _owner: series.clone(),
        chunks,
        elem_bytes: column.dtype.size() as u64,
        bytes,
        ordinal: gpu.ordinal(),
    }));
    Ok(bytes)
}

/// Drops the pin of `series`; whether there was one.
pub fn unpin(series: &Series) -> HistResult<bool> {
    let column = HostColumn::new(series)?;
    let key: Vec<ChunkKey> = column.chunks.iter().map(key_of).collect();
    let mut pins = pins();
    let before = pins.len();
    pins.retain(|p| p.key != key);
    Ok(pins.len() != before)
}

/// Drops every pin (device memory is freed once no running call holds it).
pub fn clear() {
    pins().clear();
}

/// (columns, device bytes) pinned now.
pub fn usage() -> (usize, usize) {
    let pins = pins();
    (pins.len(), pins.iter().map(|p| p.bytes).sum())
}

/// The pinned copy of `column`, if there is one.
pub fn find(column: &HostColumn<'_>) -> Option<Arc<Pinned>> {
    let key: Vec<ChunkKey> = column.chunks.iter().map(key_of).collect();
    pins().iter().find(|p| p.key == key).cloned()
}
