//! Bin indices and extremes of blocks of values in SIMD, for the CPU backend's counting loop.
//!
//! Exactness is the contract: on every path, every function here returns what the scalar rules
//! of [`crate::bins`] return, value by value. The vector code evaluates each rule's own arithmetic
//! (the same IEEE operations in the same order, no fused multiply-add) and its own proof or
//! correction: the cheap rule's `margin` test, and where that fails the scalar walk along the
//! edges replayed step by step with gathered edges; numpy's literal rule and Polars' rule with
//! their single corrections; the explicit edges' guide cells with their walk, or the binary
//! search probe for probe. A lane whose walk runs longer than the vector code follows goes
//! through the scalar rule itself, so nothing is assumed about the bins beyond what the scalar
//! code reads. A vector that repeats, bit for bit, the value of the last vector resolved the
//! long way takes that vector's bins (degenerate data often sits on an edge).
//!
//! The instruction set is chosen once per process: AVX-512 (F and VL) or AVX2 on x86-64, NEON on
//! aarch64, scalar elsewhere. `POLARS_GPU_HIST_SIMD=scalar|avx2|avx512|neon` forces one (a path
//! the CPU lacks falls back to the best one below it: avx512, then avx2, then scalar), and the
//! `*_on` functions take the path explicitly, for tests and benchmarks.
//!
//! Layout: this file chooses the path and hands each (path, float type, rule) to its kernel,
//! compiled for each path by `kernels_for!`; `kit` is the vector vocabulary the kernels are
//! written in and their shared steps; `uniform`, `edges` and `extremes` are the kernels; `avx2`,
//! `avx512` and `neon` implement the kit.

