//! Histograms of arrays already in GPU memory (CuPy, PyTorch, Numba: `__cuda_array_interface__`),
//! counted where they lie: the values never visit the host, and for the numpy drop-in neither do
//! the counts.

use std::sync::Arc;

use cudarc::driver::CudaStream;
use polars::prelude::*;

use crate::api::axes::{resolve_axis, AxisData, Flavour};
use crate::api::histdd::check_dims;
use crate::bins::{BinSpec, Extremes};
use crate::dtype::DType;
use crate::engine::{self, Backend, Placement, Report};
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
        range: Option<(f64, f64)>,
    ) -> HistResult<usize> {
        // numpy's estimators need order statistics and moments of the whole sample: read it.
        let values = read_column(self.stream, self.column, self.len)?;
        let series = values;
        let rows = crate::job::HostRows::new(vec![crate::input::HostColumn::new(&series)?], None)?;
        crate::api::axes::HostAxis {
            rows: &rows,
            axis: 0,
        }
        .estimate(rule, range)
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
        Device::Cpu => Err(HistError::InvalidArgument(
            "the data is in GPU memory: device=\"cpu\" would copy it to the host; copy it \
             yourself (e.g. `.get()`, `.cpu()`) to histogram it there"
                .into(),
        )),
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
        }),
    )
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
            resolve_axis(
                &options.bins,
                options.range,
                options.closed,
                &polars,
                values.dtype.kind(),
                Flavour::Histogram,
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
    let (dtype, len) = (dims[0].array.dtype, dims[0].array.len);
    if let Some(other) = dims
        .iter()
        .find(|x| x.array.dtype != dtype || x.array.len != len)
    {
        return Err(HistError::InvalidArgument(format!(
            "arrays in GPU memory must share one dtype and length: {} of {} rows beside {} of \
             {len}",
            other.array.dtype.name(),
            other.array.len,
            dtype.name()
        )));
    }
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
                weights.is_some(),
                data,
            )
        },
        options.flow,
    )
}

fn placement(device: Device, kernel: Option<gpu::Family>) -> Placement {
    Placement { device, kernel }
}

/// The histogram of an array in GPU memory (optionally weighted by a float64 array of the same
/// length) as a Struct Series named `name`, and the engine's report (plan, kernel time).
pub fn histogram_device(
    name: &str,
    values: DeviceArray,
    weights: Option<u64>,
    options: &HistogramOptions,
) -> HistResult<(Series, Report)> {
    let gpu = gpu::get()?;
    let stream = gpu.stream_after_default()?;
    let job = job_1d(gpu, &stream, values, weights, options)?;
    let (counts, report) = engine::count(&job, placement(options.device, options.kernel))?;
    let spec = job.axes[0].spec().expect("a binned axis");
    let axes = [AxisOut::bins(spec, values.dtype.polars(), options.flow)];
    let series = output::to_struct(name.into(), &axes, counts, options.density)?;
    Ok((series, report))
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
    let gpu = gpu::get()?;
    let stream = gpu.stream_after_default()?;
    let job = job_dd(gpu, &stream, dims, weights, options)?;
    let (counts, report) = engine::count(&job, placement(options.device, options.kernel))?;
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
    Ok((series, report))
}

/// numpy's answer for device arrays, left on the device: the counts (row-major over the axes)
/// and each axis's bins, for the numpy drop-in.
pub struct DeviceHistogram {
    pub counts: DeviceCounts,
    pub stream: Arc<CudaStream>,
    pub specs: Vec<BinSpec>,
    pub report: Report,
}

impl DeviceHistogram {
    /// The edges of `axis` as `dtype`, made on the device beside the counts (see
    /// [`gpu::edges::linspace_edges`]; `None`: take them from `specs`). Complete on return.
    pub fn device_edges(&self, axis: usize, dtype: DType) -> HistResult<Option<gpu::DeviceBuffer>> {
        let edges =
            gpu::edges::linspace_edges(gpu::get()?, &self.stream, &self.specs[axis], dtype)?;
        if edges.is_some() {
            self.stream
                .synchronize()
                .map_err(gpu::driver("making the edges"))?;
        }
        Ok(edges)
    }
}

fn on_device(job: Job<'static>, kernel: Option<gpu::Family>) -> HistResult<DeviceHistogram> {
    let (counts, stream, run) = gpu::count_on_device(gpu::get()?, &job, kernel)?;
    let specs = job.axes.iter().filter_map(|a| a.spec().cloned()).collect();
    Ok(DeviceHistogram {
        counts,
        stream,
        specs,
        report: Report {
            backend: Backend::Gpu,
            why: "the data is in GPU memory".into(),
            plan: Some(run.plan),
            route: None,
            fallback: None,
            kernel_ms: Some(run.kernel_ms),
        },
    })
}

/// `numpy.histogram` of a device array, the counts left on the device.
pub fn histogram_on_device(
    values: DeviceArray,
    weights: Option<u64>,
    options: &HistogramOptions,
) -> HistResult<DeviceHistogram> {
    let gpu = gpu::get()?;
    let stream = gpu.stream_after_default()?;
    let job = job_1d(gpu, &stream, values, weights, options)?;
    on_device(job, options.kernel)
}

/// `numpy.histogramdd` of device columns, the counts left on the device.
pub fn histogramdd_on_device(
    dims: &[DeviceDim],
    weights: Option<u64>,
    options: &HistogramDdOptions,
) -> HistResult<DeviceHistogram> {
    let gpu = gpu::get()?;
    let stream = gpu.stream_after_default()?;
    let job = job_dd(gpu, &stream, dims, weights, options)?;
    on_device(job, options.kernel)
}
