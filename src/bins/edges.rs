//! Explicit edges: `e[i] <= x < e[i+1]` (closed left, the last bin closed) or `(e[i], e[i+1]]`
//! (closed right, the first bin closed), found through a grid of cells or by a branch-free search.

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

/// A uniform grid over [e[0], e[n]] whose cell a value finds by one subtraction and one
/// multiplication. The interior edges are placed in cells by that same arithmetic, which never
/// decreases as the value grows, so a cell that holds no edge holds values of one bin only,
/// whatever the rounding: its slot is that bin. A cell that holds edges ([`Guide::MIXED`]) names
/// the bin of its lowest values, and its values are at most as many bins up as it holds edges.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Guide {
    /// One slot per cell, then the last bin (where the last cell's edges end) and `n` (the
    /// slot of a value that is not counted).
    pub(crate) slots: Vec<u32>,
    pub(crate) cells_per_unit: f64,
}

impl Guide {
    /// The flag of a cell that holds an edge: its values need a look at the edges.
    pub(crate) const MIXED: u32 = 1 << 31;
    /// Cells per bin while the table stays in L2 (2^18 cells), then fewer up to 2^20 cells.
    /// At most one cell in 32 holds an edge, so most values take their slot as their bin (16
    /// cost 20-50% more on 257 uneven edges, AVX2; 64 did no better).
    const CELLS_PER_BIN: usize = 32;
    const CACHED_CELLS: usize = 1 << 18;
    const COARSE_CELLS_PER_BIN: usize = 4;
    const MAX_CELLS: usize = 1 << 20;

    fn new(e: &[f64]) -> Option<Guide> {
        let n = e.len() - 1;
        // A bin must fit in a slot beside the flag.
        if n >= Self::MIXED as usize {
            return None;
        }
        let fine = (n * Self::CELLS_PER_BIN).min(Self::CACHED_CELLS);
        let coarse = (n * Self::COARSE_CELLS_PER_BIN).min(Self::MAX_CELLS);
        let cells = fine.max(coarse).max(16);
        let cells_per_unit = cells as f64 / (e[n] - e[0]);
        // A span wider than float64 holds (or none at all) has no grid: binary search instead.
        if !(cells_per_unit.is_finite() && cells_per_unit > 0.0) {
            return None;
        }
        // Only speed depends on the guide: without memory for it, binary search.
        let mut slots = crate::alloc::with_capacity(cells + 2).ok()?;
        // The interior edges e[1..n] in order; `next` is the first not yet placed.
        let mut next = 1;
        for cell in 0..cells {
            let first = (next - 1) as u32;
            let held = e[next..n]
                .iter()
                .take_while(|&&edge| cell_of(e[0], edge, cells_per_unit, cells) == cell)
                .count();
            next += held;
            slots.push(if held > 0 { first | Self::MIXED } else { first });
        }
        slots.extend([(n - 1) as u32, n as u32]);
        Some(Guide {
            slots,
            cells_per_unit,
        })
    }

    /// The cells of the grid (the slots past them are not cells).
    #[inline(always)]
    pub(crate) fn cells(&self) -> usize {
        self.slots.len() - 2
    }

    /// The slot of a value outside the edges, or NaN: the bin `n`, not counted.
    #[inline(always)]
    pub(crate) fn outside(&self) -> usize {
        self.slots.len() - 1
    }

    /// The cell of `e[0] <= x <= e[n]`. The vector kernels compute the same, lane by lane.
    #[inline(always)]
    pub(crate) fn cell(&self, e0: f64, x: f64) -> usize {
        cell_of(e0, x, self.cells_per_unit, self.cells())
    }

    /// The bin of `e[0] <= x <= e[n]` from its cell's slot: the slot itself in a cell without
    /// edges, else the slot's bin plus the cell's edges that `x` lies above.
    #[inline(always)]
    fn bin(&self, e: &[f64], closed: Closed, x: f64) -> usize {
        let cell = self.cell(e[0], x);
        let slot = self.slots[cell];
        if slot & Self::MIXED == 0 {
            return slot as usize;
        }
        let first = (slot & !Self::MIXED) as usize;
        let end = (self.slots[cell + 1] & !Self::MIXED) as usize;
        let held = &e[first + 1..=end];
        first
            + match closed {
                Closed::Left => upper_bound(held, x),
                Closed::Right => lower_bound(held, x),
            }
    }
}

/// The one arithmetic that places edges and values alike in a grid of `cells` over [e0, ..]:
/// it never decreases as `x` grows, which is all the guide's exactness rests on.
#[inline(always)]
fn cell_of(e0: f64, x: f64, cells_per_unit: f64, cells: usize) -> usize {
    (((x - e0) * cells_per_unit) as usize).min(cells - 1)
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
            (closed, Some(guide)) => guide.bin(e, closed, x),
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
