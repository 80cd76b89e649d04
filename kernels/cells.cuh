// The rows of an n-D (or by=) histogram as a source (rows.cuh): one column per axis, each binned
// by its axis's own binner over its own value type, a row's bin its row-major cell (`n`, the
// cells in all, when a coordinate is not counted). A unit is one row: consecutive threads read
// consecutive rows, so every column's loads coalesce, and a thread keeps U rows in flight.
// `Axes<Bin0, Axes<Bin1, NoAxes>>` lists the axes; histogram.cu builds it from -DAXIS0.. flags.
#pragma once

struct NoAxes {
    struct Load {};
    static constexpr unsigned int BYTES = 0;
    __device__ NoAxes(const ::Column*, const Rule*, const unsigned int*) {}
    __device__ Load load(u64) const { return Load{}; }
    __device__ bool valid(u64) const { return true; }
    __device__ bool nullable() const { return false; }
    __device__ unsigned char* stage(unsigned char* smem) { return smem; }
    __device__ unsigned int cell(const Load&, unsigned int) const { return 0; }
    template <class C>
    __device__ static Load from(C&)
    {
        return Load{};
    }
    template <class V>
    __device__ static Load load_row(const V*)
    {
        return Load{};
    }
};

template <class Bin, class Rest>
struct Axes {
    typedef typename Bin::Value Value;
    struct Load {
        Value x;
        typename Rest::Load rest;
    };
    // The bytes a row's values take, every axis's.
    static constexpr unsigned int BYTES = sizeof(Value) + Rest::BYTES;

    const Value* values;
    u64 stride;
    const unsigned char* validity;
    u64 validity_offset;
    unsigned int cell_stride;
    Bin bin;
    Rest rest;

    __device__ Axes(const ::Column* columns, const Rule* rules, const unsigned int* strides)
        : values(static_cast<const Value*>(columns[0].values)),
          stride(columns[0].stride),
          validity(columns[0].validity),
          validity_offset(columns[0].validity_offset),
          cell_stride(strides[0]),
          bin(rules[0]),
          rest(columns + 1, rules + 1, strides + 1)
    {
    }

    __device__ Load load(u64 row) const { return Load{__ldg(values + row * stride), rest.load(row)}; }

    // A row's coordinates taken in order from a chunk of registers (InterleavedCells: every
    // axis of one type). A braced list evaluates left to right.
    template <class C>
    __device__ static Load from(C& chunk)
    {
        return Load{chunk.next(), Rest::from(chunk)};
    }

    // A row's coordinates loaded one by one from the row's first (InterleavedCells' rows
    // outside its vectors), from the source's own base pointer: this axis's column pointer, read
    // late through the parameters' address on that rare path, was such a late load as
    // binners.cuh's `pinned` avoids.
    __device__ static Load load_row(const Value* row)
    {
        return Load{__ldg(row), Rest::load_row(row + 1)};
    }

    __device__ bool valid(u64 row) const
    {
        return (validity == nullptr || bit_set(validity, validity_offset, row)) && rest.valid(row);
    }

    __device__ bool nullable() const { return validity != nullptr || rest.nullable(); }

    __device__ unsigned char* stage(unsigned char* smem) { return rest.stage(bin.stage(smem)); }

    // This axis's part of the row's cell and the later axes', `cells` when one is not counted.
    __device__ unsigned int cell(const Load& l, unsigned int cells) const
    {
        const unsigned int b = bin(l.x);
        const unsigned int later = rest.cell(l.rest, cells);
        return b < bin.n && later != cells ? b * cell_stride + later : cells;
    }
};

template <class A>
struct Cells {
    typedef typename A::Load Load;
    static constexpr unsigned int K = 1;
    static constexpr unsigned int ROW_BYTES = A::BYTES;

    A axes;
    unsigned int n;
    u64 units;

    __device__ explicit Cells(const CountParams& p)
        : axes(p.columns, p.rules, p.cell_strides), n(p.cells), units(p.columns[0].len)
    {
    }

