// What a kernel bins by: a functor from a column value to its bin (`n` when the row is not
// counted), built from the launch's `Rule`. Which one, and its variant, is fixed when the module
// is compiled (src/gpu/plan.rs `KernelId`), so a launch runs no per-row switch:
//   RULE          RULE_U32 (float32 equal bins), RULE_U64 (float64 equal bins), RULE_EDGES,
//                 RULE_INDEX (the value is the bin: cells), RULE_TABLE (by= group ids)
//   CLOSED_RIGHT  Polars' (a, b] bins instead of numpy's [a, b)
//   LITERAL       replay numpy's division (bins.rs `literal`) instead of the proved cheap rule
//   FORMULA       0 read edges, 1/2 recompute them from `Linspace` in double/float
//   WIDE          numpy's estimate divides in double (`Estimate::wide`)
//   FLOW          two more bins: below the first edge, above the last (NaN above)
// Included by histogram.cu after `Value`.
#pragma once

#define RULE_U32 1
#define RULE_U64 2
#define RULE_EDGES 3
#define RULE_INDEX 4
#define RULE_TABLE 5

#ifndef CLOSED_RIGHT
#define CLOSED_RIGHT 0
#endif
#ifndef LITERAL
#define LITERAL 0
#endif
#ifndef FORMULA
#define FORMULA 0
#endif
#ifndef WIDE
#define WIDE 0
#endif
#ifndef FLOW
#define FLOW 0
#endif

template <class F>
__device__ __forceinline__ F value_as(Value v)
{
    if constexpr (sizeof(F) == sizeof(float)) {
        return to_f32(v);
    } else {
        return to_f64(v);
    }
}

// `UniformBins<F>` of bins.rs.
template <class F>
struct UniformBin {
    UniformBins<F> u;
    unsigned int n;

    __device__ explicit UniformBin(const Rule& r)
        : u{static_cast<const F*>(r.edges),
            r.n,
            static_cast<F>(r.first),
            static_cast<F>(r.last),
            r.denom,
            r.n_f,
            F(r.scale),
            F(r.margin),
            r.start,
            r.step},
          n(r.n)
    {
    }

    // The edges stay in global memory (two neighbours per row hit L1); counters start at once.
    __device__ unsigned char* stage(unsigned char* smem) { return smem; }

    __device__ double first_edge() const { return static_cast<double>(u.lo); }

    __device__ unsigned int operator()(Value v) const
    {
        const F x = value_as<F>(v);
        if constexpr (CLOSED_RIGHT) {
            return bin_uniform_right<F, FORMULA>(u, x);
        } else if constexpr (LITERAL) {
            return bin_uniform_left_literal<F, FORMULA, WIDE>(u, x);
        } else {
            return bin_uniform_left_cheap<F, FORMULA>(u, x);
        }
    }
};

// `EdgeBins`: a binary search over the edges, staged in shared memory when STAGED (the shared
// family reserves room for them before its counters).
template <bool STAGED>
struct EdgeBin {
    const double* e;
    unsigned int n;

    __device__ explicit EdgeBin(const Rule& r) : e(static_cast<const double*>(r.edges)), n(r.n) {}

    __device__ unsigned char* stage(unsigned char* smem)
    {
        if constexpr (!STAGED) {
            return smem;
        } else {
            double* staged = reinterpret_cast<double*>(smem);
            for (unsigned int i = threadIdx.x; i <= n; i += blockDim.x) {
                staged[i] = e[i];
            }
            e = staged;
            return smem + ((n + 1ull) * sizeof(double) + 15) / 16 * 16;
        }
    }

    __device__ double first_edge() const { return e[0]; }

    __device__ unsigned int operator()(Value v) const
    {
        const double x = to_f64(v);
        return CLOSED_RIGHT ? bin_edges_right(e, n, x) : bin_edges_left(e, n, x);
    }
};

// Cells of an n-D job: the value is the bin, `n` (the number of cells) when not counted.
struct IndexBin {
    unsigned int n;

    __device__ explicit IndexBin(const Rule& r) : n(r.n) {}
    __device__ unsigned char* stage(unsigned char* smem) { return smem; }
    __device__ double first_edge() const { return 0.0; }
    __device__ unsigned int operator()(Value v) const
    {
        const unsigned int c = static_cast<unsigned int>(v);
        return c < n ? c : n;
    }
};

// by= groups of integer keys: table[key - lo], every key in the table.
struct TableBin {
    const unsigned int* table;
    long long lo;
    unsigned int n;

    __device__ explicit TableBin(const Rule& r) : table(r.table), lo(r.lo), n(r.n) {}
    __device__ unsigned char* stage(unsigned char* smem) { return smem; }
    __device__ double first_edge() const { return 0.0; }
    __device__ unsigned int operator()(Value v) const
    {
        return __ldg(table + (static_cast<long long>(v) - lo));
    }
};

// Flow bins around `Inner`'s: 0 below the first edge, n + 1 above the last edge or NaN.
template <class Inner>
struct FlowBin {
    Inner inner;
    unsigned int n;
    double lo;

    __device__ explicit FlowBin(const Rule& r) : inner(r), n(r.n + 2), lo(inner.first_edge()) {}
    __device__ unsigned char* stage(unsigned char* smem)
    {
        unsigned char* rest = inner.stage(smem);
        lo = inner.first_edge();
        return rest;
    }
    __device__ unsigned int operator()(Value v) const
    {
        const unsigned int b = inner(v);
        return b < inner.n ? b + 1 : (to_f64(v) < lo ? 0u : inner.n + 1);
    }
};

#if RULE == RULE_U32
typedef UniformBin<float> BaseBin;
#elif RULE == RULE_U64
typedef UniformBin<double> BaseBin;
#elif RULE == RULE_EDGES
typedef EdgeBin<STAGE_EDGES> BaseBin;
#elif RULE == RULE_INDEX
typedef IndexBin BaseBin;
#elif RULE == RULE_TABLE
typedef TableBin BaseBin;
#endif

#if defined(RULE)
#if FLOW
typedef FlowBin<BaseBin> Binner;
#else
typedef BaseBin Binner;
#endif
#endif
