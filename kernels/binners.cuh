// What an axis bins by: a functor from one of its column's values to its bin (`n` when the row
// is not counted), built from the launch's `Rule`. Which one, and its variant, is fixed when the
// module is compiled (src/gpu/kernel.rs `AxisKernel`), so a launch runs no per-row switch:
//   Kind     RULE_U32 (float32 equal bins), RULE_U64 (float64 equal bins), RULE_EDGES,
//            RULE_TABLE (by= group ids of integer keys), RULE_INDEX (the value less lo is the bin),
//            RULE_INTS (integer edges compared exactly, as 64-bit keys)
//   Right    Polars' (a, b] bins instead of numpy's [a, b)
//   Literal  replay numpy's division (bins.rs `literal`) instead of the proved cheap rule
//   Formula  0 read edges, 1/2 recompute them from `Linspace` in double/float
//   Wide     numpy's estimate divides in double (`Estimate::wide`)
//   Flow     0 none; 1 two more bins, below the first edge and above the last (NaN above);
//            2 those and a third, last, for NaN (a Histogram's flow, counted in the same pass)
// `BinnerOf<V, Kind, Right, Literal, Formula, Wide, Flow, Staged>::type` is the binner of a column
// of C type V; each axis of a kernel names its own (-DAXIS0=float,1,0,0,0,0,0 and so on).
#pragma once

#define RULE_U32 1
#define RULE_U64 2
#define RULE_EDGES 3
#define RULE_INDEX 4
#define RULE_TABLE 5
#define RULE_INTS 6

// Loads a pointer from the launch's parameters here, not later through an address into the
// parameter space: NVRTC 13.5 compiled such late loads past the parameters' first 256 bytes
// into reads of null on a 13.0 driver (an H100, seen in the GPU check).
template <class T>
__device__ __forceinline__ void pinned(const T*& p)
{
    asm volatile("" : "+l"(p));
}

template <class F, class V>
__device__ __forceinline__ F value_as(V v)
{
    if constexpr (sizeof(F) == sizeof(float)) {
        return to_f32(v);
    } else {
        return to_f64(v);
    }
}

// `UniformBins<F>` of bins.rs, over values of type V.
template <class V, class F, bool Right, bool Literal, int Formula, bool Wide>
struct UniformBin {
    typedef V Value;
    static constexpr bool CHEAP = false;
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

    __device__ unsigned int operator()(V v) const
    {
        const F x = value_as<F>(v);
        if constexpr (Right) {
            return bin_uniform_right<F, Formula>(u, x);
        } else if constexpr (Literal) {
            return bin_uniform_left_literal<F, Formula, Wide>(u, x);
        } else {
            return bin_uniform_left_cheap<F, Formula>(u, x);
        }
    }
};

// `EdgeBins`: a binary search over the edges, staged in shared memory when Staged (the shared
// family reserves room for them before its counters).
template <class V, bool Right, bool Staged>
struct EdgeBin {
    typedef V Value;
    static constexpr bool CHEAP = false;
    const double* e;
    unsigned int n;

    __device__ explicit EdgeBin(const Rule& r) : e(static_cast<const double*>(r.edges)), n(r.n)
    {
        pinned(e);
    }

