// How a block reads a column: an aligned body of 16-byte vectors, and an unaligned head and
// tail of fewer than 16 / sizeof(Value) rows each. Included by histogram.cu after `Value`.
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

// Values per 16-byte vector.
constexpr unsigned int VALUES_PER_VECTOR = 16 / sizeof(Value);
static_assert(16 % sizeof(Value) == 0, "the vector loop needs a power-of-two element size");

// A launch's rows: `head` unaligned rows, then `vectors` 16-byte vectors, then the tail.
struct Rows {
    const Value* values;
    u64 len;
    const unsigned char* validity;  // null: every row is valid
    u64 validity_offset;
    u64 head;
    u64 vectors;

    __device__ Rows(const Value* v, u64 n, const unsigned char* bits, u64 bits_offset)
        : values(v), len(n), validity(bits), validity_offset(bits_offset)
    {
        const u64 misalign = reinterpret_cast<u64>(values) % 16;
        const u64 head_rows = (16 - misalign) % 16 / sizeof(Value);
        head = head_rows < len ? head_rows : len;
        vectors = (len - head) / VALUES_PER_VECTOR;
    }

    __device__ const uint4* body() const { return reinterpret_cast<const uint4*>(values + head); }

    __device__ uint4 vector(u64 v) const
    {
        return v < vectors ? __ldg(body() + v) : make_uint4(0, 0, 0, 0);
    }

    template <bool NULLABLE>
    __device__ bool valid(u64 row) const
    {
        return !NULLABLE || bit_set(validity, validity_offset, row);
    }

    // op(present, row, x) for the K values of vector v held in q (present = false past the end;
    // ALL_IN: the caller knows v < vectors).
    template <bool NULLABLE, bool ALL_IN = false, class Op>
    __device__ __forceinline__ void each_value(u64 v, uint4 q, Op& op) const
    {
        const bool in = ALL_IN || v < vectors;
        const u64 row0 = head + v * VALUES_PER_VECTOR;
        Chunk<Value> chunk{q};
        // Unrolled for 4- and 8-byte values; for narrower values unrolling took NVRTC up to 4x
        // longer to compile (16 s instead of 3.5 s for 1 byte).
        if constexpr (VALUES_PER_VECTOR <= 4) {
#pragma unroll
            for (unsigned int k = 0; k < VALUES_PER_VECTOR; ++k) {
                op(in && valid<NULLABLE>(row0 + k), row0 + k, chunk.next());
            }
        } else {
#pragma unroll 1
            for (unsigned int k = 0; k < VALUES_PER_VECTOR; ++k) {
                op(in && valid<NULLABLE>(row0 + k), row0 + k, chunk.next());
            }
        }
    }
};

// The body, grid-strided, U vectors a thread in flight per step. The loop is block-uniform:
// every thread of a block runs the same steps (so `step()` may hold a __syncthreads()) and every
// lane calls op the same number of times (present = false for rows past the end or null).
template <unsigned int U, bool NULLABLE, class Op, class Step>
__device__ __forceinline__ void body_rows(const Rows& rows, Op& op, Step& step)
{
    const u64 per_step = u64(blockDim.x) * U;
    for (u64 base = blockIdx.x * per_step; base < rows.vectors; base += gridDim.x * per_step) {
        const u64 first = base + threadIdx.x;
        if (base + per_step <= rows.vectors) {
            // A whole step: no bounds to check (all but the last step of a block or two).
            uint4 q[U];
#pragma unroll
            for (unsigned int j = 0; j < U; ++j) {
                q[j] = __ldg(rows.body() + first + j * blockDim.x);
            }
#pragma unroll
            for (unsigned int j = 0; j < U; ++j) {
                rows.each_value<NULLABLE, true>(first + j * blockDim.x, q[j], op);
            }
        } else {
            // The last step: one vector at a time, not unrolled (NVRTC compile time).
#pragma unroll 1
            for (unsigned int j = 0; j < U; ++j) {
                const u64 v = first + j * blockDim.x;
                rows.each_value<NULLABLE>(v, rows.vector(v), op);
            }
        }
        step();
    }
}

// The head and the tail, by the first warp of the grid: lanes 0..15 the head, 16..31 the tail.
// Every lane of that warp calls op once.
template <bool NULLABLE, class Op>
__device__ __forceinline__ void edge_rows(const Rows& rows, Op& op)
{
    if (blockIdx.x != 0 || threadIdx.x >= 32) return;
    const unsigned int lane = threadIdx.x;
    const u64 tail = rows.head + rows.vectors * VALUES_PER_VECTOR;
    const u64 row = lane < 16 ? lane : tail + (lane - 16);
    const bool in = lane < 16 ? row < rows.head : row < rows.len;
    op(in && rows.valid<NULLABLE>(row), row, in ? rows.values[row] : Value(0));
}

struct NoStep {
    __device__ void operator()() const {}
};

// Every row once: the body U vectors a thread at a time, then the head and tail. The null-free
// fast path gets its own copy of the loop, with no bitmap reads. `step()` runs after each body
// step (block-uniform); edge rows come after the last step.
template <unsigned int U, class Op, class Step>
__device__ __forceinline__ void for_each_row(const Rows& rows, Op op, Step step)
{
    if (rows.validity != nullptr) {
        body_rows<U, true>(rows, op, step);
        edge_rows<true>(rows, op);
    } else {
        body_rows<U, false>(rows, op, step);
        edge_rows<false>(rows, op);
    }
}

// ---- What one counted row adds ----

struct Unit {
    static constexpr bool ONE_PER_ROW = true;
    __device__ bool take(u64) const { return true; }
    __device__ unsigned int amount(u64) const { return 1u; }
};

// Weights beside the values, row for row, with their own validity (null pointer: all valid).
struct Weights {
    static constexpr bool ONE_PER_ROW = false;
    const double* w;
    const unsigned char* validity;
    u64 validity_offset;

    __device__ bool take(u64 row) const
    {
        return validity == nullptr || bit_set(validity, validity_offset, row);
    }
    __device__ double amount(u64 row) const { return __ldg(w + row); }
};
