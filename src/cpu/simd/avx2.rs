//! The kit in AVX2 (without FMA, so no contraction can change a rounding): float64 in 4 lanes
//! with indices in 128 bits, float32 in 8 lanes.

use std::arch::x86_64::*;

use super::kit::Kit;

kernels_for!("avx2", Avx2F64, Avx2F32);

/// A 256-bit mask of 64-bit lanes as a 128-bit mask of 32-bit lanes.
#[inline(always)]
unsafe fn narrow(m: __m256d) -> __m128i {
    let picked = _mm256_permutevar8x32_epi32(
        _mm256_castpd_si256(m),
        _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
    );
    _mm256_castsi256_si128(picked)
}

/// float64 in AVX2: 4 lanes, indices in 128 bits.
#[derive(Clone, Copy)]
struct Avx2F64;

impl Kit for Avx2F64 {
    type S = f64;
    type V = __m256d;
    type I = __m128i;
    type M = __m256d;
    const W: usize = 4;
    const FAST_GATHER: bool = false;
    const INDEX_CLAMP: f64 = (1u32 << 30) as f64;

    #[inline(always)]
    unsafe fn load(p: *const f64) -> __m256d {
        _mm256_loadu_pd(p)
    }
    #[inline(always)]
    unsafe fn store_f(p: *mut f64, v: __m256d) {
        _mm256_storeu_pd(p, v)
    }
    #[inline(always)]
    unsafe fn splat(s: f64) -> __m256d {
        _mm256_set1_pd(s)
    }
    #[inline(always)]
    unsafe fn add(a: __m256d, b: __m256d) -> __m256d {
        _mm256_add_pd(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: __m256d, b: __m256d) -> __m256d {
        _mm256_sub_pd(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: __m256d, b: __m256d) -> __m256d {
        _mm256_mul_pd(a, b)
    }
    #[inline(always)]
    unsafe fn div(a: __m256d, b: __m256d) -> __m256d {
        _mm256_div_pd(a, b)
    }
    #[inline(always)]
    unsafe fn min_keep(x: __m256d, acc: __m256d) -> __m256d {
        // MINPD returns its second operand unless the first is smaller.
        _mm256_min_pd(x, acc)
    }
    #[inline(always)]
    unsafe fn max_keep(x: __m256d, acc: __m256d) -> __m256d {
        _mm256_max_pd(x, acc)
    }
    #[inline(always)]
    unsafe fn ge(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_GE_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn gt(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_GT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn le(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_LE_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn lt(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_LT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn eq(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_EQ_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn same_bits(a: __m256d, b: __m256d) -> __m256d {
        _mm256_castsi256_pd(_mm256_cmpeq_epi64(
            _mm256_castpd_si256(a),
            _mm256_castpd_si256(b),
        ))
    }
    #[inline(always)]
    unsafe fn all() -> __m256d {
        _mm256_castsi256_pd(_mm256_set1_epi64x(-1))
    }
    #[inline(always)]
    unsafe fn and(a: __m256d, b: __m256d) -> __m256d {
        _mm256_and_pd(a, b)
    }
    #[inline(always)]
    unsafe fn or(a: __m256d, b: __m256d) -> __m256d {
        _mm256_or_pd(a, b)
    }
    #[inline(always)]
    unsafe fn and_not(a: __m256d, b: __m256d) -> __m256d {
        _mm256_andnot_pd(b, a)
    }
    #[inline(always)]
    unsafe fn bits(m: __m256d) -> u32 {
        _mm256_movemask_pd(m) as u32
    }
    #[inline(always)]
    unsafe fn clamp0(v: __m256d, hi: __m256d) -> __m256d {
        // MAXPD returns its second operand (0) for NaN.
        _mm256_min_pd(_mm256_max_pd(v, _mm256_setzero_pd()), hi)
    }
    #[inline(always)]
    unsafe fn trunc_float(v: __m256d) -> __m256d {
        _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(v)
    }
    #[inline(always)]
    unsafe fn to_index(v: __m256d) -> __m128i {
        _mm256_cvttpd_epi32(v)
    }
    #[inline(always)]
    unsafe fn index_float(i: __m128i) -> __m256d {
        _mm256_cvtepi32_pd(i)
    }
    #[inline(always)]
    unsafe fn isplat(v: i32) -> __m128i {
        _mm_set1_epi32(v)
    }
    #[inline(always)]
    unsafe fn iadd(a: __m128i, b: __m128i) -> __m128i {
        _mm_add_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn isub(a: __m128i, b: __m128i) -> __m128i {
        _mm_sub_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn imin(a: __m128i, b: __m128i) -> __m128i {
        _mm_min_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn imax(a: __m128i, b: __m128i) -> __m128i {
        _mm_max_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn igt(a: __m128i, b: __m128i) -> __m256d {
        _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_cmpgt_epi32(a, b)))
    }
    #[inline(always)]
    unsafe fn ieq(a: __m128i, b: __m128i) -> __m256d {
        _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_cmpeq_epi32(a, b)))
    }
    #[inline(always)]
    unsafe fn first_lane(i: __m128i) -> i32 {
        _mm_cvtsi128_si32(i)
    }
    #[inline(always)]
    unsafe fn select_i(m: __m256d, a: __m128i, b: __m128i) -> __m128i {
        _mm_blendv_epi8(b, a, narrow(m))
    }
    #[inline(always)]
    unsafe fn dec_where(i: __m128i, m: __m256d) -> __m128i {
        _mm_add_epi32(i, narrow(m))
    }
    #[inline(always)]
    unsafe fn inc_where(i: __m128i, m: __m256d) -> __m128i {
        _mm_sub_epi32(i, narrow(m))
    }
    #[inline(always)]
    unsafe fn gather(base: *const f64, idx: __m128i, m: __m256d) -> __m256d {
        _mm256_mask_i32gather_pd::<8>(_mm256_setzero_pd(), base, idx, m)
    }
    #[inline(always)]
    unsafe fn gather_u32(base: *const u32, idx: __m128i) -> __m128i {
        _mm_i32gather_epi32::<4>(base.cast::<i32>(), idx)
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, i: __m128i) {
        _mm_storeu_si128(p.cast::<__m128i>(), i)
    }
}

/// float32 in AVX2: 8 lanes.
#[derive(Clone, Copy)]
struct Avx2F32;

impl Kit for Avx2F32 {
    type S = f32;
    type V = __m256;
    type I = __m256i;
    type M = __m256;
    const W: usize = 8;
    const FAST_GATHER: bool = false;
    const INDEX_CLAMP: f32 = (1u32 << 30) as f32;

    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m256 {
        _mm256_loadu_ps(p)
    }
    #[inline(always)]
    unsafe fn store_f(p: *mut f32, v: __m256) {
        _mm256_storeu_ps(p, v)
    }
    #[inline(always)]
    unsafe fn splat(s: f32) -> __m256 {
        _mm256_set1_ps(s)
    }
    #[inline(always)]
    unsafe fn add(a: __m256, b: __m256) -> __m256 {
        _mm256_add_ps(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: __m256, b: __m256) -> __m256 {
        _mm256_sub_ps(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: __m256, b: __m256) -> __m256 {
        _mm256_mul_ps(a, b)
    }
    #[inline(always)]
    unsafe fn div(a: __m256, b: __m256) -> __m256 {
        _mm256_div_ps(a, b)
    }
    #[inline(always)]
    unsafe fn min_keep(x: __m256, acc: __m256) -> __m256 {
        _mm256_min_ps(x, acc)
    }
    #[inline(always)]
    unsafe fn max_keep(x: __m256, acc: __m256) -> __m256 {
        _mm256_max_ps(x, acc)
    }
    #[inline(always)]
    unsafe fn ge(a: __m256, b: __m256) -> __m256 {
        _mm256_cmp_ps::<_CMP_GE_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn gt(a: __m256, b: __m256) -> __m256 {
        _mm256_cmp_ps::<_CMP_GT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn le(a: __m256, b: __m256) -> __m256 {
        _mm256_cmp_ps::<_CMP_LE_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn lt(a: __m256, b: __m256) -> __m256 {
        _mm256_cmp_ps::<_CMP_LT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn eq(a: __m256, b: __m256) -> __m256 {
        _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn same_bits(a: __m256, b: __m256) -> __m256 {
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(
            _mm256_castps_si256(a),
            _mm256_castps_si256(b),
        ))
    }
    #[inline(always)]
    unsafe fn all() -> __m256 {
        _mm256_castsi256_ps(_mm256_set1_epi32(-1))
    }
    #[inline(always)]
    unsafe fn and(a: __m256, b: __m256) -> __m256 {
        _mm256_and_ps(a, b)
    }
    #[inline(always)]
    unsafe fn or(a: __m256, b: __m256) -> __m256 {
        _mm256_or_ps(a, b)
    }
    #[inline(always)]
    unsafe fn and_not(a: __m256, b: __m256) -> __m256 {
        _mm256_andnot_ps(b, a)
    }
    #[inline(always)]
    unsafe fn bits(m: __m256) -> u32 {
        _mm256_movemask_ps(m) as u32
    }
    #[inline(always)]
    unsafe fn clamp0(v: __m256, hi: __m256) -> __m256 {
        _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), hi)
    }
    #[inline(always)]
    unsafe fn trunc_float(v: __m256) -> __m256 {
        _mm256_round_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(v)
    }
    #[inline(always)]
    unsafe fn to_index(v: __m256) -> __m256i {
        _mm256_cvttps_epi32(v)
    }
    #[inline(always)]
    unsafe fn index_float(i: __m256i) -> __m256 {
        _mm256_cvtepi32_ps(i)
    }
    #[inline(always)]
    unsafe fn isplat(v: i32) -> __m256i {
        _mm256_set1_epi32(v)
    }
    #[inline(always)]
    unsafe fn iadd(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn isub(a: __m256i, b: __m256i) -> __m256i {
        _mm256_sub_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn imin(a: __m256i, b: __m256i) -> __m256i {
        _mm256_min_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn imax(a: __m256i, b: __m256i) -> __m256i {
        _mm256_max_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn igt(a: __m256i, b: __m256i) -> __m256 {
        _mm256_castsi256_ps(_mm256_cmpgt_epi32(a, b))
    }
    #[inline(always)]
    unsafe fn ieq(a: __m256i, b: __m256i) -> __m256 {
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b))
    }
    #[inline(always)]
    unsafe fn first_lane(i: __m256i) -> i32 {
        _mm_cvtsi128_si32(_mm256_castsi256_si128(i))
    }
    #[inline(always)]
    unsafe fn select_i(m: __m256, a: __m256i, b: __m256i) -> __m256i {
        _mm256_blendv_epi8(b, a, _mm256_castps_si256(m))
    }
    #[inline(always)]
    unsafe fn dec_where(i: __m256i, m: __m256) -> __m256i {
        _mm256_add_epi32(i, _mm256_castps_si256(m))
    }
    #[inline(always)]
    unsafe fn inc_where(i: __m256i, m: __m256) -> __m256i {
        _mm256_sub_epi32(i, _mm256_castps_si256(m))
    }
    #[inline(always)]
    unsafe fn gather(base: *const f32, idx: __m256i, m: __m256) -> __m256 {
        _mm256_mask_i32gather_ps::<4>(_mm256_setzero_ps(), base, idx, m)
    }
    #[inline(always)]
    unsafe fn gather_u32(base: *const u32, idx: __m256i) -> __m256i {
        _mm256_i32gather_epi32::<4>(base.cast::<i32>(), idx)
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, i: __m256i) {
        _mm256_storeu_si256(p.cast::<__m256i>(), i)
    }
}
