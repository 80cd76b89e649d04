//! One error type for the whole crate; it becomes a `PolarsError` in plugins and the matching
//! Python exception in the native module.

use polars::prelude::{polars_err, PolarsError};

#[derive(Debug, thiserror::Error)]
pub enum HistError {
    /// An argument that cannot be used as given; the text names it and the fix.
    #[error("{0}")]
    InvalidArgument(String),
    /// A column or array whose dtype is not binned; the text names the dtype.
    #[error("cannot histogram a column of dtype {0}")]
    UnsupportedDtype(String),
    #[error("`bins` asks for {bins} bins, more than the {max} a histogram can hold")]
    TooManyBins { bins: usize, max: usize },
    /// A count past `u64::MAX` (merging histograms): never a silent wrap.
    #[error("a count would pass 2^64 - 1")]
    Overflow,
    /// An allocation of this many bytes failed.
    #[error("out of memory: could not allocate {0} bytes")]
    OutOfMemory(usize),
    /// The GPU could not be used or failed; the text says why.
    #[error("GPU: {0}")]
    Gpu(String),
    /// A bug: a panic caught at the boundary.
    #[error("internal error in {0}; please report it")]
    Internal(String),
    #[error(transparent)]
    Polars(#[from] PolarsError),
}

pub type HistResult<T> = Result<T, HistError>;

impl From<HistError> for PolarsError {
    fn from(e: HistError) -> Self {
        match e {
            HistError::Polars(e) => e,
            HistError::InvalidArgument(_)
            | HistError::TooManyBins { .. }
            | HistError::UnsupportedDtype(_) => polars_err!(InvalidOperation: "{}", e),
            _ => polars_err!(ComputeError: "{}", e),
        }
    }
}

/// Runs `f`, turning a panic into an error: nothing may unwind across the plugin boundary or
/// into Python.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> HistResult<T>) -> HistResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("unknown cause");
        Err(HistError::Internal(format!("{what} ({why})")))
    })
}
