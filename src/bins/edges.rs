//! Explicit edges: `e[i] <= x < e[i+1]` (closed left, the last bin closed) or `(e[i], e[i+1]]`
//! (closed right, the first bin closed), found by a guided walk or a branch-free search.

use crate::bins::Closed;

/// Explicit float64 edges that never decrease. A repeated edge makes a bin of no width, which
/// holds no value unless it is the closed end (the last bin closed left, the first closed
/// right): numpy's `searchsorted` rule, which the walk and the search below both follow.
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeBins {
    pub edges: Vec<f64>,
    pub closed: Closed,
    /// Where the CPU starts looking for a value's bin (`None`: binary search).
    pub(crate) guide: Option<Guide>,
}

/// A uniform grid over [e[0], e[n]]: for each cell, the bin of its lower end. A value's cell
/// names a bin at most a few edges from its own, found by a short walk, instead of a binary
/// search of log2(n) dependent loads. The walk checks the edges themselves, so the guide only
/// affects speed, never the answer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Guide {
    pub(crate) first: Vec<u32>,
    pub(crate) cells_per_unit: f64,
}

impl Guide {
    /// Cells per bin while the table stays in L2 (2^18 cells), then fewer up to 2^20 cells;
    /// and the most edges one cell may hold before the guide stops paying. With 16 cells a bin
    /// most values start in their own bin: 257 uneven edges took 1.9 ns a row (AVX-512, one
    /// thread) against 3.2 with 4.
    const CELLS_PER_BIN: usize = 16;
    const CACHED_CELLS: usize = 1 << 18;
    const COARSE_CELLS_PER_BIN: usize = 4;
    const MAX_CELLS: usize = 1 << 20;
    const MAX_EDGES_PER_CELL: u32 = 4;

    fn new(e: &[f64]) -> Option<Guide> {
        let n = e.len() - 1;
        let fine = (n * Self::CELLS_PER_BIN).min(Self::CACHED_CELLS);
        let coarse = (n * Self::COARSE_CELLS_PER_BIN).min(Self::MAX_CELLS);
        let cells = fine.max(coarse).max(16);
        let cells_per_unit = cells as f64 / (e[n] - e[0]);
        // A span wider than float64 holds has no uniform grid: binary search instead.
        if !(cells_per_unit.is_finite() && cells_per_unit > 0.0) {
            return None;
        }
        // Only speed depends on the guide: without memory for it, binary search.
        let first: Vec<u32> = super::linspace::table(cells + 1, |k| {
            let lower = e[0] + k as f64 / cells_per_unit;
            (e.partition_point(|&edge| edge <= lower).max(1) - 1).min(n - 1) as u32
        })
        .ok()?;
        let crowded = first
            .windows(2)
            .any(|w| w[1] - w[0] > Self::MAX_EDGES_PER_CELL);
        (!crowded).then_some(Guide {
            first,
            cells_per_unit,
        })
    }

    #[inline(always)]
    fn start(&self, e0: f64, x: f64) -> usize {
        let cell = ((x - e0) * self.cells_per_unit) as usize;
        self.first[cell.min(self.first.len() - 1)] as usize
    }
}

impl EdgeBins {
    /// A copy, or an out-of-memory error.
    pub fn try_clone(&self) -> crate::error::HistResult<Self> {
        Ok(EdgeBins {
            edges: crate::alloc::copied(&self.edges)?,
            closed: self.closed,
            guide: self.guide.clone(),
        })
    }

    pub fn new(edges: Vec<f64>, closed: Closed) -> Self {
        let guide = Guide::new(&edges);
        EdgeBins {
            edges,
            closed,
            guide,
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.edges.len() - 1
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bin of `x`, or `self.len()` when `x` is not counted.
    #[inline(always)]
    pub fn bin(&self, x: f64) -> usize {
        let e = &self.edges[..];
        let n = e.len() - 1;
        if !(x >= e[0] && x <= e[n]) {
            return n;
        }
        match (self.closed, &self.guide) {
            (Closed::Left, Some(guide)) => {
                let mut i = guide.start(e[0], x);
                while i > 0 && x < e[i] {
                    i -= 1;
                }
                while i < n - 1 && x >= e[i + 1] {
                    i += 1;
                }
                i
            }
            (Closed::Right, Some(guide)) => {
                let mut i = guide.start(e[0], x);
                while i > 0 && x <= e[i] {
                    i -= 1;
                }
                while i < n - 1 && x > e[i + 1] {
                    i += 1;
                }
                i
            }
            // Number of edges <= x, minus one; the last edge belongs to the last bin.
            (Closed::Left, None) => (upper_bound(e, x) - 1).min(n - 1),
            // Number of edges < x, minus one; the first edge belongs to the first bin.
            (Closed::Right, None) => lower_bound(e, x).max(1) - 1,
        }
    }
}

/// Count of `e[i] <= x` for sorted `e`, branch-free so random data does not mispredict.
#[inline(always)]
fn upper_bound(e: &[f64], x: f64) -> usize {
    let mut base = 0usize;
    let mut len = e.len();
    while len > 1 {
        let half = len / 2;
        // Random data mispredicts a branch on every level (about 30 cycles each, measured):
        // ask for a conditional move, which LLVM otherwise turns back into a branch in loops.
        base = std::hint::select_unpredictable(e[base + half - 1] <= x, base + half, base);
        len -= half;
    }
    base + (e[base] <= x) as usize
}

/// Count of `e[i] < x` for sorted `e`.
#[inline(always)]
fn lower_bound(e: &[f64], x: f64) -> usize {
    let mut base = 0usize;
    let mut len = e.len();
    while len > 1 {
        let half = len / 2;
        base = std::hint::select_unpredictable(e[base + half - 1] < x, base + half, base);
        len -= half;
    }
    base + (e[base] < x) as usize
}
