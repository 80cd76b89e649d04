//! The pyo3-polars expression plugin and the native module `polars_gpu_hist._internal`: the
//! module's registration and the one error mapping of every entry point, which returns an
//! ordinary exception (a panic or a failed allocation is caught here, never unwound into Python
//! or Polars). The entry points live by concern: device.rs (arrays in GPU memory), host.rs
//! (host data outside a query), pins.rs, kernels.rs (the GPU and its prebuilt kernels),
//! hooks.rs (tests' and benchmarks'), histogram.rs (`Histogram`), values.rs (the typed values
//! the calls take), plugin.rs and expressions.rs (the expression plugin).

use polars::prelude::*;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_polars::PolarsAllocator;

use crate::boundary::guarded;
use crate::boundary::python::Api;
use crate::error::{HistError, HistResult, Spelling};

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

/// The Python exception for an error of ours, of Python's built-in types (the package's own
/// objects: `Histogram`, pins, `explain`).
pub(crate) fn to_py(e: HistError) -> PyErr {
    crate::boundary::python::to_py(e, Api::Python)
}

/// Runs `f` with the GIL released, every error (and panic) an ordinary exception of Python's
/// built-in types.
pub(crate) fn call<T: Send>(
    py: Python<'_>,
    what: &str,
    f: impl FnOnce() -> HistResult<T> + Send,
) -> PyResult<T> {
    call_as(py, Api::Python, what, f)
}

/// [`call`], raising the exception types `api` promises.
pub(crate) fn call_as<T: Send>(
    py: Python<'_>,
    api: Api,
    what: &str,
    f: impl FnOnce() -> HistResult<T> + Send,
) -> PyResult<T> {
    // Ctrl-C stops the call: chained again where a SIGINT handler installed since displaced ours.
    #[cfg(unix)]
    crate::interrupt::chain_sigint();
    py.detach(|| guarded(what, f))
        .map_err(|e| crate::boundary::python::to_py(e, api))
}

/// Raises the exception of a call Ctrl-C stopped (see [`interrupted`]): for the Python layer,
/// which meets the stop as the error Polars hands on.
#[pyfunction]
fn raise_interrupted() -> PyResult<()> {
    Err(crate::boundary::python::interrupted())
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

/// `p.dot(p)` by the numpy this process runs (its BLAS kernel's rounding), for "stone"'s ties
/// (see `Estimator::Stone`); `None` where numpy cannot be imported.
fn numpy_dot(p: &[f64]) -> Option<f64> {
    Python::attach(|py| -> PyResult<f64> {
        let numpy = py.import("numpy")?;
        let p = numpy.call_method1("array", (p.to_vec(),))?;
        p.call_method1("dot", (&p,))?.extract()
    })
    .ok()
}

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::estimators::set_dot_product(numpy_dot);
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
