//! The public functions, as thin front ends over one engine: each validates its arguments,
//! resolves every axis's bins (`axes`), builds a job, counts it and builds the result.

pub mod axes;
pub mod by;
pub mod by_keys;
pub mod device;
pub mod explain;
pub(crate) mod groups;
pub mod hist1d;
pub mod histdd;
#[cfg(feature = "lazy")]
pub mod lazy;
pub(crate) mod time_bins;
