//! Host rows to the device: each column's parts (values and validity bytes) copied through the
//! chosen transfer, or read from a pinned copy; all at once, or window by window when the rows
//! are larger than the device memory at hand. `by=` keys mapped by a table travel narrowed.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

use crate::dtype::DType;
use crate::error::HistResult;
use crate::gpu::abi;
use crate::gpu::context::{driver, Gpu};
use crate::gpu::pin::{self, Pinned};
use crate::gpu::plan::Plan;
use crate::gpu::settings::Settings;
use crate::gpu::transfer::{self, Outgoing, Transfer};
use crate::input::{Chunk, Piece, Value};
use crate::job::{Axis, GroupKeys, Groups, HostRows, Rows, Rule, Strays};

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

/// How each host column of a job lies on the device: a pinned copy read in place, or copied; a
/// `by=` key mapped by a table and not pinned travels as its offsets from the table's lowest key,
/// in the narrowest unsigned type that holds them (10,000 groups of Int64 keys: 2 bytes a row
/// instead of 8, made while staging, and the table read from 0). A table made from the first rows
/// always travels so (pinned or not), since making the offsets checks every key against it.
pub struct DeviceLayout {
    /// Each column's type as the kernels read it.
    pub dtypes: Vec<DType>,
    pinned: Vec<Option<Arc<Pinned>>>,
    /// Where a column travels as offsets from its table's lowest key.
    rebased: Vec<Option<Rebase>>,
}

/// A key column made into offsets from its table's lowest key on the way to the device.
#[derive(Clone, Debug)]
struct Rebase {
    lo: i64,
    /// The table's length: a key at or past `lo + span` (or below `lo`) strays.
    span: u64,
    strays: Option<Strays>,
}

impl DeviceLayout {
    /// The layout of `rows` counted on GPU `ordinal` (pins on other GPUs are not read there).
    pub fn of(rows: &Rows<'_>, axes: &[Axis], ordinal: i32) -> Self {
        let rows = match rows {
            Rows::Host(rows) => rows,
            Rows::Device(rows) => {
                return DeviceLayout {
                    dtypes: rows.columns.iter().map(|c| c.dtype).collect(),
                    pinned: vec![None; rows.columns.len()],
                    rebased: vec![None; rows.columns.len()],
                }
            }
        };
        let mut layout = DeviceLayout {
            dtypes: Vec::new(),
            pinned: Vec::new(),
            rebased: Vec::new(),
        };
        for (column, axis) in rows.columns.iter().zip(axes) {
            let pinned = pin::find(column).filter(|p| p.ordinal == ordinal);
            let table = match &axis.rule {
                Rule::Groups(Groups {
                    keys: GroupKeys::Table { lo, table, strays },
                    ..
                }) => Some((*lo, table.len(), strays)),
                _ => None,
            };
            let rebase = table.and_then(|(lo, span, strays)| {
                let narrow = match span <= 1 << 16 {
                    true => DType::U16,
                    false => DType::U32,
                };
                let narrower = narrow.size() < column.dtype.size() && pinned.is_none();
                (narrower || strays.is_some()).then(|| {
                    let rebase = Rebase {
                        lo,
                        span: span as u64,
                        strays: strays.clone(),
                    };
                    (narrow, rebase)
                })
            });
            match rebase {
                Some((narrow, rebase)) => {
                    layout.dtypes.push(narrow);
                    layout.pinned.push(None);
                    layout.rebased.push(Some(rebase));
                }
                None => {
                    layout.dtypes.push(column.dtype);
                    layout.pinned.push(pinned);
                    layout.rebased.push(None);
                }
            }
        }
        layout
    }

    /// Whether every column has a copy in device memory (`gpu::pin`).
    pub fn all_pinned(&self) -> bool {
        self.pinned.iter().all(Option::is_some)
    }

    /// Whether column `c` travels as offsets from its lowest key (its table is then read from 0).
    pub fn is_rebased(&self, c: usize) -> bool {
        self.rebased[c].is_some()
    }
}

/// Device memory a call may fill with rows: what is free now less a reserve, or the cap the
/// settings set (tests use it to force the streaming path).
fn usable_device_bytes(settings: &Settings) -> usize {
    if let Some(cap) = settings.device_bytes {
        return cap;
    }
    let free = cudarc::driver::result::mem_get_info().map_or(0, |(free, _)| free);
    free.saturating_sub(1 << 30) / 10 * 9
}

