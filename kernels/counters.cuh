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
