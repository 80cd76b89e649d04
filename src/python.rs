//! The pyo3-polars expression plugin and the native module `polars_gpu_hist._internal`: the
//! module's registration and the one error mapping of every entry point, which returns an
//! ordinary exception (a panic or a failed allocation is caught here, never unwound into Python
//! or Polars). The entry points live by concern: device.rs (arrays in GPU memory), host.rs
//! (host data outside a query), pins.rs, kernels.rs (the GPU and its prebuilt kernels),
//! hooks.rs (tests' and benchmarks'), histogram.rs (`Histogram`), values.rs (the typed values
//! the calls take), plugin.rs and expressions.rs (the expression plugin).

use polars::prelude::*;
use pyo3::exceptions::{PyMemoryError, PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3_polars::PolarsAllocator;

use crate::error::{guarded, HistError, HistResult, Spelling};

mod device;
mod expressions;
mod floor;
mod hist;
mod hist_labels;
mod histogram;
mod hooks;
mod host;
mod kernels;
mod pins;
mod plugin;
mod rows;
mod scan;
mod values;

// Memory crosses the plugin boundary both ways: allocate with Polars' allocator.
#[global_allocator]
static ALLOC: PolarsAllocator = PolarsAllocator::new();

/// A Polars error worded for Python: the plugin's errors reach Python users.
fn for_python<T>(result: HistResult<T>) -> PolarsResult<T> {
    result.map_err(|e| e.into_polars(Spelling::Python))
}

/// Options pickled by the Python wrapper, as Polars pickles a plugin's kwargs: floats stay exact.
fn unpickle<T: serde::de::DeserializeOwned + Clone + 'static>(pickled: &[u8]) -> PyResult<T> {
    plugin::remembered::<T>(pickled)
        .map(|value| T::clone(&value))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The Python exception for an error of ours, in Python's words.
pub(crate) fn to_py(e: HistError) -> PyErr {
    let message = e.message(Spelling::Python);
    match e {
        HistError::InvalidArgument(_)
        | HistError::Argument { .. }
        | HistError::TooManyBins { .. } => PyValueError::new_err(message),
        HistError::UnsupportedDtype(_) => PyTypeError::new_err(message),
        HistError::Overflow => PyOverflowError::new_err(message),
        HistError::OutOfMemory(_) => PyMemoryError::new_err(message),
        HistError::Interrupted => interrupted(),
        _ => PyRuntimeError::new_err(message),
    }
}

/// The exception for a call Ctrl-C stopped: Python's own, from its SIGINT handler (which has a
/// pending signal to run; running it here means it does not fire again later), or
/// `KeyboardInterrupt` where that handler chose not to raise.
pub(crate) fn interrupted() -> PyErr {
    Python::attach(|py| match py.check_signals() {
        Err(e) => e,
        Ok(()) => pyo3::exceptions::PyKeyboardInterrupt::new_err(crate::error::INTERRUPTED),
    })
}

/// Runs `f` with the GIL released, every error (and panic) an ordinary exception.
pub(crate) fn call<T: Send>(
    py: Python<'_>,
    what: &str,
    f: impl FnOnce() -> HistResult<T> + Send,
) -> PyResult<T> {
    // Ctrl-C stops the call: chained again where a SIGINT handler installed since displaced ours.
    #[cfg(unix)]
    crate::interrupt::chain_sigint();
    py.detach(|| guarded(what, f)).map_err(to_py)
}

/// Raises the exception of a call Ctrl-C stopped (see [`interrupted`]): for the Python layer,
/// which meets the stop as the error Polars hands on.
#[pyfunction]
fn raise_interrupted() -> PyResult<()> {
    Err(interrupted())
}

/// `MemoryError` unless `nbytes` (an estimate of a whole step, held to half the machine's
/// memory) can be allocated now; the probe is freed at once. For the Python layer, before it
/// has Polars (whose allocations abort when they fail) build a result of a size it knows.
#[pyfunction]
fn ensure_room(nbytes: usize) -> PyResult<()> {
    crate::alloc::ensure_room(nbytes).map_err(to_py)
}

/// Chains the SIGINT action that stops long calls again where a handler installed since
/// displaced it (see `crate::interrupt::chain_sigint`): for the Python layer, as it builds an
/// expression that Polars runs later.
#[pyfunction]
fn watch_ctrl_c() {
    #[cfg(unix)]
    crate::interrupt::chain_sigint();
}

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The bin limit, for the Python layer's checks before it builds a query.
    m.add("MAX_BINS", crate::bins::MAX_BINS)?;
    // Ctrl-C stops long calls between row blocks; Python's handler still runs after ours.
    #[cfg(unix)]
    crate::interrupt::chain_sigint();
    m.add_function(wrap_pyfunction!(raise_interrupted, m)?)?;
    m.add_function(wrap_pyfunction!(ensure_room, m)?)?;
    m.add_function(wrap_pyfunction!(watch_ctrl_c, m)?)?;
    kernels::register(m)?;
    host::register(m)?;
    device::register(m)?;
    pins::register(m)?;
    hooks::register(m)?;
    m.add_class::<values::PyDeviceSample>()?;
    m.add_class::<values::PyEdgeTarget>()?;
    m.add_class::<values::PyDeviceTarget>()?;
    m.add_class::<values::PyHistogramOptions>()?;
    m.add_class::<values::PyHistogramDdOptions>()?;
    m.add_class::<values::PyDataExtremes>()?;
    m.add_class::<histogram::PyHistogram>()?;
    m.add_class::<scan::PyScanSink>()?;
    Ok(())
}
