//! The CUDA backend: the context, the plan (which kernels, what grid), the kernels' ABI, one
//! launch loop for every family and rank, the ways host rows reach the device, and NVRTC.

pub mod abi;
mod buffer;
pub mod bundle;
pub(crate) mod bundle_kernels;
pub mod compile;
mod context;
pub mod device;
pub mod edges;
pub mod extremes;
pub mod kernel;
mod launch;
mod made_once;
pub mod pin;
pub mod plan;
pub mod proof;
mod sample;
mod scratch;
pub mod settings;
pub mod transfer;
mod upload;

pub use buffer::DeviceBuffer;
pub(crate) use context::driver;
pub use context::{available, device_count, get, on, Gpu};
pub use launch::{count, outline, plan_job, queue, Clock, DeviceCounts, Run};
pub use plan::Plan;
pub use settings::Settings;
pub use transfer::Transfer;
pub use upload::{expected_route, Route};
