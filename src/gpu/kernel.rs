//! Which kernel: a typed identity, from which the module's compile flags, its entry point and
//! its printable name are derived (kernels/histogram.cu, kernels/binners.cuh). A counting kernel
//! is one family over the axes of a job, each a column type and the rule that bins it: 1-D is
//! the rank-1 case, n-D and `by=` count every row's cell in the same pass.

use std::fmt;

use crate::bins::{BinSpec, Closed, Origin, UniformBins};
use crate::dtype::DType;
use crate::family::Family;
use crate::job::{Axis, FlowBins, GroupKeys, Rule, MAX_RANK};

/// The `-DFAMILY` macro that selects `family` in kernels/families.cuh.
fn family_define(family: Family) -> &'static str {
    match family {
        Family::Shared => "FAMILY_SHARED",
        Family::Packed => "FAMILY_PACKED",
        Family::Spill => "FAMILY_SPILL",
        Family::Segmented => "FAMILY_SEGMENTED",
        Family::Batched => "FAMILY_BATCHED",
        Family::Global => "FAMILY_GLOBAL",
        Family::Private => "FAMILY_PRIVATE",
        Family::Banked => "FAMILY_BANKED",
        Family::Radix => "FAMILY_RADIX",
    }
}

/// How a value becomes a bin on the device (binners.cuh; the numbers are its `RULE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// Equal bins in float32 arithmetic.
    U32 = 1,
    /// Equal bins in float64 arithmetic.
    U64 = 2,
    Edges = 3,
    /// The value less the rule's `lo` is the bin (`by=` group ids, counts by value).
    Index = 4,
    /// `by=` group ids from a table of integer keys.
    Table = 5,
    /// Integer edges compared exactly, as 64-bit keys (`KeyedBins`).
    Integers = 6,
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
    pub flow: FlowBins,
}

impl RuleVariant {
    /// The variant that bins `axis`. Equal bins made by a formula recompute their edges from it
    /// (two flops) instead of reading an array the host would first have to copy over: at a
    /// million bins that array sits in L2 and the literal rule's two reads a row cost more than
    /// the count.
    pub fn of(axis: &Axis) -> Self {
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
            Rule::Values { .. } => return base,
        };
        let right = spec.closed() == Closed::Right;
        let formula = spec_formula(spec).map_or(0, |single| 1 + single as u8);
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
            BinSpec::Integers(_) => RuleVariant {
                kind: RuleKind::Integers,
                right,
                ..base
            },
            BinSpec::Half(_) => unreachable!("the plan refuses float16 bins first"),
        }
    }

    /// Whether a kernel of this variant reads the edge array.
    pub fn reads_edges(&self) -> bool {
        match self.kind {
            RuleKind::Edges | RuleKind::Integers => true,
            RuleKind::U32 | RuleKind::U64 => self.formula == 0,
            RuleKind::Index | RuleKind::Table => false,
        }
    }

    /// The template arguments of binners.cuh's `BinnerOf` after the value type.
    fn binner_args(&self) -> String {
        format!(
            "{},{},{},{},{},{}",
            self.kind as u8,
            self.right as u8,
            self.literal as u8,
            self.formula,
            self.wide as u8,
            self.flow as u8
        )
    }
}

/// Whether closed-left equal bins are counted by numpy's own arithmetic: always exact for
/// numpy's bins, and the only exact way where the proof fails.
fn replays_numpy<F: crate::bins::BinFloat>(u: &UniformBins<F>) -> bool {
    match u.origin {
        Origin::NumpyEstimate => u.literal(),
        Origin::Edges | Origin::Polars => false,
    }
}

