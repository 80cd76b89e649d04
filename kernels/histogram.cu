// The kernels, one entry point per module: NVRTC compiles this file once per kernel a plan needs
// (src/gpu/compile.rs), with -DVALUE_T=<C type of the column> and one of
//   KERNEL_COUNT      count: a family (-DFAMILY=FAMILY_SHARED|PACKED|SEGMENTED|GLOBAL, -DWEIGHTED)
//                     over one column binned by a rule (binners.cuh) into the histogram
//   KERNEL_LINEARIZE  linearize: one axis of an n-D job into the cells of its rows
//   KERNEL_SEG_SCAN, KERNEL_SEG_COUNT   the segmented family's later passes (segmented.cuh)
//   KERNEL_EXTREMES   extremes: per-block min and max of a device column
//   KERNEL_EDGES      edges: equal bins' edges from their linspace formula (VALUE_T: their type)
// Every launch takes its parameters as one struct (abi.cuh). Rows are aligned to their element
// size (the 16-byte body is found from the address).
#include "abi.cuh"
#include "bin_rule.cuh"

#ifndef VALUE_T
#error "compile with -DVALUE_T=<C type of the column>"
#endif
typedef VALUE_T Value;

#define FAMILY_SHARED 1
#define FAMILY_PACKED 2
#define FAMILY_SEGMENTED 3
#define FAMILY_GLOBAL 4
#ifndef WEIGHTED
#define WEIGHTED 0
#endif

// Explicit edges are staged in shared memory by the shared family only.
#if defined(KERNEL_COUNT) && defined(FAMILY) && FAMILY == FAMILY_SHARED
#define STAGE_EDGES true
#else
#define STAGE_EDGES false
#endif

#include "binners.cuh"
#include "rows.cuh"
#include "counters.cuh"

extern __shared__ __align__(16) unsigned char smem[];

#include "families.cuh"
#include "segmented.cuh"

__device__ __forceinline__ Rows rows_of(const Column& c)
{
    return Rows(static_cast<const Value*>(c.values), c.len, c.validity, c.validity_offset);
}

#if defined(KERNEL_COUNT)
#if FAMILY == FAMILY_SEGMENTED
#define COUNT_BOUNDS __launch_bounds__(SEG_PARTITION_THREADS, 2)
#else
#define COUNT_BOUNDS
#endif
extern "C" __global__ void COUNT_BOUNDS count(const __grid_constant__ CountParams p)
{
    const Rows rows = rows_of(p.rows);
    const Binner bin(p.rule);
#if WEIGHTED
    const Weights weights{p.weights.values, p.weights.validity, p.weights.validity_offset};
#if FAMILY == FAMILY_SHARED
    shared_hist<double>(rows, bin, weights, p.shared.replicas, p.shared.stride,
                        static_cast<double*>(p.out));
#elif FAMILY == FAMILY_GLOBAL
    global_weighted_hist(rows, bin, weights, static_cast<double*>(p.out));
#else
#error "weighted sums take the shared or the global family"
#endif
#else
    u64* const out = static_cast<u64*>(p.out);
#if FAMILY == FAMILY_SHARED
    shared_hist<unsigned int>(rows, bin, Unit(), p.shared.replicas, p.shared.stride, out);
#elif FAMILY == FAMILY_PACKED
    packed_hist(rows, bin, out);
#elif FAMILY == FAMILY_SEGMENTED
    seg_partition(rows, bin, p.seg, out);
#elif FAMILY == FAMILY_GLOBAL
    global_hist(rows, bin, out);
#else
#error "compile with -DFAMILY=FAMILY_SHARED|FAMILY_PACKED|FAMILY_SEGMENTED|FAMILY_GLOBAL"
#endif
#endif
}
#endif

#if defined(KERNEL_LINEARIZE)
// Loads in flight per thread: each row also reads and writes its cell, so fewer than count's.
constexpr unsigned int LINEARIZE_LOADS_IN_FLIGHT = 2;

