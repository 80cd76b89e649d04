//! Histograms of Polars columns with counts identical to `numpy.histogram`, on all CPU cores.
//!
//! ```
//! use polars::prelude::*;
//! use polars_gpu_hist::{histogram_frame, Bins, HistogramOptions};
//!
//! let x = Series::new("x".into(), [0.0, 1.0, 2.0, 3.0, f64::NAN]);
//! let options = HistogramOptions { bins: Bins::Count(3), ..Default::default() };
//! let hist = histogram_frame(&x, None, &options).unwrap();
//! let counts: Vec<u64> = hist.column("count").unwrap().u64().unwrap().into_no_null_iter().collect();
//! assert_eq!(counts, [1, 1, 2]); // numpy: the last bin is closed, NaN is not counted
//! ```
//!
//! The bin rules live in [`bins`]; backends only evaluate them.

pub mod accumulator;
pub mod bins;
pub mod cpu;
pub mod error;
pub mod gpu;
pub mod input;
pub mod nd;
pub mod output;
#[cfg(feature = "python")]
mod python;

use polars::prelude::*;
use serde::{Deserialize, Serialize};

pub use accumulator::Histogram;
pub use bins::{BinSpec, Bins, Closed};
pub use error::{HistError, HistResult};
pub use nd::{histogram_by, histogramdd, histogramdd_device, DeviceDim, HistogramDdOptions};

/// Where a histogram is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    /// The fastest available backend for the input.
    #[default]
    Auto,
    Cpu,
    Gpu,
}

/// The arguments of a histogram, as `pl.col(..).gpu_hist.histogram(...)` takes them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistogramOptions {
    /// A number of equal-width bins, or strictly increasing edges.
    pub bins: Bins,
    /// Lower and upper edge for `Bins::Count`; the data's [min, max] when `None`.
    pub range: Option<(f64, f64)>,
    /// numpy's density: `count / bin width / total`.
    pub density: bool,
    pub closed: Closed,
    pub device: Device,
    /// Pins the GPU kernel family (benchmarks and tests); the plan chooses when `None`.
    pub kernel: Option<gpu::Family>,
}

