//! A scan's fill inside Polars' streaming engine: `ScanSink`, the Python handle of a
//! [`Sink`], and the plugin `scan_fill`, an elementwise expression that Polars runs on every
//! morsel of the scan from its own threads, as it decodes them. Each call counts its morsel
//! into the sink its kwargs name and returns a column of nulls of the morsel's length, which
//! the query reduces with `null_count()` (a check that every row went through once).
//!
//! A histogram is no elementwise function, and Polars' streaming engine has no reduction a
//! plugin can define: a plugin that is not elementwise gets its whole input at once (the
//! engine's `columnar-function` node gathers it in memory first). The sink is the way a scan
//! streams: the query's result is the sink's, taken when the query has run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use polars::prelude::*;
use pyo3::prelude::*;

use crate::accumulator::{Counting, Sink};
use crate::boundary::guarded;
use crate::options::Device;
use crate::python::histogram::PyHistogram;
use crate::python::plugin::plugin;
use crate::python::{call, for_python, to_py};

plugin!(
    _polars_plugin_field_scan_fill,
    _polars_plugin_scan_fill,
    FillKwargs,
    scan_fill_field,
    scan_fill
);

/// `scan_fill`'s kwargs: the sink, and whether the last input holds the weights.
#[derive(serde::Deserialize)]
struct FillKwargs {
    sink: u64,
    weighted: bool,
}

/// The sinks of the scans running in this process, by token.
fn sinks() -> std::sync::MutexGuard<'static, HashMap<u64, Arc<Sink>>> {
    static SINKS: LazyLock<Mutex<HashMap<u64, Arc<Sink>>>> = LazyLock::new(Default::default);
    SINKS.lock().unwrap_or_else(PoisonError::into_inner)
}

fn scan_fill_field(inputs: &[Field], _kwargs: &FillKwargs) -> PolarsResult<Field> {
    Ok(Field::new(inputs[0].name().clone(), DataType::Boolean))
}

/// `inputs`: the columns (one per axis), then the weights of a weighted sink.
fn scan_fill(inputs: &[Series], kwargs: &FillKwargs) -> PolarsResult<Series> {
    let sink = sinks().get(&kwargs.sink).cloned().ok_or_else(|| {
        polars_err!(ComputeError:
            "this query fills a histogram of a scan that is no longer running (its plan was \
             kept or serialized): run it again through histogram_scan or lf.gpu_hist"
        )
    })?;
    let (columns, weights) = match kwargs.weighted {
        true => inputs.split_at(inputs.len() - 1),
        false => (inputs, &[][..]),
    };
    let first = &columns[0];
    for_python(guarded("a scan's fill", || {
        sink.fill(columns, weights.first())
    }))?;
    Ok(BooleanChunked::full_null(first.name().clone(), first.len()).into_series())
}

/// A scan's sink, registered under `token` (the kwargs of its queries' `scan_fill`) until it
/// is finished or dropped.
#[pyclass(module = "polars_gpu_hist._internal", name = "ScanSink", frozen)]
pub struct PyScanSink {
    token: u64,
    sink: Arc<Sink>,
    /// Ctrl-C stops the scan at its next morsel while the sink lives (a call of ours is running
    /// between the engine's calls too).
    running: Mutex<Option<crate::interrupt::Scope>>,
}

#[pymethods]
impl PyScanSink {
    /// A sink filling copies of `histogram`'s binning (dtypes fixed by its fills), counted on
    /// `device` ("cpu" or "gpu"): morsels inline on the engine's threads, or batched on one
    /// feeder thread (the GPU, or every core for binnings of many cells).
    #[new]
    fn new(py: Python<'_>, histogram: PyRef<'_, PyHistogram>, device: &str) -> PyResult<Self> {
        let device = match device {
            "gpu" => Device::Gpu,
            "cpu" => Device::Cpu,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "a scan counts on 'cpu' or 'gpu', got {other:?}"
                )))
            }
        };
        let template: &PyHistogram = &histogram;
        let sink = call(py, "ScanSink", || {
            let template = template.lock();
            let counting = Counting::for_device(device, template.len(), template.is_weighted());
            Sink::new(&template, counting)
        })?;
        static NEXT: AtomicU64 = AtomicU64::new(1);
        // Tokens of other processes (a plan serialized there) are not this one's.
        let token = NEXT.fetch_add(1, Ordering::Relaxed) ^ (u64::from(std::process::id()) << 40);
        let sink = Arc::new(sink);
        sinks().insert(token, sink.clone());
        #[cfg(unix)]
        crate::interrupt::chain_sigint();
        Ok(PyScanSink {
            token,
            sink,
            running: Mutex::new(Some(crate::interrupt::Scope::enter())),
        })
    }

    /// The token `scan_fill`'s kwargs name the sink by.
    #[getter]
    fn token(&self) -> u64 {
        self.token
    }

    /// Rows handed to the sink so far.
    #[getter]
    fn rows(&self) -> u64 {
        self.sink.rows()
    }

    /// The fills so far and the seconds they took, summed over the engine's threads.
    #[getter]
    fn profile(&self) -> (u64, f64) {
        self.sink.profile()
    }

    /// How the sink counts: "inline" (on the engine's threads) or "batched on cpu/gpu".
    #[getter]
    fn counting(&self) -> String {
        match self.sink.counting() {
            Counting::Inline => "inline".into(),
            Counting::Batched(Device::Gpu) => "batched on gpu".into(),
            Counting::Batched(_) => "batched on cpu".into(),
        }
    }

    /// Raises the first error of a fill as its own exception (MemoryError, ValueError,
    /// KeyboardInterrupt...), where one failed; the query that met it failed with its text.
    fn raise_failure(&self) -> PyResult<()> {
        match self.sink.failure() {
            Some(e) => Err(to_py(e)),
            None => Ok(()),
        }
    }

    /// The histogram of every morsel; the sink is unregistered (its queries cannot run again).
    fn finish(&self, py: Python<'_>) -> PyResult<PyHistogram> {
        self.close();
        let sink = &self.sink;
        let total = call(py, "ScanSink.finish", || sink.finish())?;
        Ok(PyHistogram::new_from(total))
    }

    /// Unregisters the sink and ends its Ctrl-C scope (a scan that failed or was left).
    fn close(&self) {
        sinks().remove(&self.token);
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

impl Drop for PyScanSink {
    fn drop(&mut self) {
        self.close();
    }
}
