//! Takes a job to a backend: the cost model behind `device="auto"`, the GPU attempt, the fallback
//! to the CPU, and one report of what happened (which `explain` prints).

use std::fmt;

use crate::counts::Counts;
use crate::error::{HistError, HistResult};
use crate::gpu::{self, Family, Plan};
use crate::job::{Job, Rows};
use crate::options::Device;

pub mod costs;
pub use costs::Costs;

/// Where a job runs, and on the GPU with which kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    pub device: Device,
    /// Pins the GPU kernel family (benchmarks and tests).
    pub kernel: Option<Family>,
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
    /// The report of a call that resolved its bins in `resolve` ms before the count and built
    /// its result in `output` ms after it.
    pub fn between(mut self, resolve: f32, output: f32) -> Self {
        self.phases.insert(0, ("resolve", resolve));
        self.phases.push(("output", output));
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
    /// Bins (cells, n-D) of the result: the CPU's counters per thread, the GPU's copy back.
    pub cells: usize,
    /// The rows are in device memory only (CuPy, PyTorch): there is no host copy to count.
    pub on_device: bool,
    /// A host column with a copy in device memory (`gpu::pin`): the GPU path copies nothing.
    pub pinned: bool,
    /// Some rule has no kernel (Float16 columns bin on the CPU).
    pub cpu_only: bool,
}

impl Shape {
    pub fn of(job: &Job<'_>) -> Shape {
        Shape {
            rows: job.len(),
            row_bytes: job.row_bytes(),
            rank: job.rank(),
            cells: job.cells,
            on_device: matches!(job.rows, Rows::Device(_)),
            pinned: match &job.rows {
                Rows::Device(_) => false,
                Rows::Host(h) => gpu::is_pinned(h),
            },
            cpu_only: job
                .axes
                .iter()
                .any(|a| matches!(a.spec(), Some(crate::bins::BinSpec::Half(_)))),
        }
    }
}

/// The backend `placement` gives a job of this shape, and why.
pub fn choose(shape: Shape, placement: Placement) -> HistResult<(Backend, String)> {
    match placement.device {
        Device::Cpu => Ok((Backend::Cpu, "device=\"cpu\" was asked for".into())),
        Device::Gpu => match gpu::get() {
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
        Device::Auto if shape.on_device => match gpu::get() {
            Ok(_) => Ok((Backend::Gpu, "the rows are in device memory".into())),
            Err(e) => Err(e),
        },
        Device::Auto => {
            if let Err(e) = gpu::get() {
                let why = match e {
                    HistError::Gpu(why) => why,
                    other => other.to_string(),
                };
                return Ok((Backend::Cpu, format!("no GPU: {why}")));
            }
            Ok(weigh(&shape, Costs::measured()))
        }
    }
}

/// The faster backend for host rows of `shape` under `costs`, and the estimate that says so.
pub fn weigh(shape: &Shape, costs: &Costs) -> (Backend, String) {
    let (cpu_ms, gpu_ms) = costs.estimate(shape);
    let how = match shape.pinned {
        true => "pinned in device memory".to_string(),
        false => format!("copied by {}", gpu::Transfer::from_env().name()),
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

/// Counts `job` where `placement` says: a GPU failure under `Device::Auto` is not the user's
/// problem, so the CPU counts instead and the report says why.
pub fn count(job: &Job<'_>, placement: Placement) -> HistResult<(Counts, Report)> {
    let (backend, why) = choose(Shape::of(job), placement)?;
    let mut report = Report {
        backend,
        why,
        plan: None,
        route: None,
        fallback: None,
        kernel_ms: None,
        phases: Vec::new(),
    };
    if backend == Backend::Gpu {
        match gpu::count(gpu::get()?, job, placement.kernel) {
            Ok((counts, run)) => {
                report.plan = Some(run.plan);
                report.route = run.route;
                report.kernel_ms = run.kernel_ms;
                report.phases = run.phases;
                return Ok((counts, report));
            }
            Err(e) if placement.device == Device::Auto && matches!(job.rows, Rows::Host(_)) => {
                report.backend = Backend::Cpu;
                report.fallback = Some(e.to_string());
            }
            Err(e) => return Err(e),
        }
    }
    if let Some(by_value) = job.counts_by_value(crate::job::Counter::Cpu) {
        let path = by_value.describe(job.rows_dtype(0), job.cells);
        report.why = format!("{}; {path}", report.why);
    }
    match &job.rows {
        Rows::Host(rows) => Ok((crate::cpu::count(job, rows)?, report)),
        Rows::Device(_) => Err(HistError::argument(|s| {
            format!(
                "the rows are in GPU memory: {} would copy them to the host; copy them yourself \
                 to histogram them there",
                s.device("cpu")
            )
        })),
    }
}
