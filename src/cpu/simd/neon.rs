//! The kit in NEON (aarch64): float64 in 2 lanes with indices in 64 bits, float32 in 4 lanes.
//! NEON has no gathers: they are lane-by-lane loads, and the binary search stays scalar.

use std::arch::aarch64::*;

use super::kit::Kit;

kernels_for!("neon", NeonF64, NeonF32);

/// A mask of two 64-bit lanes as two 32-bit lanes (all ones stays -1).
#[inline(always)]
unsafe fn narrow(m: uint64x2_t) -> int32x2_t {
    vreinterpret_s32_u32(vmovn_u64(m))
}

/// A mask of two 32-bit lanes as two 64-bit lanes.
#[inline(always)]
unsafe fn widen(m: uint32x2_t) -> uint64x2_t {
    vreinterpretq_u64_s64(vmovl_s32(vreinterpret_s32_u32(m)))
}

/// float64 in NEON: 2 lanes, indices in 64 bits.
#[derive(Clone, Copy)]
struct NeonF64;

impl Kit for NeonF64 {
    type S = f64;
    type V = float64x2_t;
    type I = int32x2_t;
    type M = uint64x2_t;
    const W: usize = 2;
    const FAST_GATHER: bool = false;
    const INDEX_CLAMP: f64 = (1u32 << 30) as f64;

