//! n-D histograms (`numpy.histogramdd`) and per-group histograms (`by=`). Each row's bins in
//! every dimension combine into one row-major linear index, and that index is counted by the
//! same machinery as a 1-D histogram: privatized blocks on the CPU, the kernel families on the
//! GPU. A row counts only when every coordinate is valid: rows with a null (or, where a range
//! comes from the data, a NaN) in any dimension are dropped first.

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bins::{BinSpec, Bins, Closed, Extremes, MAX_BINS};
use crate::cpu::{self, Counts, Rule, BLOCK};
use crate::error::{HistError, HistResult};
use crate::gpu::Family;
use crate::output::{self, COUNT};
use crate::{choose_backend, input, Backend, Device, HistogramOptions};

/// The most dimensions an n-D histogram may have.
pub const MAX_DIMS: usize = 8;

/// The arguments of `histogramdd`, one `bins` (and optionally one `range`) per dimension.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistogramDdOptions {
    /// Per dimension: a number of equal bins or explicit edges.
    pub bins: Vec<Bins>,
    /// Per dimension, the range of equal bins (`None`: the data's); empty means all `None`.
    pub range: Vec<Option<(f64, f64)>>,
    pub density: bool,
    pub closed: Closed,
    pub device: Device,
    pub kernel: Option<Family>,
}

/// One dimension of the linearized histogram, with its dense coordinates (no nulls).
pub(crate) enum Dim {
    /// Values binned by a rule, read in float32 (only for `Uniform32`-style numpy rules and
    /// float32 samples) or float64.
    F32(BinSpec, Float32Chunked),
    F64(BinSpec, Float64Chunked),
    /// Group ids `0..groups`, one bin each (the key of `by=`).
    Groups(usize, UInt32Chunked),
}

impl Dim {
    pub(crate) fn bins(&self) -> usize {
        match self {
            Dim::F32(spec, _) | Dim::F64(spec, _) => spec.len(),
            Dim::Groups(groups, _) => *groups,
        }
    }

    /// Bins of rows `start..start + out.len()`, `self.bins()` where a row is not counted.
    fn fill(&self, start: usize, out: &mut [u32]) {
        fn by_rule<T: input::Value, R: Rule<T>>(rule: &R, values: &[T], out: &mut [u32]) {
            for (o, &x) in out.iter_mut().zip(values) {
                *o = rule.bin(x) as u32;
            }
        }
        fn by_spec<T: input::Value>(spec: &BinSpec, values: &[T], out: &mut [u32]) {
            match spec {
                BinSpec::Uniform32(u) => by_rule(u, values, out),
                BinSpec::Uniform64(u) => by_rule(u, values, out),
                BinSpec::Edges(e) => by_rule(e, values, out),
            }
        }
        let end = start + out.len();
        match self {
            Dim::F32(spec, ca) => by_spec(spec, &dense(ca)[start..end], out),
            Dim::F64(spec, ca) => by_spec(spec, &dense(ca)[start..end], out),
            Dim::Groups(_, ids) => out.copy_from_slice(&dense(ids)[start..end]),
        }
    }
}

/// The values of a rechunked, null-free array (every `Dim` holds one).
pub(crate) fn dense<T: PolarsNumericType>(ca: &ChunkedArray<T>) -> &[T::Native] {
    ca.downcast_iter()
        .next()
        .map_or(&[][..], |a| a.values().as_slice())
}

/// The dimensions of one histogram and the row-major strides of its linear index.
pub(crate) struct Linear {
    pub dims: Vec<Dim>,
    pub strides: Vec<usize>,
    pub cells: usize,
    pub rows: usize,
    pub weights: Option<Float64Chunked>,
}

impl Linear {
    fn new(dims: Vec<Dim>, weights: Option<Float64Chunked>, rows: usize) -> HistResult<Self> {
        let bins: Vec<usize> = dims.iter().map(Dim::bins).collect();
        let (strides, cells) = row_major(&bins)?;
        Ok(Linear {
            dims,
            strides,
            cells,
            rows,
            weights,
        })
    }

