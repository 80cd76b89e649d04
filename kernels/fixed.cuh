// Deterministic weighted sums: each weight rounded once to a grid of 2^-k (k chosen per call by
// the host from the largest finite |weight| and the row count, src/fixed.rs), summed exactly in
// 128-bit two's complement integers, converted back to a double once at the end. Integer adds
// are order independent, so every launch shape gives the same bits, and the CPU's loops
// (src/fixed.rs mirrors every step here, bit for bit) give them too. A cell is FIXED_WORDS u64:
// the low and high words of the sum, and the flags of the non-finite weights it saw (numpy's
// float sum: NaN, or +inf and -inf together, make it NaN; +inf or -inf alone that infinity).
// Included by histogram.cu.
#pragma once

constexpr unsigned int FIXED_WORDS = 3;
constexpr u64 FIXED_POS_INF = 1;
constexpr u64 FIXED_NEG_INF = 2;
constexpr u64 FIXED_NAN = 4;

// A finite weight on the grid: round(w * 2^k), ties to even, from its bits (no float rounding
// on the way, so no fused multiply or library call can change it).
struct Fixed {
    u64 lo;
    u64 hi;
};

__device__ __forceinline__ Fixed fixed_of(double w, int k)
{
    const u64 bits = static_cast<u64>(__double_as_longlong(w));
    const int biased = static_cast<int>(bits >> 52 & 0x7FF);
    const u64 fraction = bits & ((1ull << 52) - 1);
    // w = m * 2^(e - 1075), with the implicit bit where w is normal.
    const u64 m = biased == 0 ? fraction : fraction | (1ull << 52);
    const int s = (biased == 0 ? 1 : biased) - 1075 + k;
    Fixed q{0, 0};
    if (s >= 0) {
        // The host's k keeps m << s below 2^126.
        if (s == 0) {
            q.lo = m;
        } else if (s < 64) {
            q.lo = m << s;
            q.hi = m >> (64 - s);
        } else {
            q.hi = m << (s - 64);
        }
    } else if (s > -54) {
        const unsigned int r = static_cast<unsigned int>(-s);
        const u64 kept = m >> r;
        const u64 rest = m & ((1ull << r) - 1);
        const u64 half = 1ull << (r - 1);
        q.lo = kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
    }
    if (bits >> 63) {
        q.lo = ~q.lo + 1;
        q.hi = ~q.hi + (q.lo == 0 ? 1 : 0);
    }
    return q;
}

// cell += q (mod 2^128): the low word's old value tells whether it carried.
__device__ __forceinline__ void add_fixed(u64* cell, Fixed q)
{
    const u64 old = atomicAdd(cell, q.lo);
    const u64 high = q.hi + (old + q.lo < old ? 1 : 0);
    if (high != 0) atomicAdd(cell + 1, high);
}

__device__ __forceinline__ void add_weight(u64* cell, double w, int k)
{
    if (isfinite(w)) {
        if (w != 0.0) add_fixed(cell, fixed_of(w, k));
    } else {
        atomicOr(cell + 2, isnan(w) ? FIXED_NAN : (w > 0 ? FIXED_POS_INF : FIXED_NEG_INF));
    }
}

// The sum of `replicas` cells `stride` cells apart, added into `out` (after a barrier).
__device__ __forceinline__ void merge_fixed(const u64* cells, unsigned int replicas,
                                            unsigned int stride, u64* out)
{
    u64 lo = 0, hi = 0, flags = 0;
    for (unsigned int r = 0; r < replicas; ++r) {
        const u64* const c = cells + r * stride * FIXED_WORDS;
        const u64 l = c[0];
        lo += l;
        hi += c[1] + (lo < l ? 1 : 0);
        flags |= c[2];
    }
    if ((lo | hi) != 0) add_fixed(out, Fixed{lo, hi});
    if (flags != 0) atomicOr(out + 2, flags);
}

// 2^a for -1022 <= a <= 1023, from its bits.
__device__ __forceinline__ double pow2(int a)
{
    return __longlong_as_double(static_cast<long long>(1023 + a) << 52);
}

// x * 2^k in two exact steps (each power a normal double): rounded once, where the result is
// subnormal, and never in between where it matters.
__device__ __forceinline__ double times_pow2(double x, int k)
{
    const int a = k / 2;
    return __dmul_rn(__dmul_rn(x, pow2(a)), pow2(k - a));
}

// A cell's double: its sum correctly rounded, times 2^-k; or the non-finite value its flags say.
__device__ __forceinline__ double fixed_value(const u64* cell, int k)
{
    const u64 flags = cell[2];
    if ((flags & FIXED_NAN) || (flags & (FIXED_POS_INF | FIXED_NEG_INF)) ==
                                   (FIXED_POS_INF | FIXED_NEG_INF)) {
        return __longlong_as_double(0x7FF8000000000000ll);
    }
    if (flags & FIXED_POS_INF) return __longlong_as_double(0x7FF0000000000000ll);
    if (flags & FIXED_NEG_INF) return __longlong_as_double(static_cast<long long>(0xFFF0000000000000ull));
    u64 lo = cell[0];
    u64 hi = cell[1];
    const bool negative = static_cast<long long>(hi) < 0;
    if (negative) {
        lo = ~lo + 1;
        hi = ~hi + (lo == 0 ? 1 : 0);
    }
    double magnitude;
    if (hi == 0) {
        magnitude = __ull2double_rn(lo);
    } else {
        // The top 64 bits with a sticky bit for the rest round as the 128 would.
        const int shift = __clzll(static_cast<long long>(hi));
        const u64 top = shift == 0 ? hi : (hi << shift) | (lo >> (64 - shift));
        const u64 rest = lo << shift;
        magnitude = __dmul_rn(__ull2double_rn(top | (rest != 0 ? 1 : 0)), pow2(64 - shift));
    }
    const double v = times_pow2(magnitude, -k);
    return negative ? -v : v;
}
