//! Histograms of Polars columns with counts identical to `numpy.histogram`, on NVIDIA GPUs and on
//! all CPU cores.
//!
//! ```
//! use polars::prelude::*;
//! use polars_gpu_hist::{histogram_frame, Bins, HistogramOptions};
//!
//! let x = Column::new("x".into(), [0.0, 1.0, 2.0, 3.0, f64::NAN]);
//! let options = HistogramOptions::default().bins(Bins::Count(3));
//! let hist = histogram_frame(&x, None, &options).unwrap();
//! let counts: Vec<u64> = hist.column("count").unwrap().u64().unwrap().into_no_null_iter().collect();
//! assert_eq!(counts, [1, 1, 2]); // numpy: the last bin is closed, NaN is not counted
//! ```
//!
//! The eager functions ([`histogram`], [`histogram_frame`], [`histogram_by`], [`histogramdd`])
//! take Polars columns; [`Histogram`] accumulates over batches and merges; with the `lazy`
//! feature, [`lazy::GpuHistExt`] adds `col("x").gpu_hist().histogram(options)` to expressions.
//!
//! Inside, top-down: the public functions validate their arguments and resolve each axis's
//! bins, build a job, and hand it to the engine, which counts it on the CPU or the GPU and
//! reports what ran; the output module builds the result.

// The crate is also the Python extension: with the `python` feature every item is used, and
// `cargo clippy --features python` checks that; without it, what the extension alone calls
// (device arrays, pins, building the kernel bundle) is compiled but unused.
#![cfg_attr(not(feature = "python"), allow(dead_code))]
// The `internals` feature opens modules for the benchmark examples, not as an API.
#![cfg_attr(feature = "internals", allow(clippy::len_without_is_empty))]

pub mod accumulator;
mod alloc;
mod api;
mod boundary;
mod counts;
mod dtype;
mod engine;
mod error;
mod estimators;
mod family;
mod fixed;
mod interrupt;
mod job;
mod options;
mod output;
#[cfg(feature = "python")]
mod python;
pub mod rows;

// The backends' internals: reached only by the benchmark examples, through the `internals`
// feature (no API, no stability).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod bins;
#[cfg(not(feature = "internals"))]
mod bins;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod cpu;
#[cfg(not(feature = "internals"))]
mod cpu;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod gpu;
#[cfg(not(feature = "internals"))]
mod gpu;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod input;
#[cfg(not(feature = "internals"))]
mod input;

pub use accumulator::{AccumulatorOptions, Axis, Histogram, Storage};
pub use api::by::{histogram_by, histogram_by_dtype, histogram_by_keys, histogram_by_keys_dtype};
pub use api::device::{histogram_device, histogramdd_device, DeviceArray, DeviceDim};
pub use api::explain::{explain, Location};
pub use api::hist1d::{histogram, histogram_dtype, histogram_frame};
pub use api::histdd::{histogramdd, histogramdd_dtype, MAX_DIMS};
#[cfg(feature = "lazy")]
pub use api::lazy;
pub use bins::{BinSpec, Closed, ExactInt};
pub use counts::Counts;
pub use dtype::DType;
pub use error::{HistError, HistResult, Spelling};
pub use estimators::Estimator;
#[doc(hidden)]
pub use family::Family;
pub use gpu::available as gpu_available;
pub use options::{
    BinRule, Bins, Device, HistogramDdOptions, HistogramOptions, Scalar, Temporal, TemporalKind,
    Unit,
};
