// The kernel families: what one block does with the bins its source hands it (the CUB "agent").
// Each takes a source (rows.cuh: one binned column, or the cells of several) and accumulates into
// the global histogram `out`, which the host zeroes, so a column may be counted in several
// launches. src/gpu/plan.rs picks one:
//   shared    replicated per-block u32 (or fixed-point) histograms in shared memory; few bins
//   packed    one per-block histogram of 16-bit counters, up to twice the bins of shared,
//             swept into `out` every few steps
//   spill     the same counters, spilled as they wrap instead of swept
//   segmented bins grouped by partition tile by tile, then counted a partition at a time in
//             shared memory (segmented.cuh, with seg_scan and seg_count); any bin count
//   global    atomics straight into `out`; weighted (fixed-point) sums beyond shared memory
//   private   per-thread 8-bit counters and no atomics (PrivateCounters); few bins of cheap rows
//   banked    a copy of the counters a lane, each bin's copies in distinct banks (BankedCounters)
//   radix     the segmented passes with a leaner partition (radix.cuh)
// Launch assumptions: blockDim.x is a multiple of 32 (warp intrinsics use the full mask).
// Included by histogram.cu after rows.cuh and counters.cuh.
#pragma once

// A thread's run of consecutive rows in one bin, added at once: data of one value (or sorted
// data) then costs one atomic a run instead of one a row. `add(bin, rows)` takes a finished run.
template <class Add>
struct Runs {
    unsigned int n;  // no run (rows not counted)
    Add add;
    unsigned int bin = n;
    unsigned int rows = 0;

    __device__ void push(unsigned int b)
    {
        if (b != bin) {
            flush();
            bin = b;
        }
        rows += 1;
    }

    __device__ void flush()
    {
        if (bin < n) add(bin, rows);
        bin = n;
        rows = 0;
    }
};
template <class Add>
__device__ __forceinline__ Runs<Add> runs_of(unsigned int n, Add add)
{
    return Runs<Add>{n, add};
}

// Two runs: the current one, and the one a row of another bin interrupted, taken up again when
// its bin comes back. Data of one hot value among spread ones then adds the hot bin's rows once a
// thread, and a straggler once, where one run added the hot bin again after every straggler:
// 2^28 float32 values, 97% of them one, into 2M bins took 9.8 ms on an H200 that way (1.7 ms
// spread). A third bin adds the interrupted run.
template <class Add>
struct TwoRuns {
    unsigned int n;  // no run (rows not counted)
    Add add;
    unsigned int bin = n;
    unsigned int rows = 0;
    unsigned int held = n;
    unsigned int held_rows = 0;

    __device__ void push(unsigned int b)
    {
        if (b != bin) {
            if (b == held) {
                held = bin;
                bin = b;
                const unsigned int r = rows;
                rows = held_rows;
                held_rows = r;
            } else {
                if (held < n) add(held, held_rows);
                held = bin;
                held_rows = rows;
                bin = b;
                rows = 0;
            }
        }
        rows += 1;
    }

    __device__ void flush()
    {
        if (held < n) add(held, held_rows);
        if (bin < n) add(bin, rows);
        bin = held = n;
        rows = held_rows = 0;
    }
};

// Units a thread keeps in flight per step (16 bytes each for a column). Measured on an H100
// (scripts/kernel_lab.py): the shared family ran 0.71-0.76 ms for 2^29 float32 with 4, 0.78-0.90
// with 2; the global family is bound by its atomics and keeps 2.
#ifndef HIST_LOADS_IN_FLIGHT
#define HIST_LOADS_IN_FLIGHT 4
#endif
constexpr unsigned int GLOBAL_LOADS_IN_FLIGHT = 2;

// Few bins: replicated block-private u32 histograms, each with a spare counter n for the rows
// not counted. Every thread of the block must reach the __syncthreads() calls: no early exits.
template <class S>
__device__ __forceinline__ void shared_hist(S src, unsigned int replicas, unsigned int stride,
                                            u64* out)
{
    const ReplicatedCounters<unsigned int> counters{
        reinterpret_cast<unsigned int*>(src.stage(smem)), replicas, stride};
    counters.zero();
    __syncthreads();
    const unsigned int mine_address = counters.mine_address();
    // Rows not counted go to the spare counter n: no branch around the atomic.
    for_each_row<HIST_LOADS_IN_FLIGHT>(
        src, [&](bool, u64, unsigned int b) { add_one_shared(mine_address, b); }, NoStep());
    __syncthreads();
    counters.merge(src.n, out);
}