/// Compiles the kernels into functions for one instruction set, named alike in each path's
/// module: `uniform_f64`, `uniform_f32`, `edges_f64`, `min_max_f64`, `min_max_f32` and
/// `min_max_plain` (the scalar fold, which the compiler vectorizes with the wider instructions).
macro_rules! kernels_for {
    ($features:literal, $f64kit:ty, $f32kit:ty) => {
        use crate::bins::{EdgeBins, UniformBins};
        use crate::input::Value;

        #[target_feature(enable = $features)]
        pub(super) unsafe fn uniform_f64(u: &UniformBins<f64>, xs: &[f64], out: &mut [u32]) {
            crate::cpu::simd::uniform::uniform_kernel::<$f64kit>(u, xs, out)
        }
        #[target_feature(enable = $features)]
        pub(super) unsafe fn uniform_f32(u: &UniformBins<f32>, xs: &[f32], out: &mut [u32]) {
            crate::cpu::simd::uniform::uniform_kernel::<$f32kit>(u, xs, out)
        }
        #[target_feature(enable = $features)]
        pub(super) unsafe fn edges_f64(e: &EdgeBins, xs: &[f64], out: &mut [u32]) {
            crate::cpu::simd::edges::edge_kernel::<$f64kit>(e, xs, out)
        }
        #[target_feature(enable = $features)]
        pub(super) unsafe fn min_max_f64(xs: &[f64]) -> Option<(f64, f64)> {
            crate::cpu::simd::extremes::min_max_kernel::<$f64kit>(xs)
        }
        #[target_feature(enable = $features)]
        pub(super) unsafe fn min_max_f32(xs: &[f32]) -> Option<(f32, f32)> {
            crate::cpu::simd::extremes::min_max_kernel::<$f32kit>(xs)
        }
        #[target_feature(enable = $features)]
        pub(super) unsafe fn min_max_plain<T: Value>(xs: &[T]) -> Option<(T, T)> {
            crate::cpu::simd::scalar_min_max(xs)
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod edges;
mod extremes;
mod kit;
#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(test)]
mod tests;
mod uniform;

use std::any::{Any, TypeId};
use std::sync::OnceLock;

use crate::bins::{BinFloat, EdgeBins, UniformBins};
use crate::input::Value;

/// The environment variable that forces an instruction set (read once).
pub const SIMD_ENV: &str = "POLARS_GPU_HIST_SIMD";

/// An instruction set the index loops can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    Scalar,
    Avx2,
    Avx512,
    Neon,
}

impl Isa {
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon];

    /// The name `POLARS_GPU_HIST_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }

    pub fn parse(name: &str) -> Option<Isa> {
        let name = name.trim().to_ascii_lowercase();
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name() == name || (name == "avx-512" && *isa == Isa::Avx512))
    }

    /// Whether this CPU runs the path (AVX-512 needs F and VL; AVX2 is used without FMA).
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar => true,
            Isa::Avx2 => has_avx2(),
            Isa::Avx512 => has_avx512(),
            Isa::Neon => has_neon(),
        }
    }

    /// Every path this CPU runs, scalar first.
    #[cfg(any(test, feature = "internals"))]
    pub fn supported() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.is_supported()).collect()
    }

    /// The fastest path this CPU runs.
    pub fn best() -> Isa {
        [Isa::Avx512, Isa::Avx2, Isa::Neon]
            .into_iter()
            .find(|i| i.is_supported())
            .unwrap_or(Isa::Scalar)
    }

    /// The best supported path no faster than `self`.
    fn or_below(self) -> Isa {
        let chain: &[Isa] = match self {
            Isa::Avx512 => &[Isa::Avx512, Isa::Avx2],
            Isa::Avx2 => &[Isa::Avx2],
            Isa::Neon => &[Isa::Neon],
            Isa::Scalar => &[],
        };
        chain
            .iter()
            .copied()
            .find(|i| i.is_supported())
            .unwrap_or(Isa::Scalar)
    }

    /// The path the plain functions use: `POLARS_GPU_HIST_SIMD` if set, else the best, decided
    /// on first use.
    pub fn active() -> Isa {
        static ACTIVE: OnceLock<Isa> = OnceLock::new();
        *ACTIVE.get_or_init(|| {
            let asked = std::env::var(SIMD_ENV).unwrap_or_default();
            let asked = asked.trim();
            if asked.is_empty() || asked.eq_ignore_ascii_case("auto") {
                return Isa::best();
            }
            match Isa::parse(asked) {
                Some(isa) => isa.or_below(),
                None => {
                    // A library cannot fail here (the first histogram asks): say so once.
                    eprintln!(
                        "polars-gpu-hist: {SIMD_ENV}={asked:?} is not one of scalar, avx2, \
                         avx512, neon, auto; using {}",
                        Isa::best().name()
                    );
                    Isa::best()
                }
            }
        })
    }

    fn checked(self) -> Isa {
        assert!(
            self.is_supported(),
            "the {} path does not run on this CPU: pick one of Isa::supported()",
            self.name()
        );
        self
    }
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    is_x86_feature_detected!("avx2")
}
#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512vl")
        && is_x86_feature_detected!("avx2")
}
#[cfg(not(target_arch = "x86_64"))]
fn has_avx2() -> bool {
    false
}
#[cfg(not(target_arch = "x86_64"))]
fn has_avx512() -> bool {
    false
}
#[cfg(target_arch = "aarch64")]
fn has_neon() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}
#[cfg(not(target_arch = "aarch64"))]
fn has_neon() -> bool {
    false
}

/// `out[i]` = the bin of `values[i]` under `u`, or `u.len()` where the value is not counted (NaN,
/// outside): exactly `u.bin(x)` with `x` converted as the CPU backend converts it (`to_f64`, or
/// `to_f32` for float32 bins). `out` must be at least as long as `values`.
pub fn uniform_bins<T: Value, F: BinFloat>(u: &UniformBins<F>, values: &[T], out: &mut [u32]) {
    uniform_bins_on(Isa::active(), u, values, out)
}