/// How rows of `row_bytes` (values to copy, weights included; 0 when pinned) would reach the
/// device under `plan`.
pub fn expected_route(rows: usize, row_bytes: usize, plan: &Plan, settings: &Settings) -> Route {
    let transfer = settings.transfer.resolved();
    if row_bytes == 0 {
        return Route::Pinned;
    }
    let usable = usable_device_bytes(settings)
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
    layout: &DeviceLayout,
    plan: &Plan,
    settings: &Settings,
    mut launch: impl FnMut(&[DevicePiece]) -> HistResult<()>,
) -> HistResult<Route> {
    let transfer = settings.transfer.resolved();
    let row_bytes: usize = layout
        .dtypes
        .iter()
        .zip(&layout.pinned)
        .filter(|(_, p)| p.is_none())
        .map(|(d, _)| d.size())
        .chain(rows.weights.as_ref().map(|w| w.dtype.size()))
        .sum();
    if row_bytes == 0 {
        let pieces = device_pieces(
            gpu,
            stream,
            rows,
            &rows.pieces,
            layout,
            transfer,
            &mut Vec::new(),
        )?;
        launch(&pieces)?;
        return Ok(Route::Pinned);
    }
    let usable = usable_device_bytes(settings)
        .saturating_sub(plan.bins * 8)
        .saturating_sub(plan.scratch_bytes() as usize);
    if rows.len * row_bytes <= usable {
        let mut keep = Vec::new();
        let pieces = device_pieces(gpu, stream, rows, &rows.pieces, layout, transfer, &mut keep)?;
        launch(&pieces)?;
        return Ok(Route::Uploaded { transfer });
    }
    let window_rows = (usable / row_bytes / 2).max(1 << 16);
    let mut windows = 0;
    for window in cut(&rows.pieces, window_rows) {
        let mut keep = Vec::new();
        let pieces = device_pieces(gpu, stream, rows, &window, layout, transfer, &mut keep)?;
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

/// The device form of `pieces`: pinned columns by address, the others copied as `layout` says
/// (their buffers in `keep`), all in one upload. Without a pinned column the pieces become one:
/// each column's chunks side by side in one buffer, counted by one launch (a scan's batch is a
/// hundred morsels; a pinned copy is read where it lies, a piece at a time).
fn device_pieces<'r>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    rows: &HostRows<'r>,
    pieces: &[Piece],
    layout: &DeviceLayout,
    transfer: Transfer,
    keep: &mut Vec<CudaSlice<u8>>,
) -> HistResult<Vec<DevicePiece>> {
    let mut outgoing: Vec<(Outgoing<'r>, u64)> = Vec::new();
    // Room on the device for `what`, filled by the upload below.
    let mut room = |what: Outgoing<'r>| {
        // SAFETY: filled by the upload before any kernel reads it (same stream).
        let d = unsafe { stream.alloc::<u8>(what.len().max(1)) }
            .map_err(driver("allocating device memory for the rows"))?;
        let ptr = d.device_ptr(stream).0;
        keep.push(d);
        outgoing.push((what, ptr));
        HistResult::Ok(ptr)
    };
    // A column's parts (one a piece, in row order) as one device column.
    let mut copied = |parts: Vec<Chunk<'r>>, c: Option<usize>| -> HistResult<abi::Column> {
        let len: usize = parts.iter().map(Chunk::len).sum();
        let rebased = c.and_then(|c| layout.rebased[c].clone().map(|r| (r, layout.dtypes[c])));
        let values = parts
            .iter()
            .map(|part| match &rebased {
                Some((rebase, narrow)) => {
                    let (rebase, narrow) = (rebase.clone(), *narrow);
                    crate::with_values!(part.values, |v: T| Outgoing::Made {
                        len: v.len() * narrow.size(),
                        make: Box::new(move |at, out| offsets::<T>(v, &rebase, narrow, at, out)),
                    })
                }
                None => Outgoing::Copied(part.values.bytes()),
            })
            .collect();
        let values = room(Outgoing::side_by_side(values))?;
        let (validity, validity_offset) = match validity_of(&parts)? {
            Some((bytes, offset)) => (room(bytes)?, offset as u64),
            None => (0, 0),
        };
        Ok(abi::Column {
            values,
            validity,
            validity_offset,
            len: len as u64,
            stride: 1,
        })
    };
    let groups: Vec<&[Piece]> = match layout.pinned.iter().all(Option::is_none) {
        true if !pieces.is_empty() => vec![pieces],
        _ => pieces.chunks(1).collect(),
    };
    let axes = rows.columns.len();
    let device = groups
        .into_iter()
        .map(|group| {
            let len: usize = group.iter().map(|p| p.len).sum();
            let parts = |column, c| group.iter().map(|p| p.part(column, c)).collect();
            let columns = rows
                .columns
                .iter()
                .enumerate()
                .map(|(c, column)| match &layout.pinned[c] {
                    Some(p) => Ok(p.column(stream, group[0].at[c], len)),
                    None => copied(parts(column, c), Some(c)),
                })
                .collect::<HistResult<Vec<_>>>()?;
            let weights = match &rows.weights {
                Some(w) => {
                    let c = copied(parts(w, axes), None)?;
                    abi::WeightColumn {
                        values: c.values,
                        validity: c.validity,
                        validity_offset: c.validity_offset,
                    }
                }
                None => abi::WeightColumn::default(),
            };
            Ok(DevicePiece {
                len: len as u64,
                columns,
                weights,
            })
        })
        .collect::<HistResult<Vec<_>>>()?;
    // SAFETY: each address is a buffer of its item's length, kept in `keep` until the kernels
    // queued after the copies are done (freed in stream order).
    unsafe { transfer::upload_all(gpu, stream, &outgoing, transfer) }?;
    Ok(device)
}

