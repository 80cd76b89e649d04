// Linearized n-D histograms (src/nd.rs): each row's bin in every dimension, combined row-major
// into one cell index, counted by the same two strategies as 1-D. Included by histogram.cu, so
// `Value` is the module's column type; a group axis (`by=`) reads u32 ids instead.
//
// Kernel names: histdd_{shared,global}[_weighted]. Rows are dense (nulls were dropped on the
// host); a dimension may be strided (an (n, d) array has value_stride d). The rules are a
// __grid_constant__ parameter: they are read by reference, and a plain parameter whose address
// is taken is first copied to every thread's local memory.
#pragma once

enum DimKind : unsigned int {
    DIM_U32 = 0,     // UniformBins<float>  (bins.rs), float32 arithmetic
    DIM_U64 = 1,     // UniformBins<double>
    DIM_EDGES = 2,   // EdgeBins, double edges
    DIM_GROUPS = 3,  // the value is the bin: u32 group ids
};

struct DimRule {
    const void* values;  // Value (u32 for DIM_GROUPS), value_stride elements apart
    const void* edges;   // n + 1 edges: float for DIM_U32, double otherwise
    unsigned int n;
    unsigned int kind;
    unsigned int right;    // closed right
    unsigned int literal;  // UniformBins::literal
    unsigned int cell_stride;
    unsigned int value_stride;
    // UniformBins' parameters in double; exact for DIM_U32, whose host values are float.
    double lo;
    double hi;
    double denom;
    double n_f;
    double scale;
    double margin;
};

#define MAX_DIMS 8
struct DimRules {
    DimRule dim[MAX_DIMS];
    unsigned int dims;
    unsigned int cells;
};

static_assert(sizeof(DimRule) == 88 && alignof(DimRule) == 8, "host layout");
static_assert(sizeof(DimRules) == 712, "host layout");

template <class F>
__device__ __forceinline__ UniformBins<F> uniform_of(const DimRule& r)
{
    return UniformBins<F>{static_cast<const F*>(r.edges), r.n,      F(r.lo),    F(r.hi),
                          F(r.denom),                     F(r.n_f), F(r.scale), F(r.margin),
                          r.literal != 0};
}

// The bin of `row` in dimension `r`, or r.n when the row is not counted there.
__device__ __forceinline__ unsigned int dim_bin(const DimRule& r, u64 row)
{
    const u64 at = row * r.value_stride;
    if (r.kind == DIM_GROUPS) {
        return __ldg(static_cast<const unsigned int*>(r.values) + at);
    }
    const Value v = __ldg(static_cast<const Value*>(r.values) + at);
    switch (r.kind) {
    case DIM_U32: {
        const auto u = uniform_of<float>(r);
        return r.right ? bin_uniform_right(u, to_f32(v)) : bin_uniform_left(u, to_f32(v));
    }
    case DIM_U64: {
        const auto u = uniform_of<double>(r);
        return r.right ? bin_uniform_right(u, to_f64(v)) : bin_uniform_left(u, to_f64(v));
    }
    default: {
        const double* e = static_cast<const double*>(r.edges);
        return r.right ? bin_edges_right(e, r.n, to_f64(v)) : bin_edges_left(e, r.n, to_f64(v));
    }
    }
}

// The cells of rows row0, row0 + step, ... (STEP rows), rules.cells for a row with any
// coordinate not counted. Dimension by dimension, the STEP rows' values are loaded together, so
// a thread keeps STEP loads in flight. The kinds are uniform across the grid: no divergence.
// The dimension loop is not unrolled: eight inlined copies of every rule kind took 135
// registers a thread, one block of 448 threads per SM, and ran 15x slower than 1-D.
template <unsigned int STEP>
__device__ __forceinline__ void cells_of(
    const DimRules& rules, u64 row0, u64 step, unsigned int (&cells)[STEP])
{
    bool counted[STEP];
#pragma unroll
    for (unsigned int j = 0; j < STEP; ++j) {
        cells[j] = 0;
        counted[j] = true;
    }
#pragma unroll 1
    for (unsigned int d = 0; d < rules.dims; ++d) {
        const DimRule& r = rules.dim[d];
#pragma unroll
        for (unsigned int j = 0; j < STEP; ++j) {
            const unsigned int b = dim_bin(r, row0 + j * step);
            counted[j] &= b < r.n;
            cells[j] += b * r.cell_stride;
        }
    }
#pragma unroll
    for (unsigned int j = 0; j < STEP; ++j) {
        cells[j] = counted[j] ? cells[j] : rules.cells;
    }
}

