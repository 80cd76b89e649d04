//! Equal bins: numpy's cheap and literal rules and Polars' rule, over generated bins, against
//! the scalar rules on every value type.

use super::*;
use crate::bins::{BinSpec, Binning, Estimate, Extremes, Range, ValueKind};

fn check_uniform<T: Value, F: BinFloat>(u: &UniformBins<F>, values: &[T], what: &str) {
    let expected: Vec<u32> = values
        .iter()
        .map(|&x| u.bin(convert::<T, F>(x)) as u32)
        .collect();
    let what = format!(
        "{what}: {} bins over [{:?}, {:?}], {:?}, literal {}, margin {:?}, {:?}",
        u.len(),
        u.edge(0),
        u.edge(u.len()),
        u.closed,
        u.literal(),
        u.margin(),
        u.estimate
    );
    assert_paths(
        &what,
        &expected,
        values.len(),
        |isa, offset, out| uniform_bins_on(isa, u, &values[offset..], out),
        |k| format!("{:?}", values[k]),
    );
}

/// Checks float bins on their own float values, on the other float type and on integers.
fn check_uniform_all_types<F: BinFloat>(u: &UniformBins<F>, rng: &mut Rng, what: &str) {
    let xs = adversarial(u.edges(), u.scale.to_f64(), u.margin().to_f64(), rng);
    let as64: Vec<f64> = xs.iter().map(|x| x.to_f64()).collect();
    let as32: Vec<f32> = xs.iter().map(|x| x.to_f64() as f32).collect();
    check_uniform(u, &as64, &format!("{what}, f64 values"));
    check_uniform(u, &as32, &format!("{what}, f32 values"));
    // Integers at and beside each value (those near an edge sit on both sides of it).
    let ints: Vec<i64> = as64
        .iter()
        .zip([-1, 0, 1].into_iter().cycle())
        .map(|(&x, d)| (x as i64).wrapping_add(d))
        .collect();
    check_uniform(u, &ints, &format!("{what}, i64 values"));
    let small: Vec<i32> = ints.iter().map(|&x| x as i32).collect();
    check_uniform(u, &small, &format!("{what}, i32 values"));
}

/// The bins `BinSpec::resolve` makes (as src/bins/tests.rs builds them), `None` where it refuses.
fn spec(
    bins: Binning,
    range: Option<(f64, f64)>,
    closed: Closed,
    ext: Extremes,
) -> Option<BinSpec> {
    let kind = match ext {
        Extremes::Float32(..) => ValueKind::Float32,
        Extremes::Integer(..) => ValueKind::Integer,
        _ => ValueKind::Float64,
    };
    let range = range.map(|(lo, hi)| Range::new(lo, hi));
    BinSpec::resolve(&bins, range, closed, kind, || Ok(ext)).ok()
}

/// Equal bins, the cheap and the literal rule, on every value type.
fn check_spec(s: &BinSpec, rng: &mut Rng, what: &str) {
    match s {
        BinSpec::Uniform64(u) => {
            check_uniform_all_types(u, rng, what);
            if u.closed == Closed::Left {
                let literal = u.clone().with_proof(true, 0.5);
                check_uniform_all_types(&literal, rng, &format!("{what} (literal)"));
                let walking = u.clone().with_proof(u.literal(), 0.5);
                check_uniform_all_types(&walking, rng, &format!("{what} (no margin)"));
            }
        }
        BinSpec::Uniform32(u) => {
            check_uniform_all_types(u, rng, what);
            // numpy's float32 estimate both in float32 (vector lanes) and widened (scalar).
            for wide in [false, true] {
                let literal = UniformBins {
                    estimate: Estimate { wide, ..u.estimate },
                    ..u.clone()
                }
                .with_proof(true, 0.5);
                let what = format!("{what} (literal, wide {wide})");
                check_uniform_all_types(&literal, rng, &what);
            }
        }
        BinSpec::Edges(e) => {
            let xs = adversarial(&e.edges, f64::NAN, 0.0, rng);
            check_edges(e, &xs, what);
        }
        BinSpec::Integers(_) | BinSpec::Half(_) => unreachable!("not asked for here"),
    }
}

fn bin_counts(rng: &mut Rng) -> usize {
    match rng.below(10) {
        0 => rng.pick(&[1, 2, 3]),
        1 => rng.pick(&[255, 256, 257, 1000, 1024]),
        2 => rng.pick(&[4095, 4096, 65_537]),
        3 => 1 + rng.below(100_000),
        _ => 1 + rng.below(3000),
    }
}