/// The validity of `parts` side by side, and the bit its first row is at: one part's bitmap as
/// it lies, or the parts' bitmaps joined into one (all set where a part has no nulls). None
/// where no part has a null.
fn validity_of<'r>(parts: &[Chunk<'r>]) -> HistResult<Option<(Outgoing<'r>, usize)>> {
    if parts.iter().all(|p| p.validity.is_none()) {
        return Ok(None);
    }
    if let [part] = parts {
        let (bytes, offset) = part
            .validity
            .expect("a part with nulls")
            .bytes_for(part.len());
        return Ok(Some((Outgoing::Copied(bytes), offset)));
    }
    let len: usize = parts.iter().map(Chunk::len).sum();
    let room = crate::alloc::with_capacity::<u8>(len.div_ceil(8))?;
    let mut joined = polars_arrow::bitmap::MutableBitmap::from_vec(room, 0);
    for part in parts {
        match part.validity {
            Some(v) => joined.extend_from_slice(v.bytes, v.offset, part.len()),
            None => joined.extend_constant(part.len(), true),
        }
    }
    let made = Outgoing::Made {
        len: joined.as_slice().len(),
        make: Box::new(move |at, out| out.copy_from_slice(&joined.as_slice()[at..at + out.len()])),
    };
    Ok(Some((made, 0)))
}

/// Bytes `at..at + out.len()` of the keys `values` as offsets from `rebase.lo`, in `narrow`
/// (UInt16 or UInt32). A key outside the table's span marks its strays and travels as 0, so that
/// the kernels never read past the table (its count is not the answer, see [`GroupKeys`]).
fn offsets<T: Value>(values: &[T], rebase: &Rebase, narrow: DType, at: usize, out: &mut [u8]) {
    let keys = &values[at / narrow.size()..];
    let offset = |x: &T| {
        let d = x.as_i64().wrapping_sub(rebase.lo) as u64;
        match d < rebase.span {
            true => (d, false),
            false => (0, true),
        }
    };
    let mut strayed = false;
    match narrow {
        DType::U16 => out.chunks_exact_mut(2).zip(keys).for_each(|(o, x)| {
            let (d, stray) = offset(x);
            strayed |= stray;
            o.copy_from_slice(&(d as u16).to_ne_bytes())
        }),
        DType::U32 => out.chunks_exact_mut(4).zip(keys).for_each(|(o, x)| {
            let (d, stray) = offset(x);
            strayed |= stray;
            o.copy_from_slice(&(d as u32).to_ne_bytes())
        }),
        other => unreachable!("keys travel as UInt16 or UInt32, not {other:?}"),
    }
    if strayed {
        debug_assert!(
            rebase.strays.is_some(),
            "a key outside a table of every key"
        );
        rebase.strays.iter().for_each(Strays::mark);
    }
}

