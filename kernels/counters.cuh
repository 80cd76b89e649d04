// Block-private counters in shared memory, and their merge into the global histogram.
// Included by histogram.cu.
#pragma once

template <class C>
__device__ __forceinline__ void zero_shared(C* counters, unsigned int count)
{
    for (unsigned int i = threadIdx.x; i < count; i += blockDim.x) {
        counters[i] = C(0);
    }
}

// `replicas` copies of n (+ 1 spare) counters, `stride` apart (an odd stride puts a bin's copies
// in different banks); warp w counts into copy w % replicas, so a run of one value spreads over
// several addresses. u32 counters are exact while a block sees fewer than 2^32 rows (the host
// splits launches).
template <class C>
struct ReplicatedCounters {
    C* counters;
    unsigned int replicas;
    unsigned int stride;

    __device__ C* mine() const { return counters + threadIdx.x / 32 % replicas * stride; }

    // This thread's copy as a shared-window address: one add and one `red` a row, where the
    // compiler, short of registers, rebuilt the generic pointer's shared base for every row.
    __device__ unsigned int mine_address() const
    {
        return static_cast<unsigned int>(__cvta_generic_to_shared(mine()));
    }

    __device__ void zero() const { zero_shared(counters, replicas * stride); }

    // After a barrier: one atomic per bin with a non-zero sum.
    template <class Out>
    __device__ void merge(unsigned int n, Out* out) const
    {
        for (unsigned int b = threadIdx.x; b < n; b += blockDim.x) {
            Out sum = 0;
            for (unsigned int r = 0; r < replicas; ++r) {
                sum += counters[r * stride + b];
            }
            if (sum != Out(0)) {
                atomicAdd(out + b, sum);
            }
        }
    }
};

// counters[b] += 1 at the shared-window address of counters.
__device__ __forceinline__ void add_one_shared(unsigned int counters, unsigned int b)
{
    asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(counters + 4 * b) : "memory");
}

// Two 16-bit counters per 32-bit word, so twice the bins fit in shared memory (65,536 in 128 KB).
// A counter that reaches PACKED_SPILL moves PACKED_SPILL to the global histogram: the thread
// whose add took it there does so at once. Exact as long as a block makes at most
// MAX_PACKED_ADDS adds between two barriers: until that thread's subtraction the counter stays
// below PACKED_SPILL + MAX_PACKED_ADDS <= 0xFFFF, so it never carries into its neighbour, and no
// other thread sees it reach PACKED_SPILL again before the subtraction. A lower threshold means
// fewer barriers (each one drains the block's loads) and more spills (a global atomic each).
constexpr unsigned int PACKED_SPILL = 0x4000;
constexpr unsigned int MAX_PACKED_ADDS = 0xFFFF - PACKED_SPILL;

struct PackedCounters {
    unsigned int* words;
    unsigned int count;  // words
    u64* out;

    __device__ void zero() const { zero_shared(words, count); }

    // counters[b] += count (count <= MAX_PACKED_ADDS); the add that takes it to PACKED_SPILL or
    // past spills PACKED_SPILL. Only that add sees the counter below the threshold before and
    // at or above it after, so one thread spills each time.
    __device__ __forceinline__ void add(unsigned int b, unsigned int count) const
    {
        const unsigned int shift = (b & 1) * 16;
        const unsigned int old = (atomicAdd(words + (b >> 1), count << shift) >> shift) & 0xFFFFu;
        if (old < PACKED_SPILL && old + count >= PACKED_SPILL) {
            atomicSub(words + (b >> 1), PACKED_SPILL << shift);
            atomicAdd(out + b, u64(PACKED_SPILL));
        }
    }

    // After a barrier: one atomic per non-zero counter.
    __device__ void merge(unsigned int n) const
    {
        for (unsigned int w = threadIdx.x; w < count; w += blockDim.x) {
            const unsigned int word = words[w];
            const unsigned int lo = word & 0xFFFFu;
            const unsigned int hi = word >> 16;
            if (lo != 0 && 2 * w < n) atomicAdd(out + 2 * w, u64(lo));
            if (hi != 0 && 2 * w + 1 < n) atomicAdd(out + 2 * w + 1, u64(hi));
        }
    }
};

// Two 16-bit counters per 32-bit word, as PackedCounters, but with no barrier and no threshold:
// each counter runs to 0xFFFF and wraps, and the add that wraps it moves 65,536 to the global
// histogram. A wrapped low counter carries into its neighbour, so that add takes the carry back
// (atomicSub of 1 << 16). Exact at any rate of adds:
//   - the low half is always the low counter's adds mod 2^16 (high adds and the take-backs only
//     touch the high half), so exactly one add sees each of its wraps;
//   - the high counter's true count is 2^16 times the net times the word itself wrapped (the
//     adds that cross 2^32 less the take-backs that borrow below 0) plus its final half, once
//     every take-back is done (a barrier); each of those is seen by the thread that made it.
// Bin n (rows not counted) never reaches add; the high half of a last, odd word is padding and
// spills nowhere (its carries and take-backs cancel).
struct SpillCounters {
    unsigned int* words;
    unsigned int count;  // words
    unsigned int n;      // bins
    u64* out;

    __device__ void zero() const { zero_shared(words, count); }

    // counters[b] += rows (rows <= 0xFFFF, so a counter wraps at most once an add).
    __device__ __forceinline__ void add(unsigned int b, unsigned int rows) const
    {
        constexpr u64 WRAP = 0x10000;
        unsigned int* const word = words + (b >> 1);
        if (b & 1) {
            const unsigned int old = atomicAdd(word, rows << 16);
            if (old > 0xFFFFFFFFu - (rows << 16)) atomicAdd(out + b, WRAP);
            return;
        }
        const unsigned int old = atomicAdd(word, rows);
        if ((old & 0xFFFFu) + rows <= 0xFFFFu) return;
        atomicAdd(out + b, WRAP);
        const bool neighbour = b + 1 < n;
        // The carry wrapped the word (the high counter stood at 0xFFFF): a wrap of the high one.
        if (neighbour && old > 0xFFFFFFFFu - rows) atomicAdd(out + b + 1, WRAP);
        const unsigned int before = atomicSub(word, 0x10000u);
        // Taking the carry back borrowed below 0: that wrap of the high counter is undone.
        if (neighbour && before < 0x10000u) atomicAdd(out + b + 1, u64(0) - WRAP);
    }

    // After a barrier: one atomic per non-zero counter.
    __device__ void merge() const
    {
        for (unsigned int w = threadIdx.x; w < count; w += blockDim.x) {
            const unsigned int word = words[w];
            const unsigned int lo = word & 0xFFFFu;
            const unsigned int hi = word >> 16;
            if (lo != 0 && 2 * w < n) atomicAdd(out + 2 * w, u64(lo));
            if (hi != 0 && 2 * w + 1 < n) atomicAdd(out + 2 * w + 1, u64(hi));
        }
    }
};
