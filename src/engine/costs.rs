//! What `device="auto"` weighs for rows in host memory: the CPU's rate and the GPU's costs, both
//! measured on this machine the first time `auto` has a GPU to choose (a few milliseconds, once a
//! process), so the choice follows the machine instead of constants from another one.

use std::sync::OnceLock;
use std::time::Instant;

use crate::bins::{BinSpec, Binning, Closed, Range, ValueKind};
use crate::dtype::DType;
use crate::error::HistResult;
use crate::gpu::{Settings, Transfer};
use crate::input::{Chunk, HostColumn, Values};
use crate::job::{Axis, HostRows, Job, Rows};

/// The calibration's column: the CPU counts all of it, about a millisecond on 16 threads. The
/// GPU counts a quarter of it and then the whole column twice over (two chunks of the same
/// memory): the difference is its cost per byte (a copy's first megabytes cost more, as the
/// staging ring fills), the rest its fixed cost.
const CALIBRATION_ROWS: usize = 1 << 23;
/// How the CPU's cost grows with the bins of a histogram, beyond the calibration's 256: a row's
/// add misses the caches once a thread's counters outgrow them, and every thread's counters
/// are merged at the end. Fitted on a 16-core host (an H200's, 2026-11-27, BENCHMARKS.md):
/// 2^26 float64 rows took 9.5, 10.6, 17.9 and 40 ms at 64, 4,096, 65,536 and 2^20 bins.
const CPU_SLOWDOWN_PER_SQRT_64K_CELLS: f64 = 0.86;
const CPU_MERGE_NS_PER_CELL_THREAD: f64 = 0.5;
/// The calibration's bins (most calls have a few hundred).
const CALIBRATION_BINS: usize = 256;
/// Rows counted by value (a lookup and an add each) beside the calibration's float64 rows binned
/// one by one: 2^26 uint8 rows took 4.5-4.8 ms on a 16-core H200 host, float64 ones into 64 bins
/// 9.4 ms (BENCHMARKS.md, eighth session).
const BY_VALUE_SPEEDUP: f64 = 2.0;

/// The costs behind `device="auto"`, and where they come from.
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    /// Row-axes the CPU bins per nanosecond on all the pool's threads.
    pub cpu_rows_per_ns: f64,
    /// The GPU's fixed cost of a call (ms): plan, launch, synchronization.
    pub gpu_setup_ms: f64,
    /// The GPU's cost per byte of host rows (ns): the copy and the kernels reading it.
    pub gpu_ns_per_byte: f64,
    /// The kernels' cost per row of rows already in device memory (pinned columns).
    pub gpu_ns_per_resident_row: f64,
    /// Where these figures come from, as `explain` says it.
    pub source: String,
}

impl Costs {
    /// The costs measured on this machine, once a process (under the settings of the call that
    /// asks first).
    pub fn measured(settings: &Settings) -> &'static Costs {
        static MEASURED: OnceLock<Costs> = OnceLock::new();
        MEASURED.get_or_init(|| {
            measure(settings).unwrap_or_else(|e| {
                Costs::assumed(format!("calibration failed: {e}"), settings.transfer)
            })
        })
    }

    /// Figures of an H200 host (16 cores; BENCHMARKS.md), where nothing could be measured.
    pub fn assumed(why: String, transfer: Transfer) -> Costs {
        Costs {
            cpu_rows_per_ns: 1.6,
            gpu_setup_ms: 1.0,
            gpu_ns_per_byte: transfer.ns_per_byte(),
            gpu_ns_per_resident_row: 0.005,
            source: format!("assumed ({why})"),
        }
    }

    /// Milliseconds on the CPU and on the GPU for `shape`.
    pub fn estimate(&self, shape: &super::Shape) -> (f64, f64) {
        let cells = shape.cells as f64;
        // A thread's counters: the bins, or the values of a column counted by value.
        let counters = shape.cpu_by_value.unwrap_or(shape.cells) as f64;
        let slowdown = 1.0 + CPU_SLOWDOWN_PER_SQRT_64K_CELLS * (counters / 65_536.0).sqrt();
        let merge_ns =
            counters * rayon::current_num_threads() as f64 * CPU_MERGE_NS_PER_CELL_THREAD;
        let rate = match shape.cpu_by_value {
            None => self.cpu_rows_per_ns,
            Some(_) => self.cpu_rows_per_ns * BY_VALUE_SPEEDUP,
        };
        let rows_ns = (shape.rows * shape.rank) as f64 / rate * slowdown;
        let moved = match shape.pinned {
            true => shape.rows as f64 * self.gpu_ns_per_resident_row,
            false => (shape.rows * shape.row_bytes) as f64 * self.gpu_ns_per_byte,
        };
        // The counts come back as 8 bytes a bin.
        let back = cells * 8.0 * self.gpu_ns_per_byte;
        (
            (rows_ns + merge_ns) / 1e6,
            self.gpu_setup_ms + (moved + back) / 1e6,
        )
    }
}

