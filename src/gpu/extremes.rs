//! numpy's automatic range of a column in device memory: per-block minima and maxima of its
//! non-NaN values from the `extremes` kernel, finished on the host.

use std::sync::Arc;

use cudarc::driver::{CudaStream, DevicePtr, LaunchConfig, PushKernelArg, ValidAsZeroBits};

use crate::bins::Extremes;
use crate::error::HistResult;
use crate::gpu::abi::{Column, ExtremesParams};
use crate::gpu::context::{driver, Gpu};
use crate::gpu::kernel::KernelId;
use crate::input::{extremes_of, Value};
use crate::job::DeviceColumn;

/// Minimum and maximum of the non-NaN values of `len` rows of `column`.
pub fn extremes(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    column: DeviceColumn,
    len: u64,
) -> HistResult<Extremes> {
    crate::with_dtype!(column.dtype, |T| finish::<T>(
        gpu,
        stream,
        KernelId::Extremes { dtype: T::DTYPE },
        column,
        len
    ))
}

/// The largest finite magnitude of `len` float64 weights at `ptr` (0 where none is finite):
/// the grid of their sums ([`crate::fixed`]).
pub fn largest_magnitude(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    ptr: u64,
    len: u64,
) -> HistResult<f64> {
    let column = DeviceColumn {
        ptr,
        dtype: crate::DType::F64,
        stride: 1,
    };
    let found = finish::<f64>(gpu, stream, KernelId::Magnitudes, column, len)?;
    Ok(match found {
        Extremes::Float64(_, hi) => hi,
        _ => 0.0,
    })
}

fn finish<T: Value + ValidAsZeroBits + cudarc::driver::DeviceRepr>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    kernel: KernelId,
    column: DeviceColumn,
    len: u64,
) -> HistResult<Extremes> {
    const BLOCK: u32 = 256;
    let grid = (gpu.props.sm_count * 4).min(len.div_ceil(BLOCK as u64).max(1) as u32);
    let func = gpu.kernel(kernel, 0)?;
    let alloc = driver("allocating partial extremes");
    let mins = stream.alloc_zeros::<T>(grid as usize).map_err(&alloc)?;
    let maxs = stream.alloc_zeros::<T>(grid as usize).map_err(&alloc)?;
    let found = stream.alloc_zeros::<u32>(grid as usize).map_err(&alloc)?;
    let params = ExtremesParams {
        rows: Column {
            values: column.ptr,
            len,
            stride: column.stride,
            ..Default::default()
        },
        mins: mins.device_ptr(stream).0,
        maxs: maxs.device_ptr(stream).0,
        found: found.device_ptr(stream).0,
    };
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `ExtremesParams` is the kernel's one parameter; its buffers outlive the
    // synchronize below.
    unsafe { stream.launch_builder(&func).arg(&params).launch(cfg) }
        .map_err(driver("launching the extremes kernel"))?;
    let read = driver("reading partial extremes");
    let mins = stream.clone_dtoh(&mins).map_err(&read)?;
    let maxs = stream.clone_dtoh(&maxs).map_err(&read)?;
    let found = stream.clone_dtoh(&found).map_err(&read)?;
    stream
        .synchronize()
        .map_err(driver("running the extremes kernel"))?;
    let partials = mins.into_iter().zip(maxs).zip(found);
    Ok(extremes_of(
        partials.filter(|&(_, f)| f != 0).map(|(pair, _)| pair),
    ))
}
