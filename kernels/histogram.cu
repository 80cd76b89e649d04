// Histogram kernels, compiled by NVRTC once per column type with -DVALUE_T=<C type>.
//
// Kernel names: hist_{shared,packed,segmented,global}[_weighted]_{u32,u64,edges}_{left,right}
//   u32   : UniformRule32, arithmetic in float  (numpy's rule for Float32 columns)
//   u64   : UniformRule64, arithmetic in double
//   edges : EdgeRule, explicit double edges
// The families (src/gpu/plan.rs picks one):
//   shared    : replicated per-block u32 (or double) histograms in shared memory; few bins.
//   packed    : one per-block histogram of 16-bit counters, up to twice the bins of shared.
//   segmented : bins grouped by partition tile by tile, then counted a partition at a time in
//               shared memory (segmented.cuh, with seg_scan and seg_count); any bin count.
//   global    : atomics straight into `out`; weighted sums beyond shared memory.
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
    unsigned int formula;  // see UniformBins::formula
    unsigned int pad;
    double start;
    double step;
};
typedef UniformRule<float> UniformRule32;
typedef UniformRule<double> UniformRule64;

struct EdgeRule {
    const double* edges;  // n + 1 edges, strictly increasing
    unsigned int n;
};

static_assert(sizeof(UniformRule32) == 56 && alignof(UniformRule32) == 8, "host layout");
static_assert(sizeof(UniformRule64) == 72 && alignof(UniformRule64) == 8, "host layout");
static_assert(sizeof(EdgeRule) == 16 && alignof(EdgeRule) == 8, "host layout");

// ---- Value -> bin, for one rule kind and closed side ----

// Closed-left equal bins replay numpy literally or take the proved cheap rule; `Runtime` asks
// the rule's flag per row, the other two fix it for a whole launch (see with_fixed_rule).
enum class Literal { Runtime, Always, Never };

// FORMULA: whether edges may be recomputed (bin_rule.cuh's edge_of); the families whose bins
// fit in shared memory read them, as their edges stay in cache.
template <class F, bool RIGHT, Literal L = Literal::Runtime, bool FORMULA = true>
struct UniformBin {
    UniformBins<F> u;
    unsigned int n;

    __device__ explicit UniformBin(const UniformRule<F>& r)
        : u{r.edges, r.n,      r.edges[0], r.edges[r.n], r.denom,  r.n_f, r.scale,
            r.margin, r.literal != 0, r.formula, r.start, r.step},
          n(r.n)
    {
    }
    template <Literal M, bool G>
    __device__ explicit UniformBin(const UniformBin<F, RIGHT, M, G>& other)
        : u(other.u), n(other.n)
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
        if constexpr (RIGHT) {
            return bin_uniform_right<F, FORMULA>(u, x);
        } else if constexpr (L == Literal::Always) {
            return bin_uniform_left_literal<F, FORMULA>(u, x);
        } else if constexpr (L == Literal::Never) {
            return bin_uniform_left_cheap<F, FORMULA>(u, x);
        } else {
            return bin_uniform_left<F, FORMULA>(u, x);
        }
    }
};

// Calls f with `bin`, its closed-left literal flag fixed for the whole launch.
template <class F, bool G, class Fn>
__device__ __forceinline__ void with_fixed_rule(const UniformBin<F, false, Literal::Runtime, G>& bin,
                                                Fn f)
{
    if (bin.u.literal) {
        f(UniformBin<F, false, Literal::Always, G>(bin));
    } else {
        f(UniformBin<F, false, Literal::Never, G>(bin));
    }
}
template <class Bin, class Fn>
__device__ __forceinline__ void with_fixed_rule(const Bin& bin, Fn f)
{
    f(bin);
}

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
// The same rules reading every edge, for the families whose bins fit in shared memory.
template <bool RIGHT> using U32BinCached = UniformBin<float, RIGHT, Literal::Runtime, false>;
template <bool RIGHT> using U64BinCached = UniformBin<double, RIGHT, Literal::Runtime, false>;
template <bool RIGHT> using EdgeBinCached = EdgeBin<RIGHT>;

#include "rows.cuh"
#include "counters.cuh"

extern __shared__ __align__(16) unsigned char smem[];

#include "segmented.cuh"

// ---- The strategies: what one block does ----

