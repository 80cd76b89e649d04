//! The kernels a wheel's bundle holds (the rest compile on first use).

use crate::dtype::DType;
use crate::family::Family;
use crate::gpu::kernel::{AxisKernel, AxisKernels, KernelId, RuleKind, RuleVariant};
use crate::job::FlowBins;

/// The kernels a bundle holds: what plans choose for every column type with numpy's and
/// Polars' equal bins and explicit edges, counted or weighted, the automatic range, narrow
/// integers counted by value, and the common n-D (two float axes) and `by=` (an integer key
/// beside a float column) jobs; variants plans seldom need (numpy's literal rule, flow bins,
/// more axes) compile on first use. The families a tuning may name for the lab's candidates
/// (banked and private bytes, radix for large bins) are here too, so that a measurement moves a
/// choice without a first call compiling it; the deprecated spill and segmented families are
/// not (they compile on first use). A weighted kernel sums the way of the process
/// (`fixed::sums`): a bundle built with the default holds the float sums' weighted kernels, and a
/// process under POLARS_GPU_HIST_SUMS=fixed compiles its fixed-point ones on first use.
pub fn common_kernels() -> Vec<KernelId> {
    use Family::{Banked, Batched, Global, Packed, Private, Radix, Shared};
    let rule = |kind, right, formula, literal, wide| RuleVariant {
        kind,
        right,
        literal,
        formula,
        wide,
        flow: FlowBins::None,
    };
    let one = |family, weighted, dtype, rule| KernelId::Count {
        family,
        weighted,
        axes: AxisKernels::one(dtype, rule),
    };
    // The partition families' later passes: the batched count, and the radix family's.
    let mut out = vec![
        KernelId::SegScan,
        KernelId::SegCountBatched,
        KernelId::SegCountPaired,
    ];
    for dtype in [DType::F32, DType::F64] {
        out.push(KernelId::Edges { dtype });
        out.push(KernelId::Proof { dtype });
    }
    for dtype in DType::ALL {
        out.push(KernelId::Extremes { dtype });
        // numpy's equal bins: float32 data from its own range (float32 edges, formula 2) or a
        // range of Python floats (float64 edges, a float64 estimate), other data in float64.
        let numpy = match dtype {
            DType::F32 => vec![(RuleKind::U32, 2), (RuleKind::U32, 1)],
            _ => vec![(RuleKind::U64, 1)],
        };
        for (kind, formula) in numpy {
            for family in [Shared, Packed, Batched, Radix, Global] {
                out.push(one(
                    family,
                    false,
                    dtype,
                    rule(kind, false, formula, false, false),
                ));
            }
            out.push(one(
                Shared,
                true,
                dtype,
                rule(kind, false, formula, false, false),
            ));
        }
        // Polars' equal bins (closed right) are float64 for every column type.
        let polars = rule(RuleKind::U64, true, 1, false, false);
        for family in [Shared, Packed, Batched, Radix, Global] {
            out.push(one(family, false, dtype, polars));
        }
        out.push(one(Shared, true, dtype, polars));
        for right in [false, true] {
            out.push(one(
                Shared,
                false,
                dtype,
                rule(RuleKind::Edges, right, 0, false, false),
            ));
            // Integer edges past 2^53, compared exactly: Int64, Datetime and Duration columns.
            if dtype == DType::I64 {
                out.push(one(
                    Shared,
                    false,
                    dtype,
                    rule(RuleKind::Integers, right, 0, false, false),
                ));
            }
        }
    }
    // Narrow integer columns counted by value (`job::ByValue`): 256 counters in the shared
    // family (or the banked or private one), 65,536 as 16-bit counters in the packed one, then
    // the fold.
    for (dtype, families) in [
        (DType::I8, &[Shared, Banked, Private][..]),
        (DType::U8, &[Shared, Banked, Private]),
        (DType::I16, &[Packed]),
        (DType::U16, &[Packed]),
    ] {
        for &family in families {
            out.push(one(
                family,
                false,
                dtype,
                rule(RuleKind::Index, false, 0, false, false),
            ));
        }
    }
    out.push(KernelId::Fold);
    out.push(KernelId::Magnitudes);
    out.push(KernelId::FixedSums);
    // numpy.histogramdd of two float columns: equal bins from the data (the sample's own type)
    // or a range of Python floats (float64 edges), the edge bin found by the cheap rule.
    for (dtype, equal) in [
        (DType::F32, vec![(RuleKind::U32, 2), (RuleKind::U64, 1)]),
        (DType::F64, vec![(RuleKind::U64, 1)]),
    ] {
        let mut pairs: Vec<RuleVariant> = equal
            .into_iter()
            .map(|(kind, formula)| rule(kind, false, formula, false, false))
            .collect();
        pairs.push(rule(RuleKind::Edges, false, 0, false, false));
        for r in pairs {
            // An (n, 2) device array's rows read a column at a time, or whole rows a 16-byte
            // load where a tuning names it (`Tuning::interleaved`).
            let columns = AxisKernels::new(&[AxisKernel { dtype, rule: r }; 2]);
            for axes in [columns, columns.interleaved(true)] {
                for family in [Shared, Packed, Batched, Radix, Global] {
                    out.push(KernelId::Count {
                        family,
                        weighted: false,
                        axes,
                    });
                }
                for family in [Shared, Global] {
                    out.push(KernelId::Count {
                        family,
                        weighted: true,
                        axes,
                    });
                }
            }
        }
    }
    // by=: integer keys through a table, which travel as UInt16 or UInt32 offsets (or group
    // ids), beside a float column with numpy's bins over a range of Python floats.
    let keys = [
        AxisKernel {
            dtype: DType::U16,
            rule: rule(RuleKind::Table, false, 0, false, false),
        },
        AxisKernel {
            dtype: DType::U32,
            rule: rule(RuleKind::Table, false, 0, false, false),
        },
        AxisKernel {
            dtype: DType::U32,
            rule: rule(RuleKind::Index, false, 0, false, false),
        },
    ];
    let values = [
        AxisKernel {
            dtype: DType::F32,
            rule: rule(RuleKind::U32, false, 1, false, false),
        },
        AxisKernel {
            dtype: DType::F64,
            rule: rule(RuleKind::U64, false, 1, false, false),
        },
    ];
    for key in keys {
        for value in values {
            for family in [Shared, Packed, Batched, Radix] {
                out.push(KernelId::Count {
                    family,
                    weighted: false,
                    axes: AxisKernels::new(&[key, value]),
                });
            }
        }
    }
    out
}
