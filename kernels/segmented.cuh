// The segmented family, for more bins than one block's shared memory holds. Bin b belongs to
// partition b >> WIDTH_BITS, a run of 2^WIDTH_BITS bins whose u32 counters fit in one block.
// Three kernels, each one pass:
//   seg_partition: each tile of SEG_TILE_ROWS rows is binned and its bins grouped by partition
//                  (a counting sort in shared memory); the low WIDTH_BITS bits of each bin are
//                  written as u16 keys in place of the tile, with where each partition starts.
//   seg_scan:      per partition, its rows in tiles 0..=t (one block a partition).
//   seg_count:     work items of about `rows_per_item` rows of one partition, over a range of
//                  tiles; a persistent grid counts each item in shared memory and merges it.
//                  seg_count_batched (the batched family) does the same, a warp reading 32
//                  tiles' keys at once.
// Keys cost 2 bytes a row written and read again: about 1.5x the reads of the column itself for
// float32, and every global atomic of the large-bin problem becomes a shared-memory one. Items
// are cut by row counts, so one hot partition (degenerate or sorted data) spreads over the grid.
// Included by histogram.cu; the host mirrors the two constants.
#pragma once

#define SEG_TILE_ROWS 16384
#define SEG_PARTITION_THREADS 512

// `Segments` (abi.cuh) holds the scratch of the three passes.


// Exclusive prefix of one value a thread over the block, and the block's total. Every thread
// must call it; `scratch` holds 32 words.
__device__ __forceinline__ unsigned int block_exclusive_scan(
    unsigned int value, unsigned int& total, unsigned int* scratch)
{
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    const unsigned int warps = blockDim.x / 32;
    unsigned int inclusive = value;
#pragma unroll
    for (unsigned int d = 1; d < 32; d *= 2) {
        const unsigned int other = __shfl_up_sync(0xffffffffu, inclusive, d);
        inclusive += lane >= d ? other : 0;
    }
    if (lane == 31) scratch[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        unsigned int w = lane < warps ? scratch[lane] : 0;
#pragma unroll
        for (unsigned int d = 1; d < 32; d *= 2) {
            const unsigned int other = __shfl_up_sync(0xffffffffu, w, d);
            w += lane >= d ? other : 0;
        }
        scratch[lane] = w;
    }
    __syncthreads();
    const unsigned int before = (warp > 0 ? scratch[warp - 1] : 0) + inclusive - value;
    total = scratch[warps - 1];
    __syncthreads();
    return before;
}

// Replaces a[0..count) in shared memory by its exclusive prefix sums; returns the total.
__device__ __forceinline__ unsigned int scan_shared(unsigned int* a, unsigned int count,
                                                    unsigned int* scratch)
{
    const unsigned int per = (count + blockDim.x - 1) / blockDim.x;
    const unsigned int begin = min(threadIdx.x * per, count);
    const unsigned int end = min(begin + per, count);
    unsigned int sum = 0;
    for (unsigned int i = begin; i < end; ++i) sum += a[i];
    unsigned int total;
    unsigned int run = block_exclusive_scan(sum, total, scratch);
    for (unsigned int i = begin; i < end; ++i) {
        const unsigned int c = a[i];
        a[i] = run;
        run += c;
    }
    __syncthreads();
    return total;
}