// Calls op(row, cell) for every row of the grid-stride range (cell = rules.cells when the row
// is not counted), STEP rows at a time.
template <class Op>
__device__ __forceinline__ void for_each_cell(const DimRules& rules, u64 len, Op op)
{
    constexpr unsigned int STEP = 4;
    const u64 threads = u64(gridDim.x) * blockDim.x;
    u64 row = u64(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; row + (STEP - 1) * threads < len; row += STEP * threads) {
        unsigned int cells[STEP];
        cells_of<STEP>(rules, row, threads, cells);
#pragma unroll
        for (unsigned int j = 0; j < STEP; ++j) {
            op(row + j * threads, cells[j]);
        }
    }
    for (; row < len; row += threads) {
        unsigned int cell[1];
        cells_of<1>(rules, row, threads, cell);
        op(row, cell[0]);
    }
}

// Per-block replicated histograms in shared memory (see shared_hist in histogram.cu).
template <class C, class Out, class Amount>
__device__ __forceinline__ void shared_histdd(
    const DimRules& rules, u64 len, Amount amount, unsigned int replicas, unsigned int stride,
    Out* out)
{
    C* const counters = reinterpret_cast<C*>(smem);
    for (unsigned int i = threadIdx.x; i < replicas * stride; i += blockDim.x) {
        counters[i] = C(0);
    }
    __syncthreads();
    C* const mine = counters + threadIdx.x / 32 % replicas * stride;
    for_each_cell(rules, len, [&](u64 row, unsigned int c) {
        if (c < rules.cells) {
            atomicAdd(mine + c, amount.amount(row));
        }
    });
    __syncthreads();
    for (unsigned int c = threadIdx.x; c < rules.cells; c += blockDim.x) {
        Out sum = 0;
        for (unsigned int r = 0; r < replicas; ++r) {
            sum += counters[r * stride + c];
        }
        if (sum != Out(0)) {
            atomicAdd(out + c, sum);
        }
    }
}

extern "C" __global__ void histdd_shared(
    const __grid_constant__ DimRules rules, u64 len, unsigned int replicas, unsigned int stride,
    u64* out)
{
    shared_histdd<unsigned int>(rules, len, Unit(), replicas, stride, out);
}

extern "C" __global__ void histdd_shared_weighted(
    const __grid_constant__ DimRules rules, u64 len, const double* weights,
    unsigned int replicas, unsigned int stride, double* out)
{
    shared_histdd<double>(rules, len, Weights{weights, nullptr, 0}, replicas, stride, out);
}

// Global atomics with each thread's runs of one cell added at once (see global_hist).
extern "C" __global__ void histdd_global(const __grid_constant__ DimRules rules, u64 len, u64* out)
{
    unsigned int run_cell = rules.cells;
    unsigned int run = 0;
    for_each_cell(rules, len, [&](u64, unsigned int c) {
        if (c != run_cell) {
            if (run_cell < rules.cells) atomicAdd(out + run_cell, u64(run));
            run_cell = c;
            run = 0;
        }
        run += 1;
    });
    if (run_cell < rules.cells) atomicAdd(out + run_cell, u64(run));
}