/// The histogram of `values` (optionally weighted) as a Struct Series named like `values`, one
/// row per bin with fields `bin_start`, `bin_end` and `count`.
pub fn histogram(
    values: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> PolarsResult<Series> {
    Ok(compute(values, weights, options)?)
}

/// [`histogram`] as a DataFrame with columns `bin_start`, `bin_end` and `count`.
pub fn histogram_frame(
    values: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> PolarsResult<DataFrame> {
    let hist = histogram(values, weights, options)?;
    let fields = hist.struct_()?.fields_as_series();
    DataFrame::new_infer_height(fields.into_iter().map(Column::from).collect())
}

/// The dtype [`histogram`] returns for a column of `input` dtype.
pub fn histogram_dtype(input: &DataType, weighted: bool, density: bool) -> HistResult<DataType> {
    input::value_kind(input)?;
    Ok(output::struct_dtype(input, weighted, density))
}

/// Where a histogram of `rows` host rows runs, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu { reason: String },
    Gpu { reason: String },
}

/// Costs behind `device="auto"` for a host column, measured on an H200 host (16 cores,
/// BENCHMARKS.md): the CPU backend takes about 10 ns of one thread per row (2^28 float32 in
/// 175 ms, 2^27 float64 in 84 ms, on 16 threads); the GPU path costs its copy (the transfer's
/// rate, [`gpu::Transfer`]), about 5 ps a row of kernel and a millisecond to set up; a column in
/// the device cache costs no copy.
const CPU_THREAD_NS_PER_ROW: f64 = 10.2;
const GPU_NS_PER_ROW: f64 = 0.005;
const GPU_SETUP_MS: f64 = 1.0;

/// Copy cost of each transfer, ns per byte: end-to-end first calls on the H200 host for 1 GiB
/// columns (BENCHMARKS.md, 2026-11-22): staged 26-34 ms, page-locked in place 75-85 ms,
/// pageable 127-174 ms.
fn copy_ns_per_byte(transfer: gpu::Transfer) -> f64 {
    match transfer.resolved() {
        gpu::Transfer::Pageable => 0.14,
        gpu::Transfer::Registered => 0.075,
        _ => 0.028,
    }
}

/// The device choice for a host (Polars) column of `rows` rows of `elem_bytes` bytes each;
/// `resident`: its values are in the device cache already.
pub fn choose_backend(
    device: Device,
    rows: usize,
    elem_bytes: usize,
    resident: bool,
) -> HistResult<Backend> {
    match device {
        Device::Cpu => Ok(Backend::Cpu {
            reason: "device=\"cpu\" was asked for".into(),
        }),
        Device::Gpu => match gpu::get() {
            Ok(_) => Ok(Backend::Gpu {
                reason: "device=\"gpu\" was asked for".into(),
            }),
            Err(HistError::Gpu(why)) => Err(HistError::Gpu(format!(
                "device=\"gpu\" was asked for, but no GPU can be used: {why}"
            ))),
            Err(e) => Err(e),
        },
        Device::Auto => {
            if let Err(e) = gpu::get() {
                let why = match e {
                    HistError::Gpu(why) => why,
                    other => other.to_string(),
                };
                return Ok(Backend::Cpu {
                    reason: format!("no GPU: {why}"),
                });
            }
            let transfer = gpu::Transfer::from_env();
            let threads = rayon::current_num_threads() as f64;
            let cpu_ms = rows as f64 * CPU_THREAD_NS_PER_ROW / threads / 1e6;
            let copy_ms = match resident {
                true => 0.0,
                false => (rows * elem_bytes) as f64 * copy_ns_per_byte(transfer) / 1e6,
            };
            let gpu_ms = GPU_SETUP_MS + copy_ms + rows as f64 * GPU_NS_PER_ROW / 1e6;
            let how = match resident {
                true => "in the device cache".to_string(),
                false => format!("copied by {}", transfer.name()),
            };
            let estimate = format!(
                "for {rows} rows of {elem_bytes} bytes in host memory: about {cpu_ms:.1} ms on \
                 {threads} CPU threads, {gpu_ms:.1} ms on the GPU ({how})"
            );
            Ok(if gpu_ms < cpu_ms {
                Backend::Gpu { reason: estimate }
            } else {
                Backend::Cpu { reason: estimate }
            })
        }
    }
}

fn compute(
    values: &Series,
    weights: Option<&Series>,
    options: &HistogramOptions,
) -> HistResult<Series> {
    let kind = input::value_kind(values.dtype())?;
    let weights = weights.map(|w| input::weights_f64(values, w)).transpose()?;
    with_physical!(values, |ca: T| {
        let column = input::Column::<T>::new(ca, weights.as_ref());
        let spec = BinSpec::resolve(&options.bins, options.range, options.closed, kind, || {
            input::extremes(&column)
        })?;
        let counts = count_host(&column, &spec, options.device, options.kernel, Some(values))?;
        Ok(output::to_struct(
            values.name().clone(),
            &spec,
            counts,
            options.density,
            values.dtype(),
        )?)
    })
}

/// Counts a host column with `spec` on the backend [`choose_backend`] picks, falling back to
/// the CPU under `Device::Auto` when the GPU fails. `owner` (the column) lets the GPU path keep
/// the column in its device cache.
pub(crate) fn count_host<T: input::Value>(
    column: &input::Column<'_, T>,
    spec: &BinSpec,
    device: Device,
    kernel: Option<gpu::Family>,
    owner: Option<&Series>,
) -> HistResult<cpu::Counts> {
    let weighted = column.segments.iter().any(|s| s.weights.is_some());
    let resident = !weighted && gpu::available() && gpu::is_cached(column);
    match choose_backend(device, column.len(), std::mem::size_of::<T>(), resident)? {
        Backend::Cpu { .. } => Ok(cpu::histogram(column, spec)),
        Backend::Gpu { .. } => {
            let how = gpu::HostOptions {
                force: kernel,
                transfer: gpu::Transfer::from_env(),
                owner,
            };
            match gpu::histogram_host(gpu::get()?, column, spec, how) {
                Ok((counts, _plan, route)) => {
                    gpu::record_route(&route);
                    Ok(counts)
                }
                // Under "auto" a GPU failure (out of memory, a driver error) is not the user's
                // problem: count on the CPU and let `explain` report it.
                Err(e) if device == Device::Auto => {
                    gpu::record_fallback(&e);
                    Ok(cpu::histogram(column, spec))
                }
                Err(e) => Err(e),
            }
        }
    }
}

/// A column that already lives in GPU memory (CuPy, PyTorch, Numba: `__cuda_array_interface__`).
#[derive(Clone, Copy, Debug)]
pub struct DeviceArray {
    /// Device address of the first value.
    pub ptr: u64,
    pub len: u64,
    /// One of the primitive numeric dtypes.
    pub dtype: DataTypeTag,
}

/// The primitive numeric dtypes a [`DeviceArray`] may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataTypeTag {
    Float32,
    Float64,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
}

