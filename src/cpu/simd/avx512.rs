//! The kit in AVX-512 (F and VL): float64 in 8 lanes with indices in 256 bits, float32 in 16
//! lanes; masks are mask registers, and gathers are fast enough for the binary search.

use std::arch::x86_64::*;

use super::kit::Kit;

kernels_for!("avx512f,avx512vl,avx2", Avx512F64, Avx512F32);

/// float64 in AVX-512: 8 lanes, indices in 256 bits (AVX-512VL for their masks).
#[derive(Clone, Copy)]
struct Avx512F64;

impl Kit for Avx512F64 {
    type S = f64;
    type V = __m512d;
    type I = __m256i;
    type M = __mmask8;
    const W: usize = 8;
    const FAST_GATHER: bool = true;
    const INDEX_CLAMP: f64 = (1u32 << 30) as f64;

    #[inline(always)]
    unsafe fn load(p: *const f64) -> __m512d {
        _mm512_loadu_pd(p)
    }
    #[inline(always)]
    unsafe fn store_f(p: *mut f64, v: __m512d) {
        _mm512_storeu_pd(p, v)
    }
    #[inline(always)]
    unsafe fn splat(s: f64) -> __m512d {
        _mm512_set1_pd(s)
    }
    #[inline(always)]
    unsafe fn add(a: __m512d, b: __m512d) -> __m512d {
        _mm512_add_pd(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: __m512d, b: __m512d) -> __m512d {
        _mm512_sub_pd(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: __m512d, b: __m512d) -> __m512d {
        _mm512_mul_pd(a, b)
    }
    #[inline(always)]
    unsafe fn div(a: __m512d, b: __m512d) -> __m512d {
        _mm512_div_pd(a, b)
    }
    #[inline(always)]
    unsafe fn min_keep(x: __m512d, acc: __m512d) -> __m512d {
        _mm512_min_pd(x, acc)
    }
    #[inline(always)]
    unsafe fn max_keep(x: __m512d, acc: __m512d) -> __m512d {
        _mm512_max_pd(x, acc)
    }
    #[inline(always)]
    unsafe fn ge(a: __m512d, b: __m512d) -> __mmask8 {
        _mm512_cmp_pd_mask::<_CMP_GE_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn gt(a: __m512d, b: __m512d) -> __mmask8 {
        _mm512_cmp_pd_mask::<_CMP_GT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn le(a: __m512d, b: __m512d) -> __mmask8 {
        _mm512_cmp_pd_mask::<_CMP_LE_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn lt(a: __m512d, b: __m512d) -> __mmask8 {
        _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn eq(a: __m512d, b: __m512d) -> __mmask8 {
        _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn same_bits(a: __m512d, b: __m512d) -> __mmask8 {
        _mm512_cmpeq_epi64_mask(_mm512_castpd_si512(a), _mm512_castpd_si512(b))
    }
    #[inline(always)]
    unsafe fn all() -> __mmask8 {
        0xff
    }
    #[inline(always)]
    unsafe fn and(a: __mmask8, b: __mmask8) -> __mmask8 {
        a & b
    }
    #[inline(always)]
    unsafe fn or(a: __mmask8, b: __mmask8) -> __mmask8 {
        a | b
    }
    #[inline(always)]
    unsafe fn and_not(a: __mmask8, b: __mmask8) -> __mmask8 {
        a & !b
    }
    #[inline(always)]
    unsafe fn bits(m: __mmask8) -> u32 {
        m as u32
    }
    #[inline(always)]
    unsafe fn clamp0(v: __m512d, hi: __m512d) -> __m512d {
        _mm512_min_pd(_mm512_max_pd(v, _mm512_setzero_pd()), hi)
    }
    #[inline(always)]
    unsafe fn trunc_float(v: __m512d) -> __m512d {
        _mm512_roundscale_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(v)
    }
    #[inline(always)]
    unsafe fn to_index(v: __m512d) -> __m256i {
        _mm512_cvttpd_epi32(v)
    }
    #[inline(always)]
    unsafe fn index_float(i: __m256i) -> __m512d {
        _mm512_cvtepi32_pd(i)
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
    unsafe fn igt(a: __m256i, b: __m256i) -> __mmask8 {
        _mm256_cmpgt_epi32_mask(a, b)
    }
    #[inline(always)]
    unsafe fn ieq(a: __m256i, b: __m256i) -> __mmask8 {
        _mm256_cmpeq_epi32_mask(a, b)
    }
    #[inline(always)]
    unsafe fn first_lane(i: __m256i) -> i32 {
        _mm_cvtsi128_si32(_mm256_castsi256_si128(i))
    }
    #[inline(always)]
    unsafe fn select_i(m: __mmask8, a: __m256i, b: __m256i) -> __m256i {
        _mm256_mask_blend_epi32(m, b, a)
    }
    #[inline(always)]
    unsafe fn dec_where(i: __m256i, m: __mmask8) -> __m256i {
        _mm256_mask_sub_epi32(i, m, i, _mm256_set1_epi32(1))
    }
    #[inline(always)]
    unsafe fn inc_where(i: __m256i, m: __mmask8) -> __m256i {
        _mm256_mask_add_epi32(i, m, i, _mm256_set1_epi32(1))
    }
    #[inline(always)]
    unsafe fn gather(base: *const f64, idx: __m256i, m: __mmask8) -> __m512d {
        _mm512_mask_i32gather_pd::<8>(_mm512_setzero_pd(), m, idx, base)
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

/// float32 in AVX-512: 16 lanes.
#[derive(Clone, Copy)]
struct Avx512F32;

impl Kit for Avx512F32 {
    type S = f32;
    type V = __m512;
    type I = __m512i;
    type M = __mmask16;
    const W: usize = 16;
    const FAST_GATHER: bool = true;
    const INDEX_CLAMP: f32 = (1u32 << 30) as f32;

    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m512 {
        _mm512_loadu_ps(p)
    }
    #[inline(always)]
    unsafe fn store_f(p: *mut f32, v: __m512) {
        _mm512_storeu_ps(p, v)
    }
    #[inline(always)]
    unsafe fn splat(s: f32) -> __m512 {
        _mm512_set1_ps(s)
    }
    #[inline(always)]
    unsafe fn add(a: __m512, b: __m512) -> __m512 {
        _mm512_add_ps(a, b)
    }
    #[inline(always)]
    unsafe fn sub(a: __m512, b: __m512) -> __m512 {
        _mm512_sub_ps(a, b)
    }
    #[inline(always)]
    unsafe fn mul(a: __m512, b: __m512) -> __m512 {
        _mm512_mul_ps(a, b)
    }
    #[inline(always)]
    unsafe fn div(a: __m512, b: __m512) -> __m512 {
        _mm512_div_ps(a, b)
    }
    #[inline(always)]
    unsafe fn min_keep(x: __m512, acc: __m512) -> __m512 {
        _mm512_min_ps(x, acc)
    }
    #[inline(always)]
    unsafe fn max_keep(x: __m512, acc: __m512) -> __m512 {
        _mm512_max_ps(x, acc)
    }
    #[inline(always)]
    unsafe fn ge(a: __m512, b: __m512) -> __mmask16 {
        _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn gt(a: __m512, b: __m512) -> __mmask16 {
        _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn le(a: __m512, b: __m512) -> __mmask16 {
        _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn lt(a: __m512, b: __m512) -> __mmask16 {
        _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn eq(a: __m512, b: __m512) -> __mmask16 {
        _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b)
    }
    #[inline(always)]
    unsafe fn same_bits(a: __m512, b: __m512) -> __mmask16 {
        _mm512_cmpeq_epi32_mask(_mm512_castps_si512(a), _mm512_castps_si512(b))
    }
    #[inline(always)]
    unsafe fn all() -> __mmask16 {
        0xffff
    }
    #[inline(always)]
    unsafe fn and(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & b
    }
    #[inline(always)]
    unsafe fn or(a: __mmask16, b: __mmask16) -> __mmask16 {
        a | b
    }
    #[inline(always)]
    unsafe fn and_not(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & !b
    }
    #[inline(always)]
    unsafe fn bits(m: __mmask16) -> u32 {
        m as u32
    }
    #[inline(always)]
    unsafe fn clamp0(v: __m512, hi: __m512) -> __m512 {
        _mm512_min_ps(_mm512_max_ps(v, _mm512_setzero_ps()), hi)
    }
    #[inline(always)]
    unsafe fn trunc_float(v: __m512) -> __m512 {
        _mm512_roundscale_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(v)
    }
    #[inline(always)]
    unsafe fn to_index(v: __m512) -> __m512i {
        _mm512_cvttps_epi32(v)
    }
    #[inline(always)]
    unsafe fn index_float(i: __m512i) -> __m512 {
        _mm512_cvtepi32_ps(i)
    }
    #[inline(always)]
    unsafe fn isplat(v: i32) -> __m512i {
        _mm512_set1_epi32(v)
    }
    #[inline(always)]
    unsafe fn iadd(a: __m512i, b: __m512i) -> __m512i {
        _mm512_add_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn isub(a: __m512i, b: __m512i) -> __m512i {
        _mm512_sub_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn imin(a: __m512i, b: __m512i) -> __m512i {
        _mm512_min_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn imax(a: __m512i, b: __m512i) -> __m512i {
        _mm512_max_epi32(a, b)
    }
    #[inline(always)]
    unsafe fn igt(a: __m512i, b: __m512i) -> __mmask16 {
        _mm512_cmpgt_epi32_mask(a, b)
    }
    #[inline(always)]
    unsafe fn ieq(a: __m512i, b: __m512i) -> __mmask16 {
        _mm512_cmpeq_epi32_mask(a, b)
    }
    #[inline(always)]
    unsafe fn first_lane(i: __m512i) -> i32 {
        _mm_cvtsi128_si32(_mm512_castsi512_si128(i))
    }
    #[inline(always)]
    unsafe fn select_i(m: __mmask16, a: __m512i, b: __m512i) -> __m512i {
        _mm512_mask_blend_epi32(m, b, a)
    }
    #[inline(always)]
    unsafe fn dec_where(i: __m512i, m: __mmask16) -> __m512i {
        _mm512_mask_sub_epi32(i, m, i, _mm512_set1_epi32(1))
    }
    #[inline(always)]
    unsafe fn inc_where(i: __m512i, m: __mmask16) -> __m512i {
        _mm512_mask_add_epi32(i, m, i, _mm512_set1_epi32(1))
    }
    #[inline(always)]
    unsafe fn gather(base: *const f32, idx: __m512i, m: __mmask16) -> __m512 {
        _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), m, idx, base)
    }
    #[inline(always)]
    unsafe fn gather_u32(base: *const u32, idx: __m512i) -> __m512i {
        _mm512_i32gather_epi32::<4>(idx, base.cast::<i32>())
    }
    #[inline(always)]
    unsafe fn store(p: *mut u32, i: __m512i) {
        _mm512_storeu_si512(p.cast(), i)
    }
}
