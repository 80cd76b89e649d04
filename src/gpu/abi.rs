//! The kernels' parameters as `#[repr(C)]` structs, laid out as kernels/abi.cuh declares them
//! (the sizes are asserted on both sides), and the one marshaller from an axis's rule to the
//! device's `Rule`.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr};

use crate::bins::{BinSpec, UniformBins};
use crate::error::HistResult;
use crate::gpu::context::driver;
use crate::gpu::kernel::AxisKernel;
use crate::input::bytes_of;
use crate::job::{self, Axis, FlowBins, GroupKeys, MAX_RANK};

/// `Column`: `len` values `stride` apart, with an Arrow validity bitmap (0: every row valid).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Column {
    pub values: u64,
    pub validity: u64,
    pub validity_offset: u64,
    pub len: u64,
    pub stride: u64,
}

/// `WeightColumn`: float64 weights and their validity (0: unweighted, or every row valid).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WeightColumn {
    pub values: u64,
    pub validity: u64,
    pub validity_offset: u64,
}

/// `Rule`: what a kernel needs of an axis's rule (which fields it reads is fixed when it is
/// compiled; see `KernelId`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Rule {
    pub edges: u64,
    pub table: u64,
    pub lo: i64,
    pub n: u32,
    pub pad: u32,
    pub first: f64,
    pub last: f64,
    pub denom: f64,
    pub n_f: f64,
    pub scale: f64,
    pub margin: f64,
    pub start: f64,
    pub step: f64,
    /// Integer edges (`KeyedBins`): the bins of the values' domain's minimum and maximum.
    pub at_min: u32,
    pub at_max: u32,
}

/// `SharedLayout`: the shared family's replicated counters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SharedLayout {
    pub replicas: u32,
    pub stride: u32,
}

/// `Segments`: the segmented family's scratch and layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Segments {
    pub keys: u64,
    pub starts: u64,
    pub cum: u64,
    pub totals: u64,
    pub partitions: u32,
    pub width_bits: u32,
    pub tiles: u32,
    pub rows_per_item: u32,
}

/// `CountParams`: axis `d < rank` is `columns[d]` binned by `rules[d]`, its bin times
/// `cell_strides[d]` in the row's cell; `cells` in all; weighted sums on the grid
/// 2^-`weight_exponent` ([`crate::fixed`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CountParams {
    pub columns: [Column; MAX_RANK],
    pub rules: [Rule; MAX_RANK],
    pub cell_strides: [u32; MAX_RANK],
    pub cells: u32,
    pub weight_exponent: i32,
    pub weights: WeightColumn,
    pub shared: SharedLayout,
    pub seg: Segments,
    pub out: u64,
}

/// `ExtremesParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ExtremesParams {
    pub rows: Column,
    pub mins: u64,
    pub maxs: u64,
    pub found: u64,
}

/// `EdgesParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct EdgesParams {
    pub out: u64,
    pub n: u32,
    pub single: u32,
    pub start: f64,
    pub step: f64,
    pub last: f64,
}

/// `ProofParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ProofParams {
    pub out: u64,
    pub n: u32,
    pub single: u32,
    pub wide: u32,
    pub pad: u32,
    pub start: f64,
    pub step: f64,
    pub last: f64,
    pub denom: f64,
    pub n_f: f64,
    pub scale: f64,
}

/// `FoldParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FoldParams {
    pub value_counts: u64,
    pub value_bins: u64,
    pub values: u32,
    pub cells: u32,
    pub out: u64,
}

/// `FixedSumsParams`: `cells` fixed-point cells (`FIXED_WORDS` u64 each) on the grid
/// 2^-`exponent`, as float64 at `out`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FixedSumsParams {
    pub fixed: u64,
    pub out: u64,
    pub cells: u32,
    pub exponent: i32,
}

/// u64 words of a fixed-point cell (kernels/fixed.cuh `FIXED_WORDS`): the sum's low and high
/// words and the flags of the non-finite weights.
pub const FIXED_WORDS: usize = 3;