fn ranges(rng: &mut Rng) -> (f64, f64) {
    let pick = rng.below(12);
    let (lo, hi) = match pick {
        0 => (0.0, 1.0),
        1 => (0.1, 0.9),
        2 => (-3.3, 1e5),
        3 => (1.0, 1.0 + 1e-9),
        4 => (-1e300, 1e300),
        5 => (-f64::MAX / 4.0, f64::MAX / 4.0),
        6 => (1e-310, 3e-310),
        7 => (-3e38, 3e38),
        8 => (1e7, 1e7 + 3.0),
        9 => (5.0, 5.0),
        _ => {
            let a = (rng.unit() - 0.5) * 10f64.powi(rng.below(40) as i32 - 20);
            let b = a + rng.unit() * 10f64.powi(rng.below(40) as i32 - 20);
            (a, b)
        }
    };
    (lo, hi)
}

#[test]
fn equal_bins_match_the_scalar_rules_on_every_path() {
    let mut rng = Rng(0x5EED_0001);
    let mut made = 0;
    for case in 0..80 {
        let (lo, hi) = ranges(&mut rng);
        // Over a subnormal span `n / (hi - lo)` overflows and the cheap rule walks from an end
        // (the scalar rule too): few bins keep those walks short.
        let n = bin_counts(&mut rng).min(if hi - lo < 1e-300 { 300 } else { usize::MAX });
        let closed = if rng.below(3) == 0 {
            Closed::Right
        } else {
            Closed::Left
        };
        let (range, ext) = match rng.below(4) {
            0 => (Some((lo, hi)), Extremes::Float64(0.0, 0.0)),
            1 => (None, Extremes::Float64(lo, hi)),
            2 => (None, Extremes::Float32(lo as f32, hi as f32)),
            _ => (Some((lo, hi)), Extremes::Float32(0.0, 0.0)),
        };
        let Some(s) = spec(Binning::Count(n), range, closed, ext) else {
            continue;
        };
        made += 1;
        check_spec(&s, &mut rng, &format!("case {case}"));
    }
    assert!(made > 50, "only {made} bin specs were valid");
}

#[test]
fn many_bins_and_float32_literal_bins_match() {
    let mut rng = Rng(0x5EED_0002);
    // float32 with millions of bins: numpy's estimate strays, the literal rule is forced.
    for (lo, hi, n) in [
        (0.1f64, 0.7f64, 1usize << 20),
        (1.0, 3.0, 1 << 22),
        (-3.25, 7.5, 100_003),
    ] {
        for ext in [Extremes::Float32(0.0, 0.0), Extremes::Float64(0.0, 0.0)] {
            for closed in [Closed::Left, Closed::Right] {
                if let Some(s) = spec(Binning::Count(n), Some((lo, hi)), closed, ext) {
                    check_spec(&s, &mut rng, &format!("{n} bins [{lo}, {hi}]"));
                }
            }
        }
        if let Some(s) = spec(
            Binning::Count(n),
            None,
            Closed::Left,
            Extremes::Float32(lo as f32, hi as f32),
        ) {
            assert!(matches!(s, BinSpec::Uniform32(_)));
            check_spec(&s, &mut rng, &format!("{n} float32 bins from the data"));
        }
    }
}

/// float32 bins past 2^24: the last bin's index is no longer a float32, so the cheap rule's
/// vector path truncates in integers instead.
#[test]
fn float32_bins_past_two_to_the_24_match() {
    let mut rng = Rng(0x5EED_0009);
    let n = (1 << 24) + 2;
    let Some(BinSpec::Uniform32(u)) = spec(
        Binning::Count(n),
        Some((-1.0, 1.0)),
        Closed::Left,
        Extremes::Float32(0.0, 0.0),
    ) else {
        panic!("float32 bins over [-1, 1]")
    };
    assert_ne!((n - 1) as f32 as usize, n - 1);
    for (literal, margin) in [(false, 0.5), (false, 0.2), (true, 0.5)] {
        let v = u.clone().with_proof(literal, margin);
        let xs = adversarial(v.edges(), v.scale as f64, margin as f64, &mut rng);
        check_uniform(
            &v,
            &xs,
            &format!("2^24 + 2 float32 bins, literal {literal}"),
        );
    }
}