extern "C" __global__ void linearize(const __grid_constant__ LinearizeParams p)
{
    const Binner bin(p.rule);
    const unsigned int n = bin.n;
    unsigned int* const cells = p.cells;
    auto put = [&](bool present, u64 row, Value x) {
        const unsigned int b = present ? bin(x) : n;
        if (p.first) {
            cells[row] = b < n ? b * p.cell_stride : p.cells_total;
        } else {
            const unsigned int c = cells[row];
            cells[row] = c == p.cells_total || b >= n ? p.cells_total : c + b * p.cell_stride;
        }
    };
    if (p.rows.stride == 1) {
        // The row loops also call op for rows another thread owns (present = false): a body lane
        // past the last vector, an edge lane past the head or the end. Counters add those to a
        // spare bin; a cell is written by its row's owner only.
        const Rows rows = rows_of(p.rows);
        const u64 tail = rows.head + rows.vectors * VALUES_PER_VECTOR;
        auto body = [&](bool present, u64 row, Value x) {
            if (row < tail) put(present, row, x);
        };
        // Edge lanes 0..15 own the head rows, lanes 16..31 the tail rows; with few rows a head
        // lane past the head names a tail row, which its tail lane writes.
        auto edge = [&](bool present, u64 row, Value x) {
            const bool owned = threadIdx.x < 16 ? row < rows.head : row >= tail && row < rows.len;
            if (owned) put(present, row, x);
        };
        NoStep none;
        if (rows.validity != nullptr) {
            body_rows<LINEARIZE_LOADS_IN_FLIGHT, true>(rows, body, none);
            edge_rows<true>(rows, edge);
        } else {
            body_rows<LINEARIZE_LOADS_IN_FLIGHT, false>(rows, body, none);
            edge_rows<false>(rows, edge);
        }
    } else {
        // A column of an (n, d) array: values d apart, no bitmap.
        const Value* const values = static_cast<const Value*>(p.rows.values);
        const u64 threads = u64(gridDim.x) * blockDim.x;
        for (u64 row = u64(blockIdx.x) * blockDim.x + threadIdx.x; row < p.rows.len;
             row += threads) {
            put(true, row, __ldg(values + row * p.rows.stride));
        }
    }
}
#endif

#if defined(KERNEL_EXTREMES)
// numpy's automatic range of a device column: min and max of its non-NaN values, per block; the
// host finishes.
extern "C" __global__ void extremes(const __grid_constant__ ExtremesParams p)
{
    __shared__ Value s_lo[256];
    __shared__ Value s_hi[256];
    __shared__ unsigned char s_any[256];
    const Value* const values = static_cast<const Value*>(p.rows.values);
    Value lo = Value(0), hi = Value(0);
    bool any = false;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < p.rows.len;
         i += (u64)gridDim.x * blockDim.x) {
        const Value v = __ldg(values + i * p.rows.stride);
        if (!(v == v)) continue;  // NaN is never counted, so it never sets the range
        lo = (!any || v < lo) ? v : lo;
        hi = (!any || v > hi) ? v : hi;
        any = true;
    }
    s_lo[threadIdx.x] = lo;
    s_hi[threadIdx.x] = hi;
    s_any[threadIdx.x] = any;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half && s_any[threadIdx.x + half]) {
            const unsigned int j = threadIdx.x + half;
            const bool mine = s_any[threadIdx.x];
            s_lo[threadIdx.x] = (!mine || s_lo[j] < s_lo[threadIdx.x]) ? s_lo[j] : s_lo[threadIdx.x];
            s_hi[threadIdx.x] = (!mine || s_hi[j] > s_hi[threadIdx.x]) ? s_hi[j] : s_hi[threadIdx.x];
            s_any[threadIdx.x] = 1;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        static_cast<Value*>(p.mins)[blockIdx.x] = s_lo[0];
        static_cast<Value*>(p.maxs)[blockIdx.x] = s_hi[0];
        p.found[blockIdx.x] = s_any[0];
    }
}
#endif

#if defined(KERNEL_EDGES)
// `Linspace::edge` of bins.rs for i < n, the stored last edge at n.
extern "C" __global__ void edges(const __grid_constant__ EdgesParams p)
{
    Value* const out = static_cast<Value*>(p.out);
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i <= p.n;
         i += (u64)gridDim.x * blockDim.x) {
        Value e;
        if (i == p.n) {
            e = static_cast<Value>(p.last);
        } else if (p.single) {
            e = static_cast<Value>(__fadd_rn(__fmul_rn(__uint2float_rn(unsigned(i)), float(p.step)),
                                             float(p.start)));
        } else {
            e = static_cast<Value>(__dadd_rn(__dmul_rn(double(i), p.step), p.start));
        }
        out[i] = e;
    }
}
#endif