    __device__ bool nullable() const { return axes.nullable(); }
    __device__ unsigned char* stage(unsigned char* smem) { return axes.stage(smem); }
    __device__ Load load(u64 row) const { return axes.load(row); }
    __device__ Load load_checked(u64 row) const { return row < units ? load(row) : Load{}; }

    template <bool NULLABLE, bool ALL_IN = false, class Op>
    __device__ __forceinline__ void each(u64 row, const Load& q, Op& op) const
    {
        const bool present = (ALL_IN || row < units) && (!NULLABLE || axes.valid(row));
        op(present, row, present ? axes.cell(q, n) : n);
    }

    // Every row is in a unit.
    template <bool NULLABLE, class Op>
    __device__ __forceinline__ void edges(Op& op) const
    {
        op(false, 0, n);
    }
};

// The rows of an (n, d) array of one type, row-major (numpy's sample of histogramdd): each
// 16-byte load holds K = 16 / (d * sizeof(value)) whole rows, binned from registers, where Cells
// loads every coordinate alone (a float32 pair: two 4-byte loads a row; 4-byte loads reached 54%
// of an H200's read bandwidth in 1-D). The host takes it where the columns are the array's, no
// row has nulls and rows start on a row's alignment (src/gpu/launch.rs); the rows before the
// first 16-byte boundary and after the last whole vector are read one by one (`edges`).
template <class A>
struct InterleavedCells {
    typedef typename A::Value Value;
    typedef uint4 Load;
    static constexpr unsigned int ROW_BYTES = A::BYTES;
    static_assert(16 % ROW_BYTES == 0, "whole rows in a 16-byte load");
    static constexpr unsigned int K = 16 / ROW_BYTES;

    A axes;
    unsigned int n;
    const unsigned char* base;
    u64 len;
    u64 head;
    u64 units;

    __device__ explicit InterleavedCells(const CountParams& p)
        : axes(p.columns, p.rules, p.cell_strides),
          n(p.cells),
          base(static_cast<const unsigned char*>(p.columns[0].values)),
          len(p.columns[0].len)
    {
        const u64 misalign = reinterpret_cast<u64>(base) % 16;
        const u64 head_rows = (16 - misalign) % 16 / ROW_BYTES;
        head = head_rows < len ? head_rows : len;
        units = (len - head) / K;
    }

    __device__ bool nullable() const { return false; }
    __device__ unsigned char* stage(unsigned char* smem) { return axes.stage(smem); }

    __device__ const uint4* body() const
    {
        return reinterpret_cast<const uint4*>(base + head * ROW_BYTES);
    }
    __device__ uint4 load(u64 u) const { return __ldg(body() + u); }
    __device__ uint4 load_checked(u64 u) const
    {
        return u < units ? load(u) : make_uint4(0, 0, 0, 0);
    }

    // op(present, row, cell) for the K rows of unit u held in q (present = false past the end).
    template <bool NULLABLE, bool ALL_IN = false, class Op>
    __device__ __forceinline__ void each(u64 u, uint4 q, Op& op) const
    {
        const bool in = ALL_IN || u < units;
        const u64 row0 = head + u * K;
        Chunk<Value> chunk{q};
#pragma unroll
        for (unsigned int k = 0; k < K; ++k) {
            const typename A::Load coordinates = A::from(chunk);
            op(in, row0 + k, in ? axes.cell(coordinates, n) : n);
        }
    }

    // The head and the tail (fewer than K rows each): lanes 0..15 the head, 16..31 the tail,
    // each row's coordinates loaded one by one.
    template <bool NULLABLE, class Op>
    __device__ __forceinline__ void edges(Op& op) const
    {
        const unsigned int lane = threadIdx.x;
        const u64 tail = head + units * K;
        const u64 row = lane < 16 ? lane : tail + (lane - 16);
        const bool in = lane < 16 ? row < head : row < len;
        const Value* const values = reinterpret_cast<const Value*>(base + row * ROW_BYTES);
        op(in, row, in ? axes.cell(A::load_row(values), n) : n);
    }
};