    #[inline(always)]
    unsafe fn load(p: *const f64) -> float64x2_t {
        vld1q_f64(p)
    }
    #[inline(always)]
    unsafe fn store_f(p: *mut f64, v: float64x2_t) {
        vst1q_f64(p, v)
    }
    #[inline(always)]
    unsafe fn splat(s: f64) -> float64x2_t {
        vdupq_n_f64(s)
    }
    #[inline(always)]
    unsafe fn add(a: float64x2_t, b: float64x2_t) -> float64x2_t {
        vaddq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: float64x2_t, b: float64x2_t) -> float64x2_t {
        vsubq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: float64x2_t, b: float64x2_t) -> float64x2_t {
        vmulq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn div(a: float64x2_t, b: float64x2_t) -> float64x2_t {
        vdivq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn min_keep(x: float64x2_t, acc: float64x2_t) -> float64x2_t {
        vbslq_f64(vcltq_f64(x, acc), x, acc)
    }
    #[inline(always)]
    unsafe fn max_keep(x: float64x2_t, acc: float64x2_t) -> float64x2_t {
        vbslq_f64(vcgtq_f64(x, acc), x, acc)
    }
    #[inline(always)]
    unsafe fn ge(a: float64x2_t, b: float64x2_t) -> uint64x2_t {
        vcgeq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn gt(a: float64x2_t, b: float64x2_t) -> uint64x2_t {
        vcgtq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn le(a: float64x2_t, b: float64x2_t) -> uint64x2_t {
        vcleq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn lt(a: float64x2_t, b: float64x2_t) -> uint64x2_t {
        vcltq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn eq(a: float64x2_t, b: float64x2_t) -> uint64x2_t {
        vceqq_f64(a, b)
    }
    #[inline(always)]
    unsafe fn same_bits(a: float64x2_t, b: float64x2_t) -> uint64x2_t {
        vceqq_u64(vreinterpretq_u64_f64(a), vreinterpretq_u64_f64(b))
    }
    #[inline(always)]
    unsafe fn all() -> uint64x2_t {
        vdupq_n_u64(u64::MAX)
    }
    #[inline(always)]
    unsafe fn and(a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
        vandq_u64(a, b)
    }
    #[inline(always)]
    unsafe fn or(a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
        vorrq_u64(a, b)
    }
    #[inline(always)]
    unsafe fn and_not(a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
        vbicq_u64(a, b)
    }
    #[inline(always)]
    unsafe fn bits(m: uint64x2_t) -> u32 {
        ((vgetq_lane_u64::<0>(m) & 1) | ((vgetq_lane_u64::<1>(m) & 1) << 1)) as u32
    }
    #[inline(always)]
    unsafe fn clamp0(v: float64x2_t, hi: float64x2_t) -> float64x2_t {
        // FMAXNM returns the number for a quiet NaN (computed values are never signaling).
        vminnmq_f64(vmaxnmq_f64(v, vdupq_n_f64(0.0)), hi)
    }
    #[inline(always)]
    unsafe fn trunc_float(v: float64x2_t) -> float64x2_t {
        vrndq_f64(v)
    }
    #[inline(always)]
    unsafe fn to_index(v: float64x2_t) -> int32x2_t {
        vmovn_s64(vcvtq_s64_f64(v))
    }
    #[inline(always)]
    unsafe fn index_float(i: int32x2_t) -> float64x2_t {
        vcvtq_f64_s64(vmovl_s32(i))
    }
    #[inline(always)]
    unsafe fn isplat(v: i32) -> int32x2_t {
        vdup_n_s32(v)
    }
    #[inline(always)]
    unsafe fn iadd(a: int32x2_t, b: int32x2_t) -> int32x2_t {
        vadd_s32(a, b)
    }
    #[inline(always)]
    unsafe fn isub(a: int32x2_t, b: int32x2_t) -> int32x2_t {
        vsub_s32(a, b)
    }
    #[inline(always)]
    unsafe fn imin(a: int32x2_t, b: int32x2_t) -> int32x2_t {
        vmin_s32(a, b)
    }
    #[inline(always)]
    unsafe fn imax(a: int32x2_t, b: int32x2_t) -> int32x2_t {
        vmax_s32(a, b)
    }
    #[inline(always)]
    unsafe fn igt(a: int32x2_t, b: int32x2_t) -> uint64x2_t {
        widen(vcgt_s32(a, b))
    }
    #[inline(always)]
    unsafe fn ieq(a: int32x2_t, b: int32x2_t) -> uint64x2_t {
        widen(vceq_s32(a, b))
    }
    #[inline(always)]
    unsafe fn first_lane(i: int32x2_t) -> i32 {
        vget_lane_s32::<0>(i)
    }
    #[inline(always)]
    unsafe fn select_i(m: uint64x2_t, a: int32x2_t, b: int32x2_t) -> int32x2_t {
        vbsl_s32(vmovn_u64(m), a, b)
    }
    #[inline(always)]
    unsafe fn dec_where(i: int32x2_t, m: uint64x2_t) -> int32x2_t {
        vadd_s32(i, narrow(m))
    }
    #[inline(always)]
    unsafe fn inc_where(i: int32x2_t, m: uint64x2_t) -> int32x2_t {
        vsub_s32(i, narrow(m))
    }
    #[inline(always)]
    unsafe fn gather(base: *const f64, idx: int32x2_t, _m: uint64x2_t) -> float64x2_t {
        let low = vdupq_n_f64(*base.add(vget_lane_s32::<0>(idx) as usize));
        vsetq_lane_f64::<1>(*base.add(vget_lane_s32::<1>(idx) as usize), low)
    }
    #[inline(always)]
    unsafe fn gather_u32(base: *const u32, idx: int32x2_t) -> int32x2_t {
        let low = vdup_n_s32(*base.add(vget_lane_s32::<0>(idx) as usize) as i32);
        vset_lane_s32::<1>(*base.add(vget_lane_s32::<1>(idx) as usize) as i32, low)
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, i: int32x2_t) {
        vst1_s32(p.cast::<i32>(), i)
    }
}

/// float32 in NEON: 4 lanes.
#[derive(Clone, Copy)]
struct NeonF32;

impl Kit for NeonF32 {
    type S = f32;
    type V = float32x4_t;
    type I = int32x4_t;
    type M = uint32x4_t;
    const W: usize = 4;
    const FAST_GATHER: bool = false;
    const INDEX_CLAMP: f32 = (1u32 << 30) as f32;

    #[inline(always)]
    unsafe fn load(p: *const f32) -> float32x4_t {
        vld1q_f32(p)
    }
    #[inline(always)]
    unsafe fn store_f(p: *mut f32, v: float32x4_t) {
        vst1q_f32(p, v)
    }
    #[inline(always)]
    unsafe fn splat(s: f32) -> float32x4_t {
        vdupq_n_f32(s)
    }
    #[inline(always)]
    unsafe fn add(a: float32x4_t, b: float32x4_t) -> float32x4_t {
        vaddq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: float32x4_t, b: float32x4_t) -> float32x4_t {
        vsubq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: float32x4_t, b: float32x4_t) -> float32x4_t {
        vmulq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn div(a: float32x4_t, b: float32x4_t) -> float32x4_t {
        vdivq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn min_keep(x: float32x4_t, acc: float32x4_t) -> float32x4_t {
        vbslq_f32(vcltq_f32(x, acc), x, acc)
    }
    #[inline(always)]
    unsafe fn max_keep(x: float32x4_t, acc: float32x4_t) -> float32x4_t {
        vbslq_f32(vcgtq_f32(x, acc), x, acc)
    }
    #[inline(always)]
    unsafe fn ge(a: float32x4_t, b: float32x4_t) -> uint32x4_t {
        vcgeq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn gt(a: float32x4_t, b: float32x4_t) -> uint32x4_t {
        vcgtq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn le(a: float32x4_t, b: float32x4_t) -> uint32x4_t {
        vcleq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn lt(a: float32x4_t, b: float32x4_t) -> uint32x4_t {
        vcltq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn eq(a: float32x4_t, b: float32x4_t) -> uint32x4_t {
        vceqq_f32(a, b)
    }
    #[inline(always)]
    unsafe fn same_bits(a: float32x4_t, b: float32x4_t) -> uint32x4_t {
        vceqq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b))
    }
    #[inline(always)]
    unsafe fn all() -> uint32x4_t {
        vdupq_n_u32(u32::MAX)
    }
    #[inline(always)]
    unsafe fn and(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
        vandq_u32(a, b)
    }
    #[inline(always)]
    unsafe fn or(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
        vorrq_u32(a, b)
    }
    #[inline(always)]
    unsafe fn and_not(a: uint32x4_t, b: uint32x4_t) -> uint32x4_t {
        vbicq_u32(a, b)
    }
    #[inline(always)]
    unsafe fn bits(m: uint32x4_t) -> u32 {
        let weights: [u32; 4] = [1, 2, 4, 8];
        vaddvq_u32(vandq_u32(m, vld1q_u32(weights.as_ptr())))
    }
    #[inline(always)]
    unsafe fn clamp0(v: float32x4_t, hi: float32x4_t) -> float32x4_t {
        vminnmq_f32(vmaxnmq_f32(v, vdupq_n_f32(0.0)), hi)
    }
    #[inline(always)]
    unsafe fn trunc_float(v: float32x4_t) -> float32x4_t {
        vrndq_f32(v)
    }
    #[inline(always)]
    unsafe fn to_index(v: float32x4_t) -> int32x4_t {
        vcvtq_s32_f32(v)
    }
    #[inline(always)]
    unsafe fn index_float(i: int32x4_t) -> float32x4_t {
        vcvtq_f32_s32(i)
    }
    #[inline(always)]
    unsafe fn isplat(v: i32) -> int32x4_t {
        vdupq_n_s32(v)
    }
    #[inline(always)]
    unsafe fn iadd(a: int32x4_t, b: int32x4_t) -> int32x4_t {
        vaddq_s32(a, b)
    }
    #[inline(always)]
    unsafe fn isub(a: int32x4_t, b: int32x4_t) -> int32x4_t {
        vsubq_s32(a, b)
    }
    #[inline(always)]
    unsafe fn imin(a: int32x4_t, b: int32x4_t) -> int32x4_t {
        vminq_s32(a, b)
    }
    #[inline(always)]
    unsafe fn imax(a: int32x4_t, b: int32x4_t) -> int32x4_t {
        vmaxq_s32(a, b)
    }
    #[inline(always)]
    unsafe fn igt(a: int32x4_t, b: int32x4_t) -> uint32x4_t {
        vcgtq_s32(a, b)
    }
    #[inline(always)]
    unsafe fn ieq(a: int32x4_t, b: int32x4_t) -> uint32x4_t {
        vceqq_s32(a, b)
    }
    #[inline(always)]
    unsafe fn first_lane(i: int32x4_t) -> i32 {
        vgetq_lane_s32::<0>(i)
    }
    #[inline(always)]
    unsafe fn select_i(m: uint32x4_t, a: int32x4_t, b: int32x4_t) -> int32x4_t {
        vbslq_s32(m, a, b)
    }
    #[inline(always)]
    unsafe fn dec_where(i: int32x4_t, m: uint32x4_t) -> int32x4_t {
        vaddq_s32(i, vreinterpretq_s32_u32(m))
    }
    #[inline(always)]
    unsafe fn inc_where(i: int32x4_t, m: uint32x4_t) -> int32x4_t {
        vsubq_s32(i, vreinterpretq_s32_u32(m))
    }
    #[inline(always)]
    unsafe fn gather(base: *const f32, idx: int32x4_t, _m: uint32x4_t) -> float32x4_t {
        let mut lanes = [0i32; 4];
        vst1q_s32(lanes.as_mut_ptr(), idx);
        let values = lanes.map(|k| *base.add(k as usize));
        vld1q_f32(values.as_ptr())
    }
    #[inline(always)]
    unsafe fn gather_u32(base: *const u32, idx: int32x4_t) -> int32x4_t {
        let mut lanes = [0i32; 4];
        vst1q_s32(lanes.as_mut_ptr(), idx);
        let values = lanes.map(|k| *base.add(k as usize) as i32);
        vld1q_s32(values.as_ptr())
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, i: int32x4_t) {
        vst1q_u32(p, vreinterpretq_u32_s32(i))
    }
}