/// Times the CPU and the GPU on the same float64 column into equal bins: the CPU's fastest of
/// three, the GPU's fixed cost from a call of one row and its cost per byte from the column.
fn measure(settings: &Settings) -> HistResult<Costs> {
    let values: Vec<f64> = (0..CALIBRATION_ROWS)
        .map(|i| (i.wrapping_mul(2_654_435_761) % 1_000_003) as f64 / 1_000_003.0)
        .collect();
    let fastest = |run: &dyn Fn() -> HistResult<()>| -> HistResult<f64> {
        run()?;
        let mut best = f64::INFINITY;
        for _ in 0..2 {
            let start = Instant::now();
            run()?;
            best = best.min(start.elapsed().as_secs_f64() * 1e3);
        }
        Ok(best)
    };
    let whole = calibration_job(&[&values])?;
    let quarter = calibration_job(&[&values[..CALIBRATION_ROWS / 4]])?;
    let twice = calibration_job(&[&values, &values])?;
    let Rows::Host(rows) = &whole.rows else {
        unreachable!("host rows")
    };
    let cpu_ms = fastest(&|| crate::cpu::count(&whole, rows).map(drop))?;
    let gpu = crate::gpu::get()?;
    // Planned as a call plans, inside the time.
    let on_gpu = |job: &Job<'_>| {
        let clock = crate::gpu::Clock::start();
        let plan = crate::gpu::plan_job(gpu, &crate::gpu::outline(job), None)?;
        crate::gpu::count(gpu, job, plan, settings, &clock).map(drop)
    };
    let quarter_ms = fastest(&|| on_gpu(&quarter))?;
    let twice_ms = fastest(&|| on_gpu(&twice))?;
    let (quarter_bytes, twice_bytes) = (
        (CALIBRATION_ROWS * 2) as f64,
        (CALIBRATION_ROWS * 16) as f64,
    );
    let ns_per_byte = ((twice_ms - quarter_ms) * 1e6 / (twice_bytes - quarter_bytes)).max(1e-3);
    let setup_ms = (quarter_ms - ns_per_byte * quarter_bytes / 1e6).max(0.0);
    Ok(Costs {
        cpu_rows_per_ns: CALIBRATION_ROWS as f64 / (cpu_ms * 1e6),
        gpu_setup_ms: setup_ms,
        gpu_ns_per_byte: ns_per_byte,
        gpu_ns_per_resident_row: 0.005,
        source: format!(
            "measured at first use: {CALIBRATION_ROWS} float64 rows into {CALIBRATION_BINS} bins \
             took {cpu_ms:.2} ms on the CPU; on the GPU a quarter of them {quarter_ms:.2} ms, \
             twice as many {twice_ms:.2} ms"
        ),
    })
}

