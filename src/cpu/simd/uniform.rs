//! Equal bins in vectors: numpy's cheap rule with its margin proof, numpy's literal estimate, and
//! Polars' closed-right rule, each corrected exactly as its scalar rule in [`crate::bins`].

use super::kit::{edge_at, fix_lanes, full_mask, prefetch_ahead, walk, Kit, Run, VECTOR_BINS};
use crate::bins::{BinFloat, Closed, Linspace, UniformBins};

/// Equal bins: the vector rule for whole vectors, the scalar rule for the rest.
#[inline(always)]
pub(super) unsafe fn uniform_kernel<K: Kit>(u: &UniformBins<K::S>, xs: &[K::S], out: &mut [u32]) {
    let n = u.len();
    // numpy's estimate of float32 bins widened to float64 (a Python-float range over float32
    // data with millions of bins) cannot be replayed in float32 lanes: the scalar rule does it.
    let estimate_in_lanes = !(K::S::SINGLE && u.estimate.wide);
    let literal = u.closed == Closed::Left && u.literal();
    let vector_rule = (1..VECTOR_BINS).contains(&n) && (!literal || estimate_in_lanes);
    let whole = if vector_rule {
        xs.len() / K::W * K::W
    } else {
        0
    };
    if whole > 0 {
        let (xs, out) = (&xs[..whole], &mut out[..whole]);
        match (u.closed, literal) {
            (Closed::Left, false) => uniform_left_cheap::<K>(u, xs, out),
            (Closed::Left, true) => uniform_left_literal::<K>(u, xs, out),
            (Closed::Right, _) => uniform_right::<K>(u, xs, out),
        }
    }
    super::scalar_uniform(u, &xs[whole..], &mut out[whole..]);
}

/// numpy's bins through the cheap rule (`UniformBins::bin_left`, not literal): the estimate
/// `(x - lo) * scale` answers where its fraction clears `margin`; elsewhere the walk from it.
#[inline(always)]
unsafe fn uniform_left_cheap<K: Kit>(u: &UniformBins<K::S>, xs: &[K::S], out: &mut [u32]) {
    // The estimate's integer part is taken in floats, clamped at the last bin as a float: exact
    // unless float32 holds more than 2^24 bins (the margin test is off there anyway).
    let n = u.len();
    if K::S::from_usize(n - 1).to_f64() == (n - 1) as f64 {
        uniform_left_cheap_loop::<K, true>(u, xs, out)
    } else {
        uniform_left_cheap_loop::<K, false>(u, xs, out)
    }
}

#[inline(always)]
unsafe fn uniform_left_cheap_loop<K: Kit, const FLOAT_TRUNC: bool>(
    u: &UniformBins<K::S>,
    xs: &[K::S],
    out: &mut [u32],
) {
    let n = u.len();
    let edges = u.edges();
    let e = edges.as_ptr();
    let lo = K::splat(edges[0]);
    let hi = K::splat(edges[n]);
    let scale = K::splat(u.scale);
    let margin = K::splat(u.margin());
    let upper = K::splat(K::S::HALF + K::S::HALF - u.margin());
    let last_f = K::splat(K::S::from_usize(n - 1));
    let last = K::isplat((n - 1) as i32);
    let none = K::isplat(n as i32);
    let full = full_mask(K::W);
    let mut run = Run::<K>::new(none);
    for start in (0..xs.len()).step_by(K::W) {
        prefetch_ahead(xs.as_ptr().add(start));
        let x = K::load(xs.as_ptr().add(start));
        let dst = out.as_mut_ptr().add(start);
        let valid = K::and(K::ge(x, lo), K::le(x, hi));
        let f = K::mul(K::sub(x, lo), scale);
        // The scalar rule's i = min(trunc(f), n - 1) (0 for NaN) and frac = f - i.
        let (i, frac) = if FLOAT_TRUNC {
            let t = K::trunc_float(K::clamp0(f, last_f));
            (K::to_index(t), K::sub(f, t))
        } else {
            let i = K::trunc_index(f, last);
            (i, K::sub(f, K::index_float(i)))
        };
        let fast = K::and(valid, K::and(K::gt(frac, margin), K::lt(frac, upper)));
        let fast_bits = K::bits(fast);
        if fast_bits == full {
            K::store(dst, i);
            continue;
        }
        let valid_bits = K::bits(valid);
        if valid_bits == fast_bits {
            K::store(dst, K::select_i(valid, i, none));
            continue;
        }
        if run.repeats(x, dst) {
            continue;
        }
        let (i, rest) = walk::<K, false>(e, x, i, K::and_not(valid, fast), last, 1);
        K::store(dst, K::select_i(valid, i, none));
        fix_lanes(rest, start, out, |k| u.bin(xs[k]) as u32);
        run.remember(xs, out, start);
    }
}

