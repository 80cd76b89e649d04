//! The serialized form of a [`Histogram`]: the binning as given, the dtype of each axis' first
//! fill, the counts. The resolved edges are not stored: resolving again gives the same, bit for
//! bit.

use serde::{Deserialize, Serialize};

use super::axis::{Axis, ValueDtype};
use super::{AccumulatorOptions, Flow, FlowCells, Histogram, Storage};
use crate::bins::Closed;
use crate::counts::Counts;
use crate::error::{HistError, HistResult};
use crate::options::Device;

#[derive(Serialize, Deserialize)]
pub(super) struct State {
    format: u32,
    axes: Vec<Axis>,
    closed: Closed,
    weighted: bool,
    device: Device,
    kernel: Option<crate::family::Family>,
    dtypes: Vec<Option<ValueDtype>>,
    counts: Option<ExactCounts>,
    sums: Option<Vec<f64>>,
    /// Sums of squared weights (format 3 on).
    #[serde(default)]
    squares: Option<Vec<f64>>,
    /// Rows seen and not counted (format 4 on).
    #[serde(default)]
    flow: Option<Flow>,
    /// The flow cells of several axes (format 5 on): exact counts, or sums of weights and of
    /// their squares.
    #[serde(default)]
    flow_counts: Option<ExactCounts>,
    #[serde(default)]
    flow_sums: Option<Vec<f64>>,
    #[serde(default)]
    flow_squares: Option<Vec<f64>>,
}

/// Format 5 adds the flow cells of several axes (boost-histogram's flow bins); earlier formats
/// read with them not known.
/// Format 4 adds the flow (rows seen, and those not counted by reason); earlier formats read with
/// the rows their counts hold and nothing recorded as not counted (it was not kept then).
/// Format 3 adds the squared weights of weighted histograms (and n-D axes). Format 2 stores exact
/// counts as little-endian bytes: pickle's integers stop at 2^63 in serde_pickle, counts do not.
/// Formats 1 (a list of integers) and 2 still read, weighted ones of them refused (no squares).
const STATE_FORMAT: u32 = 5;

/// Exact counts in the serialized state: bytes (8 a count), or a list of integers (`listed`).
struct ExactCounts {
    counts: Vec<u64>,
    listed: bool,
}

impl ExactCounts {
    /// The counts of `cells` cells, or `None` when there are not as many. A list of 8 bytes a
    /// cell is the bytes as written by a format without a bytes type (JSON writes a list).
    fn into_cells(self, cells: usize) -> Option<Vec<u64>> {
        let n = self.counts.len();
        if n == cells {
            return Some(self.counts);
        }
        let bytes =
            self.listed && n == cells.checked_mul(8)? && self.counts.iter().all(|&b| b < 256);
        bytes.then(|| {
            self.counts
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(std::array::from_fn(|i| c[i] as u8)))
                .collect()
        })
    }
}

impl Serialize for ExactCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = self.counts.iter().flat_map(|c| c.to_le_bytes()).collect();
        s.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for ExactCounts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = ExactCounts;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("counts as bytes (8 a count) or a list of integers")
            }
            fn visit_bytes<E: serde::de::Error>(self, b: &[u8]) -> Result<ExactCounts, E> {
                if !b.len().is_multiple_of(8) {
                    return Err(E::custom("counts bytes are not a whole number of u64s"));
                }
                let counts = b
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
                Ok(ExactCounts {
                    counts: crate::alloc::collected(counts).map_err(E::custom)?,
                    listed: false,
                })
            }
            fn visit_byte_buf<E: serde::de::Error>(self, b: Vec<u8>) -> Result<ExactCounts, E> {
                self.visit_bytes(&b)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ExactCounts, A::Error> {
                let mut out = Vec::new();
                while let Some(c) = seq.next_element::<u64>()? {
                    out.push(c);
                }
                Ok(ExactCounts {
                    counts: out,
                    listed: true,
                })
            }
        }
        d.deserialize_any(Visit)
    }
}

