//! The one road from a job to a backend. [`decide`] takes the decision (the backend, why, and on
//! the GPU the plan: the cost model behind `device="auto"`, the fallback to the CPU) from the
//! job's outline, before a row is read; `explain` prints it, and every call runs it: counts back
//! to the host ([`count`]), left on the device ([`count_on_device`]) or written into the caller's
//! arrays ([`count_into`]). Reports are built here only.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::counts::Counts;
use crate::error::{HistError, HistResult};
use crate::family::Family;
use crate::gpu::{self, DeviceCounts, Plan};
use crate::job::{Counter, Job, Location, Outline, Rows};
use crate::options::Device;

pub mod costs;
pub use costs::Costs;

/// Below this many host rows `device="auto"` counts on the calling thread without weighing the
/// backends: a GPU launch alone costs more than counting them, and the estimate (a formatted
/// report, and on its first use a calibration of milliseconds) cost more than the count of a
/// small call. Pinned columns and pinned kernels are still weighed.
pub const SMALL_ROWS: usize = 4096;

/// Where a job runs, on the GPU with which kernel, and under which settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    pub device: Device,
    /// Pins the GPU kernel family (benchmarks and tests).
    pub kernel: Option<Family>,
    /// What the environment asks (copies, device memory), read once where the call entered.
    pub settings: gpu::Settings,
}

impl Placement {
    /// The placement a call asks for, with the settings the environment gives now: made once
    /// where the call enters the library, then passed down.
    pub fn asked(device: Device, kernel: Option<Family>) -> Placement {
        Placement {
            device,
            kernel,
            settings: gpu::Settings::from_env(),
        }
    }
}

/// Which backend a job takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    Gpu,
}

/// What the engine decided and did.
#[derive(Clone, Debug)]
pub struct Report {
    pub backend: Backend,
    /// Why this backend: the request, or the cost model's estimates.
    pub why: String,
    /// The GPU's plan, when the GPU ran (or would run).
    pub plan: Option<Plan>,
    /// The GPU that ran (or would run) it: its ordinal and name.
    pub device: Option<(i32, String)>,
    /// How host rows reached the GPU.
    pub route: Option<gpu::Route>,
    /// The GPU failure `device="auto"` recovered from on the CPU.
    pub fallback: Option<String>,
    /// The kernels' time on the device (events), when measured.
    pub kernel_ms: Option<f32>,
    /// Host time per phase of the call (ms), where measured.
    pub phases: Vec<(&'static str, f32)>,
}

impl Report {
    /// This decision as it ran on the GPU.
    fn ran(self, run: gpu::Run) -> Report {
        Report {
            plan: Some(run.plan),
            route: run.route,
            kernel_ms: run.kernel_ms,
            phases: run.phases,
            ..self
        }
    }

    /// This decision on the CPU: the CPU's way of counting said. Rows in GPU memory stay there.
    fn on_cpu(self, job: &Outline<'_>) -> HistResult<Report> {
        if job.location == Location::Device {
            return Err(rows_on_device());
        }
        let why = match job.by_value(Counter::Cpu) {
            Some(by_value) => format!(
                "{}; {}",
                self.why,
                by_value.describe(job.dtypes[0], job.cells)
            ),
            None => self.why,
        };
        Ok(Report {
            backend: Backend::Cpu,
            why,
            plan: None,
            device: None,
            ..self
        })
    }

    /// This decision after the GPU failed with `e`: on the CPU under `Device::Auto` for host
    /// rows, else the error.
    fn fell_back(
        self,
        job: &Outline<'_>,
        placement: &Placement,
        e: HistError,
    ) -> HistResult<Report> {
        if placement.device != Device::Auto || job.location == Location::Device {
            return Err(e);
        }
        Report {
            fallback: Some(e.to_string()),
            ..self
        }
        .on_cpu(job)
    }

