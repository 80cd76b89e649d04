//! The kernel families (kernels/families.cuh): what the GPU plan chooses among, and what a
//! caller may pin with `kernel=` (benchmarks and tests). A plain value at the ground floor:
//! the options carry it, the engine and the GPU backend read it.

use serde::{Deserialize, Serialize};

/// A kernel family (see kernels/families.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Per-block u32 histograms in shared memory, replicated per warp group, merged to global.
    Shared,
    /// One per-block histogram of packed 16-bit counters: twice the bins of `Shared`.
    Packed,
    /// The packed counters with no barriers: a counter that wraps spills 65,536 to the global
    /// histogram. Deprecated: the plan never chooses it (packed won on every measured row), it
    /// is not in the kernel bundle, and pinning it warns; it goes in the next release.
    Spill,
    /// Bins grouped by partition tile by tile, then counted a partition at a time in shared
    /// memory (`kernels/segmented.cuh`): any bin count, unweighted. Deprecated as `Spill` is
    /// (the batched family replaced it).
    Segmented,
    /// The segmented family's passes, the first reading a tile ahead (its first loads in flight
    /// while the previous tile is scattered), the count pass a warp's 32 tiles at once
    /// (`seg_count_batched`).
    Batched,
    /// Atomics straight into the global histogram (with each thread's runs added at once).
    Global,
    /// Per-thread 8-bit counters in shared memory and no atomics (`PrivateCounters`): few bins
    /// of cheap rows, bytes counted by value.
    Private,
    /// A copy of the u32 counters a lane, each bin's copies in distinct banks
    /// (`BankedCounters`): few bins of cheap rows, bytes counted by value.
    Banked,
    /// The batched family's passes after a leaner partition pass (`kernels/radix.cuh`): rows not
    /// counted in a partition of their own, whole tiles read without bounds checks.
    Radix,
}

impl Family {
    /// Every family, in the order `kernel=` lists them.
    pub const ALL: [Family; 9] = [
        Family::Shared,
        Family::Packed,
        Family::Spill,
        Family::Segmented,
        Family::Batched,
        Family::Global,
        Family::Private,
        Family::Banked,
        Family::Radix,
    ];

    /// The name `kernel=` takes and `explain` prints.
    pub fn name(self) -> &'static str {
        match self {
            Family::Shared => "shared",
            Family::Packed => "packed",
            Family::Spill => "spill",
            Family::Segmented => "segmented",
            Family::Batched => "batched",
            Family::Global => "global",
            Family::Private => "private",
            Family::Banked => "banked",
            Family::Radix => "radix",
        }
    }

    /// Whether the family groups bins by partition first (`kernels/segmented.cuh`).
    pub fn is_segmented(self) -> bool {
        matches!(self, Family::Segmented | Family::Batched | Family::Radix)
    }

    /// Whether the family adds weights (the rest count rows).
    pub fn weighs(self) -> bool {
        matches!(self, Family::Shared | Family::Global)
    }

    /// Families on their way out: no plan chooses them and the bundle leaves them out (they
    /// compile on first use); pinning one warns in Python, and the next release refuses them.
    pub fn is_deprecated(self) -> bool {
        matches!(self, Family::Spill | Family::Segmented)
    }
}
