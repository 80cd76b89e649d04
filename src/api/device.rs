//! Histograms of arrays already in GPU memory (CuPy, PyTorch, Numba: `__cuda_array_interface__`),
//! counted where they lie, on the GPU that holds them (whichever the current device is): the
//! values never visit the host, and for the numpy drop-in neither do the counts.

use std::sync::Arc;

use cudarc::driver::CudaStream;
use polars::prelude::*;

use crate::api::axes::{histogram_axis, resolve_axis, AxisData, EdgeOrder, Flavour};
use crate::api::histdd::check_dims;
use crate::bins::{BinSpec, Extremes};
use crate::dtype::DType;
use crate::engine::{self, Placement, Report};
use crate::error::{HistError, HistResult};
use crate::gpu::{self, DeviceCounts, Gpu};
use crate::job::{Axis, DeviceColumn, DeviceRows, Job, Rows};
use crate::options::{Device, HistogramDdOptions, HistogramOptions};
use crate::output::{self, AxisOut};

/// A column in GPU memory: `len` values of `dtype` from `ptr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceArray {
    pub ptr: u64,
    pub len: u64,
    pub dtype: DType,
}

/// An array in GPU memory as one dimension of an n-D sample: `stride` values apart (1 for a
/// column of its own, `d` for column `j` of a C-contiguous `(n, d)` array offset by `j`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceDim {
    pub array: DeviceArray,
    pub stride: u64,
}

/// The one dtype and length that the arrays of a device sample share (a device column has no
/// nulls to align, and the kernels read every column with one type), or an error naming the
/// first array that differs. Every entry point that takes several device arrays checks here.
pub fn one_dtype_and_length(
    mut arrays: impl Iterator<Item = DeviceArray>,
) -> HistResult<(DType, u64)> {
    let first = arrays
        .next()
        .ok_or_else(|| HistError::InvalidArgument("no arrays in GPU memory given".into()))?;
    match arrays.find(|a| a.dtype != first.dtype || a.len != first.len) {
        Some(other) => Err(HistError::InvalidArgument(format!(
            "arrays in GPU memory must share one dtype and length: {} of {} rows beside {} of {}",
            other.dtype.name(),
            other.len,
            first.dtype.name(),
            first.len
        ))),
        None => Ok((first.dtype, first.len)),
    }
}

/// The GPU holding the arrays at `columns` and `weights` (of `len` rows), bound to the calling
/// thread: arrays on two GPUs are refused, and memory CUDA does not know too. Managed memory,
/// or no rows at all, count on the current device.
pub fn gpu_holding(columns: &[u64], weights: Option<u64>, len: u64) -> HistResult<&'static Gpu> {
    gpu::device_count()?;
    let current = gpu::device::current();
    if len == 0 {
        return gpu::on(current);
    }
    let named = columns
        .iter()
        .enumerate()
        .map(|(i, &ptr)| (format!("column {i}"), ptr))
        .chain(weights.map(|w| ("`weights`".to_string(), w)));
    let homes = named
        .map(|(what, ptr)| Ok((what.clone(), gpu::device::home_of(ptr, &what)?)))
        .collect::<HistResult<Vec<_>>>()?;
    gpu::on(gpu::device::one_device(homes, current)?)
}

/// One axis of a device job, for resolving its bins from the data.
struct DeviceAxis<'a> {
    gpu: &'a Gpu,
    stream: &'a Arc<CudaStream>,
    column: DeviceColumn,
    len: u64,
}

impl AxisData for DeviceAxis<'_> {
    fn extremes(&self) -> HistResult<Extremes> {
        gpu::extremes::extremes(self.gpu, self.stream, self.column, self.len)
    }

    fn estimate(
        &self,
        rule: crate::options::BinRule,
        range: Option<crate::bins::Range>,
        kind: crate::dtype::ValueKind,
    ) -> HistResult<usize> {
        // numpy's estimators need order statistics and moments of the whole sample: read it.
        let values = read_column(self.stream, self.column, self.len)?;
        let series = values;
        let rows = crate::job::HostRows::new(vec![crate::input::HostColumn::new(&series)?], None)?;
        crate::api::axes::HostAxis {
            rows: &rows,
            axis: 0,
        }
        .estimate(rule, range, kind)
    }
}