/// numpy's arithmetic replayed (`literal`): `trunc(((x - lo) / denom) * n)` in the bins' type
/// (the caller sends float32 bins with a float64 estimate to the scalar rule), then one step
/// down where `x < e[i]`, else one step up where `i` is not the last bin and `x >= e[i + 1]`.
#[inline(always)]
unsafe fn uniform_left_literal<K: Kit>(u: &UniformBins<K::S>, xs: &[K::S], out: &mut [u32]) {
    let n = u.len();
    let edges = u.edges();
    let e = edges.as_ptr();
    let lo = K::splat(edges[0]);
    let hi = K::splat(edges[n]);
    let denom = K::splat(K::S::from_f64(u.estimate.denom));
    let n_f = K::splat(K::S::from_f64(u.estimate.n));
    let last = K::isplat((n - 1) as i32);
    let none = K::isplat(n as i32);
    let one = K::isplat(1);
    let mut run = Run::<K>::new(none);
    for start in (0..xs.len()).step_by(K::W) {
        prefetch_ahead(xs.as_ptr().add(start));
        let x = K::load(xs.as_ptr().add(start));
        let dst = out.as_mut_ptr().add(start);
        if run.repeats(x, dst) {
            continue;
        }
        let valid = K::and(K::ge(x, lo), K::le(x, hi));
        let i = K::trunc_index(K::mul(K::div(K::sub(x, lo), denom), n_f), last);
        let below = K::lt(x, edge_at::<K>(e, i, valid));
        let above = K::ge(x, edge_at::<K>(e, K::iadd(i, one), valid));
        // x >= lo = e[0], so a valid lane below e[i] has i > 0.
        let down = K::and(valid, below);
        let up = K::and_not(K::and(valid, K::and(K::igt(last, i), above)), down);
        let i = K::inc_where(K::dec_where(i, down), up);
        K::store(dst, K::select_i(valid, i, none));
        run.remember(xs, out, start);
    }
}

/// Polars' rule (`UniformBins::bin_right`): `lo` itself in bin 0, then
/// `trunc(scale * (x - lo))` moved down where `x <= e[i]`, else up where `x > e[i + 1]`. Edges a
/// formula makes in the lanes' type are recomputed with its arithmetic rather than gathered.
#[inline(always)]
unsafe fn uniform_right<K: Kit>(u: &UniformBins<K::S>, xs: &[K::S], out: &mut [u32]) {
    match u.linspace().filter(|f| f.single == K::S::SINGLE) {
        Some(formula) => uniform_right_loop::<K, true>(u, xs, out, formula),
        None => {
            let unused = Linspace {
                start: 0.0,
                step: 0.0,
                single: false,
            };
            uniform_right_loop::<K, false>(u, xs, out, unused)
        }
    }
}

#[inline(always)]
unsafe fn uniform_right_loop<K: Kit, const FORMULA: bool>(
    u: &UniformBins<K::S>,
    xs: &[K::S],
    out: &mut [u32],
    formula: Linspace,
) {
    let n = u.len();
    // The formula's edges are never made: millions of them would be read from memory.
    let e = match FORMULA {
        true => std::ptr::null(),
        false => u.edges().as_ptr(),
    };
    let lo = K::splat(u.edge(0));
    let hi = K::splat(u.edge(n));
    let (start, step) = (
        K::splat(K::S::from_f64(formula.start)),
        K::splat(K::S::from_f64(formula.step)),
    );
    let scale = K::splat(u.scale);
    let last = K::isplat((n - 1) as i32);
    let none = K::isplat(n as i32);
    let zero = K::isplat(0);
    let one = K::isplat(1);
    let mut run = Run::<K>::new(none);
    for at in (0..xs.len()).step_by(K::W) {
        prefetch_ahead(xs.as_ptr().add(at));
        let x = K::load(xs.as_ptr().add(at));
        let dst = out.as_mut_ptr().add(at);
        if run.repeats(x, dst) {
            continue;
        }
        let at_lo = K::eq(x, lo);
        let valid = K::and(K::gt(x, lo), K::le(x, hi));
        let i = K::trunc_index(K::mul(scale, K::sub(x, lo)), last);
        let below = K::le(x, formula_edge::<K, FORMULA>(e, start, step, i, valid));
        // The last bin never moves up: valid lanes are at most e[n], which the formula may
        // not reproduce (e[n] is the data's maximum itself).
        let next = formula_edge::<K, FORMULA>(e, start, step, K::iadd(i, one), valid);
        let above = K::and(K::igt(last, i), K::gt(x, next));
        // x > lo = e[0], so a valid lane at or below e[i] has i > 0.
        let down = K::and(valid, below);
        let up = K::and_not(K::and(valid, above), down);
        let i = K::inc_where(K::dec_where(i, down), up);
        let outside = K::select_i(at_lo, zero, none);
        K::store(dst, K::select_i(valid, i, outside));
        run.remember(xs, out, at);
    }
}

/// Edge `i < n` of each lane: with `FORMULA`, as `Linspace::edge` makes it (`i * step + start`,
/// two roundings in the lanes' type, the formula's own); otherwise read from `e`.
#[inline(always)]
unsafe fn formula_edge<K: Kit, const FORMULA: bool>(
    e: *const K::S,
    start: K::V,
    step: K::V,
    i: K::I,
    valid: K::M,
) -> K::V {
    match FORMULA {
        true => K::add(K::mul(K::index_float(i), step), start),
        false => edge_at::<K>(e, i, valid),
    }
}
