//! One error type for the whole public API: every public function returns [`HistResult`], and a
//! [`HistError`] converts into a `PolarsError` (`?` in a `PolarsResult` function) and into the
//! matching Python exception in the native module.
//!
//! Texts name arguments in the words of the API that took them: Rust callers read the Rust
//! API's types (`Bins::Rule(BinRule::Integer)`), Python callers the keywords they wrote
//! (`bins="integer"`). Errors about such arguments carry both texts ([`HistError::Argument`],
//! made by [`HistError::argument`] from one template and a [`Spelling`]); `Display` and the
//! conversion into `PolarsError` give the Rust text, and the Python module asks for the other.
//!
//! The ground floor: this module uses Polars and thiserror only, and every other module may use
//! it (tests/test_layout.py holds the crate free of module circles).

use polars::prelude::{polars_err, PolarsError};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistError {
    /// An argument that cannot be used as given; the text names it and the fix, in words both
    /// APIs share.
    #[error("{0}")]
    InvalidArgument(String),
    /// An argument that cannot be used as given, named as each API spells it.
    #[error("{rust}")]
    Argument { rust: String, python: String },
    /// A column or array whose dtype is not binned; the text names the dtype.
    #[error("cannot histogram a column of dtype {0}")]
    UnsupportedDtype(String),
    /// An estimator's bin count that is infinite (a span or a width out of the float's range),
    /// named as each API spells it: numpy's `int(inf)` raises `OverflowError`.
    #[error("{rust}")]
    InfiniteBins { rust: String, python: String },
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
    /// The call was interrupted (Ctrl-C) and stopped early; nothing it shares was changed.
    #[error("interrupted (Ctrl-C): the call stopped early, nothing was counted")]
    Interrupted,
    /// A bug: a panic caught at the boundary.
    #[error("internal error in {0}; please report it")]
    Internal(String),
    #[error(transparent)]
    Polars(#[from] PolarsError),
}

pub type HistResult<T> = Result<T, HistError>;

/// The text of [`HistError::Interrupted`], which the Python package finds in the error Polars
/// hands on to raise `KeyboardInterrupt`.
pub const INTERRUPTED: &str = "interrupted (Ctrl-C): the call stopped early, nothing was counted";

/// Whose words an error names arguments in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// The Rust API: `Bins::Rule(BinRule::Estimator(Estimator::Fd))`, `range: Some((min, max))`,
    /// `Storage::Weight`.
    Rust,
    /// The Python package: `bins="fd"`, `range=(min, max)`, `weights=True`.
    Python,
}

impl Spelling {
    /// Time bins of a Polars duration (`"1w"`, `"1mo"`).
    pub fn every(self, every: &str) -> String {
        match self {
            Spelling::Rust => format!("`Bins::every({every:?})`"),
            Spelling::Python => format!("`bins={every:?}`"),
        }
    }

    /// A number of equal bins.
    pub fn count(self, n: usize) -> String {
        match self {
            Spelling::Rust => format!("`Bins::Count({n})`"),
            Spelling::Python => format!("`bins={n}`"),
        }
    }

    /// An explicit range for equal bins (as the fix an error proposes).
    pub fn range(self) -> &'static str {
        match self {
            Spelling::Rust => "`range: Some((min, max))`",
            Spelling::Python => "`range=(min, max)`",
        }
    }

    /// The ranges of an n-D histogram, each dimension's optional.
    pub fn dd_ranges(self) -> &'static str {
        match self {
            Spelling::Rust => "one `Some((min, max))` or `None` per column (or no ranges at all)",
            Spelling::Python => "one `(min, max)` or `None` per column",
        }
    }

    /// A mergeable histogram's fixed range, and the way to take it from all the data.
    pub fn accumulator_range(self) -> &'static str {
        match self {
            Spelling::Rust => {
                "`Axis::regular(n, min, max)` or explicit edges (`Axis::data_range` takes the \
                 range of all the data, found first)"
            }
            Spelling::Python => {
                "`range=(min, max)` or explicit edges (`histogram_scan(..., range=\"auto\")` \
                 finds the range of all the data first)"
            }
        }
    }

    /// A histogram that sums weights.
    pub fn weight_storage(self) -> &'static str {
        match self {
            Spelling::Rust => "`Storage::Weight`",
            Spelling::Python => "`weights=True`",
        }
    }

    /// A device by name (`"cpu"`, `"gpu"`).
    pub fn device(self, name: &str) -> String {
        match self {
            Spelling::Rust => {
                let variant = match name {
                    "cpu" => "Cpu",
                    "gpu" => "Gpu",
                    _ => "Auto",
                };
                format!("`Device::{variant}`")
            }
            Spelling::Python => format!("`device=\"{name}\"`"),
        }
    }
}

impl HistError {
    /// An [`HistError::Argument`] from one template, written once per [`Spelling`].
    pub fn argument(text: impl Fn(Spelling) -> String) -> HistError {
        HistError::Argument {
            rust: text(Spelling::Rust),
            python: text(Spelling::Python),
        }
    }

    /// The message in `spelling`'s words (the same text for errors that name no argument).
    pub fn message(&self, spelling: Spelling) -> String {
        match (self, spelling) {
            (HistError::Argument { python, .. }, Spelling::Python)
            | (HistError::InfiniteBins { python, .. }, Spelling::Python) => python.clone(),
            _ => self.to_string(),
        }
    }

    /// The `PolarsError` this error becomes, worded for `spelling`.
    pub fn into_polars(self, spelling: Spelling) -> PolarsError {
        match self {
            HistError::Polars(e) => e,
            HistError::InvalidArgument(_)
            | HistError::Argument { .. }
            | HistError::InfiniteBins { .. }
            | HistError::TooManyBins { .. }
            | HistError::UnsupportedDtype(_) => {
                polars_err!(InvalidOperation: "{}", self.message(spelling))
            }
            _ => polars_err!(ComputeError: "{}", self),
        }
    }
}

impl From<HistError> for PolarsError {
    fn from(e: HistError) -> Self {
        e.into_polars(Spelling::Rust)
    }
}