    /// The report of a call that resolved its bins in `resolve` ms before the count, then took
    /// `after` (what, ms) after it (its result, its edges).
    pub fn between(self, resolve: f32, after: (&'static str, f32)) -> Self {
        let mut report = self.before(resolve);
        report.phases.push(after);
        report
    }

    /// The report of a call that resolved its bins in `resolve` ms before the count.
    pub fn before(mut self, resolve: f32) -> Self {
        self.phases.insert(0, ("resolve", resolve));
        self
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.backend {
            Backend::Cpu => write!(
                f,
                "backend  cpu: privatized histograms on {} threads\nwhy      {}",
                rayon::current_num_threads(),
                self.why
            )?,
            Backend::Gpu => write!(f, "backend  gpu: {}", self.why)?,
        }
        if let Some((ordinal, name)) = &self.device {
            write!(f, "\ndevice   GPU {ordinal} ({name})")?;
        }
        if let Some(plan) = &self.plan {
            write!(f, "\n{plan}")?;
        }
        if let Some(route) = &self.route {
            write!(f, "\ncopy     {route}")?;
        }
        if !self.phases.is_empty() {
            let phases: Vec<String> = self
                .phases
                .iter()
                .map(|(what, ms)| format!("{what} {ms:.3}"))
                .collect();
            write!(f, "\ntime     {} ms", phases.join(", "))?;
            if let Some(ms) = self.kernel_ms {
                write!(f, " (kernels {ms:.3} ms on the device)")?;
            }
        }
        if let Some(e) = &self.fallback {
            write!(
                f,
                "\nnote     the GPU failed ({e}); the CPU counted instead"
            )?;
        }
        Ok(())
    }
}

/// What the cost model needs to know of a job.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub rows: usize,
    /// Bytes a row moves to the device (values, bitmaps aside, and weights).
    pub row_bytes: usize,
    /// Axes: each costs a pass of index arithmetic on the CPU.
    pub rank: usize,
    /// Bins (cells, n-D) of the result: the GPU's copy back.
    pub cells: usize,
    /// The values of a narrow column the CPU counts by value (`job::ByValue`), a counter each
    /// a thread whatever the bins, folded into them after.
    pub cpu_by_value: Option<usize>,
    /// The rows are in device memory only (CuPy, PyTorch): there is no host copy to count.
    pub on_device: bool,
    /// A host column with a copy in device memory (`gpu::pin`), unweighted: the GPU path copies
    /// nothing.
    pub pinned: bool,
    /// Some rule has no kernel (Float16 columns bin on the CPU).
    pub cpu_only: bool,
    /// The GPU it would count on.
    pub ordinal: i32,
}

impl Shape {
    pub fn of(job: &Outline<'_>) -> Shape {
        Shape {
            rows: job.rows,
            row_bytes: job.row_bytes,
            rank: job.axes.len(),
            cells: job.cells,
            cpu_by_value: job.by_value(Counter::Cpu).map(|by_value| by_value.values),
            on_device: job.location == Location::Device,
            pinned: job.location == Location::Pinned && !job.weighted,
            cpu_only: job
                .axes
                .iter()
                .any(|a| matches!(a.spec(), Some(crate::bins::BinSpec::Half(_)))),
            ordinal: job.ordinal,
        }
    }
}

/// The backend `placement` gives a job of this shape, and why.
pub fn choose(shape: Shape, placement: &Placement) -> HistResult<(Backend, String)> {
    match placement.device {
        Device::Cpu => Ok((Backend::Cpu, "device=\"cpu\" was asked for".into())),
        Device::Gpu => match gpu::on(shape.ordinal) {
            Ok(_) => Ok((Backend::Gpu, "device=\"gpu\" was asked for".into())),
            Err(HistError::Gpu(why)) => Err(HistError::Gpu(format!(
                "the GPU was asked for, but no GPU can be used: {why}"
            ))),
            Err(e) => Err(e),
        },
        Device::Auto if shape.cpu_only => Ok((
            Backend::Cpu,
            "Float16 columns are binned on the CPU (numpy's float16 arithmetic)".into(),
        )),
        // Rows in device memory are counted there: copying them back is the user's call.
        Device::Auto if shape.on_device => match gpu::on(shape.ordinal) {
            Ok(_) => Ok((Backend::Gpu, "the rows are in device memory".into())),
            Err(e) => Err(e),
        },
        Device::Auto if shape.rows < SMALL_ROWS && !shape.pinned && placement.kernel.is_none() => {
            Ok((
                Backend::Cpu,
                format!("fewer than {SMALL_ROWS} rows: counted on the calling thread"),
            ))
        }
        Device::Auto => {
            if let Err(e) = gpu::on(shape.ordinal) {
                let why = match e {
                    HistError::Gpu(why) => why,
                    other => other.to_string(),
                };
                return Ok((Backend::Cpu, format!("no GPU: {why}")));
            }
            Ok(weigh(
                &shape,
                Costs::measured(&placement.settings),
                &placement.settings,
            ))
        }
    }
}

/// The faster backend for host rows of `shape` under `costs`, and the estimate that says so.
pub fn weigh(shape: &Shape, costs: &Costs, settings: &gpu::Settings) -> (Backend, String) {
    let (cpu_ms, gpu_ms) = costs.estimate(shape);
    let how = match shape.pinned {
        true => "pinned in device memory".to_string(),
        false => format!("copied by {}", settings.transfer.name()),
    };
    let estimate = format!(
        "for {} rows of {} bytes: about {cpu_ms:.1} ms on {} CPU threads, {gpu_ms:.1} ms on the \
         GPU ({how}); costs {}",
        shape.rows,
        shape.row_bytes,
        rayon::current_num_threads(),
        costs.source
    );
    let backend = match gpu_ms < cpu_ms {
        true => Backend::Gpu,
        false => Backend::Cpu,
    };
    (backend, estimate)
}

/// What the engine decides for `job` before a row is read: the backend, why, and on the GPU the
/// plan. A GPU that cannot take the job under `Device::Auto` is not the user's problem: the CPU
/// counts instead and the report says why. `explain` prints this; a call runs it.
pub fn decide(job: &Outline<'_>, placement: &Placement) -> HistResult<Report> {
    let (backend, why) = choose(Shape::of(job), placement)?;
    let report = Report {
        backend,
        why,
        plan: None,
        device: None,
        route: None,
        fallback: None,
        kernel_ms: None,
        phases: Vec::new(),
    };
    match backend {
        Backend::Cpu => report.on_cpu(job),
        Backend::Gpu => {
            let gpu = gpu::on(job.ordinal)?;
            match gpu::plan_job(gpu, job, placement.kernel) {
                Ok(plan) => Ok(Report {
                    plan: Some(plan),
                    device: Some((gpu.ordinal(), gpu.props.name.clone())),
                    ..report
                }),
                Err(e) => report.fell_back(job, placement, e),
            }
        }
    }
}

/// [`decide`], with the way the rows would reach the device: what `explain` prints.
pub fn explain(job: &Outline<'_>, placement: &Placement) -> HistResult<Report> {
    let mut report = decide(job, placement)?;
    if let Some(plan) = &report.plan {
        let copied = match job.location {
            Location::Host => Some(job.row_bytes),
            Location::Pinned => Some(8 * job.weighted as usize),
            Location::Device => None,
        };
        report.route =
            copied.map(|bytes| gpu::expected_route(job.rows, bytes, plan, &placement.settings));
    }
    Ok(report)
}

/// Counts `job` where [`decide`] says, the counts back on the host.
pub fn count(job: &Job<'_>, placement: &Placement) -> HistResult<(Counts, Report)> {
    let clock = gpu::Clock::start();
    let outline = gpu::outline(job);
    let mut report = decide(&outline, placement)?;
    if let Some(plan) = report.plan.take() {
        let gpu = gpu::on(outline.ordinal)?;
        match gpu::count(gpu, job, plan, &placement.settings, &clock) {
            Ok((counts, run)) => return Ok((counts, report.ran(run))),
            Err(e) => report = report.fell_back(&outline, placement, e)?,
        }
    }
    match &job.rows {
        Rows::Host(rows) => Ok((crate::cpu::count(job, rows)?, report)),
        Rows::Device(_) => Err(rows_on_device()),
    }
}

/// Queues the count of `job` on `stream` into the caller's `out` (the job's cells: u64 counts,
/// or f64 sums when weighted), zeroed first, and returns without waiting (the kernels' time is
/// then unknown). For rows in GPU memory.
pub fn count_into(
    job: &Job<'_>,
    placement: &Placement,
    stream: &Arc<CudaStream>,
    out: u64,
    clock: &gpu::Clock,
) -> HistResult<Report> {
    let outline = gpu::outline(job);
    let mut report = decide(&outline, placement)?;
    let plan = report.plan.take().ok_or_else(rows_on_device)?;
    let queued = gpu::queue(
        gpu::on(outline.ordinal)?,
        stream,
        job,
        plan,
        &placement.settings,
        out,
        clock,
    )?;
    Ok(report.ran(queued.pending()))
}

/// Counts `job` into counts allocated on `stream`, left on the device, and waits for them. For
/// rows in GPU memory.
pub fn count_on_device(
    job: &Job<'_>,
    placement: &Placement,
    stream: &Arc<CudaStream>,
    clock: &gpu::Clock,
) -> HistResult<(DeviceCounts, Report)> {
    let outline = gpu::outline(job);
    let mut report = decide(&outline, placement)?;
    let plan = report.plan.take().ok_or_else(rows_on_device)?;
    let gpu = gpu::on(outline.ordinal)?;
    let counts = DeviceCounts::alloc(gpu, stream, job.cells, job.is_weighted())?;
    let settings = &placement.settings;
    let queued = gpu::queue(gpu, stream, job, plan, settings, counts.ptr(stream), clock)?;
    stream
        .synchronize()
        .map_err(gpu::driver("running the kernels"))?;
    Ok((counts, report.ran(queued.finished(clock)?)))
}

/// Why rows in GPU memory are not counted on the CPU.
fn rows_on_device() -> HistError {
    HistError::argument(|s| {
        format!(
            "the rows are in GPU memory: {} would copy them to the host; copy them yourself \
             to histogram them there",
            s.device("cpu")
        )
    })
}
