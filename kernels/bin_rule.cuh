// The bin contract on the GPU: which bin a value falls in. This is a transcription of
// src/bins/ (`UniformBins::bin_left`, `UniformBins::bin_right`, `EdgeBins::bin`) and of the
// value conversions in src/input.rs (`Value::to_f64`, `Value::to_f32`); the counts must agree
// with the CPU bit for bit, so change both sides together or neither.
//
// Every rule returns the bin index, or `n` when the value is not counted (NaN, outside the edges).
// The float arithmetic uses the explicit round-to-nearest intrinsics, which are never contracted
// into FMAs, so the estimate is the same IEEE expression Rust evaluates. Subnormals matter (a
// float32 range can be subnormal), hence the check below.
#pragma once

// NVRTC defines __CUDA_FTZ to 1 under -ftz=true or --use_fast_math.
#if defined(__CUDA_FTZ) && __CUDA_FTZ
#error "bin_rule.cuh needs subnormals: compile with -ftz=false and without --use_fast_math"
#endif

// ---- Conversions: Rust's `x as f64` / `x as f32` (round to nearest, exact where it can be) ----

__device__ __forceinline__ double to_f64(double x) { return x; }
__device__ __forceinline__ double to_f64(float x) { return x; }
__device__ __forceinline__ double to_f64(signed char x) { return x; }
__device__ __forceinline__ double to_f64(short x) { return x; }
__device__ __forceinline__ double to_f64(int x) { return x; }
__device__ __forceinline__ double to_f64(long long x) { return __ll2double_rn(x); }
__device__ __forceinline__ double to_f64(unsigned char x) { return x; }
__device__ __forceinline__ double to_f64(unsigned short x) { return x; }
__device__ __forceinline__ double to_f64(unsigned int x) { return x; }
__device__ __forceinline__ double to_f64(unsigned long long x) { return __ull2double_rn(x); }

// The float32 rule is only chosen for Float32 columns; the rest mirror Rust's `as f32` anyway.
__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(double x) { return __double2float_rn(x); }
__device__ __forceinline__ float to_f32(signed char x) { return x; }
__device__ __forceinline__ float to_f32(short x) { return x; }
__device__ __forceinline__ float to_f32(int x) { return __int2float_rn(x); }
__device__ __forceinline__ float to_f32(long long x) { return __ll2float_rn(x); }
__device__ __forceinline__ float to_f32(unsigned char x) { return x; }
__device__ __forceinline__ float to_f32(unsigned short x) { return x; }
__device__ __forceinline__ float to_f32(unsigned int x) { return __uint2float_rn(x); }
__device__ __forceinline__ float to_f32(unsigned long long x) { return __ull2float_rn(x); }

// ---- IEEE round-to-nearest arithmetic in the rule's type ----

__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }

// `min(v as usize, last)`: Rust's cast truncates and saturates, NaN and negatives giving 0.
// So does PTX's cvt.rzi to an unsigned integer, and any v past 2^32 ends at `last` either way.
__device__ __forceinline__ unsigned int trunc_to_bin(float v, unsigned int last)
{
    return min(__float2uint_rz(v), last);
}
__device__ __forceinline__ unsigned int trunc_to_bin(double v, unsigned int last)
{
    return min(__double2uint_rz(v), last);
}

// ---- Equal-width bins (`UniformBins<F>`) ----

// `Linspace::edge` of src/bins/linspace.rs for i < n: numpy's `i * step + start` in float when
// the bins are `single` (a float32 linspace), else in double, then cast to the edges' type `T`.
// `bins` is whatever carries the formula's `start` and `step` (the count's rule, the `edges` and
// `prove` parameters): the one copy of the formula on the device.
template <class T, class Bins, class Index>
__device__ __forceinline__ T linspace_edge(const Bins& bins, Index i, bool single)
{
    if (single) {
        return static_cast<T>(__fadd_rn(__fmul_rn(__uint2float_rn(unsigned(i)), float(bins.step)),
                                        float(bins.start)));
    }
    return static_cast<T>(__dadd_rn(__dmul_rn(double(i), bins.step), bins.start));
}

