//! Device copies of recently histogrammed host columns. People histogram the same column again
//! with other bins; the second call then reads it from device memory (a fraction of a
//! millisecond for a GiB) instead of copying it again.
//!
//! An entry is keyed by the addresses and lengths of the column's Arrow buffers and holds a
//! clone of the column (the `Series`): the buffers cannot be freed, reused or mutated in place
//! (Polars only mutates buffers it owns alone) while the entry lives, so a key never names
//! other data. Entries are evicted least recently used first, within a byte budget:
//! `POLARS_GPU_HIST_DEVICE_CACHE=<bytes>` sets it (0 turns the cache off); by default a quarter
//! of the device's memory, at most 16 GiB. The host memory of cached columns stays alive as
//! long as their entries do.

use std::sync::{Arc, Mutex};

use cudarc::driver::CudaSlice;
use polars::prelude::Series;

/// One segment's identity: values address and byte length, validity address and bit offset.
pub type SegmentKey = (usize, usize, usize, usize);

/// The device copy of a column: one buffer per segment for the values and one for the
/// validity bytes (empty when the segment has no nulls), in segment order.
pub struct DeviceColumn {
    pub values: Vec<CudaSlice<u8>>,
    pub validity: Vec<Option<CudaSlice<u8>>>,
    pub bytes: usize,
}

struct Entry {
    key: Vec<SegmentKey>,
    _owner: Series,
    column: Arc<DeviceColumn>,
    last_used: u64,
}

#[derive(Default)]
struct Cache {
    entries: Vec<Entry>,
    clock: u64,
    bytes: usize,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    entries: Vec::new(),
    clock: 0,
    bytes: 0,
});

/// The cache's byte budget for a device of `device_bytes` of memory.
pub fn budget(device_bytes: usize) -> usize {
    match std::env::var("POLARS_GPU_HIST_DEVICE_CACHE") {
        Ok(v) => v.trim().parse().unwrap_or(0),
        Err(_) => (device_bytes / 4).min(16 << 30),
    }
}

/// Columns smaller than this are not worth a cache entry (their copy takes microseconds).
pub const MIN_BYTES: usize = 1 << 20;

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether the cache is on (`POLARS_GPU_HIST_DEVICE_CACHE` is not 0).
fn enabled() -> bool {
    budget(usize::MAX) > 0
}

/// The device copy of the column with these segments, if cached.
pub fn get(key: &[SegmentKey]) -> Option<Arc<DeviceColumn>> {
    if !enabled() {
        return None;
    }
    let mut cache = lock();
    cache.clock += 1;
    let now = cache.clock;
    let entry = cache.entries.iter_mut().find(|e| e.key == key)?;
    entry.last_used = now;
    Some(entry.column.clone())
}

/// Whether the column with these segments is cached (without touching its recency).
pub fn contains(key: &[SegmentKey]) -> bool {
    enabled() && lock().entries.iter().any(|e| e.key == key)
}

/// Keeps `column` (the device copy of `owner`'s segments `key`) within `budget` bytes,
/// evicting the least recently used entries to make room. Returns whether it was kept.
pub fn insert(
    key: Vec<SegmentKey>,
    owner: Series,
    column: Arc<DeviceColumn>,
    budget: usize,
) -> bool {
    let bytes = column.bytes;
    if bytes < MIN_BYTES || bytes > budget {
        return false;
    }
    let mut cache = lock();
    if cache.entries.iter().any(|e| e.key == key) {
        return true;
    }
    while cache.bytes + bytes > budget {
        let Some(oldest) = cache
            .entries
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| e.last_used)
            .map(|(i, _)| i)
        else {
            break;
        };
        let evicted = cache.entries.swap_remove(oldest);
        cache.bytes -= evicted.column.bytes;
    }
    cache.clock += 1;
    let last_used = cache.clock;
    cache.bytes += bytes;
    cache.entries.push(Entry {
        key,
        _owner: owner,
        column,
        last_used,
    });
    true
}

/// Drops every entry (the device memory is freed once no running call holds it).
pub fn clear() {
    let mut cache = lock();
    cache.entries.clear();
    cache.bytes = 0;
}

/// (entries, bytes) held now.
pub fn usage() -> (usize, usize) {
    let cache = lock();
    (cache.entries.len(), cache.bytes)
}
