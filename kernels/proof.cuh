// The proof of the cheap rule walked on the device, one bin a thread, for equal bins made by a
// formula: src/bins/uniform.rs's two walks (`UniformBins::estimate_is_near` and
// `UniformBins::slack`), transcribed. The host derives the proof from what this walk finds exactly
// as from its own walk, so the two must find the same: change both sides together or neither.
// A fresh range at a million bins walked on one host thread took longer than the count.
#pragma once

#define PROOF_INF __longlong_as_double(0x7ff0000000000000ll)

// Rust's `next_down`: the largest value below x (subnormals kept: see bin_rule.cuh).
__device__ __forceinline__ float next_down(float x)
{
    return nextafterf(x, -__int_as_float(0x7f800000));
}
__device__ __forceinline__ double next_down(double x) { return nextafter(x, -PROOF_INF); }

// `Linspace::edge` for i < n, the stored last edge at n (as the `edges` kernel).
__device__ __forceinline__ Value proof_edge(const ProofParams& p, unsigned int i)
{
    if (i >= p.n) {
        return static_cast<Value>(p.last);
    }
    return linspace_edge<Value>(p, i, p.single);
}

// `numpy_estimate_unrounded`: `x - lo` in the bins' type, the rest in double when wide (or in
// double bins), else in float and widened.
template <class F>
__device__ __forceinline__ double proof_numpy_estimate(const ProofParams& p, F lo, F x)
{
    const F d = sub_rn(x, lo);
    if constexpr (sizeof(F) == sizeof(float)) {
        if (!p.wide) {
            return double(mul_rn(div_rn(d, __double2float_rn(p.denom)), __double2float_rn(p.n_f)));
        }
    }
    return mul_rn(div_rn(double(d), p.denom), p.n_f);
}

extern "C" __global__ void prove(const __grid_constant__ ProofParams p)
{
    const Value lo = proof_edge(p, 0);
    const Value scale = static_cast<Value>(p.scale);
    const double n = double(p.n);
    bool strays = false;
    double worst = 0.0;
    for (u64 b = blockIdx.x * (u64)blockDim.x + threadIdx.x; b < p.n;
         b += (u64)gridDim.x * blockDim.x) {
        const unsigned int bin = unsigned(b);
        const double bf = double(bin);
        const Value first = proof_edge(p, bin);
        const Value next = proof_edge(p, bin + 1);
        const Value last = b + 1 == p.n ? next : next_down(next);
        // numpy's estimate within one bin of the edge bin (`estimate_is_near`).
        const double ef = proof_numpy_estimate(p, lo, first);
        const double el = proof_numpy_estimate(p, lo, last);
        const bool first_ok = bin <= 1 || ef >= double(bin - 1);
        const bool clamped = b + 2 >= p.n && el >= n && el < __dadd_rn(n, 1.0);
        const bool overflows = el == PROOF_INF;
        const bool last_ok = el < __dadd_rn(bf, 2.0) || el != el || clamped || overflows;
        strays |= !(first_ok && last_ok);
        // The cheap estimate's slack (`slack`); fmax drops NaN as Rust's `max` does.
        const double cf = double(mul_rn(sub_rn(first, lo), scale));
        const double cl = double(mul_rn(sub_rn(last, lo), scale));
        const double slack = fmax(fmax(__dsub_rn(bf, cf), __dsub_rn(cl, __dadd_rn(bf, 1.0))), 0.0);
        worst = fmax(worst, slack);
    }
    // -0.0 would order above every positive double as bits.
    worst = worst > 0.0 ? worst : 0.0;
    for (int lane = 16; lane > 0; lane /= 2) {
        worst = fmax(worst, __shfl_xor_sync(0xffffffffu, worst, lane));
    }
    strays = __any_sync(0xffffffffu, strays);
    if ((threadIdx.x & 31) == 0) {
        if (strays) {
            atomicOr(p.out, 1ull);
        }
        if (worst > 0.0) {
            atomicMax(p.out + 1, static_cast<u64>(__double_as_longlong(worst)));
        }
    }
}
