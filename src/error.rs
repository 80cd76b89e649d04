//! One error type for every backend; it becomes a `PolarsError` (and so a Python exception).

use polars::prelude::{polars_err, PolarsError};

#[derive(Debug, thiserror::Error)]
pub enum HistError {
    #[error("{0}")]
    InvalidArgument(String),
    #[error("histogram of a column of dtype {0} is not supported: use a numeric, Date, Datetime or Duration column")]
    UnsupportedDtype(String),
    #[error("`bins` asks for {bins} bins, more than the {max} this histogram can hold")]
    TooManyBins { bins: usize, max: usize },
    #[error("GPU: {0}")]
    Gpu(String),
    #[error(transparent)]
    Polars(#[from] PolarsError),
}

pub type HistResult<T> = Result<T, HistError>;

impl From<HistError> for PolarsError {
    fn from(e: HistError) -> Self {
        match e {
            HistError::Polars(e) => e,
            HistError::InvalidArgument(_) | HistError::TooManyBins { .. } => {
                polars_err!(InvalidOperation: "{}", e)
            }
            HistError::UnsupportedDtype(_) => polars_err!(SchemaMismatch: "{}", e),
            _ => polars_err!(ComputeError: "{}", e),
        }
    }
}
