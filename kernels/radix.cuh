// The radix family's first pass: each tile's rows grouped by the high bits of their bins (a
// radix partition of the tile, bin b in partition b >> WIDTH_BITS), written as u16 keys with
// where each partition starts, as seg_partition writes them, so that seg_scan and the batched
// count pass follow unchanged. What differs takes the tests out of the row loops:
//   - rows not counted (NaN, outside the edges, past the end) get a partition of their own, P,
//     after the counted ones: no row is tested for it twice, and the scatter has no branch;
//   - whole tiles (all but the last of a launch) are read without bounds checks.
// seg_partition tested every row at both places and every unit against the end: about 60
// instructions a float32 row in its SASS, where binning is a dozen (the pass is issue-bound,
// BENCHMARKS.md).
// Included by histogram.cu after segmented.cuh.
#pragma once

// Shared memory of radix_partition: scratch, P + 1 partition counters, the tile's bins and keys.
__host__ __device__ constexpr unsigned int radix_partition_words(unsigned int partitions)
{
    return 32 + (partitions + 1 + 3) / 4 * 4 + SEG_TILE_ROWS + SEG_TILE_ROWS / 2;
}

// A compile-time flag passed to a generic lambda.
template <bool B>
struct Flag {
    static constexpr bool value = B;
};

