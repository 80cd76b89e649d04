//! Explicit edges in vectors: the guide's walk (a value at a time where gathers are slow), or the
//! branch-free binary search probe for probe, as [`EdgeBins::bin`] takes them.

use super::kit::{edge_at, fix_lanes, prefetch_ahead, walk, Kit, Run, VECTOR_BINS};
use crate::bins::{Closed, EdgeBins};

/// Steps of the guide walk followed in vectors (the guide keeps walks short); a lane that needs
/// more goes through the scalar rule.
const GUIDE_STEPS: usize = 6;

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
        let guide = b.guide.as_ref().map(|g| (&g.first[..], g.cells_per_unit));
        match (guide, b.closed) {
            (Some(guide), Closed::Left) => edges_guided::<K, false>(b, guide, xs, out),
            (Some(guide), Closed::Right) => edges_guided::<K, true>(b, guide, xs, out),
            (None, Closed::Left) => edges_searched::<K, false>(b, xs, out),
            (None, Closed::Right) => edges_searched::<K, true>(b, xs, out),
        }
    }
    super::scalar_edges(b, &xs[whole..], &mut out[whole..]);
}

/// The guide's cell names a bin near the value's; the walk from it finds the value's bin.
#[inline(always)]
unsafe fn edges_guided<K: Kit<S = f64>, const RIGHT: bool>(
    b: &EdgeBins,
    (first, cells_per_unit): (&[u32], f64),
    xs: &[f64],
    out: &mut [u32],
) {
    let e = &b.edges[..];
    let n = e.len() - 1;
    let lo = K::splat(e[0]);
    let hi = K::splat(e[n]);
    let cells = K::splat(cells_per_unit);
    let last_cell = K::isplat((first.len() - 1) as i32);
    let last = K::isplat((n - 1) as i32);
    let none = K::isplat(n as i32);
    let mut run = Run::<K>::new(none);
    for start in (0..xs.len()).step_by(K::W) {
        prefetch_ahead(xs.as_ptr().add(start));
        let x = K::load(xs.as_ptr().add(start));
        let dst = out.as_mut_ptr().add(start);
        if run.repeats(x, dst) {
            continue;
        }
        if K::FAST_GATHER {
            let valid = K::and(K::ge(x, lo), K::le(x, hi));
            let cell = K::trunc_index(K::mul(K::sub(x, lo), cells), last_cell);
            let i = K::imin(K::gather_u32(first.as_ptr(), cell), last);
            let (i, rest) = walk::<K, RIGHT>(e.as_ptr(), x, i, valid, last, GUIDE_STEPS);
            K::store(dst, K::select_i(valid, i, none));
            fix_lanes(rest, start, out, |k| b.bin(xs[k]) as u32);
        } else {
            let lanes = start..start + K::W;
            guided_one_by_one::<RIGHT>(
                b,
                (first, cells_per_unit),
                &xs[lanes.clone()],
                &mut out[lanes],
            );
        }
        run.remember(xs, out, start);
    }
}

/// The guide one value at a time, where gathers are slow: the guide's bin, one step up without a
/// branch, and a check of both edges; a value the step does not settle takes the scalar rule.
/// 257 uneven edges took 3.9 ns a row here against 4.9 with AVX2 gathers (one thread of an AMD
/// EPYC, Zen 3).
#[inline(always)]
fn guided_one_by_one<const RIGHT: bool>(
    b: &EdgeBins,
    (first, cells_per_unit): (&[u32], f64),
    xs: &[f64],
    out: &mut [u32],
) {
    let e = &b.edges[..];
    let n = e.len() - 1;
    let (lo, hi) = (e[0], e[n]);
    let last_cell = first.len() - 1;
    // Closed left: x is above bin i's upper edge when x >= e[i + 1]; closed right, when x > it.
    let above = |x: f64, edge: f64| if RIGHT { x > edge } else { x >= edge };
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = if x >= lo && x <= hi {
            // SAFETY: lo <= x <= hi, both finite (a guide needs a finite span), so the cell lies
            // in 0..=cells and fits an i32.
            let cell = unsafe { ((x - lo) * cells_per_unit).to_int_unchecked::<i32>() };
            let mut i = first[(cell as usize).min(last_cell)] as usize;
            i += (i < n - 1 && above(x, e[i + 1])) as usize;
            let settled = (i == 0 || above(x, e[i])) && (i == n - 1 || !above(x, e[i + 1]));
            match settled {
                true => i as u32,
                false => b.bin(x) as u32,
            }
        } else {
            n as u32
        };
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
