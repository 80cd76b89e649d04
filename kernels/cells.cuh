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