// Few bins, weighted: replicated block-private fixed-point sums in shared memory (fixed.cuh,
// FIXED_WORDS u64 a cell, `stride` cells a replica), merged into `out` exactly.
template <class S>
__device__ __forceinline__ void shared_weighted_hist(S src, Weights weights, int k,
                                                     unsigned int replicas, unsigned int stride,
                                                     u64* out)
{
    u64* const cells = reinterpret_cast<u64*>(src.stage(smem));
    zero_shared(cells, replicas * stride * FIXED_WORDS);
    __syncthreads();
    u64* const mine = cells + threadIdx.x / 32 % replicas * stride * FIXED_WORDS;
    const unsigned int n = src.n;
    for_each_row<HIST_LOADS_IN_FLIGHT>(
        src,
        [&](bool present, u64 row, unsigned int b) {
            if (present && b < n && weights.take(row)) {
                add_weight(mine + FIXED_WORDS * b, weights.amount(row), k);
            }
        },
        NoStep());
    __syncthreads();
    for (unsigned int b = threadIdx.x; b < n; b += blockDim.x) {
        merge_fixed(cells + FIXED_WORDS * b, replicas, stride, out + FIXED_WORDS * b);
    }
}

#ifndef PACKED_LOADS_IN_FLIGHT
#define PACKED_LOADS_IN_FLIGHT 4
#endif
// The packed family reads a step ahead (rows.cuh body_rows), across its sweeps' barriers.
#ifndef PACKED_READ_AHEAD
#define PACKED_READ_AHEAD 1
#endif

// Up to twice the bins: one histogram of 16-bit counters per block added without replies (see
// PackedCounters), swept between two barriers every few steps.
template <class S>
__device__ __forceinline__ void packed_hist(S src, u64* out)
{
    constexpr unsigned int K = S::K;
    constexpr unsigned int U = K >= 8 ? 16 / K : PACKED_LOADS_IN_FLIGHT;
    const unsigned int n = src.n;
    const PackedCounters counters{reinterpret_cast<unsigned int*>(smem), (n + 7) / 8 * 4, out};
    counters.zero();
    __syncthreads();
    // The edge rows (32 at most) follow the last step.
    const unsigned int steps_per_sweep = (MAX_PACKED_ADDS - 32) / (blockDim.x * U * K);
    if (steps_per_sweep == 0) __trap();
    // A thread's run of one bin within a step is added at once: one-valued data then adds a
    // step's rows a thread in one add instead of queueing every row on one counter.
    auto runs = runs_of(n, [&](unsigned int b, unsigned int rows) { counters.add(b, rows); });
    unsigned int steps = 0;
    for_each_row<U, PACKED_READ_AHEAD != 0>(
        src, [&](bool, u64, unsigned int b) { runs.push(b); },
        [&] {
            runs.flush();
            if (++steps == steps_per_sweep) {
                __syncthreads();
                counters.sweep();
                __syncthreads();
                steps = 0;
            }
        });
    runs.flush();
    __syncthreads();
    counters.merge(n);
}

// Up to twice the bins, with no barrier while counting: one histogram of 16-bit counters per
// block that spill on wrapping (see SpillCounters), so the loads run on as in the shared family.
// A thread's run of one bin is added at once and may outlive a step (one-valued data: one add
// per SPILL_RUN_ROWS rows), capped so that one add never wraps a counter twice.
constexpr unsigned int SPILL_RUN_ROWS = 0x8000;

template <class S>
__device__ __forceinline__ void spill_hist(S src, u64* out)
{
    constexpr unsigned int K = S::K;
    constexpr unsigned int U = K >= 8 ? 16 / K : PACKED_LOADS_IN_FLIGHT;
    static_assert(SPILL_RUN_ROWS + U * 16 <= 0xFFFF, "a run's add wraps a counter at most once");
    const unsigned int n = src.n;
    const SpillCounters counters{reinterpret_cast<unsigned int*>(smem), (n + 1) / 2, n, out};
    counters.zero();
    __syncthreads();
    auto runs = runs_of(n, [&](unsigned int b, unsigned int rows) { counters.add(b, rows); });
    for_each_row<U>(
        src, [&](bool, u64, unsigned int b) { runs.push(b); },
        [&] {
            if (runs.rows >= SPILL_RUN_ROWS) runs.flush();
        });
    runs.flush();
    __syncthreads();
    counters.merge();
}

