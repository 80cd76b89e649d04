//! Counts to a Polars Struct column, one row per cell in row-major order: every result shape (1-D,
//! n-D, `by=`) is a list of axes, binned (a start and an end field) or grouped (a key field),
//! then `count`. numpy's density is computed here, once.

use std::borrow::Cow;

use polars::prelude::*;
use rayon::prelude::*;

use crate::alloc;
use crate::bins::BinSpec;
use crate::counts::Counts;
use crate::error::{HistError, HistResult};
use crate::input::{HostColumn, Value};

pub const BIN_START: &str = "bin_start";
pub const BIN_END: &str = "bin_end";
pub const COUNT: &str = "count";

/// Below this many cells a result is built on the calling thread.
const PARALLEL_CELLS: usize = 1 << 16;

/// The dtype of edges: the column's own for temporal columns, Float64 otherwise.
pub fn edge_dtype(input: &DataType) -> DataType {
    match input {
        DataType::Date | DataType::Datetime(_, _) | DataType::Duration(_) => input.clone(),
        _ => DataType::Float64,
    }
}

/// The dtype of `count`: UInt64 for plain counts, Float64 with weights or density.
pub fn count_dtype(weighted: bool, density: bool) -> DataType {
    if weighted || density {
        DataType::Float64
    } else {
        DataType::UInt64
    }
}

/// One axis of a result.
pub enum AxisOut<'a> {
    /// Fields `start` and `end`, in the edge dtype of a column of `dtype`; with `flow`, a first
    /// bin from -inf (null for temporal edges) and a last one to +inf.
    Binned {
        start: String,
        end: String,
        dtype: DataType,
        spec: &'a BinSpec,
        flow: bool,
    },
    /// Key fields (one per key): one value per group each, in group order.
    Group { keys: Vec<Series> },
}

impl AxisOut<'_> {
    /// The fields of a 1-D result: `bin_start`, `bin_end`.
    pub fn bins(spec: &BinSpec, dtype: DataType, flow: bool) -> AxisOut<'_> {
        AxisOut::Binned {
            start: BIN_START.into(),
            end: BIN_END.into(),
            dtype,
            spec,
            flow,
        }
    }

    /// The fields of an n-D dimension: `<name>_start`, `<name>_end`.
    pub fn named<'s>(name: &str, spec: &'s BinSpec, dtype: DataType, flow: bool) -> AxisOut<'s> {
        AxisOut::Binned {
            start: format!("{name}_start"),
            end: format!("{name}_end"),
            dtype,
            spec,
            flow,
        }
    }

    fn len(&self) -> usize {
        match self {
            AxisOut::Binned { spec, flow, .. } => spec.len() + 2 * *flow as usize,
            AxisOut::Group { keys } => keys.first().map_or(0, |k| k.len()),
        }
    }

    /// The extended edges `[-inf, e0, ..., en, +inf]` with flow, `e` without (borrowed where
    /// the bins hold float64 edges).
    fn edges(spec: &BinSpec, flow: bool) -> HistResult<Cow<'_, [f64]>> {
        Ok(match (flow, spec) {
            (false, BinSpec::Uniform64(u)) => Cow::Borrowed(u.try_edges()?),
            (false, BinSpec::Edges(e)) => Cow::Borrowed(&e.edges),
            (false, _) => Cow::Owned(spec.edges_f64()?),
            (true, _) => {
                let mut out = alloc::with_capacity(spec.len() + 3)?;
                out.push(f64::NEG_INFINITY);
                out.extend_from_slice(&Self::edges(spec, false)?);
                out.push(f64::INFINITY);
                Cow::Owned(out)
            }
        })
    }
}