extern "C" __global__ void histdd_global_weighted(
    const __grid_constant__ DimRules rules, u64 len, const double* weights, double* out)
{
    for_each_cell(rules, len, [&](u64 row, unsigned int c) {
        if (c < rules.cells) {
            atomicAdd(out + c, __ldg(weights + row));
        }
    });
}

// __shfl_down_sync has no overloads below 32 bits: widen, shuffle, narrow (exact).
template <class T>
__device__ __forceinline__ T shfl_down(T v, unsigned int offset)
{
    if constexpr (sizeof(T) < 4) {
        return static_cast<T>(__shfl_down_sync(0xffffffffu, static_cast<int>(v), offset));
    } else {
        return __shfl_down_sync(0xffffffffu, v, offset);
    }
}

// Minimum and maximum of each dimension over the rows with no NaN in any dimension (numpy's
// range of a device-resident n-D sample). One (min, max, found) per block and dimension.
extern "C" __global__ void extremes_dd(
    const __grid_constant__ DimRules rules, u64 len, Value* mins, Value* maxs, unsigned int* found)
{
    __shared__ Value lo_s[MAX_DIMS][32];
    __shared__ Value hi_s[MAX_DIMS][32];
    __shared__ unsigned int any_s[32];
    Value lo[MAX_DIMS] = {};
    Value hi[MAX_DIMS] = {};
    bool any = false;
    const u64 threads = u64(gridDim.x) * blockDim.x;
    for (u64 row = u64(blockIdx.x) * blockDim.x + threadIdx.x; row < len; row += threads) {
        Value v[MAX_DIMS] = {};
        bool complete = true;
#pragma unroll
        for (unsigned int d = 0; d < MAX_DIMS; ++d) {
            if (d < rules.dims) {
                const DimRule& r = rules.dim[d];
                v[d] = __ldg(static_cast<const Value*>(r.values) + row * r.value_stride);
                complete &= v[d] == v[d];  // NaN is the only value unequal to itself
            }
        }
        if (!complete) continue;
#pragma unroll
        for (unsigned int d = 0; d < MAX_DIMS; ++d) {
            if (d < rules.dims) {
                lo[d] = any && lo[d] < v[d] ? lo[d] : v[d];
                hi[d] = any && hi[d] > v[d] ? hi[d] : v[d];
            }
        }
        any = true;
    }
    // Reduce the block: each warp's lanes into lane 0, then the warps' leaders.
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    for (unsigned int offset = 16; offset > 0; offset /= 2) {
        const bool other_any = __shfl_down_sync(0xffffffffu, any, offset);
#pragma unroll
        for (unsigned int d = 0; d < MAX_DIMS; ++d) {
            const Value olo = shfl_down(lo[d], offset);
            const Value ohi = shfl_down(hi[d], offset);
            if (d < rules.dims && other_any) {
                lo[d] = any && lo[d] < olo ? lo[d] : olo;
                hi[d] = any && hi[d] > ohi ? hi[d] : ohi;
            }
        }
        any = any || other_any;
    }
    if (lane == 0) {
        any_s[warp] = any;
#pragma unroll
        for (unsigned int d = 0; d < MAX_DIMS; ++d) {
            lo_s[d][warp] = lo[d];
            hi_s[d][warp] = hi[d];
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        bool block_any = false;
        for (unsigned int w = 0; w < blockDim.x / 32; ++w) {
            if (!any_s[w]) continue;
            for (unsigned int d = 0; d < rules.dims; ++d) {
                lo[d] = block_any && lo[d] < lo_s[d][w] ? lo[d] : lo_s[d][w];
                hi[d] = block_any && hi[d] > hi_s[d][w] ? hi[d] : hi_s[d][w];
            }
            block_any = true;
        }
        found[blockIdx.x] = block_any;
        for (unsigned int d = 0; d < rules.dims; ++d) {
            mins[d * gridDim.x + blockIdx.x] = block_any ? lo[d] : Value(0);
            maxs[d * gridDim.x + blockIdx.x] = block_any ? hi[d] : Value(0);
        }
    }
}