/// A device column copied to the host, as a Series of its own dtype.
fn read_column(stream: &Arc<CudaStream>, column: DeviceColumn, len: u64) -> HistResult<Series> {
    crate::with_dtype!(column.dtype, |T| {
        let span = if len == 0 {
            0
        } else {
            (len - 1) * column.stride + 1
        };
        // A device array may be larger than host memory: an error, not an abort.
        let mut all: Vec<T> = crate::alloc::zeroed(span as usize)?;
        stream
            .synchronize()
            .map_err(gpu::driver("waiting for the array"))?;
        // SAFETY: the caller's array holds `span` values from `ptr` (its interface says so).
        unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut all, column.ptr) }
            .map_err(gpu::driver("reading the array to estimate its bins"))?;
        let values: Vec<T> = if column.stride <= 1 {
            all
        } else {
            crate::alloc::collected(all.into_iter().step_by(column.stride as usize))?
        };
        Ok(Series::new("x".into(), values))
    })
}

fn refuse_cpu(device: Device) -> HistResult<()> {
    match device {
        Device::Cpu => Err(HistError::argument(|s| {
            format!(
                "the data is in GPU memory: {} would copy it to the host; copy it yourself \
                 (e.g. `.get()`, `.cpu()`) to histogram it there",
                s.device("cpu")
            )
        })),
        _ => Ok(()),
    }
}

/// A device job over `columns` and the bins of each axis.
#[allow(clippy::too_many_arguments)]
fn device_job(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    columns: Vec<DeviceColumn>,
    len: u64,
    weights: Option<u64>,
    bins: impl Fn(usize, &DeviceAxis<'_>) -> HistResult<BinSpec>,
    flow: bool,
) -> HistResult<Job<'static>> {
    let axes = columns
        .iter()
        .enumerate()
        .map(|(i, &column)| {
            let data = DeviceAxis {
                gpu,
                stream,
                column,
                len,
            };
            Ok(Axis::bins(bins(i, &data)?, flow))
        })
        .collect::<HistResult<Vec<_>>>()?;
    Job::new(
        axes,
        Rows::Device(DeviceRows {
            columns,
            weights,
            len,
            ordinal: gpu.ordinal(),
        }),
    )
}

/// [`gpu_holding`] the columns of an n-D sample (their one length: a mismatch is refused with
/// the job).
fn gpu_holding_dims(dims: &[DeviceDim], weights: Option<u64>) -> HistResult<&'static Gpu> {
    let ptrs: Vec<u64> = dims.iter().map(|d| d.array.ptr).collect();
    let len = dims.iter().map(|d| d.array.len).max().unwrap_or(0);
    gpu_holding(&ptrs, weights, len)
}

/// The 1-D job of a device array.
fn job_1d(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    values: DeviceArray,
    weights: Option<u64>,
    options: &HistogramOptions,
) -> HistResult<Job<'static>> {
    refuse_cpu(options.device)?;
    let column = DeviceColumn {
        ptr: values.ptr,
        dtype: values.dtype,
        stride: 1,
    };
    let polars = values.dtype.polars();
    device_job(
        gpu,
        stream,
        vec![column],
        values.len,
        weights,
        |_, data| {
            histogram_axis(
                options,
                &polars,
                values.dtype.kind(),
                weights.is_some(),
                data,
            )
        },
        options.flow,
    )
}

/// The n-D job of device columns of one dtype and length.
fn job_dd(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    dims: &[DeviceDim],
    weights: Option<u64>,
    options: &HistogramDdOptions,
) -> HistResult<Job<'static>> {
    refuse_cpu(options.device)?;
    check_dims(dims.len(), options)?;
    let (dtype, len) = one_dtype_and_length(dims.iter().map(|x| x.array))?;
    let columns = dims
        .iter()
        .map(|x| DeviceColumn {
            ptr: x.array.ptr,
            dtype,
            stride: x.stride,
        })
        .collect();
    let polars = dtype.polars();
    device_job(
        gpu,
        stream,
        columns,
        len,
        weights,
        |i, data| {
            resolve_axis(
                &options.bins[i],
                options.range.get(i).copied().flatten(),
                options.closed,
                &polars,
                dtype.kind(),
                Flavour::Histogramdd,
                EdgeOrder::of(options.repeated_edges),
                weights.is_some(),
                data,
            )
        },
        options.flow,
    )
}

fn placement(device: Device, kernel: Option<crate::family::Family>) -> Placement {
    Placement::asked(device, kernel)
}

/// The histogram of an array in GPU memory (optionally weighted by a float64 array of the same
/// length) as a Struct Series named `name`, and the engine's report (plan, kernel time).
pub fn histogram_device(
    name: &str,
    values: DeviceArray,
    weights: Option<u64>,
    options: &HistogramOptions,
) -> HistResult<(Series, Report)> {
    let clock = gpu::Clock::start();
    let gpu = gpu_holding(&[values.ptr], weights, values.len)?;
    let stream = gpu.stream_after_default()?;
    let job = job_1d(gpu, &stream, values, weights, options)?;
    let resolve = clock.lap();
    let (counts, report) = engine::count(&job, &placement(options.device, options.kernel))?;
    clock.lap();
    let spec = job.axes[0].spec().expect("a binned axis");
    let axes = [AxisOut::bins(spec, values.dtype.polars(), options.flow)];
    let series = output::to_struct(name.into(), &axes, counts, options.density)?;
    Ok((series, report.between(resolve, ("output", clock.lap()))))
}

