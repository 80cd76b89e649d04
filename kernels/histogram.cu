// Histogram kernels, compiled by NVRTC once per column type with -DVALUE_T=<C type>.
//
// Kernel names: hist_{shared,global}[_weighted]_{u32,u64,edges}_{left,right}
//   u32   : UniformRule32, arithmetic in float  (numpy's rule for Float32 columns)
//   u64   : UniformRule64, arithmetic in double
//   edges : EdgeRule, explicit double edges
// shared : per-block u32 (or double) histograms in dynamic shared memory, merged into `out` with
//          one atomic per non-zero bin and block; for bin counts that fit in shared memory.
// global : warp-aggregated atomics straight into `out`; for any bin count.
//
// Launch assumptions: blockDim.x is a multiple of 32 (warp intrinsics use the full mask), and
// `values` is aligned to its element size (the 16-byte body is found from the address). `out`
// is zeroed by the host and accumulates, so a column may be processed in several launches.
#include "bin_rule.cuh"

#ifndef VALUE_T
#error "compile with -DVALUE_T=<C type of the column>"
#endif

typedef VALUE_T Value;
typedef unsigned long long u64;

static_assert(16 % sizeof(Value) == 0, "the vector loop needs a power-of-two element size");

// ---- Rule parameters, passed by value (the host mirrors these layouts with #[repr(C)]) ----

template <class F>
struct UniformRule {
    const F* edges;  // n + 1 edges
    unsigned int n;
    unsigned int literal;  // replay numpy's division (see bins.rs); else the cheap rule
    F denom;
    F n_f;
    F scale;  // n / (hi - lo)
    F margin;  // see UniformBins::margin in bin_rule.cuh
};
typedef UniformRule<float> UniformRule32;
typedef UniformRule<double> UniformRule64;

struct EdgeRule {
    const double* edges;  // n + 1 edges, strictly increasing
    unsigned int n;
};

static_assert(sizeof(UniformRule32) == 32 && alignof(UniformRule32) == 8, "host layout");
static_assert(sizeof(UniformRule64) == 48 && alignof(UniformRule64) == 8, "host layout");
static_assert(sizeof(EdgeRule) == 16 && alignof(EdgeRule) == 8, "host layout");

// ---- Value -> bin, for one rule kind and closed side ----

template <class F, bool RIGHT>
struct UniformBin {
    UniformBins<F> u;
    unsigned int n;

    __device__ explicit UniformBin(const UniformRule<F>& r)
        : u{r.edges, r.n, r.edges[0], r.edges[r.n], r.denom, r.n_f, r.scale, r.margin, r.literal != 0}, n(r.n)
    {
    }

    // The edges stay in global memory (two neighbours per row hit L1); counters start at once.
    __device__ unsigned char* stage(unsigned char* smem) { return smem; }

    __device__ unsigned int operator()(Value v) const
    {
        F x;
        if constexpr (sizeof(F) == sizeof(float)) {
            x = to_f32(v);
        } else {
            x = to_f64(v);
        }
        return RIGHT ? bin_uniform_right(u, x) : bin_uniform_left(u, x);
    }
};

template <bool RIGHT>
struct EdgeBin {
    const double* e;
    unsigned int n;

    __device__ explicit EdgeBin(const EdgeRule& r) : e(r.edges), n(r.n) {}

    // The binary search touches log2(n) edges a row: keep them in shared memory, before the
    // counters, which start at the next 16-byte boundary.
    __device__ unsigned char* stage(unsigned char* smem)
    {
        double* staged = reinterpret_cast<double*>(smem);
        for (unsigned int i = threadIdx.x; i <= n; i += blockDim.x) {
            staged[i] = e[i];
        }
        e = staged;
        return smem + ((n + 1ull) * sizeof(double) + 15) / 16 * 16;
    }

    __device__ unsigned int operator()(Value v) const
    {
        const double x = to_f64(v);
        return RIGHT ? bin_edges_right(e, n, x) : bin_edges_left(e, n, x);
    }
};

template <bool RIGHT> using U32Bin = UniformBin<float, RIGHT>;
template <bool RIGHT> using U64Bin = UniformBin<double, RIGHT>;

// ---- Rows: validity and the 16-byte load loop ----

// Arrow validity: bit (offset + row), least significant bit first.
__device__ __forceinline__ bool bit_set(const unsigned char* bits, u64 offset, u64 row)
{
    const u64 b = offset + row;
    return (__ldg(bits + (b >> 3)) >> (b & 7)) & 1;
}

// A column value from its bits: integers truncate to their own width (two's complement).
template <class T>
__device__ __forceinline__ T from_bits(u64 bits)
{
    return static_cast<T>(bits);
}
template <>
__device__ __forceinline__ float from_bits<float>(u64 bits)
{
    return __uint_as_float(static_cast<unsigned int>(bits));
}
template <>
__device__ __forceinline__ double from_bits<double>(u64 bits)
{
    return __longlong_as_double(static_cast<long long>(bits));
}

// Hands out the elements of a 16-byte chunk, lowest address first, by shifting the chunk down:
// registers only, no branches, and the loop over it need not be unrolled.
template <class T>
struct Chunk {
    uint4 q;