// Number of the first `count` entries of the sorted a[] that are <= x.
__device__ __forceinline__ unsigned int count_at_most(const unsigned int* a, unsigned int count,
                                                      unsigned int x)
{
    unsigned int lo = 0, hi = count;
    while (lo < hi) {
        const unsigned int mid = (lo + hi) / 2;
        if (a[mid] <= x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Shared memory of seg_partition: scratch, per-partition counters, the tile's bins and keys.
__host__ __device__ constexpr unsigned int seg_partition_words(unsigned int partitions)
{
    return 32 + (partitions + 3) / 4 * 4 + SEG_TILE_ROWS + SEG_TILE_ROWS / 2;
}

// PREFETCH (the batched family): the first U units of the block's next tile are read into
// registers as soon as this tile is binned, so they arrive while it is scanned, scattered and
// copied out, instead of every tile starting with a wait on memory (as register double
// buffering does in GEMM kernels: a barrier does not wait for a load's data).
template <bool PREFETCH, class S>
__device__ __forceinline__ void seg_partition(S src, const Segments seg, u64* out)
{
    constexpr unsigned int K = S::K;
    constexpr unsigned int UNITS = SEG_TILE_ROWS / K;  // a tile
    constexpr unsigned int PER_THREAD = UNITS / SEG_PARTITION_THREADS;
    // Units in flight: 4, or 8 rows of a source whose row is at most 8 bytes (two float32
    // columns) in the batched family: a row's loads are a value a column, so 4 rows kept few
    // bytes in flight. (Wider rows would spill registers.)
    constexpr unsigned int MOST = PREFETCH && K == 1 && S::ROW_BYTES <= 8 ? 8 : 4;
    constexpr unsigned int U = PER_THREAD < MOST ? PER_THREAD : MOST;
    static_assert(PER_THREAD % U == 0, "whole steps of U vectors");
    if (blockDim.x != SEG_PARTITION_THREADS) __trap();

    unsigned int* const scratch = reinterpret_cast<unsigned int*>(smem);
    unsigned int* const counts = scratch + 32;
    unsigned int* const bins = counts + (seg.partitions + 3) / 4 * 4;
    unsigned short* const keys = reinterpret_cast<unsigned short*>(bins + SEG_TILE_ROWS);
    const unsigned int n = src.n;
    const unsigned int P = seg.partitions;
    const unsigned int shift = seg.width_bits;
    const unsigned int mask = (1u << shift) - 1;

    typename S::Load next[U];
    auto read_ahead = [&](unsigned int tile) {
        if constexpr (PREFETCH) {
            if (tile < seg.tiles) {
#pragma unroll
                for (unsigned int u = 0; u < U; ++u) {
                    const u64 unit = u64(tile) * UNITS + threadIdx.x + u * SEG_PARTITION_THREADS;
                    next[u] = src.load_checked(unit);
                }
            }
        }
    };
    read_ahead(blockIdx.x);
    for (unsigned int tile = blockIdx.x; tile < seg.tiles; tile += gridDim.x) {
        zero_shared(counts, P);
        __syncthreads();
        // Bin the tile; a row's slot is (vector in the thread, value, thread): conflict-free.
        for (unsigned int j0 = 0; j0 < PER_THREAD; j0 += U) {
            typename S::Load q[U];
            const u64 first = u64(tile) * UNITS + threadIdx.x;
#pragma unroll
            for (unsigned int u = 0; u < U; ++u) {
                q[u] = PREFETCH && j0 == 0
                           ? next[u]
                           : src.load_checked(first + (j0 + u) * SEG_PARTITION_THREADS);
            }
#pragma unroll
            for (unsigned int u = 0; u < U; ++u) {
                unsigned int k = 0;
                auto keep = [&](bool, u64, unsigned int b) {
                    bins[((j0 + u) * K + k++) * SEG_PARTITION_THREADS + threadIdx.x] = b;
                    if (b < n) atomicAdd(counts + (b >> shift), 1u);
                };
                const u64 unit = first + (j0 + u) * SEG_PARTITION_THREADS;
                if (src.nullable()) {
                    src.template each<true>(unit, q[u], keep);
                } else {
                    src.template each<false>(unit, q[u], keep);
                }
            }
        }
        read_ahead(tile + gridDim.x);
        __syncthreads();
        const unsigned int counted = scan_shared(counts, P, scratch);
        unsigned short* const starts = seg.starts + u64(tile) * (P + 1);
        for (unsigned int p = threadIdx.x; p <= P; p += blockDim.x) {
            starts[p] = static_cast<unsigned short>(p < P ? counts[p] : counted);
        }
        __syncthreads();
        // Scatter: counts[] now runs ahead as each partition's next free key. Eight slots at a
        // time, so that their atomics overlap (one at a time, their latency bound the kernel).
        constexpr unsigned int BATCH = 8;
        static_assert(SEG_TILE_ROWS % (BATCH * SEG_PARTITION_THREADS) == 0, "whole batches");
        for (unsigned int s0 = threadIdx.x; s0 < SEG_TILE_ROWS; s0 += BATCH * SEG_PARTITION_THREADS) {
            unsigned int b[BATCH];
            unsigned int at[BATCH];
#pragma unroll
            for (unsigned int j = 0; j < BATCH; ++j) b[j] = bins[s0 + j * SEG_PARTITION_THREADS];
#pragma unroll
            for (unsigned int j = 0; j < BATCH; ++j) {
                at[j] = b[j] < n ? atomicAdd(counts + (b[j] >> shift), 1u) : 0;
            }
#pragma unroll
            for (unsigned int j = 0; j < BATCH; ++j) {
                if (b[j] < n) keys[at[j]] = static_cast<unsigned short>(b[j] & mask);
            }
        }
        __syncthreads();
        uint4* const dst = reinterpret_cast<uint4*>(seg.keys + u64(tile) * SEG_TILE_ROWS);
        const uint4* const src = reinterpret_cast<const uint4*>(keys);
        for (unsigned int i = threadIdx.x; i < (counted + 7) / 8; i += blockDim.x) {
            dst[i] = src[i];
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

#if defined(KERNEL_SEG_SCAN)
// One block a partition: cum[p][t] = its rows in tiles 0..=t, totals[p] = all of them.
extern "C" __global__ void seg_scan(Segments seg)
{
    __shared__ unsigned int scratch[32];
    const unsigned int p = blockIdx.x;
    const unsigned int stride = seg.partitions + 1;
    unsigned int carry = 0;
    for (unsigned int t0 = 0; t0 < seg.tiles; t0 += blockDim.x) {
        const unsigned int t = t0 + threadIdx.x;
        unsigned int rows = 0;
        if (t < seg.tiles) {
            const unsigned short* s = seg.starts + u64(t) * stride + p;
            rows = unsigned(s[1]) - unsigned(s[0]);
        }
        unsigned int sum;
        const unsigned int before = block_exclusive_scan(rows, sum, scratch);
        if (t < seg.tiles) seg.cum[u64(p) * seg.tiles + t] = carry + before + rows;
        carry += sum;
    }
    if (threadIdx.x == 0) seg.totals[p] = carry;
}

#endif

// Shared memory of seg_count: scratch, the item prefix, one partition's counters.
__host__ __device__ constexpr unsigned int seg_count_words(unsigned int partitions,
                                                           unsigned int width_bits)
{
    return 32 + partitions + 1 + (1u << width_bits);
}

#if defined(KERNEL_SEG_COUNT) || defined(KERNEL_SEG_COUNT_BATCHED)
// Both count passes: the work items of every partition (a partition of r rows is
// ceil(r / rows_per_item) items, listed alike by every block), each item's tiles [ta, tb) of
// partition p counted by `tiles(p, ta, tb, counters)` into one partition's shared counters,
// then merged into `out`.
template <class Tiles>
__device__ __forceinline__ void seg_count_items(const Segments& seg, unsigned int n, u64* out,
                                                Tiles tiles)
{
    const unsigned int P = seg.partitions;
    const unsigned int W = 1u << seg.width_bits;
    unsigned int* const scratch = reinterpret_cast<unsigned int*>(smem);
    unsigned int* const first_item = scratch + 32;  // [P + 1]
    unsigned int* const counters = first_item + P + 1;

    for (unsigned int p = threadIdx.x; p < P; p += blockDim.x) {
        first_item[p] = (seg.totals[p] + seg.rows_per_item - 1) / seg.rows_per_item;
    }
    __syncthreads();
    const unsigned int items = scan_shared(first_item, P, scratch);
    if (threadIdx.x == 0) first_item[P] = items;
    zero_shared(counters, W);
    __syncthreads();

    for (unsigned int item = blockIdx.x; item < items; item += gridDim.x) {
        const unsigned int p = count_at_most(first_item, P + 1, item) - 1;
        const unsigned int part = item - first_item[p];
        const unsigned int parts = first_item[p + 1] - first_item[p];
        const unsigned int* const cum = seg.cum + u64(p) * seg.tiles;
        const u64 total = seg.totals[p];
        // Tiles [ta, tb): cut where the partition's running row count passes part / parts.
        const unsigned int ta = count_at_most(cum, seg.tiles, unsigned(total * part / parts));
        const unsigned int tb =
            count_at_most(cum, seg.tiles, unsigned(total * (part + 1) / parts));
        tiles(p, ta, tb, counters);
        __syncthreads();
        const unsigned int base = p << seg.width_bits;
        const unsigned int width = min(W, n - base);
        for (unsigned int j = threadIdx.x; j < width; j += blockDim.x) {
            const unsigned int c = counters[j];
            if (c != 0) {
                atomicAdd(out + base + j, u64(c));
                counters[j] = 0;
            }
        }
        __syncthreads();
    }
}
#endif

#if defined(KERNEL_SEG_COUNT)
// Keys of one tile's run from which a warp reads them 16 bytes a lane.
constexpr unsigned int VECTOR_RUN_KEYS = 32 * 8;

// The keys [begin, end) of one run, by the whole warp: eight keys a 16-byte load between its
// first and last multiples of eight (a tile's keys start 16-byte aligned), its ragged ends
// (fewer than eight keys each) a key a lane. 2-byte loads left such runs latency-bound: at a
// million bins, 0.98 -> 0.79 ms for 2^29 uniform rows on an H100.
__device__ __forceinline__ void count_run_by_warp(unsigned int* counters,
                                                  const unsigned short* keys, unsigned int begin,
                                                  unsigned int end, unsigned int lane)
{
    const unsigned int lo = (begin + 7u) & ~7u;
    const unsigned int hi = end & ~7u;
    if (begin + lane < lo) atomicAdd(counters + keys[begin + lane], 1u);
    if (hi + lane < end) atomicAdd(counters + keys[hi + lane], 1u);
    const uint4* const eights = reinterpret_cast<const uint4*>(keys + lo);
    for (unsigned int j = lane; j < (hi - lo) / 8; j += 32) {
        const uint4 q = eights[j];
        const unsigned int pairs[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (unsigned int k = 0; k < 4; ++k) {
            atomicAdd(counters + (pairs[k] & 0xffffu), 1u);
            atomicAdd(counters + (pairs[k] >> 16), 1u);
        }
    }
}

// A warp a tile: its start and end, then its keys (a key a lane, or 16 bytes a lane for long
// runs). Two dependent reads a tile, one tile at a time per warp.
extern "C" __global__ void seg_count(Segments seg, unsigned int n, u64* out)
{
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    const unsigned int warps = blockDim.x / 32;
    const unsigned int stride = seg.partitions + 1;
    seg_count_items(seg, n, out, [&](unsigned int p, unsigned int ta, unsigned int tb,
                                     unsigned int* counters) {
        for (unsigned int t = ta + warp; t < tb; t += warps) {
            const unsigned short* const s = seg.starts + u64(t) * stride + p;
            const unsigned int begin = s[0];
            const unsigned int end = s[1];
            const unsigned short* const keys = seg.keys + u64(t) * SEG_TILE_ROWS;
            if (end - begin < VECTOR_RUN_KEYS) {
                for (unsigned int i = begin + lane; i < end; i += 32) {
                    atomicAdd(counters + keys[i], 1u);
                }
            } else {
                count_run_by_warp(counters, keys, begin, end, lane);
            }
        }
    });
}
#endif

#if defined(KERNEL_SEG_COUNT_BATCHED)
// The eight keys of the 16-byte word q at key `first`, those in [begin, end) counted.
__device__ __forceinline__ void count_keys_in(unsigned int* counters, const uint4& q,
                                              unsigned int first, unsigned int begin,
                                              unsigned int end)
{
    const unsigned int pairs[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (unsigned int k = 0; k < 8; ++k) {
        const unsigned int key = (pairs[k / 2] >> (16 * (k % 2))) & 0xffffu;
        if (first + k >= begin && first + k < end) atomicAdd(counters + key, 1u);
    }
}

// 16-byte reads a lane keeps in flight in the batched count pass.
constexpr unsigned int BATCH_READS = 4;
// Keys of one tile's run that the whole warp counts together; shorter runs join the batch's list.
constexpr unsigned int WARP_RUN_KEYS = 256;

// The keys [begin, end) of one long run, by the whole warp: the 16-byte words that hold them,
// BATCH_READS a lane read before the first is counted (no bookkeeping a word).
__device__ __forceinline__ void count_run_by_warp(unsigned int* counters,
                                                  const unsigned short* keys, unsigned int begin,
                                                  unsigned int end, unsigned int lane)
{
    const uint4* const words = reinterpret_cast<const uint4*>(keys);
    const unsigned int first = begin / 8;
    const unsigned int count = (end - 1) / 8 - first + 1;
    for (unsigned int w0 = 0; w0 < count; w0 += 32 * BATCH_READS) {
        uint4 q[BATCH_READS];
#pragma unroll
        for (unsigned int r = 0; r < BATCH_READS; ++r) {
            const unsigned int w = w0 + 32 * r + lane;
            q[r] = w < count ? words[first + w] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (unsigned int r = 0; r < BATCH_READS; ++r) {
            const unsigned int w = w0 + 32 * r + lane;
            count_keys_in(counters, q[r], (first + w) * 8, begin, w < count ? end : 0);
        }
    }
}

// Long runs a warp reads at once in the batched count pass: 1, or 2 (the radix family's), so
// that a warp waits for memory once for two runs. A million bins make runs of 512 keys, 64
// words: two a lane, after which a warp counting one run at a time waited on its next reads.
#ifndef SEG_RUNS_AT_ONCE
#define SEG_RUNS_AT_ONCE 1
#endif

// The keys [a_begin, a_end) and [b_begin, b_end) of two long runs (the second may be empty), by
// the whole warp: BATCH_READS words of each a lane read before the first is counted.
__device__ __forceinline__ void count_two_runs_by_warp(
    unsigned int* counters, const unsigned short* a_keys, unsigned int a_begin,
    unsigned int a_end, const unsigned short* b_keys, unsigned int b_begin, unsigned int b_end,
    unsigned int lane)
{
    const uint4* const a_words = reinterpret_cast<const uint4*>(a_keys);
    const uint4* const b_words = reinterpret_cast<const uint4*>(b_keys);
    const unsigned int a_first = a_begin / 8;
    const unsigned int b_first = b_begin / 8;
    const unsigned int a_count = (a_end - 1) / 8 - a_first + 1;  // a is never empty
    const unsigned int b_count = b_end > b_begin ? (b_end - 1) / 8 - b_first + 1 : 0;
    const unsigned int most = a_count > b_count ? a_count : b_count;
    for (unsigned int w0 = 0; w0 < most; w0 += 32 * BATCH_READS) {
        uint4 qa[BATCH_READS], qb[BATCH_READS];
#pragma unroll
        for (unsigned int r = 0; r < BATCH_READS; ++r) {
            const unsigned int w = w0 + 32 * r + lane;
            qa[r] = w < a_count ? a_words[a_first + w] : make_uint4(0, 0, 0, 0);
            qb[r] = w < b_count ? b_words[b_first + w] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (unsigned int r = 0; r < BATCH_READS; ++r) {
            const unsigned int w = w0 + 32 * r + lane;
            count_keys_in(counters, qa[r], (a_first + w) * 8, a_begin, w < a_count ? a_end : 0);
            count_keys_in(counters, qb[r], (b_first + w) * 8, b_begin, w < b_count ? b_end : 0);
        }
    }
}

// The lane whose chunks hold chunk c of a batch: the last lane whose first chunk is <= c (lanes
// hold their first chunks in ascending order; lane 0's is 0). Every lane must call it.
__device__ __forceinline__ unsigned int lane_of_chunk(unsigned int c, unsigned int first_chunk)
{
    unsigned int lane = 0;
#pragma unroll
    for (unsigned int step = 16; step > 0; step /= 2) {
        const unsigned int first = __shfl_sync(0xffffffffu, first_chunk, lane + step);
        if (first <= c) lane += step;
    }
    return lane;
}

// A warp 32 tiles at a time: each lane reads one tile's start and end at once. The long runs
// are counted by the whole warp one after another; the short ones become one list of 16-byte
// words (those that hold a run's keys), dealt out to the lanes BATCH_READS at a time, all read
// before the first is counted. seg_count pays two dependent reads a tile, one tile at a time per
// warp, and at 16M bins (runs of 32 keys) that latency bound it: here a batch of 32 tiles costs
// one read of the starts, then reads as parallel as the keys allow, whatever the runs' lengths.
// (Finding a word's run takes 8 shuffles, as many as its atomics: long runs skip that.)
extern "C" __global__ void seg_count_batched(Segments seg, unsigned int n, u64* out)
{
    const unsigned int lane = threadIdx.x % 32;
    const unsigned int warp = threadIdx.x / 32;
    const unsigned int warps = blockDim.x / 32;
    const unsigned int stride = seg.partitions + 1;
    seg_count_items(seg, n, out, [&](unsigned int p, unsigned int ta, unsigned int tb,
                                     unsigned int* counters) {
        for (unsigned int t0 = ta + 32 * warp; t0 < tb; t0 += 32 * warps) {
            const unsigned int t = t0 + lane;
            unsigned int begin = 0, end = 0;
            if (t < tb) {
                const unsigned short* const s = seg.starts + u64(t) * stride + p;
                begin = s[0];
                end = s[1];
            }
            const bool long_run = end - begin >= WARP_RUN_KEYS;
#if SEG_RUNS_AT_ONCE == 2
            for (unsigned int lanes = __ballot_sync(0xffffffffu, long_run); lanes != 0;) {
                const unsigned int a = __ffs(lanes) - 1;
                lanes &= lanes - 1;
                // A second run, or none (an empty one of the first's tile).
                const unsigned int b = lanes != 0 ? __ffs(lanes) - 1 : a;
                const bool two = lanes != 0;
                lanes &= lanes - 1;
                const unsigned int b_begin = __shfl_sync(0xffffffffu, begin, b);
                count_two_runs_by_warp(counters, seg.keys + u64(t0 + a) * SEG_TILE_ROWS,
                                       __shfl_sync(0xffffffffu, begin, a),
                                       __shfl_sync(0xffffffffu, end, a),
                                       seg.keys + u64(t0 + b) * SEG_TILE_ROWS, b_begin,
                                       two ? __shfl_sync(0xffffffffu, end, b) : b_begin, lane);
            }
#else
            for (unsigned int lanes = __ballot_sync(0xffffffffu, long_run); lanes != 0;
                 lanes &= lanes - 1) {
                const unsigned int from = __ffs(lanes) - 1;
                count_run_by_warp(counters, seg.keys + u64(t0 + from) * SEG_TILE_ROWS,
                                  __shfl_sync(0xffffffffu, begin, from),
                                  __shfl_sync(0xffffffffu, end, from), lane);
            }
#endif
            const unsigned int chunks =
                !long_run && end > begin ? (end - 1) / 8 - begin / 8 + 1 : 0;
            unsigned int inclusive = chunks;
#pragma unroll
            for (unsigned int d = 1; d < 32; d *= 2) {
                const unsigned int other = __shfl_up_sync(0xffffffffu, inclusive, d);
                inclusive += lane >= d ? other : 0;
            }
            const unsigned int first_chunk = inclusive - chunks;
            const unsigned int total = __shfl_sync(0xffffffffu, inclusive, 31);
            for (unsigned int c0 = 0; c0 < total; c0 += 32 * BATCH_READS) {
                uint4 q[BATCH_READS];
                unsigned int key0[BATCH_READS], from[BATCH_READS], to[BATCH_READS];
#pragma unroll
                for (unsigned int r = 0; r < BATCH_READS; ++r) {
                    const unsigned int c = c0 + 32 * r + lane;
                    const unsigned int owner = lane_of_chunk(c, first_chunk);
                    const unsigned int run_begin = __shfl_sync(0xffffffffu, begin, owner);
                    const unsigned int run_end = __shfl_sync(0xffffffffu, end, owner);
                    const unsigned int owner_first = __shfl_sync(0xffffffffu, first_chunk, owner);
                    const unsigned int word = run_begin / 8 + (c - owner_first);
                    const bool in = c < total;
                    key0[r] = word * 8;
                    from[r] = run_begin;
                    to[r] = in ? run_end : 0;  // past the list: nothing counted
                    const uint4* const words =
                        reinterpret_cast<const uint4*>(seg.keys + u64(t0 + owner) * SEG_TILE_ROWS);
                    q[r] = in ? words[word] : make_uint4(0, 0, 0, 0);
                }
#pragma unroll
                for (unsigned int r = 0; r < BATCH_READS; ++r) {
                    count_keys_in(counters, q[r], key0[r], from[r], to[r]);
                }
            }
        }
    });
}
#endif