    __device__ unsigned char* stage(unsigned char* smem)
    {
        if constexpr (!Staged) {
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

    __device__ unsigned int operator()(V v) const
    {
        const double x = to_f64(v);
        return Right ? bin_edges_right(e, n, x) : bin_edges_left(e, n, x);
    }
};

// `KeyedBins` (src/bins/integer.rs): integer edges compared exactly, as 64-bit keys, staged
// in shared memory when Staged. It places the flow bins itself (a clamped first edge would tie
// with the domain's end), so `n` counts them when Flow (the NaN bin of Flow 2 stays empty).
template <class V, bool Right, bool Staged, int Flow>
struct IntEdgeBin {
    typedef V Value;
    static constexpr bool CHEAP = false;
    const unsigned long long* e;
    unsigned int bins;
    unsigned int n;
    unsigned int at_min;
    unsigned int at_max;

    __device__ explicit IntEdgeBin(const Rule& r)
        : e(static_cast<const unsigned long long*>(r.edges)),
          bins(r.n),
          n(r.n + (Flow == 0 ? 0u : Flow + 1u)),
          at_min(r.at_min),
          at_max(r.at_max)
    {
        pinned(e);
    }

    __device__ unsigned char* stage(unsigned char* smem)
    {
        if constexpr (!Staged) {
            return smem;
        } else {
            unsigned long long* staged = reinterpret_cast<unsigned long long*>(smem);
            for (unsigned int i = threadIdx.x; i <= bins; i += blockDim.x) {
                staged[i] = e[i];
            }
            e = staged;
            return smem + ((bins + 1ull) * sizeof(unsigned long long) + 15) / 16 * 16;
        }
    }

    __device__ unsigned int operator()(V v) const
    {
        return bin_int_keys<Right, Flow != 0>(e, bins, at_min, at_max, int_key(v));
    }
};

// The value less lo is the bin, `n` when that is not below n: u32 group ids (lo 0), or a narrow
// integer column counted by value (lo its type's least value).
template <class V>
struct IndexBin {
    typedef V Value;
    static constexpr bool CHEAP = true;
    unsigned int n;
    int lo;

    __device__ explicit IndexBin(const Rule& r) : n(r.n), lo(static_cast<int>(r.lo)) {}
    __device__ unsigned char* stage(unsigned char* smem) { return smem; }
    __device__ double first_edge() const { return 0.0; }
    __device__ unsigned int operator()(V v) const
    {
        unsigned int c;
        if constexpr (sizeof(V) <= 2) {
            c = static_cast<unsigned int>(static_cast<int>(v) - lo);
        } else {
            c = static_cast<unsigned int>(v);
        }
        return c < n ? c : n;
    }
};

// by= groups of integer keys: table[key - lo], every key in the table.
template <class V>
struct TableBin {
    typedef V Value;
    static constexpr bool CHEAP = false;
    const unsigned int* table;
    long long lo;
    unsigned int n;

    __device__ explicit TableBin(const Rule& r) : table(r.table), lo(r.lo), n(r.n) { pinned(table); }
    __device__ unsigned char* stage(unsigned char* smem) { return smem; }
    __device__ double first_edge() const { return 0.0; }
    __device__ unsigned int operator()(V v) const
    {
        return __ldg(table + (static_cast<long long>(v) - lo));
    }
};

// Flow bins around `Inner`'s: 0 below the first edge, n + 1 above the last edge, and NaN there
// too, or with NanApart in n + 2.
template <class Inner, bool NanApart>
struct FlowBin {
    typedef typename Inner::Value Value;
    static constexpr bool CHEAP = false;
    Inner inner;
    unsigned int n;
    double lo;

    __device__ explicit FlowBin(const Rule& r)
        : inner(r), n(r.n + (NanApart ? 3u : 2u)), lo(inner.first_edge())
    {
    }
    __device__ unsigned char* stage(unsigned char* smem)
    {
        unsigned char* rest = inner.stage(smem);
        lo = inner.first_edge();
        return rest;
    }
    __device__ unsigned int operator()(Value v) const
    {
        const unsigned int b = inner(v);
        if (b < inner.n) {
            return b + 1;
        }
        const double x = to_f64(v);
        if constexpr (NanApart) {
            if (x != x) {
                return inner.n + 2;
            }
        }
        return x < lo ? 0u : inner.n + 1;
    }
};

template <class V, int Kind, bool Right, bool Literal, int Formula, bool Wide, bool Staged>
struct BaseBinner;
template <class V, bool Right, bool Literal, int Formula, bool Wide, bool Staged>
struct BaseBinner<V, RULE_U32, Right, Literal, Formula, Wide, Staged> {
    typedef UniformBin<V, float, Right, Literal, Formula, Wide> type;
};
template <class V, bool Right, bool Literal, int Formula, bool Wide, bool Staged>
struct BaseBinner<V, RULE_U64, Right, Literal, Formula, Wide, Staged> {
    typedef UniformBin<V, double, Right, Literal, Formula, Wide> type;
};
template <class V, bool Right, bool Literal, int Formula, bool Wide, bool Staged>
struct BaseBinner<V, RULE_EDGES, Right, Literal, Formula, Wide, Staged> {
    typedef EdgeBin<V, Right, Staged> type;
};
template <class V, bool Right, bool Literal, int Formula, bool Wide, bool Staged>
struct BaseBinner<V, RULE_INDEX, Right, Literal, Formula, Wide, Staged> {
    typedef IndexBin<V> type;
};
template <class V, bool Right, bool Literal, int Formula, bool Wide, bool Staged>
struct BaseBinner<V, RULE_TABLE, Right, Literal, Formula, Wide, Staged> {
    typedef TableBin<V> type;
};

template <class V, bool Right, bool Literal, int Formula, bool Wide, bool Staged>
struct BaseBinner<V, RULE_INTS, Right, Literal, Formula, Wide, Staged> {
    typedef IntEdgeBin<V, Right, Staged, 0> type;
};

template <class B, int Flow>
struct WithFlow {
    typedef FlowBin<B, Flow == 2> type;
};
template <class B>
struct WithFlow<B, 0> {
    typedef B type;
};
template <class V, bool Right, bool Staged, int Flow>
struct WithFlow<IntEdgeBin<V, Right, Staged, 0>, Flow> {
    typedef IntEdgeBin<V, Right, Staged, Flow> type;
};
template <class V, bool Right, bool Staged>  // (both of the above would match)
struct WithFlow<IntEdgeBin<V, Right, Staged, 0>, 0> {
    typedef IntEdgeBin<V, Right, Staged, 0> type;
};

// Flags arrive as 0/1 from -D options: ints here (an int is no bool template argument).
template <class V, int Kind, int Right, int Literal, int Formula, int Wide, int Flow, bool Staged>
struct BinnerOf {
    typedef typename WithFlow<typename BaseBinner<V, Kind, Right != 0, Literal != 0, Formula,
                                                  Wide != 0, Staged>::type,
                              Flow>::type type;
};
