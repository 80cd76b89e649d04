//! A cheap look at the rows before a histogram too large for shared memory: in sorted data, or
//! data of few values, consecutive rows fall in one cell, and the global family, which adds a
//! thread's run of one cell at once, beats the segmented passes (2-5x at 1M-16M bins on an
//! H100, BENCHMARKS.md). A few windows of consecutive rows spread over the job tell.

use std::cell::RefCell;
use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::CudaStream;

use crate::bins::BinSpec;
use crate::error::HistResult;
use crate::gpu::context::{driver, Gpu};
use crate::gpu::transfer::PageLocked;
use crate::input::Value;
use crate::job::{Job, Rows};

/// Windows of consecutive rows the sample takes, and their length.
const WINDOWS: usize = 32;
const WINDOW_ROWS: usize = 64;
/// The largest pitch a 2-D copy takes (`CU_DEVICE_ATTRIBUTE_MAX_PITCH`: 2^31 - 1 on an H100):
/// windows further apart are copied one at a time.
const MAX_PITCH: usize = i32::MAX as usize;

thread_local! {
    /// Page-locked memory each thread's samples land in: strided windows copied to pageable
    /// memory went through the driver's bounce buffer a window at a time (about 0.3 ms of a
    /// 3.8 ms histogram of 2^29 rows into 1M bins on an H100).
    static LANDING: RefCell<Option<PageLocked>> = const { RefCell::new(None) };
}

/// The mean length of runs of one cell over the sampled windows (an estimate: cells are those of
/// each axis's equal-width estimate, without the correction); None when the job is too small to
/// sample or an axis groups rows.
pub fn mean_run(gpu: &Gpu, stream: &Arc<CudaStream>, job: &Job<'_>) -> HistResult<Option<f64>> {
    let rows = job.len();
    if rows < WINDOWS * WINDOW_ROWS * 4 || job.axes.iter().any(|a| a.spec().is_none()) {
        return Ok(None);
    }
    // Windows an equal step apart, so that the device's are one 2-D copy (spread unevenly,
    // they were 32 copies: the look at 2^29 rows took 0.16 ms on an H100, and 0.05 since).
    let step = (rows - WINDOW_ROWS) / (WINDOWS - 1);
    let starts: Vec<usize> = (0..WINDOWS).map(|w| w * step).collect();
    let mut cells = vec![0u64; WINDOWS * WINDOW_ROWS];
    for (d, axis) in job.axes.iter().enumerate() {
        let spec = axis.spec().expect("binned axes");
        let stride = job.strides[d] as u64;
        let bins: Vec<u64> = match &job.rows {
            Rows::Device(device) => {
                let column = device.columns[d];
                crate::with_dtype!(column.dtype, |T| {
                    device_windows::<T>(gpu, stream, column.ptr, column.stride, step)?
                        .into_iter()
                        .map(|x| rough_bin(spec, x.to_f64()))
                        .collect()
                })
            }
            Rows::Host(host) => {
                let column = &host.columns[d];
                let mut out = Vec::with_capacity(cells.len());
                for &start in &starts {
                    host_window(column, start, &mut out, |x| rough_bin(spec, x));
                }
                out
            }
        };
        for (cell, bin) in cells.iter_mut().zip(bins) {
            *cell += bin * stride;
        }
    }
    let breaks: usize = cells
        .chunks(WINDOW_ROWS)
        .map(|w| w.windows(2).filter(|p| p[0] != p[1]).count())
        .sum();
    Ok(Some(cells.len() as f64 / (breaks + WINDOWS) as f64))
}

/// The cell of `x` by the equal-width estimate (edges searched for explicit ones); values
/// outside share one cell past the last.
fn rough_bin(spec: &BinSpec, x: f64) -> u64 {
    let n = spec.len() as u64;
    let (lo, hi) = (spec.edge(0), spec.edge(spec.len()));
    if !(x >= lo && x <= hi) {
        return n;
    }
    match spec {
        BinSpec::Edges(e) => e.edges.partition_point(|&v| v <= x).saturating_sub(1) as u64,
        _ => (((x - lo) / (hi - lo)) * n as f64).min((n - 1) as f64) as u64,
    }
}

