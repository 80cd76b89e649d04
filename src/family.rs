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
    /// histogram.
    Spill,
    /// Bins grouped by partition tile by tile, then counted a partition at a time in shared
    /// memory (`kernels/segmented.cuh`): any bin count, unweighted.
    Segmented,
    /// The segmented family's passes, the first reading a tile ahead (its first loads in flight
    /// while the previous tile is scattered), the count pass a warp's 32 tiles at once
    /// (`seg_count_batched`).
    Batched,
    /// Atomics straight into the global histogram (with each thread's runs added at once).
    Global,
}

impl Family {
    /// The name `kernel=` takes and `explain` prints.
    pub fn name(self) -> &'static str {
        match self {
            Family::Shared => "shared",
            Family::Packed => "packed",
            Family::Spill => "spill",
            Family::Segmented => "segmented",
            Family::Batched => "batched",
            Family::Global => "global",
        }
    }

    /// Whether the family groups bins by partition first (`kernels/segmented.cuh`).
    pub fn is_segmented(self) -> bool {
        matches!(self, Family::Segmented | Family::Batched)
    }
}