    __device__ T next()
    {
        if constexpr (sizeof(T) == 8) {
            const T x = from_bits<T>(u64(q.y) << 32 | q.x);
            q = make_uint4(q.z, q.w, 0, 0);
            return x;
        } else if constexpr (sizeof(T) == 4) {
            const T x = from_bits<T>(q.x);
            q = make_uint4(q.y, q.z, q.w, 0);
            return x;
        } else {
            constexpr unsigned int bits = 8 * sizeof(T);
            const T x = from_bits<T>(q.x);
            q = make_uint4(__funnelshift_r(q.x, q.y, bits), __funnelshift_r(q.y, q.z, bits),
                           __funnelshift_r(q.z, q.w, bits), q.w >> bits);
            return x;
        }
    }
};

// Calls op(present, row, x) for every row of the grid-stride range. The aligned body is read
// with 16-byte loads (4-byte loads reached only 54% of memory bandwidth), the unaligned head and
// the tail (< 16 / sizeof(Value) rows each) by the grid's first warp.
// Every lane of a warp calls op the same number of times, with present = false for rows past
// the end or null, so op may use full-warp intrinsics.
template <bool NULLABLE, class Op>
__device__ __forceinline__ void scan_rows(
    const Value* values, u64 len, const unsigned char* validity, u64 validity_offset, Op& op)
{
    constexpr unsigned int K = 16 / sizeof(Value);
    const u64 tid = u64(blockIdx.x) * blockDim.x + threadIdx.x;
    const u64 threads = u64(gridDim.x) * blockDim.x;
    const unsigned int lane = threadIdx.x % 32;
    const auto valid = [&](u64 row) {
        return !NULLABLE || bit_set(validity, validity_offset, row);
    };

    const u64 misalign = reinterpret_cast<u64>(values) % 16;
    const u64 head_rows = (16 - misalign) % 16 / sizeof(Value);
    const u64 head = head_rows < len ? head_rows : len;
    const u64 vectors = (len - head) / K;
    const uint4* body = reinterpret_cast<const uint4*>(values + head);

    // Loop while the warp's first lane is in range, so whole warps iterate together.
    for (u64 v = tid; v - lane < vectors; v += threads) {
        const bool in = v < vectors;
        Chunk<Value> chunk{in ? __ldg(body + v) : make_uint4(0, 0, 0, 0)};
        const u64 row0 = head + v * K;
        // Unrolled for 4- and 8-byte values (3-16% faster on an H200); for narrower values
        // unrolling took NVRTC up to 4x longer to compile (16 s instead of 3.5 s for 1 byte).
        if constexpr (K <= 4) {
#pragma unroll
            for (unsigned int j = 0; j < K; ++j) {
                op(in && valid(row0 + j), row0 + j, chunk.next());
            }
        } else {
#pragma unroll 1
            for (unsigned int j = 0; j < K; ++j) {
                op(in && valid(row0 + j), row0 + j, chunk.next());
            }
        }
    }

    if (tid < 32) {
        // Lanes 0..15 take the head, lanes 16..31 the tail.
        const u64 tail = head + vectors * K;
        const u64 row = lane < 16 ? lane : tail + (lane - 16);
        const bool in = lane < 16 ? row < head : row < len;
        op(in && valid(row), row, in ? values[row] : Value(0));
    }
}

// The null-free fast path gets its own copy of the loop, with no bitmap reads.
template <class Op>
__device__ __forceinline__ void for_each_row(
    const Value* values, u64 len, const unsigned char* validity, u64 validity_offset, Op op)
{
    if (validity != nullptr) {
        scan_rows<true>(values, len, validity, validity_offset, op);
    } else {
        scan_rows<false>(values, len, validity, validity_offset, op);
    }
}

// ---- What one counted row adds ----

struct Unit {
    __device__ bool take(u64) const { return true; }
    __device__ unsigned int amount(u64) const { return 1u; }
};

// Weights beside the values, row for row, with their own validity (null pointer: all valid).
struct Weights {
    const double* w;
    const unsigned char* validity;
    u64 validity_offset;

    __device__ bool take(u64 row) const
    {
        return validity == nullptr || bit_set(validity, validity_offset, row);
    }
    __device__ double amount(u64 row) const { return __ldg(w + row); }
};

// ---- The two strategies ----

extern __shared__ __align__(16) unsigned char smem[];

