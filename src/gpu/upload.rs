//! Host rows to the device: each column's parts (values and validity bytes) copied through the
//! chosen transfer, or read from a pinned copy; all at once, or window by window when the rows
//! are larger than the device memory at hand.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

use crate::error::HistResult;
use crate::gpu::abi;
use crate::gpu::context::{driver, Gpu};
use crate::gpu::pin::{self, Pinned};
use crate::gpu::plan::Plan;
use crate::gpu::transfer::{self, Transfer};
use crate::input::{Chunk, HostColumn, Piece};
use crate::job::HostRows;

/// Rows on the device, contiguous in every column: one column per axis, and the weights.
#[derive(Clone, Debug)]
pub struct DevicePiece {
    pub len: u64,
    pub columns: Vec<abi::Column>,
    pub weights: abi::WeightColumn,
}

impl DevicePiece {
    /// Rows `start..start + len` of this piece.
    pub(crate) fn slice(&self, start: u64, len: u64, sizes: &[u64]) -> DevicePiece {
        let columns = self
            .columns
            .iter()
            .zip(sizes)
            .map(|(c, &size)| abi::Column {
                values: c.values + start * c.stride * size,
                validity_offset: c.validity_offset + start,
                len,
                ..*c
            })
            .collect();
        let mut weights = self.weights;
        if weights.values != 0 {
            weights.values += start * 8;
            weights.validity_offset += start;
        }
        DevicePiece {
            len,
            columns,
            weights,
        }
    }
}

/// How host rows reached the GPU for one histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// Read from pinned device copies: no copy at all.
    Pinned,
    /// Copied whole.
    Uploaded { transfer: Transfer },
    /// Larger than the device memory the call may use: copied and counted window by window.
    Streamed { transfer: Transfer, windows: usize },
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Route::Pinned => write!(f, "read from the pinned device copy (no copy)"),
            Route::Uploaded { transfer } => write!(f, "copied by {}", transfer.name()),
            Route::Streamed { transfer, windows } => write!(
                f,
                "streamed in {windows} windows by {} (larger than the device memory to use)",
                transfer.name()
            ),
        }
    }
}

/// Device memory a call may fill with rows: what is free now less a reserve, or
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

/// How rows of `row_bytes` (values to copy, weights included; 0 when pinned) would reach the
/// device under `plan`.
pub fn expected_route(rows: usize, row_bytes: usize, plan: &Plan) -> Route {
    let transfer = Transfer::from_env().resolved();
    if row_bytes == 0 {
        return Route::Pinned;
    }
    let usable = usable_device_bytes()
        .saturating_sub(plan.bins * 8)
        .saturating_sub(plan.scratch_bytes() as usize);
    if rows * row_bytes <= usable {
        Route::Uploaded { transfer }
    } else {
        let window_rows = (usable / row_bytes / 2).max(1 << 16);
        Route::Streamed {
            transfer,
            windows: rows.div_ceil(window_rows),
        }
    }
}

/// Calls `launch` with the device pieces of `rows`, window by window (one window when all fit),
/// each window's copies freed (stream-ordered) before the next is made.
pub fn each_window(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    rows: &HostRows<'_>,
    plan: &Plan,
    mut launch: impl FnMut(&[DevicePiece]) -> HistResult<()>,
) -> HistResult<Route> {
    let transfer = Transfer::from_env().resolved();
    let pinned: Vec<Option<Arc<Pinned>>> = rows.columns.iter().map(pin::find).collect();
    let copied: Vec<&HostColumn> = rows
        .columns
        .iter()
        .zip(&pinned)
        .filter(|(_, p)| p.is_none())
        .map(|(c, _)| c)
        .chain(&rows.weights)
        .collect();
    let row_bytes: usize = copied.iter().map(|c| c.dtype.size()).sum();
    if row_bytes == 0 {
        let pieces = device_pieces(
            gpu,
            stream,
            rows,
            &rows.pieces,
            &pinned,
            transfer,
            &mut Vec::new(),
        )?;
        launch(&pieces)?;
        return Ok(Route::Pinned);
    }
    let usable = usable_device_bytes()
        .saturating_sub(plan.bins * 8)
        .saturating_sub(plan.scratch_bytes() as usize);
    if rows.len * row_bytes <= usable {
        let mut keep = Vec::new();
        let pieces = device_pieces(
            gpu,
            stream,
            rows,
            &rows.pieces,
            &pinned,
            transfer,
            &mut keep,
        )?;
        launch(&pieces)?;
        return Ok(Route::Uploaded { transfer });
    }
    let window_rows = (usable / row_bytes / 2).max(1 << 16);
    let mut windows = 0;
    for window in cut(&rows.pieces, window_rows) {
        let mut keep = Vec::new();
        let pieces = device_pieces(gpu, stream, rows, &window, &pinned, transfer, &mut keep)?;
        launch(&pieces)?;
        windows += 1;
    }
    Ok(Route::Streamed { transfer, windows })
}

