//! Which kernel: a typed identity, from which the module's compile flags, its entry point and
//! its printable name are derived (kernels/histogram.cu, kernels/binners.cuh).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::bins::{BinSpec, Closed, Origin, UniformBins};
use crate::dtype::DType;
use crate::job::{Axis, GroupKeys, Rule};

/// A kernel family (see kernels/families.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Per-block u32 histograms in shared memory, replicated per warp group, merged to global.
    Shared,
    /// One per-block histogram of packed 16-bit counters: twice the bins of `Shared`.
    Packed,
    /// Bins grouped by partition tile by tile, then counted a partition at a time in shared
    /// memory (`kernels/segmented.cuh`): any bin count, unweighted.
    Segmented,
    /// Atomics straight into the global histogram (with each thread's runs added at once).
    Global,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Shared => "shared",
            Family::Packed => "packed",
            Family::Segmented => "segmented",
            Family::Global => "global",
        }
    }

    fn define(self) -> &'static str {
        match self {
            Family::Shared => "FAMILY_SHARED",
            Family::Packed => "FAMILY_PACKED",
            Family::Segmented => "FAMILY_SEGMENTED",
            Family::Global => "FAMILY_GLOBAL",
        }
    }
}

/// How a value becomes a bin on the device (binners.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// Equal bins in float32 arithmetic.
    U32,
    /// Equal bins in float64 arithmetic.
    U64,
    Edges,
    /// The value is the bin (the cells of an n-D job).
    Index,
    /// by= group ids from a table.
    Table,
}

/// A rule kind and the variant of it a kernel is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuleVariant {
    pub kind: RuleKind,
    pub right: bool,
    /// Replay numpy's division (`UniformBins::literal`).
    pub literal: bool,
    /// 0: read edges; 1, 2: recompute them from `Linspace` in double, float.
    pub formula: u8,
    /// numpy's estimate in double (`Estimate::wide`), only where it matters (float32 literal).
    pub wide: bool,
    pub flow: bool,
}

impl RuleVariant {
    /// The variant an axis needs on a device with `l2_bytes` of L2.
    pub fn of(axis: &Axis, l2_bytes: u32) -> Self {
        let base = RuleVariant {
            kind: RuleKind::Index,
            right: false,
            literal: false,
            formula: 0,
            wide: false,
            flow: axis.flow,
        };
        let spec = match &axis.rule {
            Rule::Bins(spec) => spec,
            Rule::Groups(g) => {
                let kind = match g.keys {
                    GroupKeys::Ids => RuleKind::Index,
                    GroupKeys::Table { .. } => RuleKind::Table,
                };
                return RuleVariant { kind, ..base };
            }
        };
        let right = spec.closed() == Closed::Right;
        // Edges that would not stay in cache are recomputed from the formula that made them.
        let formula = match spec_formula(spec) {
            Some(single) if !edges_cached(spec, l2_bytes) => 1 + single as u8,
            _ => 0,
        };
        match spec {
            BinSpec::Uniform32(u) => {
                let literal = !right && replays_numpy(u);
                RuleVariant {
                    kind: RuleKind::U32,
                    right,
                    literal,
                    formula,
                    wide: literal && u.estimate.wide,
                    ..base
                }
            }
            BinSpec::Uniform64(u) => RuleVariant {
                kind: RuleKind::U64,
                right,
                literal: !right && replays_numpy(u),
                formula,
                ..base
            },
            BinSpec::Edges(_) => RuleVariant {
                kind: RuleKind::Edges,
                right,
                ..base
            },
            BinSpec::Half(_) => unreachable!("the plan refuses float16 bins first"),
        }
    }

    /// Whether a kernel of this variant reads the edge array.
    pub fn reads_edges(&self) -> bool {
        match self.kind {
            RuleKind::Edges => true,
            RuleKind::U32 | RuleKind::U64 => self.formula == 0,
            RuleKind::Index | RuleKind::Table => false,
        }
    }

    fn defines(&self, out: &mut Vec<String>) {
        let kind = match self.kind {
            RuleKind::U32 => "RULE_U32",
            RuleKind::U64 => "RULE_U64",
            RuleKind::Edges => "RULE_EDGES",
            RuleKind::Index => "RULE_INDEX",
            RuleKind::Table => "RULE_TABLE",
        };
        out.push(format!("-DRULE={kind}"));
        out.push(format!("-DCLOSED_RIGHT={}", self.right as u8));
        out.push(format!("-DLITERAL={}", self.literal as u8));
        out.push(format!("-DFORMULA={}", self.formula));
        out.push(format!("-DWIDE={}", self.wide as u8));
        out.push(format!("-DFLOW={}", self.flow as u8));
    }
}

/// Above this many bins the kernels replay numpy's arithmetic without asking for the proof of
/// the cheap rule: the proof walks every bin on the host (milliseconds at a million bins, more
/// than the kernels take), while the replay costs a division a row in kernels that are not
/// bound by reading the rows at these bin counts anyway.
pub const UNPROVED_BINS: usize = 1 << 16;