/// `cells` values, value `c` being `values[c / stride % values.len()]`: each value repeated
/// `stride` times, the whole repeated to the end. Written once, block by block on every core, a
/// run of one value (or a stretch of consecutive values, where `stride` is 1) at a time: no
/// zeroing pass before (a 2-D result of 1M cells spent 15% of its time in memset), and no step
/// per cell (a `by=` result of 640k cells spent 40% of its time stepping cell by cell).
fn repeated<T: Copy + Send + Sync>(
    values: &[T],
    stride: usize,
    cells: usize,
) -> HistResult<Vec<T>> {
    const BLOCK: usize = 1 << 14;
    let len = values.len();
    // One value makes a single run.
    let stride = if len == 1 { cells.max(1) } else { stride };
    let fill = |(k, block): (usize, &mut [std::mem::MaybeUninit<T>])| {
        let first = k * BLOCK;
        let mut bin = first / stride % len;
        let mut rest = block;
        if stride == 1 {
            while !rest.is_empty() {
                let take = (len - bin).min(rest.len());
                let (now, later) = rest.split_at_mut(take);
                now.iter_mut()
                    .zip(&values[bin..bin + take])
                    .for_each(|(x, &v)| {
                        x.write(v);
                    });
                (rest, bin) = (later, 0);
            }
            return;
        }
        let mut left = stride - first % stride;
        while !rest.is_empty() {
            let take = left.min(rest.len());
            let (now, later) = rest.split_at_mut(take);
            let v = values[bin];
            now.iter_mut().for_each(|x| {
                x.write(v);
            });
            rest = later;
            left -= take;
            if left == 0 {
                left = stride;
                bin = if bin + 1 == len { 0 } else { bin + 1 };
            }
        }
    };
    let mut out = alloc::with_capacity(cells)?;
    let room = &mut out.spare_capacity_mut()[..cells];
    if cells < PARALLEL_CELLS {
        room.chunks_mut(BLOCK).enumerate().for_each(fill);
    } else {
        room.par_chunks_mut(BLOCK).enumerate().for_each(fill);
    }
    // SAFETY: every one of the `cells` values was written above.
    unsafe { out.set_len(cells) };
    Ok(out)
}

/// The Struct dtype of a result with fields of `axes` (as [`AxisOut::fields`] would give).
pub fn struct_dtype(mut fields: Vec<Field>, weighted: bool, density: bool) -> DataType {
    fields.push(Field::new(COUNT.into(), count_dtype(weighted, density)));
    DataType::Struct(fields)
}

/// The fields of a 1-D result over a column of `dtype`.
pub fn bin_fields(dtype: &DataType) -> Vec<Field> {
    vec![
        Field::new(BIN_START.into(), edge_dtype(dtype)),
        Field::new(BIN_END.into(), edge_dtype(dtype)),
    ]
}

