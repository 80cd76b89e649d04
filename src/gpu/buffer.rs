//! Arrays left in device memory for CuPy or PyTorch to wrap (`__cuda_array_interface__`): the
//! numpy drop-in's counts and edges never visit the host.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::gpu::scratch::Scratch;
use crate::gpu::DeviceCounts;

/// A 1-D array in device memory; the memory lives as long as this value.
pub enum DeviceBuffer {
    /// Counts (unsigned, shown as int64).
    Counts(Scratch<u64>),
    F32(Scratch<f32>),
    F64(Scratch<f64>),
}

impl DeviceBuffer {
    /// The device address of the first value.
    pub fn ptr(&self, stream: &Arc<CudaStream>) -> u64 {
        match self {
            DeviceBuffer::Counts(s) => s.ptr(stream),
            DeviceBuffer::F32(s) => s.ptr(stream),
            DeviceBuffer::F64(s) => s.ptr(stream),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            DeviceBuffer::Counts(s) => s.len(),
            DeviceBuffer::F32(s) => s.len(),
            DeviceBuffer::F64(s) => s.len(),
        }
    }

    /// The array interface's type string. Counts are shown as int64, numpy's type for them:
    /// they never reach 2^63.
    pub fn typestr(&self) -> &'static str {
        match self {
            DeviceBuffer::Counts(_) => "<i8",
            DeviceBuffer::F32(_) => "<f4",
            DeviceBuffer::F64(_) => "<f8",
        }
    }
}

impl From<DeviceCounts> for DeviceBuffer {
    fn from(counts: DeviceCounts) -> Self {
        match counts {
            DeviceCounts::Exact(s) => DeviceBuffer::Counts(s),
            DeviceCounts::Weighted(s) => DeviceBuffer::F64(s),
        }
    }
}
