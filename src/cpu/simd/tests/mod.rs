//! Every path this CPU runs against the scalar rules, value by value, over many generated bins and
//! adversarial values: edges and their float neighbours, margins, NaN, infinities, subnormals,
//! integers past 2^53, runs of one value, and lengths that are not multiples of any vector width.
//! Paths the CPU lacks are skipped (AVX-512 runs where the CPU has it).
//!
//! `mod.rs` holds the generators and the checks every test uses; the tests sit beside it by rule.

mod edges;
mod extremes;
mod uniform;

use super::*;
use crate::bins::Closed;

/// SplitMix64: reproducible cases without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// In [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            xs.swap(i, self.below(i + 1));
        }
    }
}

fn paths() -> Vec<Isa> {
    let paths = Isa::supported();
    assert!(paths.contains(&Isa::Scalar));
    paths
}

fn next_up<F: BinFloat>(x: F) -> F {
    F::from_f64(-(F::from_f64(-x.to_f64()).next_down().to_f64()))
}

/// `x` as the CPU backend hands it to bins computing in `F`.
fn convert<T: Value, F: BinFloat>(x: T) -> F {
    if F::SINGLE {
        F::from_f64(x.to_f32() as f64)
    } else {
        F::from_f64(x.to_f64())
    }
}

const SPECIALS: [f64; 16] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    -f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    1e-310,
    1.4e-45,
    -1.4e-45,
    3.4028235e38,
    -3.4028235e38,
];

/// Edges sampled for probing: all of them for few bins, else the ends and a random sample.
fn probe_edges<F: BinFloat>(edges: &[F], rng: &mut Rng) -> Vec<F> {
    if edges.len() <= 3000 {
        return edges.to_vec();
    }
    let n = edges.len();
    let mut picked: Vec<F> = edges[..40]
        .iter()
        .chain(&edges[n - 40..])
        .copied()
        .collect();
    picked.extend((0..2000).map(|_| edges[rng.below(n)]));
    picked
}

/// Values that test every branch of a rule over `edges` (in the rule's float type).
fn adversarial<F: BinFloat>(edges: &[F], scale: f64, margin: f64, rng: &mut Rng) -> Vec<F> {
    let mut xs: Vec<F> = SPECIALS.iter().map(|&s| F::from_f64(s)).collect();
    for e in probe_edges(edges, rng) {
        let (down, up) = (e.next_down(), next_up(e));
        xs.extend([e, down, up, down.next_down(), next_up(up)]);
    }
    let (lo, hi) = (edges[0].to_f64(), edges[edges.len() - 1].to_f64());
    let span = hi - lo;
    let n = edges.len() - 1;
    for _ in 0..2000 {
        let u = rng.unit();
        xs.push(F::from_f64(lo + span * (1.3 * u - 0.15)));
        xs.push(F::from_f64(lo + span * u));
        // Near the fast test's bounds: fractions of a bin around `margin` and `1 - margin`.
        let b = rng.below(n) as f64;
        let frac = rng.pick(&[margin, 1.0 - margin, 1e-9, 1.0 - 1e-9, 0.5]);
        let jitter = (rng.unit() - 0.5) * 1e-6;
        if scale.is_finite() && scale > 0.0 {
            xs.push(F::from_f64(lo + (b + frac + jitter) / scale));
        }
        xs.push(F::from_f64(f64::from_bits(rng.next())));
    }
    // Runs of one value fill whole vectors (degenerate data on and beside edges).
    for _ in 0..40 {
        let x = xs[rng.below(xs.len())];
        let run = 1 + rng.below(40);
        xs.extend(std::iter::repeat_n(x, run));
    }
    let runs_from = xs.len() - 600.min(xs.len());
    rng.shuffle(&mut xs[..runs_from]);
    xs
}

/// Asserts that every path gives `expected` for `values`, from two starting offsets (so the
/// vector loops and their scalar tails see two alignments) and without writing past the end.
fn assert_paths(
    what: &str,
    expected: &[u32],
    values_len: usize,
    run: impl Fn(Isa, usize, &mut [u32]),
    show: impl Fn(usize) -> String,
) {
    assert_eq!(expected.len(), values_len);
    for isa in paths() {
        for offset in [0usize, 5] {
            if offset > values_len {
                continue;
            }
            let len = values_len - offset;
            let mut out = vec![u32::MAX - 1; len + 1];
            run(isa, offset, &mut out);
            assert_eq!(out[len], u32::MAX - 1, "{what}: {isa:?} wrote past the end");
            if let Some(k) = (0..len).find(|&k| out[k] != expected[offset + k]) {
                panic!(
                    "{what}: {isa:?} gives bin {} for value #{} {}, the scalar rule {}",
                    out[k],
                    offset + k,
                    show(offset + k),
                    expected[offset + k]
                );
            }
        }
    }
}

/// Every path against the binary search of the scalar rule (numpy's `searchsorted`), whether
/// `e` has a guide or not.
fn check_edges<T: Value>(e: &EdgeBins, values: &[T], what: &str) {
    let searched = EdgeBins {
        guide: None,
        ..e.clone()
    };
    let expected: Vec<u32> = values
        .iter()
        .map(|&x| searched.bin(x.to_f64()) as u32)
        .collect();
    let what = format!(
        "{what}: {} edges in [{:?}, {:?}], {:?}, guided {}",
        e.edges.len(),
        e.edges[0],
        e.edges[e.len()],
        e.closed,
        e.guide.is_some()
    );
    assert_paths(
        &what,
        &expected,
        values.len(),
        |isa, offset, out| edge_bins_on(isa, e, &values[offset..], out),
        |k| format!("{:?}", values[k]),
    );
}

#[test]
fn paths_parse_and_fall_back() {
    for isa in Isa::ALL {
        assert_eq!(Isa::parse(isa.name()), Some(isa));
        assert!(isa.or_below().is_supported());
    }
    assert_eq!(Isa::parse(" AVX-512 "), Some(Isa::Avx512));
    assert_eq!(Isa::parse("sse"), None);
    assert!(Isa::active().is_supported());
    assert!(Isa::best().is_supported());
    eprintln!("paths tested here: {:?}", Isa::supported());
}
