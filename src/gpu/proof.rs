//! The cheap rule's proof walked on the device (the `prove` kernel, kernels/proof.cuh): a fresh
//! range at many bins is settled in one launch instead of a walk over every bin on the host,
//! which took longer than the count (a million bins: about 1.5 ms on 16 cores, 10 ms on 2).
//! The host derives the proof from what the device found exactly as from its own walk.

use std::sync::Arc;

use cudarc::driver::{CudaStream, DevicePtr, PushKernelArg};

use crate::bins::{BinFloat, BinSpec, UniformBins, Walk};
use crate::dtype::DType;
use crate::error::HistResult;
use crate::gpu::abi::ProofParams;
use crate::gpu::context::{driver, Gpu};
use crate::gpu::kernel::KernelId;
use crate::job::Axis;

/// From this many bins the device walks them: below, the host's walk costs less than a launch
/// and a synchronize.
pub const DEVICE_PROOF_BINS: usize = 1 << 14;

/// Settles on the device the proof of every axis of equal bins that needs one: made by a
/// formula, at least [`DEVICE_PROOF_BINS`] of them, and not proved or remembered before. On the
/// calling thread's own stream (idle between calls): the walk reads no rows, so it need not wait
/// for the work queued before on the caller's stream.
pub fn settle(gpu: &Gpu, axes: &[Axis]) -> HistResult<()> {
    for axis in axes {
        let stream = || gpu.stream();
        match axis.spec() {
            Some(BinSpec::Uniform32(u)) => settle_one(gpu, stream, u, DType::F32)?,
            Some(BinSpec::Uniform64(u)) => settle_one(gpu, stream, u, DType::F64)?,
            _ => {}
        }
    }
    Ok(())
}

fn settle_one<F: BinFloat>(
    gpu: &Gpu,
    stream: impl FnOnce() -> HistResult<Arc<CudaStream>>,
    bins: &UniformBins<F>,
    dtype: DType,
) -> HistResult<()> {
    if bins.len() < DEVICE_PROOF_BINS || bins.linspace().is_none() || bins.known_proof().is_some() {
        return Ok(());
    }
    bins.settle_proof(walk(gpu, &stream()?, bins, dtype)?);
    Ok(())
}

/// What the `prove` kernel finds over `bins` (of float type `dtype`, made by a formula).
pub fn walk<F: BinFloat>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    bins: &UniformBins<F>,
    dtype: DType,
) -> HistResult<Walk> {
    let formula = bins.linspace().expect("equal bins made by a formula");
    let n = bins.len();
    let func = gpu.kernel(KernelId::Proof { dtype }, 0)?;
    let found = stream
        .alloc_zeros::<u64>(2)
        .map_err(driver("allocating the proof's findings"))?;
    let params = ProofParams {
        out: found.device_ptr(stream).0,
        n: n as u32,
        single: formula.single as u32,
        wide: bins.estimate.wide as u32,
        pad: 0,
        start: formula.start,
        step: formula.step,
        last: bins.edge(n).to_f64(),
        denom: bins.estimate.denom,
        n_f: bins.estimate.n,
        scale: bins.scale.to_f64(),
    };
    let cfg = gpu.strided_launch(n as u64);
    // SAFETY: `ProofParams` is the kernel's one parameter (abi.rs); `found` holds the two
    // values it writes and outlives the copy below, which waits for the kernel.
    unsafe { stream.launch_builder(&func).arg(&params).launch(cfg) }
        .map_err(driver("launching the proof kernel"))?;
    let found = stream
        .clone_dtoh(&found)
        .map_err(driver("reading the proof's findings"))?;
    stream
        .synchronize()
        .map_err(driver("running the proof kernel"))?;
    Ok(Walk {
        near: found[0] == 0,
        worst: f64::from_bits(found[1]),
    })
}

/// What the host's walk and the device's find over `spec` (tests hold them equal); `None` where
/// the device does not walk these bins (not equal bins, or not made by a formula).
pub fn both_walks(gpu: &Gpu, spec: &BinSpec) -> HistResult<Option<[Walk; 2]>> {
    let stream = gpu.stream_after_default()?;
    Ok(match spec {
        BinSpec::Uniform32(u) if u.linspace().is_some() => {
            Some([u.host_walk(), walk(gpu, &stream, u, DType::F32)?])
        }
        BinSpec::Uniform64(u) if u.linspace().is_some() => {
            Some([u.host_walk(), walk(gpu, &stream, u, DType::F64)?])
        }
        _ => None,
    })
}
