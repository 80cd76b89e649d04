//! `explain`: which backend, and on the GPU which kernels and grid, a histogram would take.

use polars::prelude::DataType;

use crate::api::axes::{histogram_axis, AxisData};
use crate::bins::{Extremes, Range};
use crate::dtype::{self, ValueKind};
use crate::engine::{self, Backend, Placement, Report};
use crate::error::{HistError, HistResult};
use crate::gpu;
pub use crate::job::Location;
use crate::job::{row_major, Axis, Outline};
use crate::options::{BinRule, HistogramOptions};

/// Stands in for data that `explain` does not have: the kernel choice does not depend on where
/// the range comes from, so [0, 1].
struct NoData(ValueKind);

impl AxisData for NoData {
    fn extremes(&self) -> HistResult<Extremes> {
        Ok(match self.0 {
            ValueKind::Float32 | ValueKind::Float16 => Extremes::Float32(0.0, 1.0),
            ValueKind::Float64 => Extremes::Float64(0.0, 1.0),
            ValueKind::Integer => Extremes::Integer(0, 1),
        })
    }

    fn estimate(&self, rule: BinRule, _: Option<Range>, _: ValueKind) -> HistResult<usize> {
        Err(HistError::argument(|s| {
            format!(
                "{} estimates the bins from the data, which `explain` does not read: give a \
                 number of bins to see the plan",
                rule.spelled(s)
            )
        }))
    }
}

/// Which backend and kernel would histogram `rows` values of `dtype` at `location` with
/// `options`, and why: the engine's decision for the call (`engine::explain`), so the plan
/// printed is the plan the call runs (a look at the rows aside: past shared memory, the rows a
/// call samples may choose the global family). `device`: the GPU the rows lie on (an array in
/// GPU memory, a pinned column); None: the calling thread's current device, where host rows go.
pub fn explain(
    dtype: &DataType,
    rows: u64,
    options: &HistogramOptions,
    weighted: bool,
    location: Location,
    device: Option<i32>,
) -> HistResult<String> {
    let ordinal = device.unwrap_or_else(gpu::device::current);
    let report = decision(dtype, rows, options, weighted, location, ordinal)?;
    let mut text = report.to_string();
    if report.backend == Backend::Gpu {
        let gpu = gpu::on(ordinal)?;
        let prebuilt = gpu::bundle::describe(gpu.arch, gpu.driver_version, gpu.kernel_source);
        text += &format!(
            "
kernels  {prebuilt}"
        );
        text += &cache_line(gpu::compile::cache_status(gpu.kernel_cache.as_deref()));
    }
    Ok(text)
}

/// The engine's report for a call of `rows` values of `dtype`, before anything runs.
fn decision(
    dtype: &DataType,
    rows: u64,
    options: &HistogramOptions,
    weighted: bool,
    location: Location,
    ordinal: i32,
) -> HistResult<Report> {
    let physical = dtype::reading(dtype)?.dtype();
    let spec = histogram_axis(
        options,
        dtype,
        physical.kind(),
        weighted,
        &NoData(physical.kind()),
    )?;
    let axes = [Axis::bins(spec, options.flow)];
    let (_, cells) = row_major(&[axes[0].len()])?;
    let job = Outline {
        axes: &axes,
        dtypes: vec![physical],
        rows: rows as usize,
        cells,
        weighted,
        row_bytes: physical.size() + 8 * weighted as usize,
        location,
        ordinal,
        // One column: no rows of an (n, d) array.
        interleaved: false,
    };
    let placement = Placement::asked(options.device, options.kernel);
    engine::explain(&job, &placement)
}

/// Where compiled kernels are kept, as `explain` says it.
fn cache_line(status: Result<std::path::PathBuf, String>) -> String {
    match status {
        Ok(dir) => format!("\nkernels  compiled once, kept in {}", dir.display()),
        Err(why) => format!("\nkernels  compiled in memory, not cached: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use polars::prelude::*;

    use super::*;
    use crate::options::{Bins, Device, Scalar};

    /// `explain` takes the decision the call takes: the same backend, reason and plan, for
    /// each way a column is counted (by value, row by row, weighted) and each device a machine
    /// has (the GPU's cases run where there is one).
    #[test]
    fn explain_decides_as_the_call_does() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let floats: Vec<f64> = (0..20_000u32).map(|i| (i % 1000) as f64 / 7.0).collect();
        let columns = [
            Series::new("few".into(), &bytes[..100]),
            Series::new("bytes".into(), bytes),
            Series::new("floats".into(), floats),
        ];
        let mut devices = vec![Device::Cpu, Device::Auto];
        if gpu::available() {
            devices.push(Device::Gpu);
        }
        for values in &columns {
            let weights = Series::new("w".into(), vec![0.5f64; values.len()]);
            for (device, weighted) in devices.iter().flat_map(|&d| [(d, false), (d, true)]) {
                let options = HistogramOptions {
                    bins: Bins::Count(64),
                    range: Some((Scalar::Float(0.0), Scalar::Float(300.0))),
                    device,
                    ..Default::default()
                };
                let weights = weighted.then_some(&weights);
                let (_, ran) =
                    crate::api::hist1d::histogram_with_report(values, weights, &options).unwrap();
                let said = decision(
                    values.dtype(),
                    values.len() as u64,
                    &options,
                    weighted,
                    Location::Host,
                    gpu::device::current(),
                )
                .unwrap();
                let case = format!("{} on {device:?}, weighted {weighted}", values.name());
                assert_eq!(said.backend, ran.backend, "{case}");
                assert_eq!(said.why, ran.why, "{case}");
                assert_eq!(said.plan, ran.plan, "{case}");
                assert_eq!(said.device, ran.device, "{case}");
                assert_eq!(said.fallback, ran.fallback, "{case}");
            }
        }
        // Without a GPU, a CPU call's report is the whole of what `explain` prints.
        if !gpu::available() {
            let options = HistogramOptions::default();
            let values = &columns[1];
            let (_, ran) =
                crate::api::hist1d::histogram_with_report(values, None, &options).unwrap();
            let said = explain(
                values.dtype(),
                20_000,
                &options,
                false,
                Location::Host,
                None,
            )
            .unwrap();
            assert_eq!(said, ran.to_string());
            assert!(said.contains("one counter per uint8 value"), "{said}");
        }
    }

    #[test]
    fn explain_says_when_kernels_are_not_cached() {
        let line = super::cache_line(Err("/tmp/x belongs to another user".into()));
        assert_eq!(
            line,
            "\nkernels  compiled in memory, not cached: /tmp/x belongs to another user"
        );
        let line = super::cache_line(Ok("/home/me/.cache/polars-gpu-hist".into()));
        assert!(
            line.ends_with("kept in /home/me/.cache/polars-gpu-hist"),
            "{line}"
        );
    }
}