// `e` holds n + 1 edges (unread when they are recomputed); `lo` and `hi` are e[0] and e[n].
template <class F>
struct UniformBins {
    const F* e;
    unsigned int n;
    F lo;
    F hi;
    double denom;  // numpy's norm_denom (`Estimate`)
    double n_f;    // numpy's norm_numerator
    F scale;       // n / (hi - lo): the cheap estimate (closed left), Polars' (closed right)
    F margin;      // a fraction of the cheap estimate in (margin, 1 - margin) names the bin
    double start;  // `Linspace`: edge i < n is F(P(i) * step + start)
    double step;
};

// Edge i of the bins (i <= n): read (Formula 0), or recomputed from `Linspace` in double (1) or
// float (2) where the edges would not stay in cache; the array is then never read.
template <class F, int Formula>
__device__ __forceinline__ F edge_of(const UniformBins<F>& u, unsigned int i)
{
    if (Formula == 0) {
        return u.e[i];
    }
    if (i >= u.n) {
        return u.hi;
    }
    return linspace_edge<F>(u, i, Formula == 2);
}

// numpy's estimate `((x - lo) / denom) * n`: x - lo in F, the rest in double when Wide (numpy's
// norm_denom is a float64 scalar), else in F (`UniformBins::numpy_estimate`).
template <class F, bool Wide>
__device__ __forceinline__ unsigned int numpy_estimate(const UniformBins<F>& u, F x,
                                                       unsigned int last)
{
    if constexpr (Wide && sizeof(F) == sizeof(float)) {
        const double d = static_cast<double>(sub_rn(x, u.lo));
        return trunc_to_bin(mul_rn(div_rn(d, u.denom), u.n_f), last);
    } else {
        return trunc_to_bin(mul_rn(div_rn(sub_rn(x, u.lo), F(u.denom)), F(u.n_f)), last);
    }
}

// The rules run every step for every x, NaN and outside values included (indices stay in range,
// so the edge loads are safe), and pick the answer at the end: bins.rs's early returns would make
// a warp diverge (selects ran 6% faster on an H200).

// numpy: [e[i], e[i+1]), the last bin closed on both sides, by numpy's own estimate and single
// correction. bins.rs steps down when x < e[i], then up when x >= e[i+1] (not past the last bin);
// after a step down x < e[i+1] already, so one step at most: both neighbours load up front.
template <class F, int Formula, bool Wide>
__device__ __forceinline__ unsigned int bin_uniform_left_literal(const UniformBins<F>& u, F x)
{
    const unsigned int last = u.n - 1;
    unsigned int i = numpy_estimate<F, Wide>(u, x, last);
    const F below = edge_of<F, Formula>(u, i);
    const F above = edge_of<F, Formula>(u, i + 1);
    i = x < below ? i - 1 : (i != last && x >= above ? i + 1 : i);
    return x >= u.lo && x <= u.hi ? i : u.n;
}

// The same bins where the host proved (`literal` unset) that the edge bin is numpy's answer,
// found from a cheap estimate. Far enough from a bin boundary the estimate alone is proof and no
// edge is read: with millions of bins those reads went to L2 and cost more than the count.
template <class F, int Formula>
__device__ __forceinline__ unsigned int bin_uniform_left_cheap(const UniformBins<F>& u, F x)
{
    const unsigned int last = u.n - 1;
    const F f = mul_rn(sub_rn(x, u.lo), u.scale);
    unsigned int i = trunc_to_bin(f, last);
    const F frac = sub_rn(f, F(i));
    if (!(frac > u.margin && frac < F(1) - u.margin)) {
        while (i > 0 && x < edge_of<F, Formula>(u, i)) --i;
        while (i < last && x >= edge_of<F, Formula>(u, i + 1)) ++i;
    }
    return x >= u.lo && x <= u.hi ? i : u.n;
}

// Polars: (e[i], e[i+1]], the first bin closed on both sides.
template <class F, int Formula>
__device__ __forceinline__ unsigned int bin_uniform_right(const UniformBins<F>& u, F x)
{
    const unsigned int last = u.n - 1;
    unsigned int i = trunc_to_bin(mul_rn(u.scale, sub_rn(x, u.lo)), last);
    const F below = edge_of<F, Formula>(u, i);
    const F above = edge_of<F, Formula>(u, i + 1);
    i = x <= below ? i - 1 : (x > above ? i + 1 : i);
    return x == u.lo ? 0u : (x > u.lo && x <= u.hi ? i : u.n);
}