/// [`uniform_bins`] on the given path (which must be supported).
pub fn uniform_bins_on<T: Value, F: BinFloat>(
    isa: Isa,
    u: &UniformBins<F>,
    values: &[T],
    out: &mut [u32],
) {
    let isa = isa.checked();
    let out = output(out, values.len());
    let bins: &dyn Any = u;
    if let Some(u) = bins.downcast_ref::<UniformBins<f64>>() {
        in_f64(values, out, |xs, out| uniform_f64(isa, u, xs, out));
    } else if let Some(u) = bins.downcast_ref::<UniformBins<f32>>() {
        in_f32(values, out, |xs, out| uniform_f32(isa, u, xs, out));
    } else {
        // BinFloat is float32 and float64 today; any other type gets the scalar rule.
        for (o, &x) in out.iter_mut().zip(values) {
            *o = u.bin(F::from_f64(x.to_f64())) as u32;
        }
    }
}

/// The same for explicit edges: exactly `e.bin(x.to_f64())`.
pub fn edge_bins<T: Value>(e: &EdgeBins, values: &[T], out: &mut [u32]) {
    edge_bins_on(Isa::active(), e, values, out)
}

/// [`edge_bins`] on the given path (which must be supported).
pub fn edge_bins_on<T: Value>(isa: Isa, e: &EdgeBins, values: &[T], out: &mut [u32]) {
    let isa = isa.checked();
    let out = output(out, values.len());
    in_f64(values, out, |xs, out| edges_f64(isa, e, xs, out));
}

/// Minimum and maximum of the values that are not NaN (numpy's automatic range), `None` if there
/// are none. Like the scalar fold it replaces, a tie keeps the value seen first (this only shows
/// in the sign of a zero).
pub fn min_max<T: Value>(values: &[T]) -> Option<(T, T)> {
    min_max_on(Isa::active(), values)
}

/// [`min_max`] on the given path (which must be supported).
pub fn min_max_on<T: Value>(isa: Isa, values: &[T]) -> Option<(T, T)> {
    let isa = isa.checked();
    if let Some(xs) = same_slice::<T, f64>(values) {
        let (lo, hi) = min_max_f64(isa, xs)?;
        return Some((same_value(lo), same_value(hi)));
    }
    if let Some(xs) = same_slice::<T, f32>(values) {
        let (lo, hi) = min_max_f32(isa, xs)?;
        return Some((same_value(lo), same_value(hi)));
    }
    min_max_plain(isa, values)
}

fn output(out: &mut [u32], len: usize) -> &mut [u32] {
    assert!(
        out.len() >= len,
        "the output ({} slots) is shorter than the values ({len})",
        out.len()
    );
    &mut out[..len]
}

/// `values` as a slice of `U` when `T` is `U`.
fn same_slice<T: 'static, U: 'static>(values: &[T]) -> Option<&[U]> {
    (TypeId::of::<T>() == TypeId::of::<U>())
        // SAFETY: T and U are the same type.
        .then(|| unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<U>(), values.len()) })
}

/// `x` as a `U` when `T` is `U`.
fn same_value<T: Copy + 'static, U: Copy + 'static>(x: T) -> U {
    assert_eq!(TypeId::of::<T>(), TypeId::of::<U>());
    // SAFETY: T and U are the same type.
    unsafe { std::mem::transmute_copy(&x) }
}

/// Values converted a block at a time for the float kernels (a small buffer stays in L1).
const CONVERT: usize = 512;

/// Runs `body` on the values as float64 (`to_f64`), without a copy when they are float64.
#[inline(always)]
fn in_f64<T: Value>(values: &[T], out: &mut [u32], mut body: impl FnMut(&[f64], &mut [u32])) {
    if let Some(xs) = same_slice::<T, f64>(values) {
        return body(xs, out);
    }
    let mut buf = [0f64; CONVERT];
    for (vals, outs) in values.chunks(CONVERT).zip(out.chunks_mut(CONVERT)) {
        for (bs, vs) in buf.chunks_mut(8).zip(vals.chunks(8)) {
            kit::prefetch_ahead(vs.as_ptr());
            for (b, &v) in bs.iter_mut().zip(vs) {
                *b = v.to_f64();
            }
        }
        body(&buf[..vals.len()], outs);
    }
}

