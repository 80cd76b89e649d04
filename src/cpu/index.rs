//! The CPU's inner loops besides the SIMD index loops (in `simd`): indices to counts, and the bin
//! of a single value.

use crate::input::Value;

/// Adds one per index into the four interleaved copies of a histogram of `stride` counters in
/// `replicas`: consecutive rows go to different copies so that a run of one bin does not wait on
/// a single counter, and eight equal indices in a row are added at once (degenerate data). The
/// caller sums the copies. Every index must be below `stride`.
pub fn count_interleaved(idx: &[u32], replicas: &mut [u32], stride: usize) {
    let (h0, rest) = replicas.split_at_mut(stride);
    let (h1, rest) = rest.split_at_mut(stride);
    let (h2, rest) = rest.split_at_mut(stride);
    let h3 = &mut rest[..stride];
    let mut eights = idx.chunks_exact(8);
    for q in &mut eights {
        let first = q[0];
        if first == q[7] && q.iter().all(|&i| i == first) {
            h0[first as usize] += 8;
            continue;
        }
        h0[q[0] as usize] += 1;
        h1[q[1] as usize] += 1;
        h2[q[2] as usize] += 1;
        h3[q[3] as usize] += 1;
        h0[q[4] as usize] += 1;
        h1[q[5] as usize] += 1;
        h2[q[6] as usize] += 1;
        h3[q[7] as usize] += 1;
    }
    for &i in eights.remainder() {
        h0[i as usize] += 1;
    }
}

/// Adds one per index into one histogram, eight equal indices in a row at once (degenerate or
/// sorted data, which would otherwise wait on one counter a row). Every index must be in range.
pub fn count_plain(idx: &[u32], counters: &mut [u32]) {
    let mut eights = idx.chunks_exact(8);
    for q in &mut eights {
        let first = q[0];
        if first == q[7] && q.iter().all(|&i| i == first) {
            counters[first as usize] += 8;
        } else {
            for &i in q {
                counters[i as usize] += 1;
            }
        }
    }
    for &i in eights.remainder() {
        counters[i as usize] += 1;
    }
}

/// The bin of one value under `spec` (`spec.len()` when it is not counted).
pub fn bin_of<T: Value>(spec: &crate::bins::BinSpec, x: T) -> usize {
    use crate::bins::BinSpec;
    match spec {
        BinSpec::Uniform32(u) => u.bin(x.to_f32()),
        BinSpec::Uniform64(u) => u.bin(x.to_f64()),
        BinSpec::Edges(e) => e.bin(x.to_f64()),
        BinSpec::Integers(b) => b.bin(exact_int(x)),
        BinSpec::Half(h) => h.bin(x.to_f32()),
    }
}

/// An integer value exactly (UInt64 past 2^63 included). Integer bins are only made for
/// integer and temporal columns; a float would be truncated.
#[inline(always)]
pub fn exact_int<T: Value>(x: T) -> i128 {
    match T::DTYPE {
        crate::dtype::DType::U64 => x.as_i64() as u64 as i128,
        _ => x.as_i64() as i128,
    }
}

#[cfg(test)]
mod tests {
    use super::count_interleaved;

    #[test]
    fn count_interleaved_counts_every_index_once() {
        // Reproducible indices without a dependency (SplitMix64).
        let mut state = 0x5EED_000Au64;
        let mut below = |n: usize| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        };
        for case in 0..200 {
            let stride = 1 + below(if case % 4 == 0 { 5000 } else { 300 });
            let len = below(3000);
            let idx: Vec<u32> = (0..len)
                .map(|k| match case % 3 {
                    // Runs of one bin, broken now and then.
                    0 if below(20) != 0 => (k / 37 % stride) as u32,
                    _ => below(stride) as u32,
                })
                .collect();
            let mut expected = vec![0u32; stride];
            for &i in &idx {
                expected[i as usize] += 1;
            }
            let mut replicas = vec![0u32; 4 * stride];
            count_interleaved(&idx, &mut replicas, stride);
            let summed: Vec<u32> = (0..stride)
                .map(|b| (0..4).map(|c| replicas[c * stride + b]).sum())
                .collect();
            assert_eq!(summed, expected, "case {case}: 4 copies of {stride}");
        }
    }
}