// A thread's run of consecutive rows in one bin, added at once: data of one value (or sorted
// data) then costs one atomic a run instead of one a row. `add(bin, rows)` takes a finished run.
template <class Add>
struct Runs {
    unsigned int n;  // no run (rows not counted)
    Add add;
    unsigned int bin = n;
    unsigned int rows = 0;

    __device__ void push(unsigned int b)
    {
        if (b != bin) {
            flush();
            bin = b;
        }
        rows += 1;
    }

    __device__ void flush()
    {
        if (bin < n) add(bin, rows);
        bin = n;
        rows = 0;
    }
};
template <class Add>
__device__ __forceinline__ Runs<Add> runs_of(unsigned int n, Add add)
{
    return Runs<Add>{n, add};
}

// Vectors a thread keeps in flight per step (16 bytes each). Measured on an H100 (scripts/
// kernel_lab.py): the shared family ran 0.71-0.76 ms for 2^29 float32 with 4, 0.78-0.90 with 2;
// the global family is bound by its atomics and keeps 2.
#ifndef HIST_LOADS_IN_FLIGHT
#define HIST_LOADS_IN_FLIGHT 4
#endif
constexpr unsigned int GLOBAL_LOADS_IN_FLIGHT = 2;

// Few bins: replicated block-private histograms (u32, or double when weighted), each with a
// spare counter n for the rows not counted.
// Every thread of the block must reach the __syncthreads() calls: no early exits.
template <class C, class Out, class Bin, class Amount>
__device__ __forceinline__ void shared_hist(const Rows& rows, Bin bin, Amount amount,
                                            unsigned int replicas, unsigned int stride, Out* out)
{
    const ReplicatedCounters<C> counters{reinterpret_cast<C*>(bin.stage(smem)), replicas, stride};
    counters.zero();
    __syncthreads();
    C* const mine = counters.mine();
    const unsigned int mine_address = counters.mine_address();
    const unsigned int n = bin.n;
    for_each_row<HIST_LOADS_IN_FLIGHT>(
        rows,
        [&](bool present, u64 row, Value x) {
            const unsigned int b = bin(x);
            if constexpr (Amount::ONE_PER_ROW) {
                // Rows not counted go to the spare counter n: no branch around the atomic.
                add_one_shared(mine_address, present ? b : n);
            } else if (present && b < n && amount.take(row)) {
                atomicAdd(mine + b, amount.amount(row));
            }
        },
        NoStep());
    __syncthreads();
    counters.merge(n, out);
}

#ifndef PACKED_LOADS_IN_FLIGHT
#define PACKED_LOADS_IN_FLIGHT 4
#endif

// Up to twice the bins: one histogram of packed 16-bit counters per block (see PackedCounters),
// with a barrier every few steps to keep the adds between barriers under MAX_PACKED_ADDS.
template <class Bin>
__device__ __forceinline__ void packed_hist(const Rows& rows, Bin bin, u64* out)
{
    constexpr unsigned int K = VALUES_PER_VECTOR;
    constexpr unsigned int U = K >= 8 ? 16 / K : PACKED_LOADS_IN_FLIGHT;
    const unsigned int n = bin.n;
    const PackedCounters counters{reinterpret_cast<unsigned int*>(smem), (n + 1) / 2, out};
    counters.zero();
    __syncthreads();
    // The edge rows (32 at most) follow the last step.
    const unsigned int steps_per_barrier = (MAX_PACKED_ADDS - 32) / (blockDim.x * U * K);
    if (steps_per_barrier == 0) __trap();
    // Runs of one bin are added at once (degenerate data: 2.2 -> 0.76 ms on an H100); a run
    // never outlives its step, so the bound holds.
    auto runs = runs_of(n, [&](unsigned int b, unsigned int count) { counters.add(b, count); });
    unsigned int steps = 0;
    for_each_row<U>(
        rows,
        [&](bool present, u64, Value x) { runs.push(present ? bin(x) : n); },
        [&] {
            runs.flush();
            if (++steps == steps_per_barrier) {
                __syncthreads();
                steps = 0;
            }
        });
    runs.flush();
    __syncthreads();
    counters.merge(n);
}