// The same sizes as kernels/abi.cuh's static_asserts.
const _: () = {
    assert!(std::mem::size_of::<Column>() == 40);
    assert!(std::mem::size_of::<WeightColumn>() == 24);
    assert!(std::mem::size_of::<Rule>() == 104);
    assert!(std::mem::size_of::<SharedLayout>() == 8);
    assert!(std::mem::size_of::<Segments>() == 48);
    assert!(std::mem::size_of::<CountParams>() == 1280);
    assert!(std::mem::size_of::<ExtremesParams>() == 64);
    assert!(std::mem::size_of::<EdgesParams>() == 40);
    assert!(std::mem::size_of::<ProofParams>() == 72);
    assert!(std::mem::size_of::<FoldParams>() == 32);
    assert!(std::mem::size_of::<FixedSumsParams>() == 24);
};

// SAFETY: plain old data, laid out as the kernels read it (sizes asserted above and in C).
unsafe impl DeviceRepr for CountParams {}
unsafe impl DeviceRepr for ExtremesParams {}
unsafe impl DeviceRepr for EdgesParams {}
unsafe impl DeviceRepr for ProofParams {}
unsafe impl DeviceRepr for FoldParams {}
// SAFETY: as above.
unsafe impl DeviceRepr for FixedSumsParams {}
unsafe impl DeviceRepr for Segments {}

/// An axis's rule on the device, with the device buffers it points into (edges, group table),
/// which must outlive every launch that reads them.
pub struct DeviceRule {
    pub rule: Rule,
    _edges: Option<CudaSlice<u8>>,
    _table: Option<CudaSlice<u32>>,
}

impl DeviceRule {
    /// The device form of `axis` for a kernel compiled for `variant`: the edge array only where
    /// the kernel reads it (not where it recomputes equal bins' edges from their formula), the
    /// cheap rule's margin only where the kernel does not replay numpy's arithmetic.
    pub fn new(stream: &Arc<CudaStream>, axis: &Axis, kernel: AxisKernel) -> HistResult<Self> {
        let variant = kernel.rule;
        let copy_edges = variant.reads_edges();
        let cheap = !variant.literal && !variant.right;
        let mut rule = Rule::default();
        let mut edges = None;
        let mut table = None;
        let copy = driver("copying the bin edges");
        // Integer edges as the kernel reads them; they live until copied.
        let keyed;
        match &axis.rule {
            job::Rule::Bins(spec) => {
                rule.n = spec.len() as u32;
                (rule.first, rule.last) = (spec.edge(0), spec.edge(spec.len()));
                let bytes: Option<&[u8]> = match spec {
                    BinSpec::Uniform32(u) => {
                        uniform(&mut rule, u, cheap);
                        copy_edges.then(|| bytes_of(u.edges()))
                    }
                    BinSpec::Uniform64(u) => {
                        uniform(&mut rule, u, cheap);
                        copy_edges.then(|| bytes_of(u.edges()))
                    }
                    BinSpec::Edges(e) => Some(bytes_of(&e.edges)),
                    BinSpec::Integers(b) => {
                        let domain = crate::bins::Domain::of(kernel.dtype);
                        keyed = b.keyed(domain, axis.flow != FlowBins::None)?;
                        (rule.at_min, rule.at_max) = (keyed.at_min, keyed.at_max);
                        Some(bytes_of(&keyed.keys))
                    }
                    BinSpec::Half(_) => return Err(crate::gpu::plan::float16_on_cpu()),
                };
                if let Some(bytes) = bytes {
                    let slice = stream.clone_htod(bytes).map_err(&copy)?;
                    rule.edges = slice.device_ptr(stream).0;
                    edges = Some(slice);
                }
            }
            job::Rule::Groups(groups) => {
                rule.n = groups.count as u32;
                if let GroupKeys::Table { lo, table: ids, .. } = &groups.keys {
                    let slice = stream.clone_htod(ids).map_err(&copy)?;
                    rule.table = slice.device_ptr(stream).0;
                    rule.lo = *lo;
                    table = Some(slice);
                }
            }
            job::Rule::Values { lo, count } => {
                rule.n = *count as u32;
                rule.lo = *lo;
            }
        }
        Ok(DeviceRule {
            rule,
            _edges: edges,
            _table: table,
        })
    }
}

/// Equal bins' numbers; `cheap`: the kernel runs the cheap rule, which reads the proved margin.
fn uniform<F: crate::bins::BinFloat>(rule: &mut Rule, u: &UniformBins<F>, cheap: bool) {
    rule.denom = u.estimate.denom;
    rule.n_f = u.estimate.n;
    rule.scale = u.scale.to_f64();
    rule.margin = if cheap { u.margin().to_f64() } else { 0.5 };
    if let Some(f) = u.linspace() {
        rule.start = f.start;
        rule.step = f.step;
    }
}
