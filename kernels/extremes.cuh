// numpy's automatic range of a device column: the minimum and maximum of its non-NaN values
// (with -DFINITE_MAGNITUDES=1: of its finite magnitudes), per block; the host finishes
// (input.rs `extremes_of`). A contiguous column is read 16 bytes a thread, two reads in flight:
// a byte at a time, 2^30 uint8 values took 3.6 ms on an H100, about ten times their read.
// Included by histogram.cu (KERNEL_EXTREMES) after rows.cuh.
#pragma once

// The running minimum and maximum of the values seen, and whether there were any: one fold for
// a value and for another thread's fold alike.
struct Extremes {
    Value lo;
    Value hi;
    bool any;

    __device__ void merge(Value a, Value b, bool seen)
    {
        if (!seen) return;
        lo = (!any || a < lo) ? a : lo;
        hi = (!any || b > hi) ? b : hi;
        any = true;
    }

#if FINITE_MAGNITUDES
    // The extremes of the finite |values| (the weights' grid, fixed.cuh): NaN and infinities
    // are left out.
    __device__ void take(Value v)
    {
        const Value a = fabs(v);
        merge(a, a, isfinite(a));
    }
#else
    // NaN is never counted, so it never sets the range.
    __device__ void take(Value v) { merge(v, v, v == v); }
#endif

    // The values of a 16-byte chunk.
    __device__ __forceinline__ void take_chunk(const uint4& q)
    {
        constexpr unsigned int K = 16 / sizeof(Value);
        if constexpr (sizeof(Value) <= 2) {
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) take(narrow_element<Value>(q, k));
        } else {
            Chunk<Value> chunk{q};
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) take(chunk.next());
        }
    }
};

// This thread's share of the rows: the aligned body in 16-byte chunks, the unaligned head and
// tail (fewer than 16 / sizeof(Value) rows each) a row a thread; a strided column a row a
// thread.
__device__ __forceinline__ void fold_rows(const Column& rows, Extremes& mine)
{
    const Value* const values = static_cast<const Value*>(rows.values);
    const u64 len = rows.len;
    const u64 thread = blockIdx.x * u64(blockDim.x) + threadIdx.x;
    const u64 threads = u64(gridDim.x) * blockDim.x;
    if (rows.stride != 1) {
        for (u64 i = thread; i < len; i += threads) mine.take(__ldg(values + i * rows.stride));
        return;
    }
    constexpr unsigned int K = 16 / sizeof(Value);
    const u64 misalign = reinterpret_cast<u64>(values) % 16;
    const u64 head_rows = (16 - misalign) % 16 / sizeof(Value);
    const u64 head = head_rows < len ? head_rows : len;
    const u64 units = (len - head) / K;
    const uint4* const body = reinterpret_cast<const uint4*>(values + head);
    for (u64 u = thread; u < units; u += 2 * threads) {
        const bool second = u + threads < units;
        const uint4 a = __ldg(body + u);
        const uint4 b = second ? __ldg(body + u + threads) : make_uint4(0, 0, 0, 0);
        mine.take_chunk(a);
        if (second) mine.take_chunk(b);
    }
    const u64 tail = head + units * K;
    if (thread < head) mine.take(__ldg(values + thread));
    if (tail + thread < len) mine.take(__ldg(values + tail + thread));
}

extern "C" __global__ void extremes(const __grid_constant__ ExtremesParams p)
{
    __shared__ Value s_lo[256];
    __shared__ Value s_hi[256];
    __shared__ unsigned char s_any[256];
    Extremes mine{Value(0), Value(0), false};
    fold_rows(p.rows, mine);
    s_lo[threadIdx.x] = mine.lo;
    s_hi[threadIdx.x] = mine.hi;
    s_any[threadIdx.x] = mine.any;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            const unsigned int j = threadIdx.x + half;
            mine.merge(s_lo[j], s_hi[j], s_any[j]);
            s_lo[threadIdx.x] = mine.lo;
            s_hi[threadIdx.x] = mine.hi;
            s_any[threadIdx.x] = mine.any;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        static_cast<Value*>(p.mins)[blockIdx.x] = mine.lo;
        static_cast<Value*>(p.maxs)[blockIdx.x] = mine.hi;
        p.found[blockIdx.x] = mine.any;
    }
}
