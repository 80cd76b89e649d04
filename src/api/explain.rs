//! `explain`: which backend, and on the GPU which kernels and grid, a histogram would take.

use polars::prelude::DataType;

use crate::api::axes::{histogram_axis, AxisData};
use crate::bins::Extremes;
use crate::dtype::{self, ValueKind};
use crate::engine::{self, Backend, Placement, Report, Shape};
use crate::error::{HistError, HistResult};
use crate::gpu;
use crate::job::{row_major, Axis, ByValue, Counter};
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

    fn estimate(&self, rule: BinRule, _: Option<(f64, f64)>, _: ValueKind) -> HistResult<usize> {
        Err(HistError::argument(|s| {
            format!(
                "{} estimates the bins from the data, which `explain` does not read: give a \
                 number of bins to see the plan",
                s.rule(rule.name())
            )
        }))
    }
}

/// Where the values to explain are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A host column, copied to the GPU if it goes there.
    Host,
    /// A host column pinned in GPU memory (`gpu::pin`).
    Pinned,
    /// An array in GPU memory.
    Device,
}

/// Which backend and kernel would histogram `rows` values of `dtype` at `location` with
/// `options`, and why.
pub fn explain(
    dtype: &DataType,
    rows: u64,
    options: &HistogramOptions,
    weighted: bool,
    location: Location,
) -> HistResult<String> {
    let on_device = location == Location::Device;
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
    let shape = Shape {
        rows: rows as usize,
        row_bytes: physical.size() + 8 * weighted as usize,
        rank: 1,
        cells,
        on_device: location == Location::Device,
        pinned: location == Location::Pinned && !weighted,
        cpu_only: matches!(dtype::reading(dtype)?, dtype::Reading::Float16),
    };
    let placement = Placement {
        device: options.device,
        kernel: options.kernel,
    };
    let (backend, why) = match (on_device, options.device) {
        (true, crate::options::Device::Cpu) => {
            return Err(HistError::argument(|s| {
                format!(
                    "the data is in GPU memory: {} would copy it to the host",
                    s.device("cpu")
                )
            }))
        }
        (true, _) => {
            gpu::get()?;
            (Backend::Gpu, "the data is in GPU memory".to_string())
        }
        (false, _) => engine::choose(shape, placement)?,
    };
    // A count by value plans its value axis, then folds (`Job::by_value`).
    let by_value = match backend {
        Backend::Cpu => ByValue::of(&axes[0], physical, rows as usize, weighted, Counter::Cpu),
        Backend::Gpu => ByValue::of(&axes[0], physical, rows as usize, weighted, Counter::Gpu)
            .filter(|_| options.kernel.is_none()),
    };
    let plan = match backend {
        Backend::Gpu => {
            let props = &settled_on_device(&axes)?.props;
            Some(match by_value {
                Some(by_value) => gpu::plan::plan(
                    props,
                    &[by_value.axis()],
                    &[physical],
                    by_value.values,
                    false,
                    rows,
                    options.kernel,
                    None,
                )?
                .folded(by_value, physical, cells),
                None => gpu::plan::plan(
                    props,
                    &axes,
                    &[physical],
                    cells,
                    weighted,
                    rows,
                    options.kernel,
                    None,
                )?,
            })
        }
        Backend::Cpu => None,
    };
    let why = match (backend, by_value) {
        (Backend::Cpu, Some(by_value)) => {
            format!("{why}; {}", by_value.describe(physical, cells))
        }
        _ => why,
    };
    let copied = match location {
        Location::Host => shape.row_bytes,
        Location::Pinned => 8 * weighted as usize,
        Location::Device => 0,
    };
    let route = match (&plan, location) {
        (Some(plan), Location::Host | Location::Pinned) => {
            Some(gpu::expected_route(rows as usize, copied, plan))
        }
        _ => None,
    };
    let report = Report {
        backend,
        why,
        plan,
        route,
        fallback: None,
        kernel_ms: None,
        phases: Vec::new(),
    };
    let mut text = report.to_string();
    if backend == Backend::Gpu {
        if let Ok(gpu) = gpu::get() {
            let prebuilt = gpu::bundle::describe(gpu.arch, gpu.driver_version, gpu.kernel_source);
            text += &format!("\nkernels  {prebuilt}");
        }
        text += &cache_line(gpu::compile::cache_status());
    }
    Ok(text)
}

/// Where compiled kernels are kept, as `explain` says it.
fn cache_line(status: Result<std::path::PathBuf, String>) -> String {
    match status {
        Ok(dir) => format!("\nkernels  compiled once, kept in {}", dir.display()),
        Err(why) => format!("\nkernels  compiled in memory, not cached: {why}"),
    }
}

/// The GPU, with the proofs of `axes` settled on it as a call would settle them (a walk on the
/// host could take longer than the call explained).
fn settled_on_device(axes: &[Axis]) -> HistResult<&'static gpu::Gpu> {
    let gpu = gpu::get()?;
    gpu::proof::settle(gpu, axes)?;
    Ok(gpu)
}

#[cfg(test)]
mod tests {
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