/// Whether equal bins carry a formula, and whether it computes in float32.
fn spec_formula(spec: &BinSpec) -> Option<bool> {
    match spec {
        BinSpec::Uniform32(u) => u.linspace().map(|f| f.single),
        BinSpec::Uniform64(u) => u.linspace().map(|f| f.single),
        BinSpec::Edges(_) | BinSpec::Integers(_) | BinSpec::Half(_) => None,
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
            RuleKind::Integers => "ints",
        };
        write!(f, "{kind}_{}", if self.right { "right" } else { "left" })?;
        if self.literal {
            write!(f, "_literal{}", if self.wide { "_wide" } else { "" })?;
        }
        if self.formula > 0 {
            write!(f, "_formula{}", if self.formula == 2 { "32" } else { "64" })?;
        }
        match self.flow {
            FlowBins::None => {}
            FlowBins::Outside => write!(f, "_flow")?,
            FlowBins::OutsideAndNan => write!(f, "_flownan")?,
        }
        Ok(())
    }
}

/// One axis of a counting kernel: its column's type and the rule that bins it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AxisKernel {
    pub dtype: DType,
    pub rule: RuleVariant,
}

impl fmt::Display for AxisKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.dtype.name(), self.rule)
    }
}

/// The axes of a counting kernel, 1 to `MAX_RANK` of them, in the job's order, and how their
/// rows lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AxisKernels {
    rank: u8,
    /// Past `rank`: copies of the first axis, so that equal lists compare equal.
    axes: [AxisKernel; MAX_RANK],
    /// The rows are one (n, rank) array of one type, row-major: a 16-byte load holds whole
    /// rows (`InterleavedCells`, kernels/cells.cuh), where each column is otherwise read alone.
    interleaved: bool,
}

impl AxisKernels {
    /// `axes` (1 to `MAX_RANK` of them).
    pub fn new(axes: &[AxisKernel]) -> Self {
        assert!(
            (1..=MAX_RANK).contains(&axes.len()),
            "a kernel counts 1 to {MAX_RANK} axes"
        );
        let mut all = [axes[0]; MAX_RANK];
        all[..axes.len()].copy_from_slice(axes);
        AxisKernels {
            rank: axes.len() as u8,
            axes: all,
            interleaved: false,
        }
    }

    /// These axes read as the rows of one (n, rank) array where `interleaved` (and there are
    /// two axes or more).
    pub fn interleaved(mut self, interleaved: bool) -> Self {
        self.interleaved = interleaved && self.rank > 1;
        self
    }

    /// Whether the rows are read as one (n, rank) array.
    pub fn is_interleaved(&self) -> bool {
        self.interleaved
    }

    /// One axis.
    pub fn one(dtype: DType, rule: RuleVariant) -> Self {
        Self::new(&[AxisKernel { dtype, rule }])
    }

    pub fn as_slice(&self) -> &[AxisKernel] {
        &self.axes[..self.rank as usize]
    }
}

/// A kernel: one NVRTC module with one entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelId {
    /// A family counting the rows of one or more axes (each row's cell, row-major).
    Count {
        family: Family,
        weighted: bool,
        axes: AxisKernels,
    },
    SegScan,
    SegCount,
    /// The batched family's count pass.
    SegCountBatched,
    /// The batched count pass taking two long runs at once (the radix family's).
    SegCountPaired,
    Extremes {
        dtype: DType,
    },
    /// Equal bins' edges from their formula, in float32 or float64.
    Edges {
        dtype: DType,
    },
    /// The cheap rule's proof walked over equal bins of float32 or float64 (`gpu::proof`).
    Proof {
        dtype: DType,
    },
    /// Counts by value added into the bins of those values (`job::ByValue`).
    Fold,
    /// The extremes of a float64 column's finite magnitudes (the weights' grid, `crate::fixed`).
    Magnitudes,
    /// Fixed-point weighted sums as float64 (kernels/fixed.cuh).
    FixedSums,
}

impl KernelId {
    /// The axes a counting kernel is compiled for (none for the other kernels).
    pub fn axes(&self) -> &[AxisKernel] {
        match self {
            KernelId::Count { axes, .. } => axes.as_slice(),
            _ => &[],
        }
    }

