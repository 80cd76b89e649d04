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

// Per-thread 8-bit counters, no atomics (the private family). Bin b of the thread in lane l of
// warp w is byte w % 4 of word 32 b + l of its four warps' region, so the 32 lanes of a warp
// reach 32 distinct banks whatever their bins (random bins into shared u32 counters put about
// 3.5 lanes on the busiest bank, and a warp's atomic waits for it), and a counter is read and
// written by its own thread alone: a row costs a load, an add and a store. A counter that wraps
// moves 256 into the block's u32 totals (a shared atomic, once in 256 rows of one bin a thread).
// Rows not counted go to a spare bin n, never merged. A block's last group may be short of
// warps (the host asks for whole groups; the driver may fit fewer threads).
constexpr unsigned int PRIVATE_GROUP_THREADS = 128;

struct PrivateCounters {
    unsigned int* totals;  // n + 1 u32: the spills, then the merge
    unsigned int* words;   // the regions, one a group of four warps
    unsigned int n;

    // Bytes of the totals (whole 16-byte groups) and of one region (n + 1 bins of 32 words);
    // the host sizes the family's shared memory from them (src/gpu/plan.rs mirrors them).
    __host__ __device__ static constexpr unsigned int totals_bytes(unsigned int n)
    {
        return (n + 1 + 3) / 4 * 16;
    }
    __host__ __device__ static constexpr unsigned int region_bytes(unsigned int n)
    {
        return (n + 1) * 128;
    }

    __device__ PrivateCounters(unsigned char* at, unsigned int bins)
        : totals(reinterpret_cast<unsigned int*>(at)),
          words(reinterpret_cast<unsigned int*>(at + totals_bytes(bins))),
          n(bins)
    {
    }

    // Groups of four warps in this block (the last may have fewer).
    __device__ static unsigned int groups()
    {
        return (blockDim.x + PRIVATE_GROUP_THREADS - 1) / PRIVATE_GROUP_THREADS;
    }

    __device__ void zero() const
    {
        zero_shared(totals, n + 1);
        zero_shared(words, groups() * (n + 1) * 32);
    }

    // This thread's counter of bin 0, as a shared-window address (bin b is 128 b further).
    __device__ unsigned int mine() const
    {
        const unsigned int warp = threadIdx.x / 32;
        const unsigned int lane = threadIdx.x % 32;
        return static_cast<unsigned int>(__cvta_generic_to_shared(words)) +
               warp / 4 * region_bytes(n) + lane * 4 + warp % 4;
    }

    // counters[b] += 1. Only this thread touches its counters between the barriers, and the
    // volatile statements keep their order, so the load sees the last store.
    __device__ __forceinline__ void add_one(unsigned int mine, unsigned int b) const
    {
        const unsigned int at = mine + 128 * b;
        unsigned int c;
        asm volatile("ld.shared.u8 %0, [%1];" : "=r"(c) : "r"(at));
        c += 1;
        if (c == 256) {
            const unsigned int total =
                static_cast<unsigned int>(__cvta_generic_to_shared(totals)) + 4 * b;
            asm volatile("red.shared.add.u32 [%0], 256;" ::"r"(total));
        }
        // The store keeps the low byte: a wrapped counter restarts at 0.
        asm volatile("st.shared.u8 [%0], %1;" ::"r"(at), "r"(c));
    }

    // After a barrier: each bin's bytes summed over the block into its total, a thread a bin of
    // a region at a time reading its 32 words from a bank of its own lane's, then the non-zero
    // totals added into `out`. Every thread must call it.
    __device__ void merge(u64* out) const
    {
        const unsigned int lane = threadIdx.x % 32;
        for (unsigned int i = threadIdx.x; i < groups() * n; i += blockDim.x) {
            const unsigned int* const row = words + (i / n * (n + 1) + i % n) * 32;
            // Two 16-bit sums a word: bytes 0 and 2, bytes 1 and 3 (at most 32 * 2 * 255).
            unsigned int pairs = 0;
#pragma unroll 8
            for (unsigned int k = 0; k < 32; ++k) {
                const unsigned int w = row[(k + lane) % 32];
                pairs += (w & 0x00FF00FFu) + ((w >> 8) & 0x00FF00FFu);
            }
            const unsigned int sum = (pairs & 0xFFFFu) + (pairs >> 16);
            if (sum != 0) atomicAdd(totals + i % n, sum);
        }
        __syncthreads();
        for (unsigned int b = threadIdx.x; b < n; b += blockDim.x) {
            const unsigned int total = totals[b];
            if (total != 0) atomicAdd(out + b, u64(total));
        }
    }
};

// One copy of the counters a lane (the banked family): bin b of lane l is word 32 b + l of its
// replica, so the 32 lanes of a warp reach 32 distinct banks whatever their bins and each add is
// one pass of the shared memory (ReplicatedCounters' copies, one a warp, put random bins of a
// warp's lanes about 3.5 to the busiest bank, and the add waits for it). Warp w adds into
// replica w % replicas. u32 counters are exact while a block sees fewer than 2^32 rows (the host
// splits launches); rows not counted go to a spare bin n, never merged.
struct BankedCounters {
    unsigned int* words;
    unsigned int replicas;
    unsigned int n;

    // Bytes of one replica: n + 1 bins of 32 words (src/gpu/plan.rs mirrors it).
    __host__ __device__ static constexpr unsigned int replica_bytes(unsigned int n)
    {
        return (n + 1) * 128;
    }

    __device__ void zero() const { zero_shared(words, replicas * (n + 1) * 32); }

    // This lane's counter of bin 0 in its warp's replica, as a shared-window address.
    __device__ unsigned int mine() const
    {
        return static_cast<unsigned int>(__cvta_generic_to_shared(words)) +
               threadIdx.x / 32 % replicas * replica_bytes(n) + threadIdx.x % 32 * 4;
    }

    // After a barrier: a thread a bin, its 32 words of each replica read from a bank of its own
    // lane's, one atomic per bin with a non-zero sum.
    __device__ void merge(u64* out) const
    {
        const unsigned int lane = threadIdx.x % 32;
        for (unsigned int b = threadIdx.x; b < n; b += blockDim.x) {
            unsigned int sum = 0;
            for (unsigned int r = 0; r < replicas; ++r) {
                const unsigned int* const row = words + (r * (n + 1) + b) * 32;
#pragma unroll 8
                for (unsigned int k = 0; k < 32; ++k) sum += row[(k + lane) % 32];
            }
            if (sum != 0) atomicAdd(out + b, u64(sum));
        }
    }
};
