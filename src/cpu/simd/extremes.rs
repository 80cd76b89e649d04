//! The extremes scan in vectors: minimum and maximum skipping NaN, bit for bit the scalar fold's.

use super::kit::{prefetch_ahead, Kit};
use crate::bins::BinFloat;

/// Minimum and maximum skipping NaN, keeping the earlier of equal values as the scalar fold
/// does: lanes fold their own values in order; equal values differ only as zeros of two signs,
/// and where lanes end on zeros of both signs the first zero in the data decides.
#[inline(always)]
pub(super) unsafe fn min_max_kernel<K: Kit>(xs: &[K::S]) -> Option<(K::S, K::S)> {
    // Room for four accumulators of the widest kit (16 lanes).
    const LANES: usize = 64;
    let first = xs.iter().position(|x| !x.to_f64().is_nan())?;
    let xs = &xs[first..];
    // Four accumulators each hide the latency of the one before.
    let step = 4 * K::W;
    let whole = xs.len() / step * step;
    let (mut lo, mut hi) = (xs[0], xs[0]);
    if whole > 0 {
        let seed = K::splat(xs[0]);
        let (mut lo0, mut lo1, mut lo2, mut lo3) = (seed, seed, seed, seed);
        let (mut hi0, mut hi1, mut hi2, mut hi3) = (seed, seed, seed, seed);
        let p = xs.as_ptr();
        for start in (0..whole).step_by(step) {
            // One request a cache line: the four loads span 64 (f32) to 256 (f64) bytes.
            for line in (0..step * std::mem::size_of::<K::S>()).step_by(64) {
                prefetch_ahead(p.add(start).cast::<u8>().add(line));
            }
            let x0 = K::load(p.add(start));
            let x1 = K::load(p.add(start + K::W));
            let x2 = K::load(p.add(start + 2 * K::W));
            let x3 = K::load(p.add(start + 3 * K::W));
            lo0 = K::min_keep(x0, lo0);
            lo1 = K::min_keep(x1, lo1);
            lo2 = K::min_keep(x2, lo2);
            lo3 = K::min_keep(x3, lo3);
            hi0 = K::max_keep(x0, hi0);
            hi1 = K::max_keep(x1, hi1);
            hi2 = K::max_keep(x2, hi2);
            hi3 = K::max_keep(x3, hi3);
        }
        let mut lanes = [K::S::ZERO; LANES];
        let mut extreme = |accs: [K::V; 4], smaller: fn(K::S, K::S) -> bool| {
            for (j, &a) in accs.iter().enumerate() {
                K::store_f(lanes.as_mut_ptr().add(j * K::W), a);
            }
            let lanes = &lanes[..step];
            let best = lanes
                .iter()
                .copied()
                .fold(lanes[0], |b, v| if smaller(v, b) { v } else { b });
            if best == K::S::ZERO {
                let negative = |z: K::S| z.to_f64().is_sign_negative();
                let zeros = lanes.iter().copied().filter(|&v| v == K::S::ZERO);
                let signs = zeros.fold((false, false), |(neg, pos), z| {
                    (neg || negative(z), pos || !negative(z))
                });
                if signs.0 && signs.1 {
                    return *xs[..whole]
                        .iter()
                        .find(|&&x| x == K::S::ZERO)
                        .expect("a zero");
                }
            }
            best
        };
        lo = extreme([lo0, lo1, lo2, lo3], |v, b| v < b);
        hi = extreme([hi0, hi1, hi2, hi3], |v, b| v > b);
    }
    for &x in &xs[whole..] {
        lo = if x < lo { x } else { lo };
        hi = if x > hi { x } else { hi };
    }
    Some((lo, hi))
}