impl From<Histogram> for State {
    fn from(h: Histogram) -> State {
        let (counts, sums) = match h.counts {
            Counts::Exact(counts) => (
                Some(ExactCounts {
                    counts,
                    listed: false,
                }),
                None,
            ),
            Counts::Weighted(s) => (None, Some(s)),
        };
        let (flow_counts, flow_sums, flow_squares) = match h.cells {
            None => (None, None, None),
            Some(FlowCells {
                counts: Counts::Exact(counts),
                squares,
            }) => (
                Some(ExactCounts {
                    counts,
                    listed: false,
                }),
                None,
                squares,
            ),
            Some(FlowCells {
                counts: Counts::Weighted(sums),
                squares,
            }) => (None, Some(sums), squares),
        };
        State {
            flow_counts,
            flow_sums,
            flow_squares,
            format: STATE_FORMAT,
            dtypes: h
                .resolved
                .into_iter()
                .map(|r| r.dtype.map(|(v, _)| v))
                .collect(),
            axes: h.axes,
            closed: h.options.closed,
            weighted: h.options.storage == Storage::Weight,
            device: h.options.device,
            kernel: h.options.kernel,
            counts,
            sums,
            squares: h.squares,
            flow: Some(h.flow),
        }
    }
}

impl TryFrom<State> for Histogram {
    type Error = HistError;

    /// Validates the state (format, shape, the stored counts' length) before allocating
    /// anything its axes ask for: a hostile state is an error, not an abort.
    fn try_from(s: State) -> HistResult<Histogram> {
        if !(1..=STATE_FORMAT).contains(&s.format) {
            return Err(HistError::InvalidArgument(format!(
                "a serialized histogram of format {} cannot be read by this version (format {})",
                s.format, STATE_FORMAT
            )));
        }
        let len = super::checked_cells(&s.axes)?;
        if s.dtypes.len() != s.axes.len() {
            return Err(HistError::InvalidArgument(
                "a serialized histogram has a dtype per axis".into(),
            ));
        }
        let counts = match (s.counts.and_then(|c| c.into_cells(len)), s.sums) {
            (Some(c), None) if !s.weighted => Counts::Exact(c),
            (None, Some(w)) if s.weighted && w.len() == len => Counts::Weighted(w),
            _ => {
                return Err(HistError::InvalidArgument(format!(
                    "a serialized histogram's counts do not match its {len} cells"
                )))
            }
        };
        let squares = match s.squares {
            Some(q) if s.weighted && q.len() == len => Some(q),
            None if !s.weighted => None,
            _ => {
                return Err(HistError::InvalidArgument(
                    "a serialized weighted histogram needs the squared weights of each cell \
                     (format 3)"
                        .into(),
                ))
            }
        };
        let kinds: Vec<_> = s
            .dtypes
            .iter()
            .map(|d| d.as_ref().map(|d| d.dtype()).transpose())
            .collect::<HistResult<_>>()?;
        let options = AccumulatorOptions {
            closed: s.closed,
            storage: if s.weighted {
                Storage::Weight
            } else {
                Storage::Count
            },
            device: s.device,
            kernel: s.kernel,
        };
        let flow = s.flow.unwrap_or_else(|| Flow {
            // Before format 4 only the counted rows are known (of a counting histogram).
            rows: match &counts {
                Counts::Exact(c) => c.iter().fold(0u64, |a, &b| a.saturating_add(b)),
                Counts::Weighted(_) => 0,
            },
            ..Flow::default()
        });
        let resolved = super::resolve_axes(&s.axes, options)?;
        let cells = match s.axes.len() {
            1 => None,
            _ => flow_cells(
                super::outside_cells(&super::shape_of(&resolved)),
                s.weighted,
                s.flow_counts,
                s.flow_sums,
                s.flow_squares,
            )?,
        };
        let mut h = Histogram {
            resolved,
            axes: s.axes,
            options,
            counts,
            squares,
            flow,
            cells,
            zero: false,
        };
        // n-D axes were resolved for the sample's common dtype, which the dtypes give back.
        h.fix_dtypes(&kinds)?;
        Ok(h)
    }
}

/// The flow cells of a state of several axes: `None` where it has none (written before format
/// 5), else `n` cells of the histogram's storage.
fn flow_cells(
    n: usize,
    weighted: bool,
    counts: Option<ExactCounts>,
    sums: Option<Vec<f64>>,
    squares: Option<Vec<f64>>,
) -> HistResult<Option<FlowCells>> {
    let cells = match (counts.and_then(|c| c.into_cells(n)), sums, squares) {
        (None, None, None) => return Ok(None),
        (Some(c), None, None) if !weighted => FlowCells {
            counts: Counts::Exact(c),
            squares: None,
        },
        (None, Some(s), Some(q)) if weighted && s.len() == n && q.len() == n => FlowCells {
            counts: Counts::Weighted(s),
            squares: Some(q),
        },
        _ => {
            return Err(HistError::InvalidArgument(format!(
                "a serialized histogram's flow cells do not match its {n} flow cells"
            )))
        }
    };
    Ok(Some(cells))
}
