//! The cheap rule's tests: the linspace formula the kernels recompute edges from, the
//! estimate-and-correct rule against numpy's literal arithmetic, and its proof (walked here or
//! on the device, asked for by many tasks at once).

use super::tests::spec;
use super::*;

/// The kernels recompute edges from `linspace` for large bin counts: it must give every
/// stored edge, for each way the edges are made.
#[test]
fn the_linspace_formula_gives_every_stored_edge() {
    let cases = [
        (None, Extremes::Float32(-3.25, 7.5), Closed::Left, 100_003),
        (
            Some((0.0, 1.0)),
            Extremes::Float32(0.0, 1.0),
            Closed::Left,
            1 << 24,
        ),
        (Some((0.0, 1.0)), Extremes::Empty, Closed::Left, 1 << 20),
        (None, Extremes::Float64(-1e-3, 2.5e7), Closed::Left, 65_537),
        (None, Extremes::Integer(-7, 1 << 40), Closed::Left, 4097),
        (Some((0.1, 0.7)), Extremes::Empty, Closed::Right, 33_333),
    ];
    for (range, ext, closed, n) in cases {
        fn check<F: BinFloat>(u: &UniformBins<F>) {
            let f = u.linspace().expect("equal bins record their formula");
            let n = u.len();
            for (i, &e) in u.edges()[..n].iter().enumerate() {
                assert!(f.edge::<F>(i) == e, "edge {i} of {n}: {f:?}");
            }
        }
        match spec(Binning::Count(n), range, closed, ext) {
            BinSpec::Uniform32(u) => check(&u),
            BinSpec::Uniform64(u) => check(&u),
            BinSpec::Edges(_) | BinSpec::Integers(_) | BinSpec::Half(_) => {
                panic!("equal bins of a float32/64 column")
            }
        }
    }
}

/// The cheap rule must give numpy's literal answer wherever the check allows it.
#[test]
fn cheap_rule_agrees_with_numpy_arithmetic_where_proved() {
    for (lo, hi, n) in [
        (0.1f64, 0.9f64, 10usize),
        (-3.3, 1e5, 4096),
        (0.1, 0.7, 1 << 20),
        (0.0, 1.0, 1 << 24),
        (1.0, 3.0, 1 << 22),
    ] {
        let s = spec(
            Binning::Count(n),
            Some((lo, hi)),
            Closed::Left,
            Extremes::Float32(0.0, 0.0),
        );
        let BinSpec::Uniform32(fast) = s else {
            panic!()
        };
        let literal = fast.clone().with_proof(true, 0.5);
        // Every float32 around a sample of edges, and a sweep of the whole range.
        let step = (n / 997).max(1);
        let mut xs: Vec<f32> = (0..=n).step_by(step).map(|i| fast.edges()[i]).collect();
        xs.extend((0..20_000).map(|k| (lo + (hi - lo) * k as f64 / 20_000.0) as f32));
        for x in xs {
            for y in [x.next_down(), x, x.next_up()] {
                assert_eq!(
                    fast.bin_left(y),
                    literal.bin_left(y),
                    "x={y} n={n} [{lo}, {hi}]"
                );
            }
        }
    }
}

#[test]
fn an_estimate_that_misses_by_two_forces_the_literal_rule() {
    let edges = linspace(0.0f64, 1.0, 1000).unwrap();
    let estimate = |denom| Estimate {
        denom,
        n: 1000.0,
        wide: true,
    };
    assert!(!UniformBins::numpy(edges.clone(), estimate(1.0)).literal());
    // A denominator 0.4% off moves the estimate by up to 4 bins near the top.
    assert!(UniformBins::numpy(edges, estimate(1.004)).literal());
}