// Atomics straight into global memory (L2), a run of one bin at once: data of one value (or few)
// costs one atomic a thread instead of one a row, while spread data pays one a row as plain
// atomics do.
// (__match_any_sync grouping cost more than it saved on spread data and still left 2^24
// same-address atomics on degenerate data: 13.5 ms for 2^29 values on an H200.)
template <class Bin>
__device__ __forceinline__ void global_hist(const Rows& rows, Bin bin, u64* out)
{
    const unsigned int n = bin.n;
    auto runs =
        runs_of(n, [&](unsigned int b, unsigned int count) { atomicAdd(out + b, u64(count)); });
    for_each_row<GLOBAL_LOADS_IN_FLIGHT>(
        rows, [&](bool present, u64, Value x) { runs.push(present ? bin(x) : n); }, NoStep());
    runs.flush();
}

// Weighted sums straight into global memory (weights rarely repeat, so no aggregation).
template <class Bin>
__device__ __forceinline__ void global_weighted_hist(const Rows& rows, Bin bin, Weights weights,
                                                     double* out)
{
    const unsigned int n = bin.n;
    for_each_row<GLOBAL_LOADS_IN_FLIGHT>(
        rows,
        [&](bool present, u64 row, Value x) {
            const unsigned int b = bin(x);
            if (present && b < n && weights.take(row)) {
                atomicAdd(out + b, weights.amount(row));
            }
        },
        NoStep());
}

// ---- Entry points: one per strategy x rule kind x closed side ----

#define ROWS Rows(values, len, validity, validity_offset)
#define ROW_PARAMS const Value *values, u64 len, const unsigned char *validity, u64 validity_offset
#define WEIGHT_PARAMS                                                                              \
    const double *weights, const unsigned char *weight_validity, u64 weight_validity_offset
#define WEIGHTS Weights{weights, weight_validity, weight_validity_offset}

#define HIST_KERNELS(KIND, Rule, Bin, CLOSED, RIGHT)                                               \
    extern "C" __global__ void hist_shared_##KIND##_##CLOSED(                                      \
        ROW_PARAMS, Rule rule, unsigned int replicas, unsigned int stride, u64* out)               \
    {                                                                                              \
        with_fixed_rule(Bin##Cached<RIGHT>(rule), [&](auto bin) {                                \
            shared_hist<unsigned int>(ROWS, bin, Unit(), replicas, stride, out);                   \
        });                                                                                        \
    }                                                                                              \
    extern "C" __global__ void hist_packed_##KIND##_##CLOSED(ROW_PARAMS, Rule rule, u64* out)      \
    {                                                                                              \
        packed_hist(ROWS, Bin##Cached<RIGHT>(rule), out);                                          \
    }                                                                                              \
    extern "C" __global__ void __launch_bounds__(SEG_PARTITION_THREADS, 2)                         \
        hist_segmented_##KIND##_##CLOSED(                                                          \
        ROW_PARAMS, Rule rule, Segments seg, u64* out)                                             \
    {                                                                                              \
        seg_partition(ROWS, Bin<RIGHT>(rule), seg, out);                                           \
    }                                                                                              \
    extern "C" __global__ void hist_global_##KIND##_##CLOSED(ROW_PARAMS, Rule rule, u64* out)      \
    {                                                                                              \
        global_hist(ROWS, Bin<RIGHT>(rule), out);                                                  \
    }                                                                                              \
    extern "C" __global__ void hist_shared_weighted_##KIND##_##CLOSED(                             \
        ROW_PARAMS, WEIGHT_PARAMS, Rule rule, unsigned int replicas, unsigned int stride,          \
        double* out)                                                                               \
    {                                                                                              \
        shared_hist<double>(ROWS, Bin##Cached<RIGHT>(rule), WEIGHTS, replicas, stride, out);       \
    }                                                                                              \
    extern "C" __global__ void hist_global_weighted_##KIND##_##CLOSED(                             \
        ROW_PARAMS, WEIGHT_PARAMS, Rule rule, double* out)                                         \
    {                                                                                              \
        global_weighted_hist(ROWS, Bin<RIGHT>(rule), WEIGHTS, out);                                \
    }

HIST_KERNELS(u32, UniformRule32, U32Bin, left, false)
HIST_KERNELS(u32, UniformRule32, U32Bin, right, true)
HIST_KERNELS(u64, UniformRule64, U64Bin, left, false)
HIST_KERNELS(u64, UniformRule64, U64Bin, right, true)
HIST_KERNELS(edges, EdgeRule, EdgeBin, left, false)
HIST_KERNELS(edges, EdgeRule, EdgeBin, right, true)

#include "extremes.cuh"
#include "histogramdd.cuh"
