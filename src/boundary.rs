//! What every entry point wraps its work in, Rust's and Python's alike: a running call that
//! Ctrl-C stops ([`crate::interrupt`]), the caller's current CUDA device as it was once the call
//! returns (CuPy's, PyTorch's), and a panic caught as an error, never unwound into Polars or
//! Python. The Python module's exception mapping is its other half (`crate::python`).

use crate::error::{HistError, HistResult};

/// Runs `f`, turning a panic into an error: nothing may unwind across the plugin boundary or
/// into Python.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> HistResult<T>) -> HistResult<T> {
    // A running call: Ctrl-C now stops it (crate::interrupt).
    let _running = crate::interrupt::Scope::enter();
    // The caller's current CUDA device (CuPy's, PyTorch's) is as it was after the call.
    let _current = crate::gpu::device::KeepCurrent::now();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("unknown cause");
        Err(HistError::Internal(format!("{what} ({why})")))
    })
}

/// The exceptions a Python caller was promised, by the API it called, and the one mapping of
/// every error of the crate to them (src/python.rs raises through it).
#[cfg(feature = "python")]
pub mod python {
    use polars::prelude::PolarsError;
    use pyo3::exceptions::{
        PyIndexError, PyKeyboardInterrupt, PyMemoryError, PyOverflowError, PyRuntimeError,
        PyTypeError, PyValueError,
    };
    use pyo3::prelude::*;
    use pyo3::sync::PyOnceLock;
    use pyo3::types::PyType;

    use crate::error::{HistError, Spelling, INTERRUPTED};

    /// Whose exception types a call raises: the API the user called.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Api {
        /// Polars' expressions and what stands for them (the Series namespace, `histogram` of
        /// host data, `hist`): Polars' `ComputeError`, as a query raises a plugin's error, but
        /// `MemoryError` for memory and `KeyboardInterrupt` for Ctrl-C.
        Polars,
        /// The numpy drop-in: numpy's types (`ValueError` for values it cannot bin, `TypeError`
        /// for dtypes it does not take), and the same `MemoryError` and `KeyboardInterrupt`.
        Numpy,
        /// The package's own objects (`Histogram`, pins, `explain`): Python's built-in types,
        /// as numpy's.
        Python,
    }

    impl Api {
        /// The API a Python argument names (`"polars"`, `"numpy"`).
        pub fn named(name: &str) -> PyResult<Api> {
            match name {
                "polars" => Ok(Api::Polars),
                "numpy" => Ok(Api::Numpy),
                other => Err(PyValueError::new_err(format!(
                    "`api` must be \"polars\" or \"numpy\", got {other:?}"
                ))),
            }
        }
    }

    /// The Python exception for an error of ours, in Python's words, of the type `api` promises.
    pub fn to_py(e: HistError, api: Api) -> PyErr {
        let message = e.message(Spelling::Python);
        match (e, api) {
            (HistError::OutOfMemory(_), _) => PyMemoryError::new_err(message),
            (HistError::Interrupted, _) => interrupted(),
            (_, Api::Polars) => polars_exception("ComputeError", message),
            (
                HistError::InvalidArgument(_)
                | HistError::Argument { .. }
                | HistError::TooManyBins { .. },
                _,
            ) => PyValueError::new_err(message),
            (HistError::UnsupportedDtype(_), _) => PyTypeError::new_err(message),
            (HistError::InfiniteBins { .. }, _) => PyOverflowError::new_err(message),
            (HistError::Overflow, Api::Python) => PyOverflowError::new_err(message),
            (HistError::Overflow, _) => PyValueError::new_err(message),
            (HistError::Polars(e), _) => match e {
                PolarsError::ShapeMismatch(_)
                | PolarsError::ComputeError(_)
                | PolarsError::InvalidOperation(_)
                | PolarsError::Duplicate(_) => PyValueError::new_err(message),
                PolarsError::SchemaMismatch(_) => PyTypeError::new_err(message),
                PolarsError::OutOfBounds(_) => PyIndexError::new_err(message),
                _ => PyRuntimeError::new_err(message),
            },
            _ => PyRuntimeError::new_err(message),
        }
    }

    /// An exception of `polars.exceptions` by name (`RuntimeError` where Polars has no such
    /// class: never, with the Polars this package declares).
    pub fn polars_exception(name: &str, message: String) -> PyErr {
        static EXCEPTIONS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
        Python::attach(|py| {
            let class = EXCEPTIONS
                .get_or_try_init(py, || py.import("polars.exceptions").map(Bound::unbind))
                .and_then(|module| module.bind(py).getattr(name))
                .and_then(|class| Ok(class.cast_into::<PyType>()?));
            match class {
                Ok(class) => PyErr::from_type(class, message),
                Err(_) => PyRuntimeError::new_err(message),
            }
        })
    }

    /// The exception for a call Ctrl-C stopped: Python's own, from its SIGINT handler (which
    /// has a pending signal to run; running it here means it does not fire again later), or
    /// `KeyboardInterrupt` where that handler chose not to raise.
    pub fn interrupted() -> PyErr {
        Python::attach(|py| match py.check_signals() {
            Err(e) => e,
            Ok(()) => PyKeyboardInterrupt::new_err(INTERRUPTED),
        })
    }
}
