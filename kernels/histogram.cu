// The kernels, one entry point per module: NVRTC compiles this file once per kernel a plan needs
// (src/gpu/compile.rs), with one of
//   KERNEL_COUNT      count: a family (-DFAMILY=FAMILY_SHARED|PACKED|SPILL|SEGMENTED|BATCHED|
//                     GLOBAL|PRIVATE|BANKED|RADIX, -DWEIGHTED, -DFLOAT_SUMS)
//                     over the rows of RANK axes, axis d a column binned as -DAXISd says
//                     (binners.cuh `BinnerOf`: its C type, rule kind and variant), into the
//                     histogram; one axis reads its column in 16-byte vectors, more read a row's
//                     coordinates and count its cell (cells.cuh; -DINTERLEAVED=1: the rows of
//                     one (n, RANK) array, whole rows a 16-byte load)
//   KERNEL_SEG_SCAN, KERNEL_SEG_COUNT, KERNEL_SEG_COUNT_BATCHED
//                     the segmented families' later passes (segmented.cuh; the batched count
//                     with -DSEG_RUNS_AT_ONCE=2 takes two long runs at once: the radix family's)
//   KERNEL_EXTREMES   extremes: per-block min and max of a device column (-DVALUE_T: its C type;
//                     extremes.cuh)
//   KERNEL_EDGES      edges: equal bins' edges from their linspace formula (VALUE_T: their type)
//   KERNEL_PROOF      prove: the cheap rule's proof for equal bins of that formula (proof.cuh)
//   KERNEL_FOLD       fold: counts by value added into the bins of those values
//   KERNEL_FIXED_SUMS fixed_sums: weighted sums' fixed-point cells as doubles (fixed.cuh)
// Every launch takes its parameters as one struct (abi.cuh). Rows are aligned to their element
// size (the 16-byte body is found from the address).
#include "abi.cuh"
#include "bin_rule.cuh"

#if defined(VALUE_T)
typedef VALUE_T Value;
#endif

#define FAMILY_SHARED 1
#define FAMILY_PACKED 2
#define FAMILY_SEGMENTED 3
#define FAMILY_GLOBAL 4
#define FAMILY_SPILL 5
#define FAMILY_BATCHED 6
#define FAMILY_PRIVATE 7
#define FAMILY_RADIX 8
#define FAMILY_BANKED 9
#ifndef WEIGHTED
#define WEIGHTED 0
#endif
// Float sums (POLARS_GPU_HIST_SUMS=float, src/fixed.rs): double atomics in whatever order they
// land, kept to measure the fixed-point sums against.
#ifndef FLOAT_SUMS
#define FLOAT_SUMS 0
#endif

// Explicit edges are staged in shared memory by the shared family only.
#if defined(KERNEL_COUNT) && defined(FAMILY) && FAMILY == FAMILY_SHARED
#define STAGE_EDGES true
#else
#define STAGE_EDGES false
#endif

#include "binners.cuh"
#include "rows.cuh"
#include "cells.cuh"
#include "counters.cuh"
#include "fixed.cuh"

extern __shared__ __align__(16) unsigned char smem[];

#include "families.cuh"
#include "segmented.cuh"
#include "radix.cuh"

#if defined(KERNEL_COUNT)
#if !defined(RANK) || RANK < 1 || RANK > MAX_RANK
#error "compile with -DRANK=<1..8> and -DAXIS0.. for each axis"
#endif
// The axes after the first, innermost last.
typedef NoAxes After8;
#if RANK > 7
typedef Axes<typename BinnerOf<AXIS7, STAGE_EDGES>::type, After8> After7;
#else
typedef After8 After7;
#endif
#if RANK > 6
typedef Axes<typename BinnerOf<AXIS6, STAGE_EDGES>::type, After7> After6;
#else
typedef After7 After6;
#endif
#if RANK > 5
typedef Axes<typename BinnerOf<AXIS5, STAGE_EDGES>::type, After6> After5;
#else
typedef After6 After5;
#endif
#if RANK > 4
typedef Axes<typename BinnerOf<AXIS4, STAGE_EDGES>::type, After5> After4;
#else
typedef After5 After4;
#endif
#if RANK > 3
typedef Axes<typename BinnerOf<AXIS3, STAGE_EDGES>::type, After4> After3;
#else
typedef After4 After3;
#endif
#if RANK > 2
typedef Axes<typename BinnerOf<AXIS2, STAGE_EDGES>::type, After3> After2;
#else
typedef After3 After2;
#endif
#ifndef INTERLEAVED
#define INTERLEAVED 0
#endif
#if RANK > 1
typedef Axes<typename BinnerOf<AXIS1, STAGE_EDGES>::type, After2> After1;
#if INTERLEAVED
// The rows of one (n, RANK) array, a 16-byte load holding whole rows (cells.cuh).
typedef InterleavedCells<Axes<typename BinnerOf<AXIS0, STAGE_EDGES>::type, After1>> Source;
#else
typedef Cells<Axes<typename BinnerOf<AXIS0, STAGE_EDGES>::type, After1>> Source;
#endif
#else
typedef BinnedColumn<typename BinnerOf<AXIS0, STAGE_EDGES>::type> Source;
#endif