/// Runs `body` on the values as float32 (`to_f32`), without a copy when they are float32.
#[inline(always)]
fn in_f32<T: Value>(values: &[T], out: &mut [u32], mut body: impl FnMut(&[f32], &mut [u32])) {
    if let Some(xs) = same_slice::<T, f32>(values) {
        return body(xs, out);
    }
    let mut buf = [0f32; CONVERT];
    for (vals, outs) in values.chunks(CONVERT).zip(out.chunks_mut(CONVERT)) {
        for (bs, vs) in buf.chunks_mut(8).zip(vals.chunks(8)) {
            kit::prefetch_ahead(vs.as_ptr());
            for (b, &v) in bs.iter_mut().zip(vs) {
                *b = v.to_f32();
            }
        }
        body(&buf[..vals.len()], outs);
    }
}

// ---------------------------------------------------------------------------------------------
// Dispatch: each (path, float type, rule) to its compiled kernel. Every `unsafe` call below runs
// a function compiled for `isa`'s target features, and `isa` was checked to run on this CPU.

fn uniform_f64(isa: Isa, u: &UniformBins<f64>, xs: &[f64], out: &mut [u32]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::uniform_f64(u, xs, out) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::uniform_f64(u, xs, out) },
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => unsafe { neon::uniform_f64(u, xs, out) },
        _ => scalar_uniform(u, xs, out),
    }
}

fn uniform_f32(isa: Isa, u: &UniformBins<f32>, xs: &[f32], out: &mut [u32]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::uniform_f32(u, xs, out) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::uniform_f32(u, xs, out) },
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => unsafe { neon::uniform_f32(u, xs, out) },
        _ => scalar_uniform(u, xs, out),
    }
}

fn edges_f64(isa: Isa, e: &EdgeBins, xs: &[f64], out: &mut [u32]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::edges_f64(e, xs, out) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::edges_f64(e, xs, out) },
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => unsafe { neon::edges_f64(e, xs, out) },
        _ => scalar_edges(e, xs, out),
    }
}

fn min_max_f64(isa: Isa, xs: &[f64]) -> Option<(f64, f64)> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::min_max_f64(xs) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::min_max_f64(xs) },
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => unsafe { neon::min_max_f64(xs) },
        _ => scalar_min_max(xs),
    }
}

fn min_max_f32(isa: Isa, xs: &[f32]) -> Option<(f32, f32)> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::min_max_f32(xs) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::min_max_f32(xs) },
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => unsafe { neon::min_max_f32(xs) },
        _ => scalar_min_max(xs),
    }
}

/// Integers have no NaN and no signed zero: the plain fold, which the compiler vectorizes once
/// it may use the wider instructions.
fn min_max_plain<T: Value>(isa: Isa, xs: &[T]) -> Option<(T, T)> {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::min_max_plain(xs) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { avx512::min_max_plain(xs) },
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => unsafe { neon::min_max_plain(xs) },
        _ => scalar_min_max(xs),
    }
}

// ---------------------------------------------------------------------------------------------
// The scalar path: the rules themselves, also the vector kernels' tails.

fn scalar_uniform<F: BinFloat>(u: &UniformBins<F>, xs: &[F], out: &mut [u32]) {
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = u.bin(x) as u32;
    }
}

fn scalar_edges(e: &EdgeBins, xs: &[f64], out: &mut [u32]) {
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = e.bin(x) as u32;
    }
}

/// The extremes fold: a seed from the first value that is not NaN, then branch-free minimum and
/// maximum that skip NaN (comparisons with it are false) and keep the earlier of equal values.
#[inline(always)]
fn scalar_min_max<T: Value>(xs: &[T]) -> Option<(T, T)> {
    let first = xs.iter().position(|x| !x.is_nan())?;
    let (mut lo, mut hi) = (xs[first], xs[first]);
    for &x in &xs[first..] {
        lo = if x < lo { x } else { lo };
        hi = if x > hi { x } else { hi };
    }
    Some((lo, hi))
}
