//! Histograms of Polars columns with counts identical to `numpy.histogram`, on NVIDIA GPUs and on
//! all CPU cores.
//!
//! ```
//! use polars::prelude::*;
//! use polars_gpu_hist::{histogram_frame, Bins, HistogramOptions};
//!
//! let x = Series::new("x".into(), [0.0, 1.0, 2.0, 3.0, f64::NAN]);
//! let options = HistogramOptions { bins: Bins::Count(3), ..Default::default() };
//! let hist = histogram_frame(&x, None, &options).unwrap();
//! let counts: Vec<u64> = hist.column("count").unwrap().u64().unwrap().into_no_null_iter().collect();
//! assert_eq!(counts, [1, 1, 2]); // numpy: the last bin is closed, NaN is not counted
//! ```
//!
//! The flow, top-down: [`api`] (the public functions) validates and resolves each axis's bins
//! under the contract in [`bins`], builds a [`job::Job`], and hands it to the [`engine`], which
//! counts it on the [`cpu`] or the [`gpu`] and reports what ran; [`output`] builds the result.

pub mod accumulator;
pub mod alloc;
pub mod api;
pub mod bins;
pub mod counts;
pub mod cpu;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod estimators;
pub mod gpu;
pub mod input;
pub mod interrupt;
pub mod job;
pub mod options;
pub mod output;
#[cfg(feature = "python")]
mod python;

pub use accumulator::{AccumulatorOptions, Axis, Histogram, Storage};
pub use api::by::{histogram_by, histogram_by_dtype, histogram_by_keys, histogram_by_keys_dtype};
pub use api::device::{histogram_device, histogramdd_device, DeviceArray, DeviceDim};
pub use api::explain::{explain, Location};
pub use api::hist1d::{histogram, histogram_dtype, histogram_frame};
pub use api::histdd::{histogramdd, histogramdd_dtype, MAX_DIMS};
#[cfg(feature = "lazy")]
pub use api::lazy;
pub use bins::{BinSpec, Closed};
pub use dtype::DType;
pub use error::{HistError, HistResult, Spelling};
pub use options::{BinRule, Bins, Device, HistogramDdOptions, HistogramOptions, Scalar};