#if FAMILY == FAMILY_SEGMENTED || FAMILY == FAMILY_BATCHED || FAMILY == FAMILY_RADIX
#define COUNT_BOUNDS __launch_bounds__(SEG_PARTITION_THREADS, 2)
#elif FAMILY == FAMILY_PRIVATE
// One block of up to 1,024 threads an SM: at most 64 registers a thread.
#define COUNT_BOUNDS __launch_bounds__(1024, 1)
#else
#define COUNT_BOUNDS
#endif
extern "C" __global__ void COUNT_BOUNDS count(const CountParams p)
{
    const Source src(p);
#if WEIGHTED && FLOAT_SUMS
    const Weights weights{p.weights.values, p.weights.validity, p.weights.validity_offset};
    double* const out = static_cast<double*>(p.out);
#if FAMILY == FAMILY_SHARED
    shared_float_hist(src, weights, p.shared.replicas, p.shared.stride, out);
#elif FAMILY == FAMILY_GLOBAL
    global_float_hist(src, weights, out);
#else
#error "weighted sums take the shared or the global family"
#endif
#elif WEIGHTED
    const Weights weights{p.weights.values, p.weights.validity, p.weights.validity_offset};
    u64* const out = static_cast<u64*>(p.out);
#if FAMILY == FAMILY_SHARED
    shared_weighted_hist(src, weights, p.weight_exponent, p.shared.replicas, p.shared.stride,
                         out);
#elif FAMILY == FAMILY_GLOBAL
    global_weighted_hist(src, weights, p.weight_exponent, out);
#else
#error "weighted sums take the shared or the global family"
#endif
#else
    u64* const out = static_cast<u64*>(p.out);
#if FAMILY == FAMILY_SHARED
    shared_hist(src, p.shared.replicas, p.shared.stride, out);
#elif FAMILY == FAMILY_PACKED
    packed_hist(src, out);
#elif FAMILY == FAMILY_SPILL
    spill_hist(src, out);
#elif FAMILY == FAMILY_SEGMENTED
    seg_partition<false>(src, p.seg, out);
#elif FAMILY == FAMILY_BATCHED
    seg_partition<true>(src, p.seg, out);
#elif FAMILY == FAMILY_GLOBAL
    global_hist(src, out);
#elif FAMILY == FAMILY_PRIVATE
    private_hist(src, out);
#elif FAMILY == FAMILY_BANKED
    banked_hist(src, p.shared.replicas, out);
#elif FAMILY == FAMILY_RADIX
    radix_partition(src, p.seg, out);
#else
#error "compile with -DFAMILY=FAMILY_SHARED|PACKED|SPILL|SEGMENTED|BATCHED|GLOBAL|PRIVATE|BANKED|RADIX"
#endif
#endif
}
#endif

#if defined(KERNEL_EXTREMES)
#include "extremes.cuh"
#endif

#if defined(KERNEL_EDGES)
// `Linspace::edge` of bins.rs for i < n, the stored last edge at n.
extern "C" __global__ void edges(const __grid_constant__ EdgesParams p)
{
    Value* const out = static_cast<Value*>(p.out);
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i <= p.n;
         i += (u64)gridDim.x * blockDim.x) {
        out[i] = i == p.n ? static_cast<Value>(p.last)
                          : linspace_edge<Value>(p, i, p.single);
    }
}
#endif

#if defined(KERNEL_PROOF)
#include "proof.cuh"
#endif

#if defined(KERNEL_FIXED_SUMS)
// Fixed-point weighted sums (fixed.cuh cells) as doubles, one thread a cell.
extern "C" __global__ void fixed_sums(const __grid_constant__ FixedSumsParams p)
{
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < p.cells;
         i += (u64)gridDim.x * blockDim.x) {
        p.out[i] = fixed_value(p.fixed + FIXED_WORDS * i, p.exponent);
    }
}
#endif

#if defined(KERNEL_FOLD)
// A narrow integer column counted value by value (`ByValue` in src/job.rs) into its bins: one
// thread a value, one atomic a value seen.
extern "C" __global__ void fold(const __grid_constant__ FoldParams p)
{
    for (unsigned int v = blockIdx.x * blockDim.x + threadIdx.x; v < p.values;
         v += gridDim.x * blockDim.x) {
        const u64 count = p.value_counts[v];
        const unsigned int bin = p.value_bins[v];
        if (count != 0 && bin < p.cells) atomicAdd(p.out + bin, count);
    }
}
#endif