#[cfg(test)]
mod tests {
    use polars::prelude::*;

    use super::*;
    use crate::bins::{BinSpec, Binning, Closed, Range, ValueKind};
    use crate::input::HostColumn;
    use crate::job::FlowBins;

    /// `item`'s bytes as the staging ring writes them: pieces of `piece` bytes from every start.
    fn written(item: &Outgoing<'_>, piece: usize) -> Vec<u8> {
        let mut out = vec![0u8; item.len()];
        for (k, chunk) in out.chunks_mut(piece).enumerate() {
            item.write(k * piece, chunk);
        }
        out
    }

    #[test]
    fn items_side_by_side_are_their_bytes_one_after_the_other() {
        let a: Vec<u8> = (0..37).collect();
        let b: Vec<u8> = (100..103).collect();
        let made = |len: usize| Outgoing::Made {
            len,
            make: Box::new(move |at, out: &mut [u8]| {
                out.iter_mut()
                    .enumerate()
                    .for_each(|(i, o)| *o = (200 + (at + i) % 50) as u8)
            }),
        };
        let expected: Vec<u8> = a
            .iter()
            .copied()
            .chain((0..20).map(|i| (200 + i % 50) as u8))
            .chain(b.iter().copied())
            .collect();
        for piece in [1, 2, 3, 7, 36, 37, 38, 64] {
            let items = vec![
                Outgoing::Copied(&a),
                Outgoing::Copied(&[]),
                made(20),
                Outgoing::Copied(&b),
            ];
            let joined = Outgoing::side_by_side(items);
            assert_eq!(joined.len(), expected.len());
            assert_eq!(written(&joined, piece), expected, "pieces of {piece}");
        }
        let one = Outgoing::side_by_side(vec![Outgoing::Copied(&a)]);
        assert!(matches!(one, Outgoing::Copied(bytes) if bytes == &a[..]));
    }

    #[test]
    fn the_validity_of_many_parts_is_joined_bit_for_bit() {
        use crate::input::{Chunk, Validity, Values};
        let values = [0f32; 64];
        // Bits of two bitmaps, each read from an offset that is no multiple of 8.
        let first = [0b1011_0110u8, 0b0101_1101, 0b1111_0000];
        let second = [0b0110_1001u8, 0b1000_0001];
        let parts = [
            Chunk {
                values: Values::F32(&values[..13]),
                validity: Some(Validity {
                    bytes: &first,
                    offset: 3,
                }),
            },
            Chunk {
                values: Values::F32(&values[..5]),
                validity: None,
            },
            Chunk {
                values: Values::F32(&values[..9]),
                validity: Some(Validity {
                    bytes: &second,
                    offset: 6,
                }),
            },
        ];
        let bit = |bytes: &[u8], i: usize| (bytes[i >> 3] >> (i & 7)) & 1 == 1;
        let expected: Vec<bool> = (3..16)
            .map(|i| bit(&first, i))
            .chain(std::iter::repeat_n(true, 5))
            .chain((6..15).map(|i| bit(&second, i)))
            .collect();
        let (joined, offset) = validity_of(&parts).unwrap().expect("nulls");
        assert_eq!(offset, 0);
        let bytes = written(&joined, 1);
        let got: Vec<bool> = (0..expected.len()).map(|i| bit(&bytes, i)).collect();
        assert_eq!(got, expected);
        // One part's bitmap travels as it lies, from its own first bit.
        let (alone, offset) = validity_of(&parts[..1]).unwrap().expect("nulls");
        assert!(matches!(alone, Outgoing::Copied(bytes) if bytes == &first[..2]));
        assert_eq!(offset, 3);
        assert!(validity_of(&parts[1..2]).unwrap().is_none());
    }

    fn rebase(lo: i64, span: u64, strays: Option<Strays>) -> Rebase {
        Rebase { lo, span, strays }
    }