/// `pieces` cut into windows of at most `rows` rows.
fn cut(pieces: &[Piece], rows: usize) -> Vec<Vec<Piece>> {
    let mut windows = vec![Vec::new()];
    let mut room = rows;
    for piece in pieces {
        let mut done = 0;
        while done < piece.len {
            let take = room.min(piece.len - done);
            let at = piece
                .at
                .iter()
                .map(|&(chunk, offset)| (chunk, offset + done))
                .collect();
            windows.last_mut().expect("a window").push(Piece {
                start: piece.start + done,
                len: take,
                at,
            });
            done += take;
            room -= take;
            if room == 0 {
                windows.push(Vec::new());
                room = rows;
            }
        }
    }
    windows.retain(|w| !w.is_empty());
    windows
}

/// The device form of `pieces`: pinned columns by address, the others copied (their buffers in
/// `keep`).
#[allow(clippy::too_many_arguments)]
fn device_pieces(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    rows: &HostRows<'_>,
    pieces: &[Piece],
    pinned: &[Option<Arc<Pinned>>],
    transfer: Transfer,
    keep: &mut Vec<CudaSlice<u8>>,
) -> HistResult<Vec<DevicePiece>> {
    let mut send = |bytes: &[u8]| -> HistResult<u64> {
        // SAFETY: filled by the copy before any kernel reads it (same stream).
        let mut d = unsafe { stream.alloc::<u8>(bytes.len().max(1)) }
            .map_err(driver("allocating device memory for the rows"))?;
        transfer::upload(gpu, stream, bytes, &mut d, transfer)?;
        let ptr = d.device_ptr(stream).0;
        keep.push(d);
        Ok(ptr)
    };
    let mut copied = |part: &Chunk<'_>| -> HistResult<abi::Column> {
        let values = send(part.values.bytes())?;
        let (validity, validity_offset) = match part.validity {
            Some(v) => {
                let (bytes, offset) = v.bytes_for(part.len());
                (send(bytes)?, offset as u64)
            }
            None => (0, 0),
        };
        Ok(abi::Column {
            values,
            validity,
            validity_offset,
            len: part.len() as u64,
            stride: 1,
        })
    };
    let axes = rows.columns.len();
    pieces
        .iter()
        .map(|piece| {
            let columns = rows
                .columns
                .iter()
                .enumerate()
                .map(|(c, column)| match &pinned[c] {
                    Some(p) => Ok(p.column(stream, piece.at[c], piece.len)),
                    None => copied(&piece.part(column, c)),
                })
                .collect::<HistResult<Vec<_>>>()?;
            let weights = match &rows.weights {
                Some(w) => {
                    let c = copied(&piece.part(w, axes))?;
                    abi::WeightColumn {
                        values: c.values,
                        validity: c.validity,
                        validity_offset: c.validity_offset,
                    }
                }
                None => abi::WeightColumn::default(),
            };
            Ok(DevicePiece {
                len: piece.len as u64,
                columns,
                weights,
            })
        })
        .collect()
}