/// The `WINDOWS` windows of a device column, `step` rows apart from its first row, copied in
/// one 2-D copy and waited for.
fn device_windows<T: Value + Clone>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    ptr: u64,
    stride: u64,
    step: usize,
) -> HistResult<Vec<T>> {
    let size = std::mem::size_of::<T>();
    let stride = stride as usize;
    // A window's rows and the values between them, not past its last row's (the last window
    // may end the column, whose array may end there).
    let width = ((WINDOW_ROWS - 1) * stride + 1) * size;
    let slot = WINDOW_ROWS * stride * size;
    let pitch = step * stride * size;
    let values = WINDOW_ROWS * stride * WINDOWS;
    gpu.ctx
        .bind_to_thread()
        .map_err(driver("binding the context"))?;
    LANDING.with_borrow_mut(|landing| {
        if landing.as_ref().is_none_or(|l| l.len < values * size) {
            let fresh = PageLocked::new(values * size)?;
            // SAFETY: `fresh` holds `len` bytes; zeroed, every value read below is initialized.
            unsafe { std::ptr::write_bytes(fresh.ptr, 0, fresh.len) };
            *landing = Some(fresh);
        }
        let base = landing.as_ref().expect("made above").ptr as *mut T;
        let copy = |src: u64, rows: usize, pitch: usize, dst: *mut T| {
            let params = sys::CUDA_MEMCPY2D {
                srcXInBytes: 0,
                srcY: 0,
                srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                srcHost: std::ptr::null(),
                srcDevice: src,
                srcArray: std::ptr::null_mut(),
                srcPitch: pitch,
                dstXInBytes: 0,
                dstY: 0,
                dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
                dstHost: dst as *mut std::ffi::c_void,
                dstDevice: 0,
                dstArray: std::ptr::null_mut(),
                dstPitch: slot,
                WidthInBytes: width,
                Height: rows,
            };
            // SAFETY: `rows` windows of `width` bytes, `pitch` apart from `src`, lie in the
            // caller's array; `dst` holds `rows` slots of `slot >= width` bytes.
            unsafe { sys::cuMemcpy2DAsync_v2(&params, stream.cu_stream()) }.result()
        };
        let read = driver("reading a sample of the rows");
        if pitch <= MAX_PITCH {
            copy(ptr, WINDOWS, pitch, base).map_err(&read)?;
        } else {
            for w in 0..WINDOWS {
                // SAFETY: window w's slot lies within the `values` values of the landing.
                let dst = unsafe { base.add(w * WINDOW_ROWS * stride) };
                copy(ptr + (w * pitch) as u64, 1, slot, dst).map_err(&read)?;
            }
        }
        stream.synchronize().map_err(&read)?;
        // SAFETY: the copies above wrote the landing's first `values` values and are done.
        let landed = unsafe { std::slice::from_raw_parts(base, values) };
        Ok(landed.iter().step_by(stride).cloned().collect())
    })
}

/// Appends `bin(x)` for the window of rows from `start` of a host column.
fn host_window(
    column: &crate::input::HostColumn<'_>,
    start: usize,
    out: &mut Vec<u64>,
    bin: impl Fn(f64) -> u64,
) {
    let mut skip = start;
    let mut left = WINDOW_ROWS;
    for chunk in &column.chunks {
        if left == 0 {
            break;
        }
        if skip >= chunk.len() {
            skip -= chunk.len();
            continue;
        }
        let take = left.min(chunk.len() - skip);
        crate::with_values!(chunk.values.slice(skip, take), |v: T| {
            out.extend(v.iter().map(|x| bin(x.to_f64())));
        });
        left -= take;
        skip = 0;
    }
    out.extend(std::iter::repeat_n(u64::MAX, left));
}