/// The n-D histogram of arrays in GPU memory (all of one dtype and length, no nulls), counted
/// where they lie; like [`crate::histogramdd`] otherwise.
pub fn histogramdd_device(
    names: &[&str],
    dims: &[DeviceDim],
    weights: Option<u64>,
    options: &HistogramDdOptions,
) -> HistResult<(Series, Report)> {
    if names.len() != dims.len() {
        return Err(HistError::InvalidArgument(format!(
            "{} names for {} arrays",
            names.len(),
            dims.len()
        )));
    }
    let clock = gpu::Clock::start();
    let gpu = gpu_holding_dims(dims, weights)?;
    let stream = gpu.stream_after_default()?;
    let job = job_dd(gpu, &stream, dims, weights, options)?;
    let resolve = clock.lap();
    let (counts, report) = engine::count(&job, &placement(options.device, options.kernel))?;
    clock.lap();
    let dtype = dims[0].array.dtype.polars();
    let axes: Vec<AxisOut> = job
        .axes
        .iter()
        .zip(names)
        .map(|(axis, name)| {
            AxisOut::named(
                name,
                axis.spec().expect("binned"),
                dtype.clone(),
                options.flow,
            )
        })
        .collect();
    let series = output::to_struct(names[0].into(), &axes, counts, options.density)?;
    Ok((series, report.between(resolve, ("output", clock.lap()))))
}

/// Where the numpy drop-in's results go when their sizes are known before the bins are
/// resolved: arrays the caller allocated (CuPy, PyTorch), filled in order on the caller's
/// stream, which this call does not wait for (as CuPy's own functions do not).
pub struct Target {
    /// The caller's stream (0: the legacy default stream).
    pub stream: u64,
    /// Device address of the counts (u64, or f64 sums when weighted), row-major over the axes.
    pub counts: u64,
    /// How many counts there are room for: the histogram's cells, or it is an error.
    pub cells: usize,
    /// Per axis, where its edges go and their dtype (float32 or float64), where wanted.
    pub edges: Vec<Option<(u64, DType)>>,
}

/// What filling a [`Target`] leaves to the caller: per axis, the edges (as float64) it could
/// not make on the device (spans no formula covers, or a dtype the formula cannot give), and
/// the engine's report.
pub struct Filled {
    pub host_edges: Vec<Option<Vec<f64>>>,
    pub report: Report,
}

/// `numpy.histogram` of a device array into `target`, queued on the caller's stream.
pub fn histogram_into(
    values: DeviceArray,
    weights: Option<u64>,
    options: &HistogramOptions,
    target: &Target,
) -> HistResult<Filled> {
    let clock = gpu::Clock::start();
    let gpu = gpu_holding(&[values.ptr], weights, values.len)?;
    let stream = gpu.borrowed_stream(target.stream);
    let job = job_1d(gpu, &stream, values, weights, options)?;
    let placement = placement(options.device, options.kernel);
    fill(gpu, &stream, job, placement, target, &clock)
}

/// `numpy.histogramdd` of device columns into `target`, queued on the caller's stream.
pub fn histogramdd_into(
    dims: &[DeviceDim],
    weights: Option<u64>,
    options: &HistogramDdOptions,
    target: &Target,
) -> HistResult<Filled> {
    let clock = gpu::Clock::start();
    let gpu = gpu_holding_dims(dims, weights)?;
    let stream = gpu.borrowed_stream(target.stream);
    let job = job_dd(gpu, &stream, dims, weights, options)?;
    let placement = placement(options.device, options.kernel);
    fill(gpu, &stream, job, placement, target, &clock)
}

/// Counts `job` into the caller's arrays of `target` and makes the edges wanted beside them.
fn fill(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    job: Job<'static>,
    placement: Placement,
    target: &Target,
    clock: &gpu::Clock,
) -> HistResult<Filled> {
    if job.cells != target.cells {
        return Err(HistError::Internal(format!(
            "room for {} counts, but the histogram has {}",
            target.cells, job.cells
        )));
    }
    // The caller's arrays are written: they must be this GPU's too.
    if target.cells > 0 {
        gpu.check_readable(target.counts, "the counts' array")?;
    }
    for (ptr, _) in target.edges.iter().flatten() {
        gpu.check_readable(*ptr, "the edges' array")?;
    }
    let resolve = clock.lap();
    let report = engine::count_into(&job, &placement, stream, target.counts, clock)?;
    let mut host_edges = Vec::with_capacity(job.axes.len());
    for (axis, want) in job.axes.iter().zip(&target.edges) {
        let spec = axis.spec().expect("binned axes");
        let made = match want {
            Some((ptr, dtype)) => gpu::edges::fill_linspace_edges(gpu, stream, spec, *dtype, *ptr)?,
            None => true,
        };
        host_edges.push((!made).then(|| spec.edges_f64()).transpose()?);
    }
    Ok(Filled {
        host_edges,
        report: report.between(resolve, ("edges", clock.lap())),
    })
}