#[test]
fn integer_bins_match_on_huge_integers() {
    let mut rng = Rng(0x5EED_0003);
    let cases: [(i128, i128, usize); 6] = [
        (0, 3, 3),
        (-7, 1 << 40, 4097),
        (-(1 << 62), (1 << 62) + 1, 7),
        (i64::MIN as i128, i64::MAX as i128, 256),
        ((1 << 53) - 5, (1 << 53) + 1000, 100),
        (0, u64::MAX as i128, 1000),
    ];
    for (lo, hi, n) in cases {
        for closed in [Closed::Left, Closed::Right] {
            let Some(s) = spec(Binning::Count(n), None, closed, Extremes::Integer(lo, hi)) else {
                continue;
            };
            let BinSpec::Uniform64(u) = &s else {
                panic!("integer bins compute in float64")
            };
            let mut ints: Vec<i64> = vec![i64::MIN, i64::MAX, 0, -1, 1];
            for &e in u.edges() {
                let r = e as i64;
                ints.extend([-2, -1, 0, 1, 2].map(|d| r.saturating_add(d)));
            }
            for _ in 0..5000 {
                let span = (hi - lo) as f64;
                ints.push((lo as f64 + span * rng.unit()) as i64);
                ints.push(rng.next() as i64);
            }
            check_uniform(u, &ints, &format!("[{lo}, {hi}] i64"));
            let unsigned: Vec<u64> = ints.iter().map(|&x| x as u64).collect();
            check_uniform(u, &unsigned, &format!("[{lo}, {hi}] u64"));
            let bytes: Vec<u8> = ints.iter().map(|&x| x as u8).collect();
            check_uniform(u, &bytes, &format!("[{lo}, {hi}] u8"));
            let shorts: Vec<i16> = ints.iter().map(|&x| x as i16).collect();
            check_uniform(u, &shorts, &format!("[{lo}, {hi}] i16"));
            check_spec(&s, &mut rng, &format!("[{lo}, {hi}] integer bins"));
        }
    }
}

#[test]
fn histogramdd_bins_match() {
    let mut rng = Rng(0x5EED_0004);
    for case in 0..40 {
        let n = bin_counts(&mut rng);
        let (lo, hi) = ranges(&mut rng);
        let closed = if rng.below(2) == 0 {
            Closed::Right
        } else {
            Closed::Left
        };
        let float32 = rng.below(2) == 0;
        let ext = if float32 {
            Extremes::Float32(lo as f32, hi as f32)
        } else {
            Extremes::Float64(lo, hi)
        };
        let kind = if float32 {
            ValueKind::Float32
        } else {
            ValueKind::Float64
        };
        let range = (rng.below(2) == 0).then_some(Range::new(lo, hi));
        if let Ok(s) = BinSpec::resolve_dd(&Binning::Count(n), range, closed, kind, || Ok(ext)) {
            check_spec(&s, &mut rng, &format!("dd case {case}"));
        }
    }
}

/// Bins no code path makes, for the vector code's safety nets: a `scale` off by a few percent
/// makes the cheap estimate miss by many bins (walks longer than the vector code follows), and a
/// `margin` that lies makes the fast test answer wrongly, which it must do exactly as the scalar
/// rule does.
#[test]
fn long_walks_and_lying_margins_match() {
    let mut rng = Rng(0x5EED_0005);
    for n in [1usize, 2, 10, 256, 1000] {
        let Some(BinSpec::Uniform64(u)) = spec(
            Binning::Count(n),
            Some((-2.0, 3.0)),
            Closed::Left,
            Extremes::Empty,
        ) else {
            panic!()
        };
        for (stretch, margin) in [(1.03, 0.5), (0.9, 0.5), (1.0 + 1e-3, 0.01), (1.2, 0.2)] {
            let odd = UniformBins {
                scale: u.scale * stretch,
                ..u.clone()
            }
            .with_proof(u.literal(), margin);
            check_uniform_all_types(
                &odd,
                &mut rng,
                &format!("scale x{stretch}, margin {margin}"),
            );
            let odd32 = UniformBins {
                edges: crate::bins::Edges::held(odd.edges().iter().map(|&e| e as f32).collect()),
                estimate: Estimate {
                    wide: false,
                    ..odd.estimate
                },
                scale: odd.scale as f32,
                closed: Closed::Left,
                origin: odd.origin,
                proof: Default::default(),
            }
            .with_proof(false, margin as f32);
            check_uniform_all_types(&odd32, &mut rng, &format!("f32 scale x{stretch}"));
        }
    }
}