impl DataTypeTag {
    /// From numpy's array-interface type string (`"<f4"`, `"|u1"`, ...).
    pub fn from_typestr(typestr: &str) -> HistResult<Self> {
        use DataTypeTag::*;
        let kind = typestr.get(1..).unwrap_or("");
        if typestr.starts_with('>') {
            return Err(HistError::InvalidArgument(format!(
                "big-endian arrays ({typestr}) are not supported"
            )));
        }
        Ok(match kind {
            "f4" => Float32,
            "f8" => Float64,
            "i1" => Int8,
            "i2" => Int16,
            "i4" => Int32,
            "i8" => Int64,
            "u1" => UInt8,
            "u2" => UInt16,
            "u4" => UInt32,
            "u8" => UInt64,
            _ => {
                return Err(HistError::UnsupportedDtype(format!(
                    "array of type {typestr}"
                )))
            }
        })
    }

    pub(crate) fn dtype(self) -> DataType {
        use DataTypeTag::*;
        match self {
            Float32 => DataType::Float32,
            Float64 => DataType::Float64,
            Int8 => DataType::Int8,
            Int16 => DataType::Int16,
            Int32 => DataType::Int32,
            Int64 => DataType::Int64,
            UInt8 => DataType::UInt8,
            UInt16 => DataType::UInt16,
            UInt32 => DataType::UInt32,
            UInt64 => DataType::UInt64,
        }
    }

    pub(crate) fn c_type_and_size(self) -> (&'static str, u64) {
        use DataTypeTag::*;
        match self {
            Float32 => ("float", 4),
            Float64 => ("double", 8),
            Int8 => ("signed char", 1),
            Int16 => ("short", 2),
            Int32 => ("int", 4),
            Int64 => ("long long", 8),
            UInt8 => ("unsigned char", 1),
            UInt16 => ("unsigned short", 2),
            UInt32 => ("unsigned int", 4),
            UInt64 => ("unsigned long long", 8),
        }
    }
}

