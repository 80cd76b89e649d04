// How a block reads its rows and bins them: a source. A family (families.cuh) asks a source for
// units of K rows, loads several before it uses the first, and gets each row's bin (`n` when
// the row is not counted). Two sources:
//   BinnedColumn<Bin>  one column (1-D): an aligned body of 16-byte vectors, and an unaligned
//                      head and tail of fewer than 16 / sizeof(value) rows each
//   Cells<Axes>        several columns, each binned by its own axis (n-D, by=): a unit is one
//                      row, its coordinates loaded column by column, its bin the row-major cell
// Both have: n, K, ROW_BYTES (a row's values), Load (what a unit loads), units, load(u)
// (u < units), load_checked(u), each<NULLABLE, ALL_IN>(u, unit, op) calling op(present, row, bin)
// for the unit's K rows, edges<NULLABLE>(op) for the rows outside the units (called by the first
// warp of the grid, once a lane), nullable(), stage(smem).
//
// 16-byte loads matter: the same histogram with 4-byte loads reached 54% of an H200's read
// bandwidth. So does having several in flight per thread before the first is used.
#pragma once

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
// registers only, no branches.
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

// Element k of a 16-byte chunk of 1- or 2-byte values, for a constant k (an unrolled loop).
template <class T>
__device__ __forceinline__ T narrow_element(const uint4& q, unsigned int k)
{
    static_assert(sizeof(T) <= 2, "narrow values only");
    constexpr unsigned int per_word = 4 / sizeof(T);
    const unsigned int w = k / per_word;
    const unsigned int word = w == 0 ? q.x : (w == 1 ? q.y : (w == 2 ? q.z : q.w));
    return from_bits<T>(word >> (k % per_word * 8 * sizeof(T)));
}

// One column binned by `Bin`: `head` unaligned rows, then `units` 16-byte vectors, then the tail.
template <class Bin>
struct BinnedColumn {
    typedef typename Bin::Value Value;
    typedef uint4 Load;
    static constexpr unsigned int K = 16 / sizeof(Value);
    static constexpr unsigned int ROW_BYTES = sizeof(Value);
    static_assert(16 % sizeof(Value) == 0, "the vector loop needs a power-of-two element size");

    Bin bin;
    unsigned int n;
    const Value* values;
    u64 len;
    const unsigned char* validity;  // null: every row is valid
    u64 validity_offset;
    u64 head;
    u64 units;

    __device__ explicit BinnedColumn(const CountParams& p)
        : bin(p.rules[0]),
          n(bin.n),
          values(static_cast<const Value*>(p.columns[0].values)),
          len(p.columns[0].len),
          validity(p.columns[0].validity),
          validity_offset(p.columns[0].validity_offset)
    {
        const u64 misalign = reinterpret_cast<u64>(values) % 16;
        const u64 head_rows = (16 - misalign) % 16 / sizeof(Value);
        head = head_rows < len ? head_rows : len;
        units = (len - head) / K;
    }

    __device__ bool nullable() const { return validity != nullptr; }

    __device__ unsigned char* stage(unsigned char* smem)
    {
        unsigned char* rest = bin.stage(smem);
        n = bin.n;
        return rest;
    }

    __device__ const uint4* body() const { return reinterpret_cast<const uint4*>(values + head); }
    __device__ uint4 load(u64 u) const { return __ldg(body() + u); }
    __device__ uint4 load_checked(u64 u) const
    {
        return u < units ? load(u) : make_uint4(0, 0, 0, 0);
    }

    template <bool NULLABLE>
    __device__ bool valid(u64 row) const
    {
        return !NULLABLE || bit_set(validity, validity_offset, row);
    }