/// Whether closed-left equal bins are counted by numpy's own arithmetic: always exact for
/// numpy's bins, and the only exact way where the proof fails.
fn replays_numpy<F: crate::bins::BinFloat>(u: &UniformBins<F>) -> bool {
    match u.origin {
        Origin::NumpyEstimate => u.len() > UNPROVED_BINS || u.literal(),
        Origin::Edges | Origin::Polars => false,
    }
}

/// Whether a rule's edges stay in cache (a quarter of L2): otherwise equal bins are recomputed
/// from their formula where one made them.
pub fn edges_cached(spec: &BinSpec, l2_bytes: u32) -> bool {
    let edge_bytes = match spec {
        BinSpec::Uniform32(_) => 4,
        _ => 8,
    };
    ((spec.len() + 1) * edge_bytes) as u64 <= l2_bytes as u64 / 4
}

/// Whether equal bins carry a formula, and whether it computes in float32.
fn spec_formula(spec: &BinSpec) -> Option<bool> {
    match spec {
        BinSpec::Uniform32(u) => u.linspace.map(|f| f.single),
        BinSpec::Uniform64(u) => u.linspace.map(|f| f.single),
        BinSpec::Edges(_) | BinSpec::Half(_) => None,
    }
}

impl fmt::Display for RuleVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            RuleKind::U32 => "u32",
            RuleKind::U64 => "u64",
            RuleKind::Edges => "edges",
            RuleKind::Index => "index",
            RuleKind::Table => "table",
        };
        write!(f, "{kind}_{}", if self.right { "right" } else { "left" })?;
        if self.literal {
            write!(f, "_literal{}", if self.wide { "_wide" } else { "" })?;
        }
        if self.formula > 0 {
            write!(f, "_formula{}", if self.formula == 2 { "32" } else { "64" })?;
        }
        if self.flow {
            write!(f, "_flow")?;
        }
        Ok(())
    }
}

/// A kernel: one NVRTC module with one entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelId {
    /// A family counting one column under a rule.
    Count {
        family: Family,
        weighted: bool,
        dtype: DType,
        rule: RuleVariant,
    },
    /// One axis of an n-D job into its rows' cells.
    Linearize {
        dtype: DType,
        rule: RuleVariant,
    },
    SegScan,
    SegCount,
    Extremes {
        dtype: DType,
    },
    /// Equal bins' edges from their formula, in float32 or float64.
    Edges {
        dtype: DType,
    },
}

impl KernelId {
    /// The rule a counting or linearizing kernel is compiled for.
    pub fn rule(&self) -> Option<RuleVariant> {
        match self {
            KernelId::Count { rule, .. } | KernelId::Linearize { rule, .. } => Some(*rule),
            _ => None,
        }
    }

    /// The entry point's name in its module.
    pub fn entry(&self) -> &'static str {
        match self {
            KernelId::Count { .. } => "count",
            KernelId::Linearize { .. } => "linearize",
            KernelId::SegScan => "seg_scan",
            KernelId::SegCount => "seg_count",
            KernelId::Extremes { .. } => "extremes",
            KernelId::Edges { .. } => "edges",
        }
    }

    /// NVRTC's `-D` options for this kernel's module.
    pub fn defines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let value = |d: DType| format!("-DVALUE_T={}", d.c_type());
        match self {
            KernelId::Count {
                family,
                weighted,
                dtype,
                rule,
            } => {
                out.push("-DKERNEL_COUNT".into());
                out.push(format!("-DFAMILY={}", family.define()));
                out.push(format!("-DWEIGHTED={}", *weighted as u8));
                out.push(value(*dtype));
                rule.defines(&mut out);
            }
            KernelId::Linearize { dtype, rule } => {
                out.push("-DKERNEL_LINEARIZE".into());
                out.push(value(*dtype));
                rule.defines(&mut out);
            }
            KernelId::SegScan | KernelId::SegCount => {
                let which = match self {
                    KernelId::SegScan => "SEG_SCAN",
                    _ => "SEG_COUNT",
                };
                out.push(format!("-DKERNEL_{which}"));
                out.push(value(DType::U32));
            }
            KernelId::Extremes { dtype } => {
                out.push("-DKERNEL_EXTREMES".into());
                out.push(value(*dtype));
            }
            KernelId::Edges { dtype } => {
                out.push("-DKERNEL_EDGES".into());
                out.push(value(*dtype));
            }
        }
        out
    }
}

impl fmt::Display for KernelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelId::Count {
                family,
                weighted,
                dtype,
                rule,
            } => write!(
                f,
                "count_{}{}_{}_{rule}",
                family.name(),
                if *weighted { "_weighted" } else { "" },
                dtype.name()
            ),
            KernelId::Linearize { dtype, rule } => {
                write!(f, "linearize_{}_{rule}", dtype.name())
            }
            KernelId::SegScan => write!(f, "seg_scan"),
            KernelId::SegCount => write!(f, "seg_count"),
            KernelId::Extremes { dtype } => write!(f, "extremes_{}", dtype.name()),
            KernelId::Edges { dtype } => write!(f, "edges_{}", dtype.name()),
        }
    }
}