// Block-private histograms: `replicas` copies of n counters, `stride` counters apart; warp w
// counts into copy w % replicas, so a run of one value spreads over several addresses. u32
// counters are exact while one block sees fewer than 2^32 rows (the host splits launches).
// Every thread of the block must reach the __syncthreads() calls: no early exits.
template <class C, class Out, class Bin, class Amount>
__device__ __forceinline__ void shared_hist(
    const Value* values, u64 len, const unsigned char* validity, u64 validity_offset, Bin bin,
    Amount amount, unsigned int replicas, unsigned int stride, Out* out)
{
    C* const counters = reinterpret_cast<C*>(bin.stage(smem));
    for (unsigned int i = threadIdx.x; i < replicas * stride; i += blockDim.x) {
        counters[i] = C(0);
    }
    __syncthreads();

    C* const mine = counters + threadIdx.x / 32 % replicas * stride;
    const unsigned int n = bin.n;
    for_each_row(values, len, validity, validity_offset, [&](bool present, u64 row, Value x) {
        const unsigned int b = bin(x);
        if (present && b < n && amount.take(row)) {
            atomicAdd(mine + b, amount.amount(row));
        }
    });
    __syncthreads();

    for (unsigned int b = threadIdx.x; b < n; b += blockDim.x) {
        Out sum = 0;
        for (unsigned int r = 0; r < replicas; ++r) {
            sum += counters[r * stride + b];
        }
        if (sum != Out(0)) {
            atomicAdd(out + b, sum);
        }
    }
}

// Too many bins for shared memory: atomics into global memory (L2). Each thread first adds up
// its own run of rows that fall in one bin and adds the run at once, so data of one value (or
// few) costs one atomic a thread instead of one a row, while spread data pays one atomic a row
// as plain atomics do. (__match_any_sync grouping cost more than it saved on spread data and
// still left 2^24 same-address atomics on degenerate data: 13.5 ms for 2^29 values on an H200.)
template <class Bin>
__device__ __forceinline__ void global_hist(
    const Value* values, u64 len, const unsigned char* validity, u64 validity_offset, Bin bin,
    u64* out)
{
    const unsigned int n = bin.n;
    unsigned int run_bin = n;
    unsigned int run = 0;
    for_each_row(values, len, validity, validity_offset, [&](bool present, u64, Value x) {
        const unsigned int b = present ? bin(x) : n;
        if (b != run_bin) {
            if (run_bin < n) atomicAdd(out + run_bin, u64(run));
            run_bin = b;
            run = 0;
        }
        run += 1;
    });
    if (run_bin < n) atomicAdd(out + run_bin, u64(run));
}

// Weighted sums straight into global memory (weights rarely repeat, so no aggregation).
template <class Bin>
__device__ __forceinline__ void global_weighted_hist(
    const Value* values, u64 len, const unsigned char* validity, u64 validity_offset, Bin bin,
    Weights weights, double* out)
{
    const unsigned int n = bin.n;
    for_each_row(values, len, validity, validity_offset, [&](bool present, u64 row, Value x) {
        const unsigned int b = bin(x);
        if (present && b < n && weights.take(row)) {
            atomicAdd(out + b, weights.amount(row));
        }
    });
}

// ---- Entry points: one per strategy x rule kind x closed side ----

#define HIST_KERNELS(KIND, Rule, Bin, CLOSED, RIGHT)                                               \
    extern "C" __global__ void hist_shared_##KIND##_##CLOSED(                                      \
        const Value* values, u64 len, const unsigned char* validity, u64 validity_offset,          \
        Rule rule, unsigned int replicas, unsigned int stride, u64* out)                           \
    {                                                                                              \
        shared_hist<unsigned int>(values, len, validity, validity_offset, Bin<RIGHT>(rule),        \
                                  Unit(), replicas, stride, out);                                  \
    }                                                                                              \
    extern "C" __global__ void hist_global_##KIND##_##CLOSED(                                      \
        const Value* values, u64 len, const unsigned char* validity, u64 validity_offset,          \
        Rule rule, u64* out)                                                                       \
    {                                                                                              \
        global_hist(values, len, validity, validity_offset, Bin<RIGHT>(rule), out);                \
    }                                                                                              \
    extern "C" __global__ void hist_shared_weighted_##KIND##_##CLOSED(                             \
        const Value* values, u64 len, const unsigned char* validity, u64 validity_offset,          \
        const double* weights, const unsigned char* weight_validity, u64 weight_validity_offset,   \
        Rule rule, unsigned int replicas, unsigned int stride, double* out)                        \
    {                                                                                              \
        shared_hist<double>(values, len, validity, validity_offset, Bin<RIGHT>(rule),              \
                            Weights{weights, weight_validity, weight_validity_offset}, replicas,   \
                            stride, out);                                                          \
    }                                                                                              \
    extern "C" __global__ void hist_global_weighted_##KIND##_##CLOSED(                             \
        const Value* values, u64 len, const unsigned char* validity, u64 validity_offset,          \
        const double* weights, const unsigned char* weight_validity, u64 weight_validity_offset,   \
        Rule rule, double* out)                                                                    \
    {                                                                                              \
        global_weighted_hist(values, len, validity, validity_offset, Bin<RIGHT>(rule),             \
                             Weights{weights, weight_validity, weight_validity_offset}, out);      \
    }

HIST_KERNELS(u32, UniformRule32, U32Bin, left, false)
HIST_KERNELS(u32, UniformRule32, U32Bin, right, true)
HIST_KERNELS(u64, UniformRule64, U64Bin, left, false)
HIST_KERNELS(u64, UniformRule64, U64Bin, right, true)
HIST_KERNELS(edges, EdgeRule, EdgeBin, left, false)
HIST_KERNELS(edges, EdgeRule, EdgeBin, right, true)

#include "extremes.cuh"
#include "histogramdd.cuh"