    /// Linear indices of rows `start..start + len` (`cells` where a row is not counted).
    fn block(&self, start: usize, len: usize, idx: &mut [u32; BLOCK], scratch: &mut [u32; BLOCK]) {
        let cells = self.cells as u32;
        idx[..len].fill(0);
        for (dim, &stride) in self.dims.iter().zip(&self.strides) {
            let n = dim.bins() as u32;
            dim.fill(start, &mut scratch[..len]);
            for (i, &b) in idx[..len].iter_mut().zip(&scratch[..len]) {
                *i = if b == n || *i == cells {
                    cells
                } else {
                    *i + b * stride as u32
                };
            }
        }
    }

    /// The counts on all CPU cores.
    pub(crate) fn count_cpu(&self) -> Counts {
        let tasks = cpu::task_count(self.rows, self.cells);
        let per_task = self.rows.div_ceil(tasks).max(1);
        let ranges: Vec<(usize, usize)> = (0..tasks)
            .map(|t| (t * per_task, ((t + 1) * per_task).min(self.rows)))
            .collect();
        let blocks = |&(a, b): &(usize, usize)| {
            (a..b)
                .step_by(BLOCK)
                .map(move |s| (s, (s + BLOCK).min(b) - s))
        };
        match &self.weights {
            None => Counts::Exact(cpu::merge(ranges, |range| {
                let mut next = blocks(range);
                let mut scratch = [0u32; BLOCK];
                cpu::count_blocks(self.cells, |idx| match next.next() {
                    Some((start, len)) => {
                        self.block(start, len, idx, &mut scratch);
                        len
                    }
                    None => 0,
                })
            })),
            Some(w) => {
                let w = dense(w);
                Counts::Weighted(cpu::merge(ranges, |range| {
                    let mut next = blocks(range);
                    let mut scratch = [0u32; BLOCK];
                    cpu::sum_blocks(self.cells, |idx, amounts| match next.next() {
                        Some((start, len)) => {
                            self.block(start, len, idx, &mut scratch);
                            amounts[..len].copy_from_slice(&w[start..start + len]);
                            len
                        }
                        None => 0,
                    })
                }))
            }
        }
    }