// ---- Explicit, strictly increasing float64 edges (`EdgeBins`) ----

// Number of the m sorted edges <= x (`upper_bound` in bins/edges.rs).
__device__ __forceinline__ unsigned int count_le(const double* e, unsigned int m, double x)
{
    unsigned int base = 0;
    unsigned int len = m;
    while (len > 1) {
        const unsigned int half = len / 2;
        base = e[base + half - 1] <= x ? base + half : base;
        len -= half;
    }
    return base + (e[base] <= x ? 1u : 0u);
}

// Number of the m sorted edges < x (`lower_bound` in bins/edges.rs).
__device__ __forceinline__ unsigned int count_lt(const double* e, unsigned int m, double x)
{
    unsigned int base = 0;
    unsigned int len = m;
    while (len > 1) {
        const unsigned int half = len / 2;
        base = e[base + half - 1] < x ? base + half : base;
        len -= half;
    }
    return base + (e[base] < x ? 1u : 0u);
}

// Bin i holds e[i] <= x < e[i+1]; the last edge belongs to the last bin.
__device__ __forceinline__ unsigned int bin_edges_left(const double* e, unsigned int n, double x)
{
    const unsigned int i = count_le(e, n + 1, x) - 1;
    return x >= e[0] && x <= e[n] ? (i < n - 1 ? i : n - 1) : n;
}

// Bin i holds e[i] < x <= e[i+1]; the first edge belongs to the first bin.
__device__ __forceinline__ unsigned int bin_edges_right(const double* e, unsigned int n, double x)
{
    const unsigned int below = count_lt(e, n + 1, x);
    return x >= e[0] && x <= e[n] ? (below > 1u ? below : 1u) - 1 : n;
}

// ---- Explicit integer edges compared exactly (`KeyedBins` in src/bins/integer.rs) ----

// The order-preserving 64-bit key of an integer value (`Domain::key`): UInt64 values are their
// own keys; every other integer column widens to Int64, whose sign bit is flipped.
template <class V>
__device__ __forceinline__ unsigned long long int_key(V v)
{
    static_assert(V(0.5) == V(0), "integer edges bin integer columns only");
    if constexpr (sizeof(V) == 8 && V(-1) > V(0)) {
        return static_cast<unsigned long long>(v);
    } else {
        return static_cast<unsigned long long>(static_cast<long long>(v)) ^ 0x8000000000000000ull;
    }
}

// Number of the m sorted keys <= k, and < k (`count_le`, `count_lt` on keys).
__device__ __forceinline__ unsigned int count_le_key(const unsigned long long* e, unsigned int m,
                                                     unsigned long long k)
{
    unsigned int base = 0;
    unsigned int len = m;
    while (len > 1) {
        const unsigned int half = len / 2;
        base = e[base + half - 1] <= k ? base + half : base;
        len -= half;
    }
    return base + (e[base] <= k ? 1u : 0u);
}

__device__ __forceinline__ unsigned int count_lt_key(const unsigned long long* e, unsigned int m,
                                                     unsigned long long k)
{
    unsigned int base = 0;
    unsigned int len = m;
    while (len > 1) {
        const unsigned int half = len / 2;
        base = e[base + half - 1] < k ? base + half : base;
        len -= half;
    }
    return base + (e[base] < k ? 1u : 0u);
}

// `KeyedBins::bin`: the n + 1 keys are the edges clamped into the values' domain, exact for
// every key but the domain's two ends, whose bins (flow bins included) the host worked out.
template <bool Right, bool Flow>
__device__ __forceinline__ unsigned int bin_int_keys(const unsigned long long* e, unsigned int n,
                                                     unsigned int at_min, unsigned int at_max,
                                                     unsigned long long k)
{
    const bool in = k >= e[0] && k <= e[n];
    unsigned int b;
    if constexpr (Right) {
        const unsigned int below = count_lt_key(e, n + 1, k);
        b = in ? (below > 1u ? below : 1u) - 1 : n;
    } else {
        const unsigned int i = count_le_key(e, n + 1, k) - 1;
        b = in ? (i < n - 1 ? i : n - 1) : n;
    }
    if constexpr (Flow) {
        b = b < n ? b + 1 : (k < e[0] ? 0u : n + 1);
    }
    return k == 0ull ? at_min : (k == ~0ull ? at_max : b);
}