/// The float comparisons that prove numpy's estimate near decide each bin as the estimate
/// itself does, including bins it misses (a skewed denominator, float32 arithmetic, the last
/// bins where numpy clamps `n` to `n - 1`).
#[test]
fn the_float_proof_is_the_estimates_own() {
    fn check<F: BinFloat>(u: &UniformBins<F>) -> usize {
        let n = u.len();
        let mut misses = 0;
        for b in 0..n {
            let last = if b + 1 == n {
                u.edges()[n]
            } else {
                u.edges()[b + 1].next_down()
            };
            // Where `x - lo` overflows numpy fails: the edge bin stands.
            let overflows = !(last - u.edges()[0]).is_finite();
            let literally = overflows
                || u.numpy_estimate(u.edges()[b]) + 1 >= b && u.numpy_estimate(last) <= b + 1;
            assert_eq!(
                u.estimate_is_near(u.edges(), b),
                literally,
                "bin {b} of {n}: {:?}",
                u.estimate
            );
            misses += !literally as usize;
        }
        misses
    }
    let mut misses = 0;
    for (lo, hi, n) in [
        (0.0f64, 1.0f64, 1000usize),
        (-3.3, 1e5, 4096),
        (0.1, 0.7, 1 << 16),
    ] {
        for skew in [1.0, 1.004, 0.996, 1.5, 0.5] {
            for wide in [true, false] {
                let estimate = Estimate {
                    denom: (hi - lo) * skew,
                    n: n as f64,
                    wide,
                };
                let e64 = linspace(lo, hi, n).unwrap();
                misses += check(&UniformBins::numpy(e64, estimate));
                let e32 = linspace(lo as f32, hi as f32, n).unwrap();
                let estimate = Estimate {
                    denom: (hi as f32 - lo as f32) as f64 * skew,
                    ..estimate
                };
                misses += check(&UniformBins::numpy(e32, estimate));
            }
        }
    }
    // float32 at millions of bins, numpy's estimate in float64 and in float32; and spans wider
    // than float32 holds, where `x - lo` overflows for the upper bins.
    let top = f32::MAX as f64;
    for (range, ext, n) in [
        (Some((0.0, 1.0)), Extremes::Float32(0.0, 0.0), 1 << 24),
        (Some((0.1, 0.7)), Extremes::Float32(0.0, 0.0), 1 << 20),
        (None, Extremes::Float32(1.0, 3.0), 1 << 22),
        (Some((-top, top)), Extremes::Float32(0.0, 0.0), 5),
        (Some((-top, 2e38)), Extremes::Float32(0.0, 0.0), 777),
    ] {
        match spec(Binning::Count(n), range, Closed::Left, ext) {
            BinSpec::Uniform32(u) => misses += check(&u),
            other => panic!("{other:?}"),
        }
    }
    assert!(
        misses > 0,
        "some case must miss, or the comparison proves nothing"
    );
}

/// A proof settled from a walk made elsewhere (the device's) is the one the host derives from its
/// own walk; each thread below starts with nothing remembered.
#[test]
fn a_settled_walk_gives_the_hosts_own_proof() {
    fn float32_bins(lo: f64, hi: f64, n: usize) -> UniformBins<f32> {
        match spec(
            Binning::Count(n),
            Some((lo, hi)),
            Closed::Left,
            Extremes::Float32(0.0, 1.0),
        ) {
            BinSpec::Uniform32(u) => u,
            other => panic!("float32 bins, not {other:?}"),
        }
    }
    let mut literal = 0;
    for (lo, hi, n) in [
        (0.0, 1.0, 1 << 16),
        (1e-40, 1e-39, 64),
        (-3.3, 1e5, 5000),
        (0.1, 0.7, 1 << 22),
    ] {
        let own = std::thread::spawn(move || float32_bins(lo, hi, n).proof());
        let settled = std::thread::spawn(move || {
            let u = float32_bins(lo, hi, n);
            let walk = u.host_walk();
            u.settle_proof(walk)
        });
        let (own, settled) = (own.join().unwrap(), settled.join().unwrap());
        assert_eq!(own, settled, "[{lo}, {hi}) in {n} bins");
        literal += own.literal as usize;
    }
    assert_eq!(literal, 1, "a subnormal span is counted literally");
}

/// Tasks asking one proof at once all get it. Its walks fan out on their pool; inside the proof's
/// once-only cell, a thread waiting on them could take a task waiting on that cell: every thread
/// stopped (`scripts/concurrent_processes.py`). A stop fails here after a minute, not hangs.
#[test]
fn tasks_asking_one_proof_at_once_all_get_it() {
    use rayon::prelude::*;
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // More threads than cores, so that tasks wait to be stolen, as on a busy host.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(16)
            .build()
            .unwrap();
        for round in 0..32 {
            // A range of its own each round: no thread remembers its proof yet.
            let s = spec(
                Binning::Count(1 << 18),
                Some((-0.625, 1.2345 + round as f64 / 1024.0)),
                Closed::Left,
                Extremes::Float64(0.0, 1.0),
            );
            s.make_edges().unwrap();
            let BinSpec::Uniform64(u) = &s else { panic!() };
            let proofs: Vec<_> =
                pool.install(|| (0..256).into_par_iter().map(|_| u.proof()).collect());
            sent.send(proofs).unwrap();
        }
    });
    for _ in 0..32 {
        let proofs = received
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the tasks asking for the proof waited on each other for a minute");
        assert!(proofs.iter().all(|p| *p == proofs[0]), "{proofs:?}");
    }
}
