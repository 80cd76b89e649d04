// The kernels' parameters, passed by value: one struct per launch (`count` a CountParams; the
// segmented family's later passes a Segments, with their counts' count and address; extremes,
// edges and prove theirs as __grid_constant__). src/gpu/abi.rs mirrors every struct with
// #[repr(C)] and asserts the same sizes: change both together.
#pragma once

typedef unsigned long long u64;

// The most axes a histogram has (histogramdd's 8 dimensions; by= is 2).
#define MAX_RANK 8

// The rows of one column: `len` values `stride` apart (1: contiguous), with an Arrow validity
// bitmap (bit validity_offset + row; null: every row is valid).
struct Column {
    const void* values;
    const unsigned char* validity;
    u64 validity_offset;
    u64 len;
    u64 stride;
};

// float64 weights beside the rows, with their own validity (null values: unweighted).
struct WeightColumn {
    const double* values;
    const unsigned char* validity;
    u64 validity_offset;
};

// One axis's rule (bins.rs `BinSpec`, or a group table). Which fields a kernel reads is fixed
// when it is compiled (RULE, CLOSED_RIGHT, LITERAL, FORMULA, WIDE, FLOW).
struct Rule {
    const void* edges;           // n + 1 edges: float (RULE_U32), u64 keys (RULE_INTS) or double
    const unsigned int* table;   // RULE_TABLE: the group id of key lo + i
    long long lo;                // RULE_TABLE, RULE_INDEX (the bin of x is x - lo)
    unsigned int n;              // bins, without the flow bins
    unsigned int pad;
    double first;   // e[0] and e[n] of equal bins (exact for float edges), so that a kernel
    double last;    // that recomputes edges never reads the edge array
    double denom;   // numpy's norm_denom (`Estimate::denom`)
    double n_f;     // numpy's norm_numerator
    double scale;   // n / (hi - lo): the cheap estimate (closed left), Polars' (closed right)
    double margin;  // `UniformBins::margin`
    double start;   // `Linspace`: edge i = i * step + start
    double step;
    unsigned int at_min;  // RULE_INTS: the bins of the values' domain's minimum and maximum
    unsigned int at_max;
};

// The shared family's counters: `replicas` copies, `stride` apart.
struct SharedLayout {
    unsigned int replicas;
    unsigned int stride;
};

// The segmented family's scratch and layout (segmented.cuh).
struct Segments {
    unsigned short* keys;    // a launch's rows, tile by tile, grouped by partition within a tile
    unsigned short* starts;  // [tiles][partitions + 1]: a partition's first key in a tile
    unsigned int* cum;       // [partitions][tiles]: a partition's rows in tiles 0..=t
    unsigned int* totals;    // [partitions]
    unsigned int partitions;
    unsigned int width_bits;
    unsigned int tiles;
    unsigned int rows_per_item;
};

// `count`: the histogram of the rows of RANK axes (axis d: columns[d] under rules[d], its bin
// times cell_strides[d] in the row's cell; entries past RANK unused), `cells` cells in all,
// accumulated into `out` (u64 counts, or when WEIGHTED fixed-point sums, FIXED_WORDS u64 a cell,
// on the grid 2^-weight_exponent: fixed.cuh).
struct CountParams {
    Column columns[MAX_RANK];
    Rule rules[MAX_RANK];
    unsigned int cell_strides[MAX_RANK];
    unsigned int cells;
    int weight_exponent;
    WeightColumn weights;
    SharedLayout shared;
    Segments seg;
    void* out;
};

// `extremes`: per block, the minimum and maximum of the non-NaN values (numpy's range of a
// device array), and whether the block saw any.
struct ExtremesParams {
    Column rows;
    void* mins;
    void* maxs;
    unsigned int* found;
};

// `edges`: edge i < n of equal bins from their linspace formula, edge n = `last`.
struct EdgesParams {
    void* out;
    unsigned int n;
    unsigned int single;
    double start;
    double step;
    double last;
};

// `prove`: the cheap rule's proof walked over the n bins of equal bins made by a formula
// (`Linspace` start, step, single; edge n = `last`), with numpy's estimate (`denom`, `n_f`,
// `wide`) and the cheap one (`scale`). out[0] turns 1 where numpy's estimate strays by more
// than a bin; out[1] holds the cheap estimate's worst slack (the bits of a double >= 0).
struct ProofParams {
    u64* out;
    unsigned int n;
    unsigned int single;
    unsigned int wide;
    unsigned int pad;
    double start;
    double step;
    double last;
    double denom;
    double n_f;
    double scale;
};

// `fold`: value counts (u64, one per value of a narrow integer type) added into the bins of
// those values (`value_bins[v]`; `cells` where the value is not counted).
struct FoldParams {
    const u64* value_counts;
    const unsigned int* value_bins;
    unsigned int values;
    unsigned int cells;
    u64* out;
};

// `fixed_sums`: `cells` fixed-point cells (FIXED_WORDS u64 each) on the grid 2^-exponent as
// doubles.
struct FixedSumsParams {
    const u64* fixed;
    double* out;
    unsigned int cells;
    int exponent;
};

static_assert(sizeof(Column) == 40 && alignof(Column) == 8, "host layout");
static_assert(sizeof(WeightColumn) == 24, "host layout");
static_assert(sizeof(Rule) == 104 && alignof(Rule) == 8, "host layout");
static_assert(sizeof(SharedLayout) == 8, "host layout");
static_assert(sizeof(Segments) == 48, "host layout");
static_assert(sizeof(CountParams) == 1280, "host layout");
static_assert(sizeof(ExtremesParams) == 64, "host layout");
static_assert(sizeof(EdgesParams) == 40, "host layout");
static_assert(sizeof(ProofParams) == 72, "host layout");
static_assert(sizeof(FoldParams) == 32, "host layout");
static_assert(sizeof(FixedSumsParams) == 24, "host layout");
