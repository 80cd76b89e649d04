//! Explicit edges: the guide walk and the binary search, against the scalar rule.

use super::*;

fn edge_sets(rng: &mut Rng) -> Vec<(String, Vec<f64>)> {
    let mut sets = vec![
        (
            "even 257".to_string(),
            (0..=256).map(|i| i as f64 / 256.0).collect::<Vec<_>>(),
        ),
        (
            "exp 301".to_string(),
            (0..=300).map(|i| (i as f64 / 30.0).exp()).collect(),
        ),
        (
            "clustered".to_string(),
            vec![0.0, 1e-9, 2e-9, 3e-9, 1.0, 1000.0],
        ),
        (
            "sqrt 65".to_string(),
            (0..=64).map(|i| ((i * i) as f64).sqrt() - 3.0).collect(),
        ),
        ("two".to_string(), vec![-1.0, 1.0]),
        ("three".to_string(), vec![0.0, 0.5, 1.0]),
        (
            "wide".to_string(),
            vec![-1e300, -1.0, 0.0, 1e-300, 1.0, 1e300],
        ),
        (
            "subnormal".to_string(),
            vec![-5e-324, 0.0, 5e-324, 1e-310, 2e-308],
        ),
        (
            "at the float64 grid".to_string(),
            (0..=40)
                .map(|i| 1.0 + (i * 3 / 2) as f64 * f64::EPSILON)
                .collect(),
        ),
        (
            "large, close together".to_string(),
            (0..=50).map(|i| 1e15 + (i * i) as f64 * 0.125).collect(),
        ),
        (
            "geometric 257".to_string(),
            (0..=256)
                .map(|i| 1e-6 * 1e6f64.powf(i as f64 / 256.0))
                .collect(),
        ),
        (
            "big even".to_string(),
            (0..=70_000).map(|i| i as f64 * 0.37 - 5.0).collect(),
        ),
    ];
    for k in 0..30 {
        let n = 1 + rng.below(if k % 5 == 0 { 20_000 } else { 600 });
        let mut e: Vec<f64> = (0..=n).map(|_| rng.unit() * 100.0 - 50.0).collect();
        // Crowd some: a few clusters of near-equal edges.
        if k % 3 == 0 {
            let c = rng.unit() * 10.0;
            for v in e.iter_mut().take(n / 3) {
                *v = c + rng.unit() * 1e-6;
            }
        }
        e.sort_by(f64::total_cmp);
        e.dedup();
        if e.len() >= 2 {
            sets.push((format!("random {}", e.len()), e));
        }
    }
    sets
}

#[test]
fn explicit_edges_match_the_scalar_rule_on_every_path() {
    let mut rng = Rng(0x5EED_0006);
    let mut guided = 0;
    for (name, edges) in edge_sets(&mut rng) {
        for closed in [Closed::Left, Closed::Right] {
            let with_guide = EdgeBins::new(edges.clone(), closed);
            guided += with_guide.guide.is_some() as usize;
            let without = EdgeBins {
                guide: None,
                ..with_guide.clone()
            };
            let xs = adversarial(&edges, f64::NAN, 0.0, &mut rng);
            let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
            let ints: Vec<i64> = xs.iter().map(|&x| x as i64).collect();
            for e in [&with_guide, &without] {
                check_edges(e, &xs, &name);
                check_edges(e, &xs32, &format!("{name} f32"));
                check_edges(e, &ints, &format!("{name} i64"));
            }
        }
    }
    // Only spans wider than float64 holds (and the subnormal one) go without.
    assert!(guided > 70, "guided {guided}");
}

/// Edges `BinSpec::resolve_dd` may hand over that are not strictly increasing: the vector walk
/// and search replay the scalar ones step for step, so they agree even there.
#[test]
fn repeated_edges_match() {
    let mut rng = Rng(0x5EED_0007);
    for edges in [
        vec![0.0, 0.0, 1.0, 2.0],
        vec![0.0, 1.0, 1.0, 1.0, 2.0, 3.0],
        vec![1e-45, 1e-45, 3e-45, 3e-45],
        (0..=100).map(|i| (i / 7) as f64).collect(),
    ] {
        for closed in [Closed::Left, Closed::Right] {
            let e = EdgeBins::new(edges.clone(), closed);
            let xs = adversarial(&edges, f64::NAN, 0.0, &mut rng);
            check_edges(&e, &xs, &format!("{edges:?}"));
        }
    }
}

/// Infinite edges, numpy's catch-all bins (`[-inf, 0, inf]`): their span has no grid, so no
/// guide; every path follows the comparisons, which put -inf in the first bin and +inf in the
/// last (closed left; closed right the first bin is closed), as numpy's `searchsorted` does.
#[test]
fn infinite_edges_count_as_numpy_counts_them() {
    let mut rng = Rng(0x5EED_0008);
    let (inf, ninf) = (f64::INFINITY, f64::NEG_INFINITY);
    let wide = |i: usize| match i {
        0 => ninf,
        300 => inf,
        _ => i as f64 - 150.0,
    };
    for edges in [
        vec![ninf, 0.0, inf],
        vec![ninf, -1.0, 0.0, 2.5, 10.0],
        vec![0.0, 1.0, 3.0, 6.0, inf],
        vec![ninf, inf],
        vec![ninf, ninf, 0.0, inf, inf],
        (0..=300).map(wide).collect(),
    ] {
        let finite: Vec<f64> = edges.iter().copied().filter(|e| e.is_finite()).collect();
        let probes = if finite.len() >= 2 {
            finite
        } else {
            vec![-1.0, 0.0, 1.0]
        };
        for closed in [Closed::Left, Closed::Right] {
            let e = EdgeBins::new(edges.clone(), closed);
            assert!(e.guide.is_none(), "{edges:?}");
            let mut xs = adversarial(&probes, f64::NAN, 0.0, &mut rng);
            xs.extend([inf, ninf, f64::NAN, f64::MAX, f64::MIN, 0.0, -0.0]);
            let n = e.len();
            for &x in &xs {
                // numpy's rule spelled out: edges at or below x (closed left), below x (right).
                let expected = if !(x >= edges[0] && x <= edges[n]) {
                    n
                } else if closed == Closed::Left {
                    (edges.iter().filter(|&&v| v <= x).count() - 1).min(n - 1)
                } else {
                    edges.iter().filter(|&&v| v < x).count().max(1) - 1
                };
                assert_eq!(e.bin(x), expected, "x={x} {edges:?} {closed:?}");
            }
            check_edges(&e, &xs, &format!("{edges:?}"));
            let ints: Vec<i64> = xs.iter().map(|&x| x as i64).collect();
            check_edges(&e, &ints, &format!("{edges:?} i64"));
        }
    }
}