template <class S>
__device__ __forceinline__ void radix_partition(S src, const Segments seg, u64* out)
{
    constexpr unsigned int K = S::K;
    constexpr unsigned int UNITS = SEG_TILE_ROWS / K;  // a tile
    constexpr unsigned int PER_THREAD = UNITS / SEG_PARTITION_THREADS;
    // Units in flight: as the batched family's partition pass keeps them.
    constexpr unsigned int MOST = K == 1 && S::ROW_BYTES <= 8 ? 8 : 4;
    constexpr unsigned int U = PER_THREAD < MOST ? PER_THREAD : MOST;
    static_assert(PER_THREAD % U == 0, "whole steps of U units");
    if (blockDim.x != SEG_PARTITION_THREADS) __trap();

    unsigned int* const scratch = reinterpret_cast<unsigned int*>(smem);
    unsigned int* const counts = scratch + 32;
    const unsigned int P = seg.partitions;
    unsigned int* const bins = counts + (P + 1 + 3) / 4 * 4;
    unsigned short* const keys = reinterpret_cast<unsigned short*>(bins + SEG_TILE_ROWS);
    const unsigned int n = src.n;
    const unsigned int shift = seg.width_bits;
    const unsigned int mask = (1u << shift) - 1;
    // A bin of partition P, where the rows not counted go.
    const unsigned int uncounted = P << shift;
    const u64 whole_tiles = src.units / UNITS;

    // A tile's rows binned into bins[] and counted by partition: a row's slot is (unit in the
    // thread, row in the unit, thread), conflict-free. The first U units came ahead (`next`).
    typename S::Load next[U];
    auto load = [&](unsigned int tile, unsigned int j, bool whole) {
        const u64 unit = u64(tile) * UNITS + threadIdx.x + j * SEG_PARTITION_THREADS;
        return whole ? src.load(unit) : src.load_checked(unit);
    };
    auto bin_tile = [&](auto nullable, auto whole, unsigned int tile) {
        constexpr bool NULLABLE = decltype(nullable)::value;
        constexpr bool WHOLE = decltype(whole)::value;
        // Steps of U units, not unrolled: four variants of a whole tile unrolled made modules
        // of 300 KB for two axes (NVRTC's time), and a step's slots are its base plus constants.
#pragma unroll 1
        for (unsigned int j0 = 0; j0 < PER_THREAD; j0 += U) {
            typename S::Load q[U];
#pragma unroll
            for (unsigned int u = 0; u < U; ++u) {
                q[u] = j0 == 0 ? next[u] : load(tile, j0 + u, WHOLE);
            }
#pragma unroll
            for (unsigned int u = 0; u < U; ++u) {
                unsigned int k = 0;
                auto keep = [&](bool, u64, unsigned int b) {
                    const unsigned int e = b < n ? b : uncounted;
                    bins[((j0 + u) * K + k++) * SEG_PARTITION_THREADS + threadIdx.x] = e;
                    atomicAdd(counts + (e >> shift), 1u);
                };
                const u64 unit = u64(tile) * UNITS + threadIdx.x + (j0 + u) * SEG_PARTITION_THREADS;
                src.template each<NULLABLE, WHOLE>(unit, q[u], keep);
            }
        }
    };
    auto read_ahead = [&](unsigned int tile) {
        if (tile < seg.tiles) {
#pragma unroll
            for (unsigned int u = 0; u < U; ++u) next[u] = load(tile, u, tile < whole_tiles);
        }
    };
    typedef Flag<true> Yes;
    typedef Flag<false> No;

    read_ahead(blockIdx.x);
    for (unsigned int tile = blockIdx.x; tile < seg.tiles; tile += gridDim.x) {
        zero_shared(counts, P + 1);
        __syncthreads();
        const bool whole = tile < whole_tiles;
        if (src.nullable()) {
            whole ? bin_tile(Yes(), Yes(), tile) : bin_tile(Yes(), No(), tile);
        } else {
            whole ? bin_tile(No(), Yes(), tile) : bin_tile(No(), No(), tile);
        }
        read_ahead(tile + gridDim.x);
        __syncthreads();
        // Partition p's keys start at counts[p]; those of P, the rows not counted, at `counted`.
        scan_shared(counts, P + 1, scratch);
        const unsigned int counted = counts[P];
        unsigned short* const starts = seg.starts + u64(tile) * (P + 1);
        for (unsigned int p = threadIdx.x; p <= P; p += blockDim.x) {
            starts[p] = static_cast<unsigned short>(counts[p]);
        }
        __syncthreads();
        // Scatter: counts[] runs ahead as each partition's next free key, eight slots at a time
        // so that their atomics overlap. Every slot lands in the tile's keys, the rows not
        // counted after `counted`, where no later pass reads them.
        constexpr unsigned int BATCH = 8;
        static_assert(SEG_TILE_ROWS % (BATCH * SEG_PARTITION_THREADS) == 0, "whole batches");
#pragma unroll 1
        for (unsigned int s0 = threadIdx.x; s0 < SEG_TILE_ROWS;
             s0 += BATCH * SEG_PARTITION_THREADS) {
            unsigned int e[BATCH];
            unsigned int at[BATCH];
#pragma unroll
            for (unsigned int j = 0; j < BATCH; ++j) e[j] = bins[s0 + j * SEG_PARTITION_THREADS];
#pragma unroll
            for (unsigned int j = 0; j < BATCH; ++j) at[j] = atomicAdd(counts + (e[j] >> shift), 1u);
#pragma unroll
            for (unsigned int j = 0; j < BATCH; ++j) {
                keys[at[j]] = static_cast<unsigned short>(e[j] & mask);
            }
        }
        __syncthreads();
        uint4* const dst = reinterpret_cast<uint4*>(seg.keys + u64(tile) * SEG_TILE_ROWS);
        const uint4* const from = reinterpret_cast<const uint4*>(keys);
        for (unsigned int i = threadIdx.x; i < (counted + 7) / 8; i += blockDim.x) {
            dst[i] = from[i];
        }
        __syncthreads();
    }

    // The rows outside the units (a column's unaligned head and tail) go straight to the
    // histogram.
    auto direct = [&](bool present, u64, unsigned int b) {
        if (present && b < n) atomicAdd(out + b, u64(1));
    };
    if (src.nullable()) {
        edge_rows<true>(src, direct);
    } else {
        edge_rows<false>(src, direct);
    }
}