    #[test]
    fn keys_become_offsets_from_the_lowest_key() {
        let keys: [i64; 4] = [-7, 65_528, 0, 100];
        let mut out = [0u8; 6];
        offsets(&keys, &rebase(-7, 1 << 16, None), DType::U16, 2, &mut out);
        let wide: Vec<u16> = out
            .chunks(2)
            .map(|b| u16::from_ne_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(wide, [65_535, 7, 107]);
        let keys: [i32; 3] = [i32::MIN, i32::MIN + 70_000, -1];
        let mut out = [0u8; 12];
        offsets(
            &keys,
            &rebase(i32::MIN as i64, 1 << 31, None),
            DType::U32,
            0,
            &mut out,
        );
        let wide: Vec<u32> = out
            .chunks(4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(wide, [0, 70_000, i32::MAX as u32]);
    }

    #[test]
    fn keys_outside_a_table_of_the_first_rows_mark_its_strays_and_travel_as_zero() {
        let strays = Strays::default();
        let mut out = [0u8; 8];
        let inside: [i64; 4] = [10, 11, 19, 12];
        offsets(
            &inside,
            &rebase(10, 10, Some(strays.clone())),
            DType::U16,
            0,
            &mut out,
        );
        assert!(!strays.seen());
        for stray in [9, 20, i64::MIN, i64::MAX] {
            let strays = Strays::default();
            let keys: [i64; 4] = [10, stray, 19, 12];
            offsets(
                &keys,
                &rebase(10, 10, Some(strays.clone())),
                DType::U16,
                0,
                &mut out,
            );
            let wide: Vec<u16> = out
                .chunks(2)
                .map(|b| u16::from_ne_bytes([b[0], b[1]]))
                .collect();
            assert_eq!(wide, [0, 0, 9, 2], "key {stray}");
            assert!(strays.seen(), "key {stray}");
        }
    }

    fn table(span: usize, first_rows: bool) -> Axis {
        Axis {
            rule: Rule::Groups(Groups {
                count: 1,
                keys: GroupKeys::Table {
                    lo: 0,
                    table: vec![0; span],
                    strays: first_rows.then(Strays::default),
                },
            }),
            flow: FlowBins::None,
        }
    }

    #[test]
    fn table_keys_travel_in_the_narrowest_type_that_holds_their_span() {
        let int64 = Series::new("g".into(), [0i64, 1]);
        let int32 = Series::new("g".into(), [0i32, 1]);
        let int8 = Series::new("g".into(), [0i8, 1]);
        let values = Series::new("x".into(), [0.5f64, 0.25]);
        let bins = BinSpec::resolve(
            &Binning::Count(4),
            Some(Range::new(0.0, 1.0)),
            Closed::Left,
            ValueKind::Float64,
            || unreachable!("a range is given"),
        )
        .expect("bins");
        let layout_of = |keys: &Series, span: usize, first_rows: bool| {
            let columns = vec![
                HostColumn::new(keys).expect("keys"),
                HostColumn::new(&values).expect("values"),
            ];
            let rows = Rows::Host(HostRows::new(columns, None).expect("rows"));
            let axes = [table(span, first_rows), Axis::bins(bins.clone(), false)];
            let l = DeviceLayout::of(&rows, &axes, 0);
            (l.dtypes.clone(), l.is_rebased(0), l.is_rebased(1))
        };
        let layout = |keys: &Series, span: usize| layout_of(keys, span, false);
        assert_eq!(
            layout(&int64, 1 << 16),
            (vec![DType::U16, DType::F64], true, false)
        );
        assert_eq!(
            layout(&int64, (1 << 16) + 1),
            (vec![DType::U32, DType::F64], true, false)
        );
        assert_eq!(
            layout(&int32, 10),
            (vec![DType::U16, DType::F64], true, false)
        );
        // Same width: read as they are, from their own lowest key.
        assert_eq!(
            layout(&int32, (1 << 16) + 1),
            (vec![DType::I32, DType::F64], false, false)
        );
        assert_eq!(
            layout(&int8, 2),
            (vec![DType::I8, DType::F64], false, false)
        );
        // A table of the first rows: always offsets, which check every key on the way.
        assert_eq!(
            layout_of(&int32, (1 << 16) + 1, true),
            (vec![DType::U32, DType::F64], true, false)
        );
        assert_eq!(
            layout_of(&int8, 2, true),
            (vec![DType::U16, DType::F64], true, false)
        );
    }
}
