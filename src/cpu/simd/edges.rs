//! Explicit edges in vectors: the guide's cells (their slots a value at a time where gathers are
//! slow), or the branch-free binary search probe for probe, as [`EdgeBins::bin`] takes them.

use super::kit::{edge_at, fix_lanes, prefetch_ahead, walk, Kit, Run, VECTOR_BINS};
use crate::bins::{Closed, EdgeBins, Guide};

/// Steps of the walk along a cell's edges followed in vectors (most cells hold one edge at most);
/// a lane that needs more goes through the scalar rule.
const GUIDE_STEPS: usize = 4;

/// Lanes of the widest vector (AVX-512 float32).
const MAX_LANES: usize = 16;

/// Explicit edges: the vector rule for whole vectors, the scalar rule for the rest.
#[inline(always)]
pub(super) unsafe fn edge_kernel<K: Kit<S = f64>>(b: &EdgeBins, xs: &[f64], out: &mut [u32]) {
    let n = b.len();
    let whole = if (1..VECTOR_BINS).contains(&n) {
        xs.len() / K::W * K::W
    } else {
        0
    };
    if whole > 0 {
        let (xs, out) = (&xs[..whole], &mut out[..whole]);
        match (&b.guide, b.closed) {
            (Some(guide), Closed::Left) => edges_guided::<K, false>(b, guide, xs, out),
            (Some(guide), Closed::Right) => edges_guided::<K, true>(b, guide, xs, out),
            (None, Closed::Left) => edges_searched::<K, false>(b, xs, out),
            (None, Closed::Right) => edges_searched::<K, true>(b, xs, out),
        }
    }
    super::scalar_edges(b, &xs[whole..], &mut out[whole..]);
}

/// The guide's cell for each lane, and its slot: the bin itself in cells without edges (most
/// of them), else where the walk along the cell's edges starts. The slots come by a gather
/// where gathers are fast, else a lane at a time, which beat AVX2's gathers.
#[inline(always)]
unsafe fn edges_guided<K: Kit<S = f64>, const RIGHT: bool>(
    b: &EdgeBins,
    guide: &Guide,
    xs: &[f64],
    out: &mut [u32],
) {
    let e = &b.edges[..];
    let n = e.len() - 1;
    let lo = K::splat(e[0]);
    let hi = K::splat(e[n]);
    let cells = K::splat(guide.cells_per_unit);
    let last_cell = K::isplat((guide.cells() - 1) as i32);
    let outside = K::isplat(guide.outside() as i32);
    let slots = &guide.slots[..];
    let zero = K::isplat(0);
    let flag = K::isplat(Guide::MIXED as i32);
    let last = K::isplat((n - 1) as i32);
    let mut run = Run::<K>::new(K::isplat(n as i32));
    let mut lanes = [0u32; MAX_LANES];
    for start in (0..xs.len()).step_by(K::W) {
        prefetch_ahead(xs.as_ptr().add(start));
        let x = K::load(xs.as_ptr().add(start));
        let dst = out.as_mut_ptr().add(start);
        if run.repeats(x, dst) {
            continue;
        }
        let valid = K::and(K::ge(x, lo), K::le(x, hi));
        let cell = K::trunc_index(K::mul(K::sub(x, lo), cells), last_cell);
        let slot = K::select_i(valid, cell, outside);
        if K::FAST_GATHER {
            let found = K::gather_u32(slots.as_ptr(), slot);
            // MIXED is the sign bit; subtracting it clears it. The walk reads edges at every
            // lane's index, so those of the other lanes (up to `n`) are kept at `last`.
            let mixed = K::igt(zero, found);
            if K::bits(mixed) == 0 {
                K::store(dst, found);
            } else {
                let from = K::imin(K::select_i(mixed, K::isub(found, flag), found), last);
                let (i, rest) = walk::<K, RIGHT>(e.as_ptr(), x, from, mixed, last, GUIDE_STEPS);
                K::store(dst, K::select_i(mixed, i, found));
                fix_lanes(rest, start, out, |k| b.bin(xs[k]) as u32);
            }
        } else {
            K::store(lanes.as_mut_ptr(), slot);
            let mut seen = 0;
            for (k, &slot) in lanes[..K::W].iter().enumerate() {
                // SAFETY: a cell is clamped to the last one, and the outside slot is the last.
                let found = *slots.get_unchecked(slot as usize);
                seen |= found;
                *dst.add(k) = found;
            }
            if seen & Guide::MIXED != 0 {
                for k in 0..K::W {
                    if *dst.add(k) & Guide::MIXED != 0 {
                        *dst.add(k) = b.bin(xs[start + k]) as u32;
                    }
                }
            }
        }
        run.remember(xs, out, start);
    }
}

/// The branch-free binary search of `EdgeBins::bin`, probe for probe: closed left, one less
/// than the number of edges `<= x` (at most the last bin); closed right, one less than the
/// number of edges `< x` (at least the first bin). Where gathers are slow, the scalar search
/// itself, still skipping runs of one value.
#[inline(always)]
unsafe fn edges_searched<K: Kit<S = f64>, const RIGHT: bool>(
    b: &EdgeBins,
    xs: &[f64],
    out: &mut [u32],
) {
    let e = &b.edges[..];
    let n = e.len() - 1;
    let lo = K::splat(e[0]);
    let hi = K::splat(e[n]);
    let last = K::isplat((n - 1) as i32);
    let none = K::isplat(n as i32);
    let zero = K::isplat(0);
    let one = K::isplat(1);
    let all = K::all();
    let counts = |g: K::V, x: K::V| if RIGHT { K::lt(g, x) } else { K::le(g, x) };
    if !K::FAST_GATHER {
        // The scalar search, skipping values equal (bit for bit) to the one before: a test per
        // value costs less than one per vector here (measured on AVX2).
        let mut seen = (f64::NAN.to_bits(), n as u32);
        for (o, &x) in out.iter_mut().zip(xs) {
            if x.to_bits() != seen.0 {
                seen = (x.to_bits(), b.bin(x) as u32);
            }
            *o = seen.1;
        }
        return;
    }
    let mut run = Run::<K>::new(none);
    for start in (0..xs.len()).step_by(K::W) {
        prefetch_ahead(xs.as_ptr().add(start));
        let x = K::load(xs.as_ptr().add(start));
        let dst = out.as_mut_ptr().add(start);
        if run.repeats(x, dst) {
            continue;
        }
        let valid = K::and(K::ge(x, lo), K::le(x, hi));
        let mut base = zero;
        let mut len = e.len();
        while len > 1 {
            let half = len / 2;
            let g = edge_at::<K>(e.as_ptr(), K::iadd(base, K::isplat(half as i32 - 1)), all);
            base = K::select_i(counts(g, x), K::iadd(base, K::isplat(half as i32)), base);
            len -= half;
        }
        let at_base = edge_at::<K>(e.as_ptr(), base, all);
        let count = K::select_i(counts(at_base, x), K::iadd(base, one), base);
        let i = if RIGHT {
            K::isub(K::imax(count, one), one)
        } else {
            // A count of 0 cannot happen for x >= e[0]; the scalar rule's wrap gives the last bin.
            K::imin(
                K::select_i(K::igt(count, zero), K::isub(count, one), last),
                last,
            )
        };
        K::store(dst, K::select_i(valid, i, none));
        run.remember(xs, out, start);
    }
}