/// numpy's answer for device arrays, left on the device, when the number of bins is known only
/// once they are resolved (estimators, integer bins): counts allocated here, complete on return.
pub struct DeviceHistogram {
    pub counts: DeviceCounts,
    pub stream: Arc<CudaStream>,
    pub specs: Vec<BinSpec>,
    pub report: Report,
    /// The GPU holding the counts.
    pub ordinal: i32,
}

impl DeviceHistogram {
    /// The edges of `axis` as `dtype`, made on the device beside the counts (see
    /// [`gpu::edges::linspace_edges`]; `None`: take them from `specs`). Complete on return.
    pub fn device_edges(&self, axis: usize, dtype: DType) -> HistResult<Option<gpu::DeviceBuffer>> {
        let edges = gpu::edges::linspace_edges(
            gpu::on(self.ordinal)?,
            &self.stream,
            &self.specs[axis],
            dtype,
        )?;
        if edges.is_some() {
            self.stream
                .synchronize()
                .map_err(gpu::driver("making the edges"))?;
        }
        Ok(edges)
    }
}

/// Counts `job` into counts allocated on `stream` and waits for them.
fn allocated(
    stream: Arc<CudaStream>,
    job: Job<'static>,
    placement: Placement,
    clock: &gpu::Clock,
) -> HistResult<DeviceHistogram> {
    let resolve = clock.lap();
    let (counts, report) = engine::count_on_device(&job, &placement, &stream, clock)?;
    // Moved, not cloned: millions of bins are megabytes of edges.
    let specs = job
        .axes
        .into_iter()
        .filter_map(|a| match a.rule {
            crate::job::Rule::Bins(spec) => Some(spec),
            crate::job::Rule::Groups(_) | crate::job::Rule::Values { .. } => None,
        })
        .collect();
    Ok(DeviceHistogram {
        counts,
        ordinal: stream.context().ordinal() as i32,
        stream,
        specs,
        report: report.before(resolve),
    })
}

/// `numpy.histogram` of a device array, the counts left on the device.
pub fn histogram_on_device(
    values: DeviceArray,
    weights: Option<u64>,
    options: &HistogramOptions,
) -> HistResult<DeviceHistogram> {
    let clock = gpu::Clock::start();
    let gpu = gpu_holding(&[values.ptr], weights, values.len)?;
    let stream = gpu.stream_after_default()?;
    let job = job_1d(gpu, &stream, values, weights, options)?;
    allocated(
        stream,
        job,
        placement(options.device, options.kernel),
        &clock,
    )
}

/// `numpy.histogramdd` of device columns, the counts left on the device.
pub fn histogramdd_on_device(
    dims: &[DeviceDim],
    weights: Option<u64>,
    options: &HistogramDdOptions,
) -> HistResult<DeviceHistogram> {
    let clock = gpu::Clock::start();
    let gpu = gpu_holding_dims(dims, weights)?;
    let stream = gpu.stream_after_default()?;
    let job = job_dd(gpu, &stream, dims, weights, options)?;
    allocated(
        stream,
        job,
        placement(options.device, options.kernel),
        &clock,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(len: u64, dtype: DType) -> DeviceArray {
        DeviceArray {
            ptr: 1 << 20,
            len,
            dtype,
        }
    }

    #[test]
    fn a_device_sample_is_one_dtype_and_length() {
        let same = [array(5, DType::F32), array(5, DType::F32)];
        assert_eq!(
            one_dtype_and_length(same.into_iter()).unwrap(),
            (DType::F32, 5)
        );
        let dtypes = [array(5, DType::F32), array(5, DType::F64)];
        let err = one_dtype_and_length(dtypes.into_iter()).unwrap_err();
        assert!(err
            .to_string()
            .contains("float64 of 5 rows beside float32 of 5"));
        let lengths = [array(5, DType::I32), array(6, DType::I32)];
        assert!(one_dtype_and_length(lengths.into_iter()).is_err());
        assert!(one_dtype_and_length(std::iter::empty()).is_err());
    }
}