/// The result as a Struct Series named `name`: one row per cell of `axes` (row-major), each
/// axis's fields, then `count` (numpy's density when asked: per combination of group keys).
pub fn to_struct(
    name: PlSmallStr,
    axes: &[AxisOut<'_>],
    counts: Counts,
    density: bool,
) -> HistResult<Series> {
    let lengths: Vec<usize> = axes.iter().map(AxisOut::len).collect();
    let (strides, cells) = crate::job::row_major(&lengths)?;
    let mut fields = Vec::with_capacity(2 * axes.len() + 1);
    for (d, axis) in axes.iter().enumerate() {
        match axis {
            AxisOut::Binned {
                start,
                end,
                dtype,
                spec,
                flow,
            } => {
                let bins = axis.len();
                if bins == cells {
                    // One axis: starts and ends are two views of one array of edges, made
                    // for the result (millions of bins: no copy of edges made before).
                    let edges = match flow {
                        true => AxisOut::edges(spec, true)?.into_owned(),
                        false => spec.edges_f64()?,
                    };
                    fields.extend(edge_views(start, end, edges, bins, dtype)?);
                } else {
                    let edges = AxisOut::edges(spec, *flow)?;
                    let starts = repeated(&edges[..bins], strides[d], cells)?;
                    fields.push(edge_series(start, starts, dtype)?);
                    let ends = repeated(&edges[1..], strides[d], cells)?;
                    fields.push(edge_series(end, ends, dtype)?);
                }
            }
            AxisOut::Group { keys } => {
                for key in keys {
                    fields.push(repeated_keys(key, strides[d], cells)?);
                }
            }
        }
    }
    if density
        && axes
            .iter()
            .any(|a| matches!(a, AxisOut::Binned { flow: true, .. }))
    {
        return Err(HistError::InvalidArgument(
            "`density` cannot be combined with `flow`: flow bins have no width".into(),
        ));
    }
    // `from_vec` takes the buffers over; `Series::new` would copy them.
    let count = if density {
        let density = density_of(axes, &lengths, &strides, &counts)?;
        Float64Chunked::from_vec(COUNT.into(), density).into_series()
    } else {
        match counts {
            Counts::Exact(c) => UInt64Chunked::from_vec(COUNT.into(), c).into_series(),
            Counts::Weighted(s) => Float64Chunked::from_vec(COUNT.into(), s).into_series(),
        }
    };
    fields.push(count);
    assemble(name, cells, fields)
}

/// The Struct of `fields` (each `cells` long, their names distinct): their arrays side by side,
/// as Polars' `StructChunked::from_series` lays them out, without its checks for broadcasting
/// and duplicate names, which a result's fields never need (a hash set built per call: a
/// tenth of a small call's native time).
fn assemble(name: PlSmallStr, cells: usize, fields: Vec<Series>) -> HistResult<Series> {
    let fields: Vec<Series> = fields
        .into_iter()
        .map(|f| match f.n_chunks() {
            1 => f,
            _ => f.rechunk(),
        })
        .collect();
    let dtype = DataType::Struct(fields.iter().map(|f| f.field().into_owned()).collect());
    let arrays = fields.iter().map(|f| f.chunks()[0].clone()).collect();
    let array = polars_arrow::array::StructArray::try_new(
        dtype.to_physical().to_arrow(CompatLevel::newest()),
        cells,
        arrays,
        None,
    )?;
    // SAFETY: one chunk, of the Struct's physical type (its fields' own chunks).
    let chunked = unsafe { StructChunked::from_chunks_and_dtype(name, vec![array.boxed()], dtype) };
    Ok(chunked.into_series())
}

/// numpy's density, `count / w0 / w1 / ... / total`, in that order, widths in the edges' own
/// type; the total is taken per combination of group keys (a group axis has no width).
fn density_of(
    axes: &[AxisOut<'_>],
    lengths: &[usize],
    strides: &[usize],
    counts: &Counts,
) -> HistResult<Vec<f64>> {
    let cells = counts.len();
    let grouped: Vec<usize> = (0..axes.len())
        .filter(|&d| matches!(axes[d], AxisOut::Group { .. }))
        .collect();
    let group = |c: usize| -> usize {
        grouped
            .iter()
            .fold(0, |g, &d| g * lengths[d] + c / strides[d] % lengths[d])
    };
    let groups: usize = grouped.iter().map(|&d| lengths[d]).product();
    let mut totals: Vec<f64> = alloc::zeroed(groups)?;
    for c in 0..cells {
        totals[group(c)] += counts.get_f64(c);
    }
    let widths: Vec<Option<Vec<f64>>> = axes
        .iter()
        .map(|a| match a {
            AxisOut::Binned { spec, .. } => {
                alloc::collected((0..spec.len()).map(|i| spec.width(i))).map(Some)
            }
            AxisOut::Group { .. } => Ok(None),
        })
        .collect::<HistResult<_>>()?;
    let value = |c: usize| {
        let mut x = counts.get_f64(c);
        for (d, w) in widths.iter().enumerate() {
            if let Some(w) = w {
                x /= w[c / strides[d] % lengths[d]];
            }
        }
        x / totals[group(c)]
    };
    let mut out = alloc::with_capacity(cells)?;
    if cells < PARALLEL_CELLS {
        out.extend((0..cells).map(value));
    } else {
        out.par_extend((0..cells).into_par_iter().map(value));
    }
    Ok(out)
}

/// Each group's key repeated over the cells of the axes after it (`stride` cells), the whole to
/// `cells` values. Keys of a primitive physical type without nulls (numbers, temporal,
/// categorical) are filled like the edges, on every core; the others are gathered by Polars
/// (a gather of 640k Int64 keys was a quarter of a small `by=` call).
fn repeated_keys(key: &Series, stride: usize, cells: usize) -> HistResult<Series> {
    let physical = key.to_physical_repr().rechunk();
    let primitive = crate::dtype::DType::of_primitive(physical.dtype());
    if let (0, Some(dtype)) = (key.null_count(), primitive) {
        let column = HostColumn::new(&physical)?;
        let filled = crate::with_dtype!(dtype, |T| {
            let values = column
                .chunks
                .first()
                .map_or(Some(&[][..]), |c| T::values(c.values));
            let values = values.expect("the column's own type");
            let array = polars_arrow::array::PrimitiveArray::<T>::from_vec(repeated(
                values, stride, cells,
            )?);
            Series::from_arrow(key.name().clone(), array.boxed())?
        });
        // SAFETY: every value is one of the key's own physical values.
        return Ok(unsafe { filled.from_physical_unchecked(key.dtype()) }?);
    }
    let groups = alloc::collected((0..key.len()).map(|g| g as IdxSize))?;
    let rows = repeated(&groups, stride, cells)?;
    let rows = IdxCa::from_vec("rows".into(), rows);
    // Polars allocates the repeated keys itself (infallibly): check the room first.
    alloc::ensure_available(cells.saturating_mul(key_bytes(key.dtype())))?;
    Ok(key.take(&rows)?)
}

/// Bytes a value of a key column takes, about (views and offsets for strings).
fn key_bytes(dtype: &DataType) -> usize {
    crate::dtype::DType::of_primitive(&dtype.to_physical()).map_or(16, |d| d.size())
}

/// `bin_start` and `bin_end` of one axis: two views of its `bins + 1` edges, made once (float64
/// edges share one buffer without a Series sliced twice and renamed: a small call's result).
fn edge_views(
    start: &str,
    end: &str,
    edges: Vec<f64>,
    bins: usize,
    input: &DataType,
) -> HistResult<[Series; 2]> {
    if edge_dtype(input) == DataType::Float64 {
        let all = polars_arrow::array::PrimitiveArray::from_vec(edges);
        let view = |name: &str, offset: usize| {
            let array = all.clone().sliced(offset, bins);
            Float64Chunked::with_chunk(name.into(), array).into_series()
        };
        return Ok([view(start, 0), view(end, 1)]);
    }
    let all = edge_series(start, edges, input)?;
    let mut ends = all.slice(1, bins);
    ends.rename(end.into());
    Ok([all.slice(0, bins), ends])
}

/// Edges named `field`, in the dtype the edges of a column of `input` dtype have; infinite
/// edges (flow bins) become null where the dtype has no infinity.
pub fn edge_series(field: &str, values: Vec<f64>, input: &DataType) -> HistResult<Series> {
    // Temporal edges are truncated to whole physical units, as a cast would; infinite ones
    // (flow bins) are null.
    let physical = || -> HistResult<Int64Chunked> {
        let ints = alloc::collected(values.iter().map(|&e| e as i64))?;
        let valid: polars_arrow::bitmap::Bitmap = values.iter().map(|e| e.is_finite()).collect();
        let valid = (valid.unset_bits() > 0).then_some(valid);
        Ok(Int64Chunked::from_vec_validity(field.into(), ints, valid))
    };
    Ok(match edge_dtype(input) {
        // Built from the physical values, not cast: a cast drops the time zone without
        // Polars' `timezones` feature, which would shift the edges.
        DataType::Datetime(unit, tz) => physical()?.into_datetime(unit, tz).into_series(),
        DataType::Duration(unit) => physical()?.into_duration(unit).into_series(),
        DataType::Date => physical()?
            .cast(&DataType::Int32)?
            .i32()?
            .clone()
            .into_date()
            .into_series(),
        _ => Float64Chunked::from_vec(field.into(), values).into_series(),
    })
}

#[cfg(test)]
mod tests {
    use polars::prelude::*;

    /// `assemble` lays fields out as Polars' own constructor does: values, dtypes (logical
    /// ones kept) and names, a field of several chunks included.
    #[test]
    fn assemble_equals_polars_struct_of_the_same_fields() {
        let mut two_chunks = UInt64Chunked::from_vec("count".into(), vec![1, 2]).into_series();
        two_chunks
            .append(&UInt64Chunked::from_vec("count".into(), vec![3]).into_series())
            .unwrap();
        let fields = vec![
            Float64Chunked::from_vec("bin_start".into(), vec![0.0, 0.5, f64::NAN]).into_series(),
            Int64Chunked::from_vec("when".into(), vec![1, 2, 3])
                .into_datetime(TimeUnit::Milliseconds, None)
                .into_series(),
            two_chunks,
        ];
        let expected = StructChunked::from_series("x".into(), 3, fields.iter())
            .unwrap()
            .into_series();
        let got = super::assemble("x".into(), 3, fields).unwrap();
        assert_eq!(got.dtype(), expected.dtype());
        assert_eq!(got.name(), expected.name());
        assert!(got.equals_missing(&expected));
    }

    /// Every cell holds `values[c / stride % len]`: runs and stretches across blocks, a single
    /// value, strides past the cells, on one thread and on the pool.
    #[test]
    fn repeated_values_fill_every_cell_by_the_rule() {
        for len in [1usize, 2, 3, 64, 1000] {
            let values: Vec<u64> = (0..len as u64).map(|v| v * 7 + 1).collect();
            for stride in [1usize, 2, 3, 17, 64, 16_384, 70_000] {
                for cells in [0usize, 1, 5, 16_383, 16_385, 100_000, 300_001] {
                    let got = super::repeated(&values, stride, cells).unwrap();
                    assert_eq!(got.len(), cells);
                    for (c, &v) in got.iter().enumerate() {
                        assert_eq!(
                            v,
                            values[c / stride % len],
                            "len {len} stride {stride} cell {c}"
                        );
                    }
                }
            }
        }
    }
}