    // op(present, row, bin) for the K values of unit u held in q (present = false past the end;
    // ALL_IN: the caller knows u < units).
    template <bool NULLABLE, bool ALL_IN = false, class Op>
    __device__ __forceinline__ void each(u64 u, uint4 q, Op& op) const
    {
        const bool in = ALL_IN || u < units;
        const u64 row0 = head + u * K;
        Chunk<Value> chunk{q};
        // Unrolled for 4- and 8-byte values; for narrower values unrolling took NVRTC up to 4x
        // longer to compile (16 s instead of 3.5 s for 1 byte).
        if constexpr (K <= 4) {
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) {
                const Value x = chunk.next();
                const bool present = in && valid<NULLABLE>(row0 + k);
                op(present, row0 + k, present ? bin(x) : n);
            }
        } else if constexpr (Bin::CHEAP) {
            // Binning is an add and a compare (counting by value): unrolled, each value shifted
            // straight out of its word, so a row costs little more than its shared atomic.
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) {
                const Value x = narrow_element<Value>(q, k);
                const bool present = in && valid<NULLABLE>(row0 + k);
                op(present, row0 + k, present ? bin(x) : n);
            }
        } else {
#pragma unroll 1
            for (unsigned int k = 0; k < K; ++k) {
                const Value x = chunk.next();
                const bool present = in && valid<NULLABLE>(row0 + k);
                op(present, row0 + k, present ? bin(x) : n);
            }
        }
    }

    // The head and the tail: lanes 0..15 of the first warp the head, 16..31 the tail.
    template <bool NULLABLE, class Op>
    __device__ __forceinline__ void edges(Op& op) const
    {
        const unsigned int lane = threadIdx.x;
        const u64 tail = head + units * K;
        const u64 row = lane < 16 ? lane : tail + (lane - 16);
        const bool in = lane < 16 ? row < head : row < len;
        const bool present = in && valid<NULLABLE>(row);
        op(present, row, present ? bin(values[row]) : n);
    }
};

// The body, grid-strided, U units a thread in flight per step. The loop is block-uniform: every
// thread of a block runs the same steps (so `step()` may hold a __syncthreads()) and every lane
// calls op the same number of times (present = false for rows past the end or null). AHEAD: a
// whole step's loads are issued a step early, before the rows of this one are counted and its
// step() waits at a barrier, so that they arrive meanwhile (twice the registers for loads).
template <unsigned int U, bool NULLABLE, bool AHEAD, class S, class Op, class Step>
__device__ __forceinline__ void body_rows(const S& src, Op& op, Step& step)
{
    const u64 per_step = u64(blockDim.x) * U;
    const u64 stride = u64(gridDim.x) * per_step;
    auto whole = [&](u64 base) { return base + per_step <= src.units; };
    auto load_step = [&](u64 base, typename S::Load(&q)[U]) {
#pragma unroll
        for (unsigned int j = 0; j < U; ++j) {
            q[j] = src.load(base + threadIdx.x + j * blockDim.x);
        }
    };
    typename S::Load next[U];
    if (AHEAD && whole(blockIdx.x * per_step)) load_step(blockIdx.x * per_step, next);
    for (u64 base = blockIdx.x * per_step; base < src.units; base += stride) {
        const u64 first = base + threadIdx.x;
        if (whole(base)) {
            // A whole step: no bounds to check (all but the last step of a block or two).
            typename S::Load q[U];
            if constexpr (AHEAD) {
#pragma unroll
                for (unsigned int j = 0; j < U; ++j) q[j] = next[j];
                if (whole(base + stride)) load_step(base + stride, next);
            } else {
                load_step(base, q);
            }
#pragma unroll
            for (unsigned int j = 0; j < U; ++j) {
                src.template each<NULLABLE, true>(first + j * blockDim.x, q[j], op);
            }
        } else {
            // The last step: one unit at a time, not unrolled (NVRTC compile time).
#pragma unroll 1
            for (unsigned int j = 0; j < U; ++j) {
                const u64 u = first + j * blockDim.x;
                src.template each<NULLABLE>(u, src.load_checked(u), op);
            }
        }
        step();
    }
}

// The rows outside the units, by the first warp of the grid; every lane of it calls op once.
template <bool NULLABLE, class S, class Op>
__device__ __forceinline__ void edge_rows(const S& src, Op& op)
{
    if (blockIdx.x != 0 || threadIdx.x >= 32) return;
    src.template edges<NULLABLE>(op);
}

struct NoStep {
    __device__ void operator()() const {}
};

// Every row once: the body U units a thread at a time, then the rows outside the units. The
// null-free fast path gets its own copy of the loop, with no bitmap reads. `step()` runs after
// each body step (block-uniform); edge rows come after the last step. AHEAD: see body_rows.
template <unsigned int U, bool AHEAD = false, class S, class Op, class Step>
__device__ __forceinline__ void for_each_row(const S& src, Op op, Step step)
{
    if (src.nullable()) {
        body_rows<U, true, AHEAD>(src, op, step);
        edge_rows<true>(src, op);
    } else {
        body_rows<U, false, AHEAD>(src, op, step);
        edge_rows<false>(src, op);
    }
}

// ---- What one counted row adds ----

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
