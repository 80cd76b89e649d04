//! Equal bins' edges made on the device from the linspace formula that made them on the host
//! (the `edges` kernel), in the dtype numpy returns: the numpy drop-in hands them to CuPy or
//! PyTorch without copying an array of edges from the host.

use std::sync::Arc;

use cudarc::driver::{CudaStream, PushKernelArg};

use crate::bins::{BinSpec, Linspace};
use crate::dtype::DType;
use crate::error::HistResult;
use crate::gpu::abi::EdgesParams;
use crate::gpu::context::{driver, Gpu};
use crate::gpu::kernel::KernelId;
use crate::gpu::scratch::ScratchPool;
use crate::gpu::DeviceBuffer;

/// The edges of `spec` as `dtype` (float32 or float64) in device memory, queued on `stream`;
/// `None` where no formula made them (explicit edges, spans that overflow or underflow) or the
/// device cannot give exactly the edges `spec` holds, rounded to `dtype`.
pub fn linspace_edges(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    spec: &BinSpec,
    dtype: DType,
) -> HistResult<Option<DeviceBuffer>> {
    let Some(formula) = device_formula(spec, dtype) else {
        return Ok(None);
    };
    let n = spec.len();
    let alloc = driver("allocating the edges");
    // SAFETY: the kernel writes every one of the n + 1 values before anyone reads them.
    let pool = gpu.scratch.as_ref();
    let buffer = unsafe {
        match dtype {
            DType::F32 => {
                DeviceBuffer::F32(ScratchPool::alloc(pool, stream, n + 1).map_err(alloc)?)
            }
            _ => DeviceBuffer::F64(ScratchPool::alloc(pool, stream, n + 1).map_err(alloc)?),
        }
    };
    launch(gpu, stream, formula, spec, dtype, buffer.ptr(stream))?;
    Ok(Some(buffer))
}

/// Queues the edges of `spec` as `dtype` into the `spec.len() + 1` values at `out` (the
/// caller's array), where the device can make them ([`linspace_edges`]); false where it
/// cannot, and nothing is written.
pub fn fill_linspace_edges(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    spec: &BinSpec,
    dtype: DType,
    out: u64,
) -> HistResult<bool> {
    let Some(formula) = device_formula(spec, dtype) else {
        return Ok(false);
    };
    launch(gpu, stream, formula, spec, dtype, out)?;
    Ok(true)
}

/// The formula the `edges` kernel runs for `spec` as `dtype`, where its edges are exactly
/// those of `spec` rounded to `dtype`. The kernel rounds the formula's value to `dtype` once;
/// the host rounded it to the bins' type first. The two agree unless a float64 value was
/// narrowed to float32 bins and is asked for as float64.
fn device_formula(spec: &BinSpec, dtype: DType) -> Option<Linspace> {
    let (formula, bins_single) = match spec {
        BinSpec::Uniform32(u) => (u.linspace()?, true),
        BinSpec::Uniform64(u) => (u.linspace()?, false),
        BinSpec::Edges(_) | BinSpec::Integers(_) | BinSpec::Half(_) => return None,
    };
    let narrowed = bins_single && !formula.single;
    match dtype {
        DType::F32 => Some(formula),
        DType::F64 if !narrowed => Some(formula),
        _ => None,
    }
}

/// Queues the `edges` kernel writing the `spec.len() + 1` edges of `formula` as `dtype` at `out`.
fn launch(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    formula: Linspace,
    spec: &BinSpec,
    dtype: DType,
    out: u64,
) -> HistResult<()> {
    let (n, last) = (spec.len(), spec.edge(spec.len()));
    let func = gpu.kernel(KernelId::Edges { dtype }, 0)?;
    let params = EdgesParams {
        out,
        n: n as u32,
        single: formula.single as u32,
        start: formula.start,
        step: formula.step,
        last,
    };
    let cfg = gpu.strided_launch(n as u64 + 1);
    // SAFETY: `EdgesParams` is the kernel's one parameter (abi.rs); `out` holds n + 1 values
    // of `dtype` and outlives the launch (freed in stream order, or the caller's).
    unsafe { stream.launch_builder(&func).arg(&params).launch(cfg) }
        .map_err(driver("launching the edges kernel"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bins::{Binning, Closed, Extremes, Range, ValueKind};

    /// The kernel's arithmetic (`__fmul_rn`/`__fadd_rn` in float when `single`, else
    /// `__dmul_rn`/`__dadd_rn`, then one rounding to the output type), edge `n` as stored.
    fn kernel_edge(f: Linspace, i: usize, n: usize, last: f64, as_f32: bool) -> f64 {
        let value = if i == n {
            last
        } else if f.single {
            (i as f32 * f.step as f32 + f.start as f32) as f64
        } else {
            i as f64 * f.step + f.start
        };
        if as_f32 {
            value as f32 as f64
        } else {
            value
        }
    }

    #[test]
    fn the_kernel_makes_the_bins_edges_in_the_dtype_asked_for() {
        let cases = [
            (
                ValueKind::Float32,
                Some(Range::new(0.1, 0.7)),
                Extremes::Empty,
            ),
            (ValueKind::Float32, None, Extremes::Float32(-3.25, 7.5)),
            (
                ValueKind::Float32,
                Some(Range {
                    lo: 0.1,
                    hi: 0.7,
                    half: false,
                    single: true,
                    wide: false,
                }),
                Extremes::Empty,
            ),
            (
                ValueKind::Float64,
                Some(Range {
                    lo: 0.1,
                    hi: 0.7,
                    half: false,
                    single: true,
                    wide: false,
                }),
                Extremes::Empty,
            ),
            (
                ValueKind::Float64,
                Some(Range::new(-3.3, 1e5)),
                Extremes::Empty,
            ),
            (ValueKind::Integer, None, Extremes::Integer(-7, 1 << 40)),
        ];
        let mut refused = 0;
        for (kind, range, ext) in cases {
            for n in [7, 1000, 65_537] {
                let spec =
                    BinSpec::resolve(&Binning::Count(n), range, Closed::Left, kind, || Ok(ext))
                        .unwrap();
                for (dtype, as_f32) in [(DType::F32, true), (DType::F64, false)] {
                    let Some(f) = device_formula(&spec, dtype) else {
                        refused += 1;
                        continue;
                    };
                    let last = spec.edge(n);
                    for i in 0..=n {
                        let want = if as_f32 {
                            spec.edge(i) as f32 as f64
                        } else {
                            spec.edge(i)
                        };
                        let got = kernel_edge(f, i, n, last, as_f32);
                        assert!(got == want, "{kind:?} {range:?} {ext:?} n={n} i={i}");
                    }
                }
            }
        }
        // float32 bins from a float64 linspace, asked for as float64: the host's edges.
        assert_eq!(refused, 3);
    }
}
