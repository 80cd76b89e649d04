// numpy's automatic range for arrays already on the device: min and max of the non-NaN values.
// Each block writes its partial result (and whether it saw any value); the host finishes.
// Included at the end of histogram.cu, so `Value` and `u64` are defined.

extern "C" __global__ void extremes(const Value* values, u64 len, Value* mins, Value* maxs,
                                    unsigned int* found)
{
    __shared__ Value s_lo[256];
    __shared__ Value s_hi[256];
    __shared__ unsigned char s_any[256];
    Value lo = Value(0), hi = Value(0);
    bool any = false;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < len;
         i += (u64)gridDim.x * blockDim.x) {
        const Value v = values[i];
        if (!(v == v)) continue;  // NaN is never counted, so it never sets the range
        lo = (!any || v < lo) ? v : lo;
        hi = (!any || v > hi) ? v : hi;
        any = true;
    }
    s_lo[threadIdx.x] = lo;
    s_hi[threadIdx.x] = hi;
    s_any[threadIdx.x] = any;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half && s_any[threadIdx.x + half]) {
            const unsigned int j = threadIdx.x + half;
            const bool mine = s_any[threadIdx.x];
            s_lo[threadIdx.x] = (!mine || s_lo[j] < s_lo[threadIdx.x]) ? s_lo[j] : s_lo[threadIdx.x];
            s_hi[threadIdx.x] = (!mine || s_hi[j] > s_hi[threadIdx.x]) ? s_hi[j] : s_hi[threadIdx.x];
            s_any[threadIdx.x] = 1;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        mins[blockIdx.x] = s_lo[0];
        maxs[blockIdx.x] = s_hi[0];
        found[blockIdx.x] = s_any[0];
    }
}