/// The histogram of an array in GPU memory (optionally weighted by a float64 array of the same
/// length), computed where it lies: the values are never copied to the host. Returns the Struct
/// Series (named `name`), the plan that ran and the kernels' time in ms (device events).
pub fn histogram_device(
    name: &str,
    values: DeviceArray,
    weights: Option<u64>,
    options: &HistogramOptions,
) -> HistResult<(Series, gpu::Plan, f32)> {
    if options.device == Device::Cpu {
        return Err(HistError::InvalidArgument(
            "the array is in GPU memory: device=\"cpu\" would copy it to the host; \
             copy it yourself (e.g. `.get()`, `.cpu()`) to histogram it there"
                .into(),
        ));
    }
    let gpu = gpu::get()?;
    let dtype = values.dtype.dtype();
    let kind = input::value_kind(&dtype)?;
    let (c_type, elem_bytes) = values.dtype.c_type_and_size();
    let rows = gpu::DeviceRows {
        values: values.ptr,
        len: values.len,
        elem_bytes,
        validity: 0,
        validity_offset: 0,
        weights: weights.map(|w| (w, 0, 0)),
    };
    let stream = gpu.stream_after_default()?;
    let mut extremes_error = None;
    let spec = BinSpec::resolve(&options.bins, options.range, options.closed, kind, || {
        gpu::extremes_device(gpu, &stream, values.dtype, &rows).unwrap_or_else(|e| {
            extremes_error = Some(e);
            bins::Extremes::Empty
        })
    });
    if let Some(e) = extremes_error {
        return Err(e);
    }
    let spec = spec?;
    let plan = gpu::plan::plan(
        &gpu.props,
        &spec,
        weights.is_some(),
        values.len,
        options.kernel,
    )?;
    let (counts, kernel_ms) = gpu::run(gpu, &stream, c_type, &spec, &plan, &[rows])?;
    let series = output::to_struct(name.into(), &spec, counts, options.density, &dtype)?;
    Ok((series, plan, kernel_ms))
}

/// Which backend, and on the GPU which kernel and grid, a histogram of `rows` values of
/// `dtype` (a Polars dtype name such as `"Float32"`) would use, and why.
pub fn explain(
    dtype: &str,
    rows: u64,
    options: &HistogramOptions,
    weighted: bool,
    on_device: bool,
) -> HistResult<String> {
    let kind = match dtype.split('(').next().unwrap_or("") {
        "Float32" => bins::ValueKind::Float32,
        "Float64" => bins::ValueKind::Float64,
        "Int8" | "Int16" | "Int32" | "Int64" | "UInt8" | "UInt16" | "UInt32" | "UInt64"
        | "Date" | "Datetime" | "Duration" => bins::ValueKind::Integer,
        _ => return Err(HistError::UnsupportedDtype(dtype.to_string())),
    };
    // The kernel choice does not depend on where the range comes from: stand in [0, 1].
    let spec = BinSpec::resolve(
        &options.bins,
        options.range,
        options.closed,
        kind,
        || match kind {
            bins::ValueKind::Float32 => bins::Extremes::Float32(0.0, 1.0),
            bins::ValueKind::Float64 => bins::Extremes::Float64(0.0, 1.0),
            bins::ValueKind::Integer => bins::Extremes::Integer(0, 1),
        },
    )?;
    let backend = if on_device {
        gpu::get()?;
        Backend::Gpu {
            reason: "the data is in GPU memory".into(),
        }
    } else {
        let elem_bytes = match kind {
            bins::ValueKind::Float32 => 4,
            _ => 8,
        };
        choose_backend(options.device, rows as usize, elem_bytes, false)?
    };
    let fallback = gpu::last_fallback()
        .map(|e| format!("\nnote     the last GPU attempt under device=\"auto\" failed ({e}); it ran on the CPU"))
        .unwrap_or_default();
    let route = gpu::last_route()
        .map(|r| format!("\ncopy     the last host column on the GPU was {r}"))
        .unwrap_or_default();
    let text = match backend {
        Backend::Cpu { reason } => format!(
            "backend  cpu: privatized histograms on {} threads\nwhy      {reason}",
            rayon::current_num_threads()
        ),
        Backend::Gpu { reason } => {
            let plan = gpu::plan::plan(&gpu::get()?.props, &spec, weighted, rows, options.kernel)?;
            format!("backend  gpu: {reason}\n{plan}")
        }
    };
    Ok(text + &route + &fallback)
}
