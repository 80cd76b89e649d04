//! The vector vocabulary the kernels are written in, once, and the steps they share: reading
//! edges, replaying the scalar walk along them, and skipping runs of one value.

use crate::bins::BinFloat;

/// Bin counts up to which the vector code runs (indices are 32-bit lanes, clamped below this).
pub(super) const VECTOR_BINS: usize = 1 << 30;

/// The vector operations the kernels use, for one instruction set and one float type. Every
/// method is a thin wrapper on intrinsics and must be inlined into a function compiled with
/// the instruction set's target features (see `kernels_for`).
pub(super) trait Kit: Copy {
    /// The float type.
    type S: BinFloat;
    /// Floats, `W` lanes.
    type V: Copy;
    /// 32-bit signed integers, `W` lanes.
    type I: Copy;
    /// A lane mask.
    type M: Copy;
    const W: usize;
    /// Whether gathers beat scalar loads: the binary search over explicit edges (a gather a
    /// level) runs in vectors only then (AVX-512; AVX2's gathers lost to the scalar search on
    /// the Zen 2 and Xeon measured).
    const FAST_GATHER: bool;
    /// `2^30`: where estimates are clamped before conversion to an index.
    const INDEX_CLAMP: Self::S;

    unsafe fn load(p: *const Self::S) -> Self::V;
    unsafe fn store_f(p: *mut Self::S, v: Self::V);
    unsafe fn splat(s: Self::S) -> Self::V;
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn sub(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn div(a: Self::V, b: Self::V) -> Self::V;
    /// Per lane `if x < acc { x } else { acc }` (NaN `x` keeps `acc`).
    unsafe fn min_keep(x: Self::V, acc: Self::V) -> Self::V;
    /// Per lane `if x > acc { x } else { acc }`.
    unsafe fn max_keep(x: Self::V, acc: Self::V) -> Self::V;
    /// Ordered comparisons: false where either side is NaN.
    unsafe fn ge(a: Self::V, b: Self::V) -> Self::M;
    unsafe fn gt(a: Self::V, b: Self::V) -> Self::M;
    unsafe fn le(a: Self::V, b: Self::V) -> Self::M;
    unsafe fn lt(a: Self::V, b: Self::V) -> Self::M;
    unsafe fn eq(a: Self::V, b: Self::V) -> Self::M;
    /// Equal bit patterns.
    unsafe fn same_bits(a: Self::V, b: Self::V) -> Self::M;
    unsafe fn all() -> Self::M;
    unsafe fn and(a: Self::M, b: Self::M) -> Self::M;
    unsafe fn or(a: Self::M, b: Self::M) -> Self::M;
    /// `a & !b`.
    unsafe fn and_not(a: Self::M, b: Self::M) -> Self::M;
    /// Lane `k` to bit `k`.
    unsafe fn bits(m: Self::M) -> u32;
    /// `min(max(v, 0), hi)`, NaN to 0.
    unsafe fn clamp0(v: Self::V, hi: Self::V) -> Self::V;
    /// Rounds toward zero, staying a float.
    unsafe fn trunc_float(v: Self::V) -> Self::V;
    /// Truncates to an index; `v` must lie in `[0, 2^30]`.
    unsafe fn to_index(v: Self::V) -> Self::I;
    /// `i as S`, rounded to nearest as the scalar cast.
    unsafe fn index_float(i: Self::I) -> Self::V;
    unsafe fn isplat(v: i32) -> Self::I;
    unsafe fn iadd(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn isub(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn imin(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn imax(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn igt(a: Self::I, b: Self::I) -> Self::M;
    unsafe fn ieq(a: Self::I, b: Self::I) -> Self::M;
    unsafe fn first_lane(i: Self::I) -> i32;
    /// `m ? a : b` per lane.
    unsafe fn select_i(m: Self::M, a: Self::I, b: Self::I) -> Self::I;
    /// `i - 1` in the lanes of `m`.
    unsafe fn dec_where(i: Self::I, m: Self::M) -> Self::I;
    /// `i + 1` in the lanes of `m`.
    unsafe fn inc_where(i: Self::I, m: Self::M) -> Self::I;
    /// `base[idx]` in the lanes of `m` (the others hold anything).
    unsafe fn gather(base: *const Self::S, idx: Self::I, m: Self::M) -> Self::V;
    unsafe fn gather_u32(base: *const u32, idx: Self::I) -> Self::I;
    unsafe fn store(p: *mut u32, i: Self::I);

    /// `min(trunc(f), cap)` with NaN and negatives to 0: the scalar `trunc_usize().min(cap)`
    /// for every `cap < 2^30`.
    #[inline(always)]
    unsafe fn trunc_index(f: Self::V, cap: Self::I) -> Self::I {
        Self::imin(
            Self::to_index(Self::clamp0(f, Self::splat(Self::INDEX_CLAMP))),
            cap,
        )
    }
}

/// `e[idx]` in the lanes of `m`: one load where every lane asks for the same edge (runs of one
/// value), a gather otherwise. Every lane's index, in `m` or not, must be in bounds: the
/// kernels keep all of them in `[0, n]` at all times.
/// How far ahead of the row being binned its column is asked into the cache: the index loops
/// alternate with the scatter of counts, which reads no input, so the hardware's prefetchers
/// fall idle and each block would start with cache misses (a tenth of a 1-D call). Measured on
/// x86-64 only; elsewhere no hint is given.
#[cfg(target_arch = "x86_64")]
const PREFETCH_BYTES: usize = 2048;

/// Asks for the cache line [`PREFETCH_BYTES`] past `p`, a hint that never faults.
#[inline(always)]
pub(super) fn prefetch_ahead<S>(p: *const S) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and never faults, wherever it points.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>().wrapping_add(PREFETCH_BYTES));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[inline(always)]
pub(super) unsafe fn edge_at<K: Kit>(e: *const K::S, idx: K::I, m: K::M) -> K::V {
    let first = K::first_lane(idx);
    if K::bits(K::ieq(idx, K::isplat(first))) == full_mask(K::W) {
        K::splat(*e.add(first as usize))
    } else {
        K::gather(e, idx, m)
    }
}

/// The mask with all `w` lanes set.
pub(super) const fn full_mask(w: usize) -> u32 {
    if w >= 32 {
        u32::MAX
    } else {
        (1 << w) - 1
    }
}

/// Calls `bin(k)` for each lane `k` set in `lanes`, writing `out[start + k]`.
#[inline(always)]
pub(super) fn fix_lanes(mut lanes: u32, start: usize, out: &mut [u32], bin: impl Fn(usize) -> u32) {
    while lanes != 0 {
        let k = start + lanes.trailing_zeros() as usize;
        out[k] = bin(k);
        lanes &= lanes - 1;
    }
}

/// `x` below edge `g`: `x < g` for bins closed left, `x <= g` closed right.
#[inline(always)]
unsafe fn below<K: Kit, const RIGHT: bool>(x: K::V, g: K::V) -> K::M {
    if RIGHT {
        K::le(x, g)
    } else {
        K::lt(x, g)
    }
}

/// `x` at or above the next edge `g`: `x >= g` closed left, `x > g` closed right.
#[inline(always)]
unsafe fn above<K: Kit, const RIGHT: bool>(x: K::V, g: K::V) -> K::M {
    if RIGHT {
        K::gt(x, g)
    } else {
        K::ge(x, g)
    }
}

/// Replays the scalar walk from `i` in the lanes of `need`:
/// `while i > 0 && below(x, e[i]) { i -= 1 }` then `while i < last && above(x, e[i + 1]) { i += 1 }`,
/// for at most `steps` steps. Every index stays in `[0, last]` (`last + 1` edges are read).
/// Returns the indices (unchanged outside `need`) and the lanes whose walk goes on.
#[inline(always)]
pub(super) unsafe fn walk<K: Kit, const RIGHT: bool>(
    e: *const K::S,
    x: K::V,
    mut i: K::I,
    need: K::M,
    last: K::I,
    steps: usize,
) -> (K::I, u32) {
    let zero = K::isplat(0);
    let g0 = edge_at::<K>(e, i, need);
    let g1 = edge_at::<K>(e, K::iadd(i, K::isplat(1)), need);
    let mut down = K::and(need, K::and(K::igt(i, zero), below::<K, RIGHT>(x, g0)));
    // After a step down the walk never steps up: that step was taken because x is below e[i].
    let mut up = K::and_not(
        K::and(need, K::and(K::igt(last, i), above::<K, RIGHT>(x, g1))),
        down,
    );
    for _ in 0..steps {
        let moving = K::or(down, up);
        if K::bits(moving) == 0 {
            return (i, 0);
        }
        i = K::inc_where(K::dec_where(i, down), up);
        // The next test reads e[i] going down, e[i + 1] going up.
        let g = edge_at::<K>(e, K::inc_where(i, up), moving);
        down = K::and(down, K::and(K::igt(i, zero), below::<K, RIGHT>(x, g)));
        up = K::and(up, K::and(K::igt(last, i), above::<K, RIGHT>(x, g)));
    }
    (i, K::bits(K::or(down, up)))
}

/// The last vector resolved the long way, when all its lanes held one value: a vector of that
/// same value (bit for bit) takes its bins without the search. Degenerate data, which often sits
/// on an edge, then costs a comparison a vector.
pub(super) struct Run<K: Kit> {
    x: K::V,
    bins: K::I,
}

impl<K: Kit> Run<K> {
    /// No run yet: a NaN, whose bin is `none` whatever its bits.
    #[inline(always)]
    pub(super) unsafe fn new(none: K::I) -> Self {
        Run {
            x: K::splat(K::S::from_f64(f64::NAN)),
            bins: none,
        }
    }

    /// Whether `x` repeats the run's value in every lane; then its bins are stored at `dst`.
    #[inline(always)]
    pub(super) unsafe fn repeats(&self, x: K::V, dst: *mut u32) -> bool {
        let same = K::bits(K::same_bits(x, self.x)) == full_mask(K::W);
        if same {
            K::store(dst, self.bins);
        }
        same
    }

    /// Remembers the vector at `xs[start..]`, whose bins are final in `out[start..]`.
    #[inline(always)]
    pub(super) unsafe fn remember(&mut self, xs: &[K::S], out: &[u32], start: usize) {
        self.x = K::splat(xs[start]);
        self.bins = K::isplat(out[start] as i32);
    }
}