    /// The entry point's name in its module.
    pub fn entry(&self) -> &'static str {
        match self {
            KernelId::Count { .. } => "count",
            KernelId::SegScan => "seg_scan",
            KernelId::SegCount => "seg_count",
            KernelId::SegCountBatched | KernelId::SegCountPaired => "seg_count_batched",
            KernelId::Extremes { .. } => "extremes",
            KernelId::Edges { .. } => "edges",
            KernelId::Proof { .. } => "prove",
            KernelId::Fold => "fold",
            KernelId::Magnitudes => "extremes",
            KernelId::FixedSums => "fixed_sums",
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
                axes,
            } => {
                out.push("-DKERNEL_COUNT".into());
                out.push(format!("-DFAMILY={}", family_define(*family)));
                out.push(format!("-DWEIGHTED={}", *weighted as u8));
                if *weighted && crate::fixed::sums() == crate::fixed::Sums::Float {
                    out.push("-DFLOAT_SUMS=1".into());
                }
                out.push(format!("-DRANK={}", axes.as_slice().len()));
                if axes.is_interleaved() {
                    out.push("-DINTERLEAVED=1".into());
                }
                for (d, axis) in axes.as_slice().iter().enumerate() {
                    out.push(format!(
                        "-DAXIS{d}={},{}",
                        axis.dtype.c_type(),
                        axis.rule.binner_args()
                    ));
                }
            }
            KernelId::SegScan => out.push("-DKERNEL_SEG_SCAN".into()),
            KernelId::SegCount => out.push("-DKERNEL_SEG_COUNT".into()),
            KernelId::SegCountBatched => out.push("-DKERNEL_SEG_COUNT_BATCHED".into()),
            KernelId::SegCountPaired => {
                out.push("-DKERNEL_SEG_COUNT_BATCHED".into());
                out.push("-DSEG_RUNS_AT_ONCE=2".into());
            }
            KernelId::Extremes { dtype } => {
                out.push("-DKERNEL_EXTREMES".into());
                out.push(value(*dtype));
            }
            KernelId::Edges { dtype } => {
                out.push("-DKERNEL_EDGES".into());
                out.push(value(*dtype));
            }
            KernelId::Proof { dtype } => {
                out.push("-DKERNEL_PROOF".into());
                out.push(value(*dtype));
            }
            KernelId::Fold => out.push("-DKERNEL_FOLD".into()),
            KernelId::Magnitudes => {
                out.push("-DKERNEL_EXTREMES".into());
                out.push(value(DType::F64));
                out.push("-DFINITE_MAGNITUDES=1".into());
            }
            KernelId::FixedSums => out.push("-DKERNEL_FIXED_SUMS".into()),
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
                axes,
            } => {
                let names: Vec<String> = axes.as_slice().iter().map(|a| a.to_string()).collect();
                write!(
                    f,
                    "count_{}{}_{}{}",
                    family.name(),
                    match (*weighted, crate::fixed::sums()) {
                        (false, _) => "",
                        (true, crate::fixed::Sums::Fixed) => "_weighted",
                        (true, crate::fixed::Sums::Float) => "_weighted_float",
                    },
                    names.join("_x_"),
                    if axes.is_interleaved() {
                        "_interleaved"
                    } else {
                        ""
                    }
                )
            }
            KernelId::SegScan => write!(f, "seg_scan"),
            KernelId::SegCount => write!(f, "seg_count"),
            KernelId::SegCountBatched => write!(f, "seg_count_batched"),
            KernelId::SegCountPaired => write!(f, "seg_count_paired"),
            KernelId::Extremes { dtype } => write!(f, "extremes_{}", dtype.name()),
            KernelId::Edges { dtype } => write!(f, "edges_{}", dtype.name()),
            KernelId::Proof { dtype } => write!(f, "proof_{}", dtype.name()),
            KernelId::Fold => write!(f, "fold"),
            KernelId::Magnitudes => write!(f, "magnitudes_float64"),
            KernelId::FixedSums => write!(f, "fixed_sums"),
        }
    }
}