/// A 1-D job of the rows of `chunks` into equal bins over [0, 1).
fn calibration_job<'a>(chunks: &[&'a [f64]]) -> HistResult<Job<'a>> {
    let column = HostColumn {
        dtype: DType::F64,
        chunks: chunks
            .iter()
            .map(|&values| Chunk {
                values: Values::F64(values),
                validity: None,
            })
            .collect(),
    };
    let spec = BinSpec::resolve(
        &Binning::Count(CALIBRATION_BINS),
        Some(Range::new(0.0, 1.0)),
        Closed::Left,
        ValueKind::Float64,
        || unreachable!("the range is given"),
    )?;
    let rows = HostRows::new(vec![column], None)?;
    Job::new(vec![Axis::bins(spec, false)], Rows::Host(rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{choose, weigh, Backend, Placement, Shape};
    use crate::options::Device;

    fn shape(rows: usize, row_bytes: usize, pinned: bool) -> Shape {
        Shape {
            rows,
            row_bytes,
            rank: 1,
            cells: 256,
            cpu_by_value: None,
            on_device: false,
            pinned,
            cpu_only: false,
            ordinal: 0,
        }
    }

    /// A GPU whose copy costs `ns_per_byte` beside a CPU of `rows_per_ns`.
    fn injected(rows_per_ns: f64, ns_per_byte: f64) -> Costs {
        Costs {
            cpu_rows_per_ns: rows_per_ns,
            gpu_setup_ms: 0.5,
            gpu_ns_per_byte: ns_per_byte,
            gpu_ns_per_resident_row: 0.005,
            source: "injected".into(),
        }
    }

    #[test]
    fn auto_takes_the_backend_the_costs_make_faster() {
        // 2^26 float64 rows into 256 bins: a 16-core CPU at 4 rows/ns (17.7 ms) beside a PCIe
        // copy at 0.028 ns/byte (15.5 ms): the GPU; at 5 rows/ns (14.1 ms): the CPU.
        let rows = 1 << 26;
        let settings = Settings::default();
        let weigh = |shape, costs| weigh(&shape, &costs, &settings);
        let (backend, why) = weigh(shape(rows, 8, false), injected(4.0, 0.028));
        assert_eq!(backend, Backend::Gpu, "{why}");
        let (backend, why) = weigh(shape(rows, 8, false), injected(5.0, 0.028));
        assert_eq!(backend, Backend::Cpu, "{why}");
        assert!(why.contains("costs injected"), "{why}");
        // Pinned columns are not copied: the GPU wins where the copy lost it.
        let (backend, _) = weigh(shape(rows, 8, true), injected(5.0, 0.028));
        assert_eq!(backend, Backend::Gpu);
        // Small calls stay on the CPU: the GPU's fixed cost is more than the whole count.
        let (backend, _) = weigh(shape(1000, 8, true), injected(0.2, 0.028));
        assert_eq!(backend, Backend::Cpu);
    }

    #[test]
    fn the_estimates_grow_with_rows_axes_bytes_and_bins() {
        let costs = injected(2.0, 0.1);
        let (cpu, gpu) = costs.estimate(&shape(1_000_000, 8, false));
        let (cpu_twice, gpu_twice) = costs.estimate(&shape(2_000_000, 8, false));
        assert!(cpu_twice > 1.9 * cpu);
        // A million more rows of 8 bytes at 0.1 ns a byte.
        assert!((gpu_twice - gpu - 0.8).abs() < 1e-9);
        let mut two_axes = shape(1_000_000, 16, false);
        two_axes.rank = 2;
        let (cpu_two, gpu_two) = costs.estimate(&two_axes);
        assert!(cpu_two > 1.9 * cpu && gpu_two > gpu);
        // A million bins: each thread's counters miss the caches and are merged; the GPU copies
        // 8 MB of counts back.
        let mut many_bins = shape(1_000_000, 8, false);
        many_bins.cells = 1 << 20;
        let (cpu_bins, gpu_bins) = costs.estimate(&many_bins);
        assert!(cpu_bins > 3.0 * cpu);
        assert!((gpu_bins - gpu - (((1 << 20) - 256) * 8) as f64 * 0.1 / 1e6).abs() < 1e-9);
        // A uint8 column counted by value on the CPU: 256 counters a thread whatever the bins,
        // each row cheaper than a float64 row binned; the GPU still copies every bin back.
        let mut by_value = many_bins;
        by_value.row_bytes = 1;
        by_value.cpu_by_value = Some(256);
        let (cpu_by_value, _) = costs.estimate(&by_value);
        by_value.cells = 256;
        assert_eq!(costs.estimate(&by_value).0, cpu_by_value);
        assert!(
            cpu_by_value < cpu && cpu_by_value > cpu / BY_VALUE_SPEEDUP,
            "{cpu_by_value}"
        );
    }

    /// The shape of a job says whether the CPU counts it by value (a narrow column of enough
    /// rows), and then how many values.
    #[test]
    fn a_narrow_column_counted_by_value_keeps_a_counter_a_value() {
        use crate::job::{Location, Outline};
        let spec = |n| {
            BinSpec::resolve(
                &Binning::Count(n),
                Some(Range::new(0.0, 256.0)),
                Closed::Left,
                ValueKind::Integer,
                || unreachable!("the range is given"),
            )
            .unwrap()
        };
        for (dtype, rows, by_value) in [
            (DType::U8, 1 << 22, Some(256)),
            (DType::U8, 100, None),
            (DType::F32, 1 << 22, None),
        ] {
            let axes = [Axis::bins(spec(65_536), false)];
            let outline = Outline {
                axes: &axes,
                dtypes: vec![dtype],
                rows,
                cells: 65_536,
                row_bytes: dtype.size(),
                weighted: false,
                location: Location::Host,
                ordinal: 0,
                interleaved: false,
            };
            let shape = super::super::Shape::of(&outline);
            assert_eq!(shape.cpu_by_value, by_value, "{dtype:?}");
        }
    }

    /// Without a GPU (CI, the 2-core machine) `auto` is the CPU and nothing is calibrated.
    #[test]
    fn without_a_gpu_auto_is_the_cpu() {
        if crate::gpu::get().is_ok() {
            return;
        }
        let placement = Placement {
            device: Device::Auto,
            ..Default::default()
        };
        let (backend, why) = choose(shape(1 << 26, 8, false), &placement).unwrap();
        assert_eq!(backend, Backend::Cpu);
        assert!(why.starts_with("no GPU"), "{why}");
    }

    /// Fewer than `SMALL_ROWS` host rows are counted on the calling thread without weighing
    /// the backends (nothing calibrated, no estimate), unless the column is pinned in device
    /// memory or a kernel is pinned; from `SMALL_ROWS` rows on they are weighed.
    #[test]
    fn small_host_rows_are_not_weighed() {
        use crate::engine::SMALL_ROWS;
        let auto = Placement {
            device: Device::Auto,
            ..Default::default()
        };
        let (backend, why) = choose(shape(SMALL_ROWS - 1, 8, false), &auto).unwrap();
        assert_eq!(backend, Backend::Cpu);
        assert!(why.contains("counted on the calling thread"), "{why}");
        for (rows, pinned, kernel) in [
            (SMALL_ROWS, false, None),
            (100, true, None),
            (100, false, Some(crate::family::Family::Shared)),
        ] {
            let placement = Placement {
                kernel,
                ..auto.clone()
            };
            match choose(shape(rows, 8, pinned), &placement) {
                Ok((_, why)) => assert!(!why.contains("calling thread"), "{why}"),
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// The calibration job counts what numpy would (its CPU time is what `auto` weighs).
    #[test]
    fn the_calibration_job_is_a_real_count() {
        let values: Vec<f64> = (0..1000).map(|i| i as f64 / 1000.0).collect();
        let job = calibration_job(&[&values[..400], &values[400..]]).unwrap();
        let Rows::Host(rows) = &job.rows else {
            unreachable!()
        };
        let crate::counts::Counts::Exact(counts) = crate::cpu::count(&job, rows).unwrap() else {
            unreachable!()
        };
        assert_eq!(counts.len(), CALIBRATION_BINS);
        assert_eq!(counts.iter().sum::<u64>(), 1000);
    }
}