    /// Counts on the device `options` asks for (a GPU failure under "auto" falls back).
    fn count(&self, device: Device, kernel: Option<Family>) -> HistResult<Counts> {
        let elem_bytes: usize = self
            .dims
            .iter()
            .map(|d| match d {
                Dim::F32(..) | Dim::Groups(..) => 4,
                Dim::F64(..) => 8,
            })
            .sum::<usize>()
            + if self.weights.is_some() { 8 } else { 0 };
        match choose_backend(device, self.rows, elem_bytes, false)? {
            Backend::Cpu { .. } => Ok(self.count_cpu()),
            Backend::Gpu { .. } => {
                match crate::gpu::histogram_linear(crate::gpu::get()?, self, kernel) {
                    Ok((counts, _plan)) => Ok(counts),
                    Err(e) if device == Device::Auto => {
                        crate::gpu::record_fallback(&e);
                        Ok(self.count_cpu())
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// Row-major strides for axes of `bins` bins, and the number of cells (bounded by `MAX_BINS`).
pub(crate) fn row_major(bins: &[usize]) -> HistResult<(Vec<usize>, usize)> {
    let mut strides = vec![0; bins.len()];
    let mut cells = 1usize;
    for (d, &n) in bins.iter().enumerate().rev() {
        strides[d] = cells;
        cells = cells
            .checked_mul(n)
            .filter(|&c| c <= MAX_BINS)
            .ok_or_else(|| {
                let shape: Vec<String> = bins.iter().map(|n| n.to_string()).collect();
                HistError::InvalidArgument(format!(
                    "the histogram would have {} cells, more than the {MAX_BINS} it can hold",
                    shape.join(" x ")
                ))
            })?;
    }
    Ok((strides, cells))
}

/// The checks every n-D entry point makes on the number of dimensions and per-dimension options.
fn check_dims(d: usize, options: &HistogramDdOptions) -> HistResult<()> {
    if !(2..=MAX_DIMS).contains(&d) {
        return Err(HistError::InvalidArgument(format!(
            "histogramdd takes 2 to {MAX_DIMS} columns, got {d}"
        )));
    }
    if options.bins.len() != d {
        return Err(HistError::InvalidArgument(format!(
            "`bins` has {} entries for {d} columns: give one per column, or one for all",
            options.bins.len()
        )));
    }
    if !(options.range.is_empty() || options.range.len() == d) {
        return Err(HistError::InvalidArgument(format!(
            "`range` has {} entries for {d} columns: give one (or None) per column",
            options.range.len()
        )));
    }
    Ok(())
}

/// numpy's result dtype for a sample of these columns is float32 (so the edges of a range
/// taken from the data are float32): float32 columns, with at most 16-bit integers beside them.
fn float32_sample(dtypes: &[&DataType]) -> bool {
    use DataType::*;
    dtypes.iter().any(|d| matches!(d, Float32))
        && dtypes
            .iter()
            .all(|d| matches!(d, Float32 | Int8 | Int16 | UInt8 | UInt16))
}

/// Rows where every column given is valid (and not NaN when `nan_too`), or `None` when all are.
fn complete_rows(columns: &[&Series], nan_too: bool) -> HistResult<Option<BooleanChunked>> {
    let mut mask: Option<BooleanChunked> = None;
    for s in columns {
        let mut m = (s.null_count() > 0).then(|| s.is_not_null());
        if nan_too && s.dtype().is_float() {
            let not_nan = s.is_not_nan()?;
            if not_nan.any_false() {
                m = Some(match m {
                    Some(m) => &m & &not_nan.fill_null_with_values(false)?,
                    None => not_nan.fill_null_with_values(false)?,
                });
            }
        }
        if let Some(m) = m {
            mask = Some(match mask {
                Some(acc) => &acc & &m,
                None => m,
            });
        }
    }
    Ok(mask)
}

trait AnyFalse {
    fn any_false(&self) -> bool;
}
impl AnyFalse for BooleanChunked {
    fn any_false(&self) -> bool {
        self.sum().unwrap_or(0) as usize != self.len() - self.null_count()
    }
}

fn dense_f64(s: &Series) -> HistResult<Float64Chunked> {
    Ok(s.to_physical_repr()
        .cast(&DataType::Float64)?
        .f64()?
        .rechunk()
        .into_owned())
}

fn dense_f32(s: &Series) -> HistResult<Float32Chunked> {
    Ok(s.cast(&DataType::Float32)?.f32()?.rechunk().into_owned())
}

/// The Struct dtype of `histogramdd` over columns with these fields.
pub fn histogramdd_dtype(inputs: &[Field], weighted: bool, density: bool) -> HistResult<DataType> {
    let mut fields = Vec::with_capacity(2 * inputs.len() + 1);
    for f in inputs {
        input::value_kind(f.dtype())?;
        let edges = output::edge_dtype(f.dtype());
        fields.push(Field::new(
            format!("{}_start", f.name()).into(),
            edges.clone(),
        ));
        fields.push(Field::new(format!("{}_end", f.name()).into(), edges));
    }
    fields.push(Field::new(
        COUNT.into(),
        output::count_dtype(weighted, density),
    ));
    Ok(DataType::Struct(fields))
}

/// The n-D histogram of `columns` (2 to 8 of the same length), optionally weighted, as a Struct
/// Series named like the first column: one row per cell in row-major order, with fields
/// `<column>_start` and `<column>_end` for each column and `count`. Counts equal
/// `numpy.histogramdd` over the rows with no null (NaN rows are never counted).
pub fn histogramdd(
    columns: &[Series],
    weights: Option<&Series>,
    options: &HistogramDdOptions,
) -> PolarsResult<Series> {
    Ok(compute_dd(columns, weights, options)?)
}

fn compute_dd(
    columns: &[Series],
    weights: Option<&Series>,
    options: &HistogramDdOptions,
) -> HistResult<Series> {
    let d = columns.len();
    check_dims(d, options)?;
    let rows = columns[0].len();
    for c in columns {
        input::value_kind(c.dtype())?;
        if c.len() != rows {
            return Err(HistError::InvalidArgument(format!(
                "columns must have the same length: {:?} has {} rows, {:?} has {rows}",
                c.name().as_str(),
                c.len(),
                columns[0].name().as_str()
            )));
        }
    }
    for (i, a) in columns.iter().enumerate() {
        if columns[..i].iter().any(|b| b.name() == a.name()) {
            return Err(HistError::InvalidArgument(format!(
                "column {:?} appears twice: give each dimension its own name (`.alias`)",
                a.name().as_str()
            )));
        }
    }
    let range = |i: usize| options.range.get(i).copied().flatten();
    let weights = weights
        .map(|w| input::weights_f64(&columns[0], w))
        .transpose()?;
    let auto_range =
        (0..d).any(|i| matches!(options.bins[i], Bins::Count(_)) && range(i).is_none());

    // Drop incomplete rows, then work on dense, single-chunk copies in the sample's type.
    let weight_series = weights.as_ref().map(|w| w.clone().into_series());
    let mut checked: Vec<&Series> = columns.iter().collect();
    checked.extend(weight_series.as_ref());
    let mask = complete_rows(&checked, auto_range)?;
    let keep = |s: &Series| -> HistResult<Series> {
        Ok(match &mask {
            Some(m) => s.filter(m)?,
            None => s.clone(),
        })
    };
    let dtypes: Vec<&DataType> = columns.iter().map(|c| c.dtype()).collect();
    let f32_sample = float32_sample(&dtypes);
    let mut dims = Vec::with_capacity(d);
    let mut kept_rows = rows;
    for (i, c) in columns.iter().enumerate() {
        let c = keep(c)?;
        kept_rows = c.len();
        let dim = if f32_sample {
            let ca = dense_f32(&c)?;
            let spec =
                BinSpec::resolve_dd(&options.bins[i], range(i), options.closed, true, || match (
                    ca.min(),
                    ca.max(),
                ) {
                    (Some(lo), Some(hi)) => Extremes::Float32(lo, hi),
                    _ => Extremes::Empty,
                })?;
            Dim::F32(spec, ca)
        } else {
            let ca = dense_f64(&c)?;
            let spec = BinSpec::resolve_dd(
                &options.bins[i],
                range(i),
                options.closed,
                false,
                || match (ca.min(), ca.max()) {
                    (Some(lo), Some(hi)) => Extremes::Float64(lo, hi),
                    _ => Extremes::Empty,
                },
            )?;
            Dim::F64(spec, ca)
        };
        dims.push(dim);
    }
    let weights = weight_series
        .map(|w| -> HistResult<Float64Chunked> { Ok(keep(&w)?.f64()?.rechunk().into_owned()) })
        .transpose()?;
    let weighted = weights.is_some();
    let linear = Linear::new(dims, weights, kept_rows)?;
    let counts = linear.count(options.device, options.kernel)?;
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| Field::new(c.name().clone(), c.dtype().clone()))
        .collect();
    let s = dd_struct(
        columns[0].name().clone(),
        &fields,
        &Shape::of(&linear),
        counts,
        options.density,
    )?;
    debug_assert_eq!(
        s.dtype(),
        &histogramdd_dtype(&fields, weighted, options.density)?
    );
    Ok(s)
}

/// The shape of a linearized histogram as the output needs it: each axis's binning (`None`
/// for a group axis) and stride.
pub(crate) struct Shape<'a> {
    pub axes: Vec<(Option<&'a BinSpec>, usize)>,
    pub strides: &'a [usize],
    pub cells: usize,
}

impl<'a> Shape<'a> {
    fn of(linear: &'a Linear) -> Self {
        let axes = linear
            .dims
            .iter()
            .map(|d| match d {
                Dim::F32(spec, _) | Dim::F64(spec, _) => (Some(spec), spec.len()),
                Dim::Groups(groups, _) => (None, *groups),
            })
            .collect();
        Shape {
            axes,
            strides: &linear.strides,
            cells: linear.cells,
        }
    }
}

/// The n-D result: `<name>_start`, `<name>_end` per dimension, then `count`.
pub(crate) fn dd_struct(
    name: PlSmallStr,
    columns: &[Field],
    shape: &Shape<'_>,
    counts: Counts,
    density: bool,
) -> HistResult<Series> {
    let cells = shape.cells;
    let mut series = Vec::with_capacity(2 * columns.len() + 1);
    for (((spec, n), &stride), col) in shape.axes.iter().zip(shape.strides).zip(columns) {
        let edges = spec.map(BinSpec::edges_f64).unwrap_or_default();
        let bin = |c: usize| c / stride % n;
        let start: Vec<f64> = (0..cells).map(|c| edges[bin(c)]).collect();
        let end: Vec<f64> = (0..cells).map(|c| edges[bin(c) + 1]).collect();
        series.push(output::edge_series(
            &format!("{}_start", col.name()),
            &start,
            col.dtype(),
        )?);
        series.push(output::edge_series(
            &format!("{}_end", col.name()),
            &end,
            col.dtype(),
        )?);
    }
    series.push(count_series(shape, counts, density, |_| 0));
    Ok(StructChunked::from_series(name, cells, series.iter())?.into_series())
}

/// `count`, or numpy's density `count / w0 / w1 / ... / total` with totals per `group(cell)`
/// (a group axis has no width).
fn count_series(
    shape: &Shape<'_>,
    counts: Counts,
    density: bool,
    group: impl Fn(usize) -> usize,
) -> Series {
    if !density {
        return match counts {
            Counts::Exact(c) => Series::new(COUNT.into(), c),
            Counts::Weighted(s) => Series::new(COUNT.into(), s),
        };
    }
    let values: Vec<f64> = match counts {
        Counts::Exact(c) => c.into_iter().map(|c| c as f64).collect(),
        Counts::Weighted(s) => s,
    };
    let mut totals: Vec<f64> = Vec::new();
    for (cell, &v) in values.iter().enumerate() {
        let g = group(cell);
        if totals.len() <= g {
            totals.resize(g + 1, 0.0);
        }
        totals[g] += v;
    }
    let widths: Vec<Option<Vec<f64>>> = shape
        .axes
        .iter()
        .map(|(s, _)| s.map(BinSpec::widths))
        .collect();
    let out: Vec<f64> = values
        .iter()
        .enumerate()
        .map(|(cell, &v)| {
            let mut x = v;
            for ((w, (_, n)), &stride) in widths.iter().zip(&shape.axes).zip(shape.strides) {
                if let Some(w) = w {
                    x /= w[cell / stride % n];
                }
            }
            x / totals[group(cell)]
        })
        .collect();
    Series::new(COUNT.into(), out)
}

/// The Struct dtype of a `by=` histogram: the key, then `bin_start`, `bin_end`, `count`.
pub fn histogram_by_dtype(
    values: &DataType,
    key: &Field,
    weighted: bool,
    density: bool,
) -> HistResult<DataType> {
    let DataType::Struct(mut fields) = crate::histogram_dtype(values, weighted, density)? else {
        unreachable!("a histogram is a struct")
    };
    fields.insert(0, key.clone());
    Ok(DataType::Struct(fields))
}

/// Every group's histogram of `values` in one pass: `keys` (any column Polars can group by, the
/// same length) names the group of each row. One binning serves all groups: `bins` and `range`
/// as in [`crate::histogram`], the range from the whole column when not given. Rows are the
/// groups in order of first appearance (a null key is a group), each with its bins: fields
/// `<key>`, `bin_start`, `bin_end`, `count`. Each group's rows equal [`crate::histogram`] of
/// that group's values with the same binning (`density` normalizes per group).
pub fn histogram_by(
    values: &Series,
    keys: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> PolarsResult<Series> {
    Ok(compute_by(
        values,
        keys,
        weights,
        options,
        KeyField::Values,
    )?)
}

/// What the key field of a `by=` result holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyField {
    /// The group's key.
    Values,
    /// The row where the group first appears (`IDX_DTYPE`): the Python wrapper gathers the key
    /// there itself, so that keys of dtypes the plugin cannot import (Categorical) keep theirs.
    #[cfg_attr(not(feature = "python"), allow(dead_code))]
    FirstRow,
}

pub(crate) fn compute_by(
    values: &Series,
    keys: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
    key_field: KeyField,
) -> HistResult<Series> {
    let kind = input::value_kind(values.dtype())?;
    if keys.len() != values.len() {
        return Err(HistError::InvalidArgument(format!(
            "the `by` key {:?} has {} rows but the column has {}: they must have the same length",
            keys.name().as_str(),
            keys.len(),
            values.len()
        )));
    }
    let weights = weights.map(|w| input::weights_f64(values, w)).transpose()?;
    let (ids, firsts) = group_ids(keys)?;
    let groups = firsts.len();

    let weight_series = weights.as_ref().map(|w| w.clone().into_series());
    let mut checked = vec![values];
    checked.extend(weight_series.as_ref());
    let mask = complete_rows(&checked, false)?;
    let keep = |s: &Series| -> HistResult<Series> {
        Ok(match &mask {
            Some(m) => s.filter(m)?,
            None => s.clone(),
        })
    };
    let kept = keep(values)?;
    let spec = crate::with_physical!(&kept, |ca: T| {
        let column = input::Column::<T>::new(ca, None);
        BinSpec::resolve(&options.bins, options.range, options.closed, kind, || {
            input::extremes(&column)
        })?
    });
    let n = spec.len();
    let value_dim = match spec {
        BinSpec::Uniform32(_) => Dim::F32(spec, dense_f32(&kept)?),
        _ => Dim::F64(spec, dense_f64(&kept)?),
    };
    let ids = keep(&ids.into_series())?.u32()?.rechunk().into_owned();
    let weights = weight_series
        .map(|w| -> HistResult<Float64Chunked> { Ok(keep(&w)?.f64()?.rechunk().into_owned()) })
        .transpose()?;
    let weighted = weights.is_some();
    let linear = Linear::new(
        vec![Dim::Groups(groups, ids), value_dim],
        weights,
        kept.len(),
    )?;
    let counts = linear.count(options.device, options.kernel)?;

    // One row per (group, bin): the key of each group repeated over its bins.
    let cells = linear.cells;
    let repeat: IdxCa = (0..cells).map(|c| Some(firsts[c / n])).collect::<IdxCa>();
    let key_column = match key_field {
        KeyField::Values => keys.take(&repeat)?,
        KeyField::FirstRow => repeat.into_series().with_name(keys.name().clone()),
    };
    let (Dim::F64(spec, _) | Dim::F32(spec, _)) = &linear.dims[1] else {
        unreachable!("the value axis is second")
    };
    let edges = spec.edges_f64();
    let start: Vec<f64> = (0..cells).map(|c| edges[c % n]).collect();
    let end: Vec<f64> = (0..cells).map(|c| edges[c % n + 1]).collect();
    let fields = [
        key_column,
        output::edge_series(output::BIN_START, &start, values.dtype())?,
        output::edge_series(output::BIN_END, &end, values.dtype())?,
        count_series(&Shape::of(&linear), counts, options.density, |c| c / n),
    ];
    let s = StructChunked::from_series(values.name().clone(), cells, fields.iter())?.into_series();
    let key_dtype = match key_field {
        KeyField::Values => keys.dtype().clone(),
        KeyField::FirstRow => IDX_DTYPE,
    };
    debug_assert_eq!(
        s.dtype(),
        &histogram_by_dtype(
            values.dtype(),
            &Field::new(keys.name().clone(), key_dtype),
            weighted,
            options.density
        )?
    );
    Ok(s)
}

/// Dense group ids of `keys` in order of first appearance, and each group's first row.
fn group_ids(keys: &Series) -> HistResult<(UInt32Chunked, Vec<IdxSize>)> {
    if let Some(ids) = integer_group_ids(keys)? {
        return Ok(ids);
    }
    let groups = keys.group_tuples(true, true)?;
    let mut ids = vec![0u32; keys.len()];
    let mut firsts = Vec::with_capacity(groups.len());
    for (g, group) in groups.iter().enumerate() {
        firsts.push(group.first());
        match group {
            GroupsIndicator::Idx((_, rows)) => {
                for &r in rows.iter() {
                    ids[r as usize] = g as u32;
                }
            }
            GroupsIndicator::Slice([first, len]) => {
                ids[first as usize..(first + len) as usize].fill(g as u32);
            }
        }
    }
    Ok((UInt32Chunked::from_vec(keys.name().clone(), ids), firsts))
}

/// An array in GPU memory as one dimension of an n-D sample: `stride` values apart (1 for a
/// column of its own, `d` for column `j` of a C-contiguous `(n, d)` array offset by `j`).
#[derive(Clone, Copy, Debug)]
pub struct DeviceDim {
    pub array: crate::DeviceArray,
    pub stride: u32,
}

/// The n-D histogram of arrays in GPU memory (all of one dtype and length, no nulls), counted
/// where they lie; like [`histogramdd`] otherwise. Returns the Struct Series, the plan and the
/// kernels' time in ms.
pub fn histogramdd_device(
    names: &[&str],
    dims: &[DeviceDim],
    weights: Option<u64>,
    options: &HistogramDdOptions,
) -> HistResult<(Series, crate::gpu::Plan, f32)> {
    let d = dims.len();
    check_dims(d, options)?;
    if names.len() != d {
        return Err(HistError::InvalidArgument(format!(
            "{} names for {d} arrays",
            names.len()
        )));
    }
    let tag = dims[0].array.dtype;
    let len = dims[0].array.len;
    if let Some(other) = dims
        .iter()
        .find(|x| x.array.dtype != tag || x.array.len != len)
    {
        return Err(HistError::InvalidArgument(format!(
            "arrays in GPU memory must share one dtype and length: {:?} of {} rows beside {:?} of {len}",
            other.array.dtype, other.array.len, tag
        )));
    }
    if options.device == Device::Cpu {
        return Err(HistError::InvalidArgument(
            "the arrays are in GPU memory: device=\"cpu\" would copy them to the host".into(),
        ));
    }
    let gpu = crate::gpu::get()?;
    let stream = gpu.stream_after_default()?;
    let columns: Vec<(u64, u32)> = dims.iter().map(|x| (x.array.ptr, x.stride)).collect();
    let range = |i: usize| options.range.get(i).copied().flatten();
    let needs_extremes =
        (0..d).any(|i| matches!(options.bins[i], Bins::Count(_)) && range(i).is_none());
    let extremes = if needs_extremes {
        crate::gpu::extremes_dd_device(gpu, &stream, tag, &columns, len)?
    } else {
        vec![Extremes::Empty; d]
    };
    let f32_sample = tag == crate::DataTypeTag::Float32;
    let specs = (0..d)
        .map(|i| {
            BinSpec::resolve_dd(
                &options.bins[i],
                range(i),
                options.closed,
                f32_sample,
                || extremes[i],
            )
        })
        .collect::<HistResult<Vec<_>>>()?;
    let bins: Vec<usize> = specs.iter().map(BinSpec::len).collect();
    let (strides, cells) = row_major(&bins)?;
    let (counts, plan, ms) = crate::gpu::linear_device(
        gpu,
        &stream,
        tag,
        &columns,
        &specs,
        &strides,
        cells,
        len,
        weights,
        options.kernel,
    )?;
    let dtype = tag.dtype();
    let fields: Vec<Field> = names
        .iter()
        .map(|n| Field::new((*n).into(), dtype.clone()))
        .collect();
    let shape = Shape {
        axes: specs.iter().map(|s| (Some(s), s.len())).collect(),
        strides: &strides,
        cells,
    };
    let series = dd_struct(names[0].into(), &fields, &shape, counts, options.density)?;
    Ok((series, plan, ms))
}

/// [`group_ids`] for integer keys (Categorical codes among them) of a narrow span: one pass
/// with a table indexed by the key, several times faster than hashing. `None` for other keys.
fn integer_group_ids(keys: &Series) -> HistResult<Option<(UInt32Chunked, Vec<IdxSize>)>> {
    let physical = keys.to_physical_repr();
    if !physical.dtype().is_integer() || physical.dtype() == &DataType::UInt64 {
        return Ok(None);
    }
    let ca = physical.cast(&DataType::Int64)?;
    let ca = ca.i64()?;
    let (Some(lo), Some(hi)) = (ca.min(), ca.max()) else {
        return Ok(None);
    };
    let span = (hi as i128 - lo as i128 + 1) as usize;
    if span > (4 * keys.len()).max(1 << 16) || span >= u32::MAX as usize {
        return Ok(None);
    }
    // One slot per key value, and the last for null.
    let mut table = vec![u32::MAX; span + 1];
    let mut ids = Vec::with_capacity(keys.len());
    let mut firsts = Vec::new();
    let mut row = 0 as IdxSize;
    for array in ca.downcast_iter() {
        for v in array.iter() {
            let slot = v.map_or(span, |&v| (v - lo) as usize);
            if table[slot] == u32::MAX {
                table[slot] = firsts.len() as u32;
                firsts.push(row);
            }
            ids.push(table[slot]);
            row += 1;
        }
    }
    Ok(Some((
        UInt32Chunked::from_vec(keys.name().clone(), ids),
        firsts,
    )))
}