#ifndef PRIVATE_LOADS_IN_FLIGHT
#define PRIVATE_LOADS_IN_FLIGHT 4
#endif

// Few bins of cheap rows (bytes counted by value): each thread its own 8-bit counters, a row a
// load, an add and a store with no atomic and no bank conflict (PrivateCounters), the next
// step's loads in flight while a step is counted. Every thread must reach the barriers.
template <class S>
__device__ __forceinline__ void private_hist(S src, u64* out)
{
    unsigned char* const counters_at = src.stage(smem);
    const unsigned int n = src.n;
    const PrivateCounters counters(counters_at, n);
    counters.zero();
    __syncthreads();
    const unsigned int mine = counters.mine();
    for_each_row<PRIVATE_LOADS_IN_FLIGHT, true>(
        src, [&](bool, u64, unsigned int b) { counters.add_one(mine, b); }, NoStep());
    __syncthreads();
    counters.merge(out);
}

// Few bins of cheap rows: one copy of the u32 counters a lane, so that a warp's adds never meet
// in a bank (BankedCounters); otherwise as the shared family, one add a row. Every thread must
// reach the barriers.
template <class S>
__device__ __forceinline__ void banked_hist(S src, unsigned int replicas, u64* out)
{
    unsigned char* const counters_at = src.stage(smem);
    const unsigned int n = src.n;
    const BankedCounters counters{reinterpret_cast<unsigned int*>(counters_at), replicas, n};
    counters.zero();
    __syncthreads();
    const unsigned int mine = counters.mine();
    for_each_row<HIST_LOADS_IN_FLIGHT>(
        src, [&](bool, u64, unsigned int b) { add_one_shared(mine, 32 * b); }, NoStep());
    __syncthreads();
    counters.merge(out);
}

// Atomics straight into global memory (L2), a run of one bin at once (two runs: TwoRuns): data of
// one value (or few) costs one atomic a thread instead of one a row, while spread data pays one a
// row as plain atomics do.
// (__match_any_sync grouping cost more than it saved on spread data and still left 2^24
// same-address atomics on degenerate data: 13.5 ms for 2^29 values on an H200.)
template <class S>
__device__ __forceinline__ void global_hist(S src, u64* out)
{
    const unsigned int n = src.n;
    auto add = [&](unsigned int b, unsigned int count) { atomicAdd(out + b, u64(count)); };
    TwoRuns<decltype(add)> runs{n, add};
    for_each_row<GLOBAL_LOADS_IN_FLIGHT>(
        src, [&](bool, u64, unsigned int b) { runs.push(b); }, NoStep());
    runs.flush();
}

// Weighted sums straight into global memory, fixed point (fixed.cuh; weights rarely repeat, so
// no aggregation).
template <class S>
__device__ __forceinline__ void global_weighted_hist(S src, Weights weights, int k, u64* out)
{
    const unsigned int n = src.n;
    for_each_row<GLOBAL_LOADS_IN_FLIGHT>(
        src,
        [&](bool present, u64 row, unsigned int b) {
            if (present && b < n && weights.take(row)) {
                add_weight(out + FIXED_WORDS * b, weights.amount(row), k);
            }
        },
        NoStep());
}

// Float sums (-DFLOAT_SUMS=1, src/fixed.rs `Sums::Float`): double atomics, whose order changes
// the last bits from run to run; few bins in replicated shared-memory doubles, else global.
template <class S>
__device__ __forceinline__ void shared_float_hist(S src, Weights weights, unsigned int replicas,
                                                  unsigned int stride, double* out)
{
    const ReplicatedCounters<double> counters{reinterpret_cast<double*>(src.stage(smem)), replicas,
                                              stride};
    counters.zero();
    __syncthreads();
    double* const mine = counters.mine();
    const unsigned int n = src.n;
    for_each_row<HIST_LOADS_IN_FLIGHT>(
        src,
        [&](bool present, u64 row, unsigned int b) {
            if (present && b < n && weights.take(row)) atomicAdd(mine + b, weights.amount(row));
        },
        NoStep());
    __syncthreads();
    counters.merge(n, out);
}

template <class S>
__device__ __forceinline__ void global_float_hist(S src, Weights weights, double* out)
{
    const unsigned int n = src.n;
    for_each_row<GLOBAL_LOADS_IN_FLIGHT>(
        src,
        [&](bool present, u64 row, unsigned int b) {
            if (present && b < n && weights.take(row)) atomicAdd(out + b, weights.amount(row));
        },
        NoStep());
}
