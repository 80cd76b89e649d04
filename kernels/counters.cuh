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

// Two 16-bit counters per 32-bit word, so twice the bins fit in shared memory (65,536 in 128 KB),
// added with no reply (`red`), so that a thread never waits on its own adds. Every few steps,
// between two barriers, a sweep moves each counter's whole multiples of PACKED_SWEPT to the global
// histogram. Exact while no counter passes 0xFFFF: after a sweep each is below PACKED_SWEPT, and
// a block makes at most MAX_PACKED_ADDS adds before the next. (Spilling each counter as an add
// takes it past a threshold needs every add's reply, and a warp then waits on each add's round
// trip before its next: 1.08 against 0.95 ms for 2^29 float32 rows into 65,536 bins on an H200.)
constexpr unsigned int PACKED_SWEPT = 0x1000;
constexpr unsigned int MAX_PACKED_ADDS = 0x10000 - PACKED_SWEPT;

struct PackedCounters {
    unsigned int* words;
    unsigned int count;  // words, a multiple of 4
    u64* out;

    __device__ void zero() const { zero_shared(words, count); }

    __device__ __forceinline__ void add(unsigned int b, unsigned int rows) const
    {
        const unsigned int at = static_cast<unsigned int>(__cvta_generic_to_shared(words));
        asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(at + 4 * (b >> 1)),
                     "r"(rows << ((b & 1) * 16))
                     : "memory");
    }

    // Between two barriers: four words a thread at a time, 16 bytes a read.
    __device__ void sweep() const
    {
        constexpr unsigned int HIGH = (0xFFFFu & ~(PACKED_SWEPT - 1)) * 0x10001u;
        uint4* const quads = reinterpret_cast<uint4*>(words);
        for (unsigned int i = threadIdx.x; i < count / 4; i += blockDim.x) {
            uint4 q = quads[i];
            if (((q.x | q.y | q.z | q.w) & HIGH) == 0) continue;
            unsigned int* const w = &q.x;
#pragma unroll
            for (unsigned int k = 0; k < 4; ++k) {
                const unsigned int spilled = w[k] & HIGH;
                if (spilled == 0) continue;
                const unsigned int b = 2 * (4 * i + k);
                if (spilled & 0xFFFFu) atomicAdd(out + b, u64(spilled & 0xFFFFu));
                if (spilled >> 16) atomicAdd(out + b + 1, u64(spilled >> 16));
                w[k] -= spilled;
            }
            quads[i] = q;
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

// Two 16-bit counters per 32-bit word, as PackedCounters, but with no barrier and no sweep:
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
