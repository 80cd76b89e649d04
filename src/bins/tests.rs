//! The bin contract's own tests: numpy's and Polars' rules on chosen values.

use super::*;
use crate::bins::edges::EdgeBins;

fn spec(bins: Binning, range: Option<(f64, f64)>, closed: Closed, ext: Extremes) -> BinSpec {
    let kind = match ext {
        Extremes::Float32(..) => ValueKind::Float32,
        Extremes::Integer(..) => ValueKind::Integer,
        _ => ValueKind::Float64,
    };
    let range = range.map(|(lo, hi)| Range::new(lo, hi));
    BinSpec::resolve(&bins, range, closed, kind, || Ok(ext)).unwrap()
}

fn bin64(s: &BinSpec, x: f64) -> usize {
    match s {
        BinSpec::Uniform64(u) => u.bin(x),
        BinSpec::Edges(e) => e.bin(x),
        BinSpec::Integers(b) => b.bin(x as i128),
        BinSpec::Uniform32(u) => u.bin(x as f32),
        BinSpec::Half(h) => h.bin(x as f32),
    }
}

#[test]
fn left_closed_edges_follow_numpy() {
    // np.histogram([0, 1, 2, 3], bins=3) -> [1, 1, 2]
    let s = spec(
        Binning::Count(3),
        None,
        Closed::Left,
        Extremes::Integer(0, 3),
    );
    let bins: Vec<usize> = [0.0, 1.0, 2.0, 3.0].iter().map(|&x| bin64(&s, x)).collect();
    assert_eq!(bins, vec![0, 1, 2, 2]);
    assert_eq!(s.edges_f64().unwrap(), vec![0.0, 1.0, 2.0, 3.0]);
}

#[test]
fn right_closed_edges_follow_polars() {
    // pl.Series([0, 1, 2, 3]).hist(bin_count=3) -> [2, 1, 1]
    let s = spec(
        Binning::Count(3),
        None,
        Closed::Right,
        Extremes::Integer(0, 3),
    );
    let bins: Vec<usize> = [0.0, 1.0, 2.0, 3.0].iter().map(|&x| bin64(&s, x)).collect();
    assert_eq!(bins, vec![0, 0, 1, 2]);
}

#[test]
fn explicit_edges_both_conventions() {
    let e = Binning::Edges(vec![0.0, 1.0, 2.5, 10.0]);
    let left = spec(e.clone(), None, Closed::Left, Extremes::Empty);
    let right = spec(e, None, Closed::Right, Extremes::Empty);
    let xs = [-1.0, 0.0, 0.5, 1.0, 2.5, 9.0, 10.0, 10.5, f64::NAN];
    let l: Vec<usize> = xs.iter().map(|&x| bin64(&left, x)).collect();
    let r: Vec<usize> = xs.iter().map(|&x| bin64(&right, x)).collect();
    assert_eq!(l, vec![3, 0, 0, 1, 2, 2, 2, 3, 3]);
    assert_eq!(r, vec![3, 0, 0, 0, 1, 2, 2, 3, 3]);
}

#[test]
fn repeated_edges_follow_numpy() {
    // numpy.histogram([0, .5, 1, 1.5, 2], bins=E) for each E, a value's bin as searchsorted
    // gives it: a bin of no width is empty unless it is the closed end.
    let xs = [0.0, 0.5, 1.0, 1.5, 2.0];
    for (edges, left) in [
        (vec![0.0, 1.0, 1.0, 2.0], [0, 0, 2, 2, 2]),
        (vec![0.0, 0.0, 1.0], [1, 1, 1, 2, 2]),
        (vec![0.0, 1.0, 1.0], [0, 0, 1, 2, 2]),
        (vec![1.0, 1.0], [1, 1, 0, 1, 1]),
        (vec![1.0, 1.0, 1.0], [2, 2, 1, 2, 2]),
    ] {
        let s = spec(
            Binning::Edges(edges.clone()),
            None,
            Closed::Left,
            Extremes::Empty,
        );
        let bins: Vec<usize> = xs.iter().map(|&x| bin64(&s, x)).collect();
        assert_eq!(bins, left, "{edges:?}");
    }
    // Closed right mirrors it: the first bin holds its lower edge.
    let s = spec(
        Binning::Edges(vec![0.0, 0.0, 1.0]),
        None,
        Closed::Right,
        Extremes::Empty,
    );
    let bins: Vec<usize> = xs.iter().map(|&x| bin64(&s, x)).collect();
    assert_eq!(bins, vec![0, 1, 1, 2, 2]);
    assert!(check_strictly_increasing(&[0.0, 1.0, 1.0]).is_err());
    assert!(check_strictly_increasing(&[0.0, 1.0, 2.0]).is_ok());
}

#[test]
fn the_edge_guide_changes_speed_not_answers() {
    // Even, crowded at one end, clustered, sparse-then-dense, at the float64 grid, and large
    // values close together; both sides. Probes at every edge and every cell boundary, a ulp
    // either side, and a sweep.
    let sets: Vec<Vec<f64>> = vec![
        (0..=256).map(|i| i as f64 / 256.0).collect(),
        (0..=300).map(|i| (i as f64 / 30.0).exp()).collect(),
        [0.0, 1e-9, 2e-9, 3e-9, 1.0, 1000.0].to_vec(),
        (0..=64).map(|i| ((i * i) as f64).sqrt() - 3.0).collect(),
        (0..=40)
            .map(|i| 1.0 + (i * 3 / 2) as f64 * f64::EPSILON)
            .collect(),
        (0..=50).map(|i| 1e15 + (i * i) as f64 * 0.125).collect(),
        [-1e300, -1.0, 0.0, 1e-300, 1.0, 1e300].to_vec(),
    ];
    for edges in sets {
        for closed in [Closed::Left, Closed::Right] {
            let guided = EdgeBins::new(edges.clone(), closed);
            let guide = guided.guide.clone().expect("a guide for a finite span");
            let searched = EdgeBins {
                guide: None,
                ..guided.clone()
            };
            let (lo, hi) = (edges[0], edges[edges.len() - 1]);
            let near = |x: f64| [x.next_down(), x, x.next_up()];
            let at_edges = edges.iter().flat_map(|&e| near(e));
            let at_cells =
                (0..=guide.cells()).flat_map(|k| near(lo + k as f64 / guide.cells_per_unit));
            let sweep = (0..=10_000).map(|k| lo + (hi - lo) * k as f64 / 10_000.0);
            for x in at_edges.chain(at_cells).chain(sweep) {
                assert_eq!(guided.bin(x), searched.bin(x), "x={x} {closed:?}");
            }
        }
    }
}

#[test]
fn a_cell_without_an_edge_holds_one_bin() {
    // 257 uneven edges: most cells hold no edge and name their bin outright.
    let mut state = 7u64;
    let mut unit = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut edges: Vec<f64> = (0..257).map(|_| unit()).collect();
    edges.sort_by(f64::total_cmp);
    let e = EdgeBins::new(edges, Closed::Left);
    let guide = e.guide.as_ref().expect("a guide");
    let mixed = guide.slots[..guide.cells()]
        .iter()
        .filter(|&&s| s & Guide::MIXED != 0)
        .count();
    assert!(
        mixed <= 255 && mixed * 16 < guide.cells(),
        "{mixed} of {}",
        guide.cells()
    );
    assert_eq!(guide.slots[guide.outside()], 256);
    let searched = EdgeBins {
        guide: None,
        ..e.clone()
    };
    for (cell, &slot) in guide.slots[..guide.cells()].iter().enumerate() {
        if slot & Guide::MIXED == 0 {
            let mid = e.edges[0] + (cell as f64 + 0.5) / guide.cells_per_unit;
            assert_eq!(searched.bin(mid), slot as usize, "cell {cell}");
        }
    }
}

#[test]
fn outside_nan_and_inf_are_not_counted() {
    let s = spec(
        Binning::Count(4),
        Some((0.0, 1.0)),
        Closed::Left,
        Extremes::Empty,
    );
    for x in [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -1e-300,
        1.0000000001,
    ] {
        assert_eq!(bin64(&s, x), 4, "{x}");
    }
    assert_eq!(bin64(&s, 1.0), 3);
    assert_eq!(bin64(&s, 0.0), 0);
}

#[test]
fn one_distinct_value_widens_by_half() {
    let s = spec(
        Binning::Count(2),
        None,
        Closed::Left,
        Extremes::Float64(5.0, 5.0),
    );
    assert_eq!(s.edges_f64().unwrap(), vec![4.5, 5.0, 5.5]);
    assert_eq!(bin64(&s, 5.0), 1);
    let s = spec(Binning::Count(2), None, Closed::Left, Extremes::Empty);
    assert_eq!(s.edges_f64().unwrap(), vec![0.0, 0.5, 1.0]);
}

#[test]
fn float32_columns_bin_in_float32() {
    let s = spec(
        Binning::Count(10),
        Some((0.1, 0.9)),
        Closed::Left,
        Extremes::Float32(0.0, 0.0),
    );
    let BinSpec::Uniform32(u) = &s else {
        panic!("expected float32 bins")
    };
    assert_eq!(u.edge(0), 0.1f32);
    assert_eq!(u.edge(10), 0.9f32);
}

#[test]
fn integer_denominator_is_exact() {
    let lo = -(1i128 << 62);
    let hi = (1i128 << 62) + 1;
    let s = spec(
        Binning::Count(7),
        None,
        Closed::Left,
        Extremes::Integer(lo, hi),
    );
    let BinSpec::Uniform64(u) = &s else {
        panic!("expected float64 bins")
    };
    assert_eq!(u.estimate.denom, (hi - lo) as f64);
    assert_eq!(u.bin(hi as f64), 6);
    assert_eq!(u.bin(lo as f64), 0);
}

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

#[test]
fn bad_arguments_are_errors() {
    let r = |b: Binning, range: Option<(f64, f64)>| {
        let range = range.map(|(lo, hi)| Range::new(lo, hi));
        BinSpec::resolve(&b, range, Closed::Left, ValueKind::Float64, || {
            Ok(Extremes::Float64(0.0, 1.0))
        })
    };
    assert!(r(Binning::Count(0), None).is_err());
    assert!(r(Binning::Count(MAX_BINS + 1), None).is_err());
    assert!(r(Binning::Edges(vec![1.0]), None).is_err());
    assert!(r(Binning::Edges(vec![0.0, 1.0, 0.5]), None).is_err());
    assert!(r(Binning::Edges(vec![0.0, 1.0, 1.0]), None).is_ok());
    assert!(r(Binning::Edges(vec![0.0, f64::NAN]), None).is_err());
    assert!(r(Binning::Edges(vec![f64::INFINITY, 0.0]), None).is_err());
    let catch_all = Binning::Edges(vec![f64::NEG_INFINITY, 0.0, f64::INFINITY]);
    assert!(r(catch_all, None).is_ok());
    assert!(r(Binning::Count(3), Some((1.0, 0.0))).is_err());
    assert!(r(Binning::Count(3), Some((0.0, f64::NAN))).is_err());
    assert!(r(Binning::Count(3), Some((f64::NEG_INFINITY, 0.0))).is_err());
    let inf = BinSpec::resolve(
        &Binning::Count(3),
        None,
        Closed::Left,
        ValueKind::Float64,
        || Ok(Extremes::Float64(0.0, f64::INFINITY)),
    );
    assert!(inf.unwrap_err().to_string().contains("not finite"));
}

#[test]
fn collapsing_bins_are_refused_like_numpy_and_never_index_out_of_range() {
    for (lo, hi, n) in [(1e-45f32, 3e-45f32, 1000usize), (1e7, 1e7 + 3.0, 1 << 20)] {
        let left = BinSpec::resolve(
            &Binning::Count(n),
            None,
            Closed::Left,
            ValueKind::Float32,
            || Ok(Extremes::Float32(lo, hi)),
        );
        assert!(left.unwrap_err().to_string().contains("too many bins"));
        // Polars' rule has no such check: it must still keep every index in bounds.
        let s = spec(
            Binning::Count(n),
            None,
            Closed::Right,
            Extremes::Float32(lo, hi),
        );
        let BinSpec::Uniform64(u) = &s else { panic!() };
        let mut x = lo;
        while x <= hi {
            assert!(u.bin(x as f64) < n);
            x = f32::from_bits(x.to_bits() + 1);
        }
    }
}

/// numpy divides by a float64 `norm_denom` when the range is given as Python floats, even for
/// float32 data: a float32 range wider than float32 holds still bins like numpy.
#[test]
fn float32_data_with_a_float64_range_divides_in_float64() {
    let max = f32::MAX as f64;
    let s = spec(
        Binning::Count(4),
        Some((-max, max)),
        Closed::Left,
        Extremes::Float32(0.0, 0.0),
    );
    let BinSpec::Uniform32(u) = &s else { panic!() };
    // np.histogram(np.float32([-1, 0, 1]), 4, range=(-M, M)) -> [0, 1, 2, 0]
    let bins: Vec<usize> = [-1.0f32, 0.0, 1.0].iter().map(|&x| u.bin(x)).collect();
    assert_eq!(bins, [1, 2, 2]);
    let s = spec(
        Binning::Count(4),
        Some((-2e38, 2e38)),
        Closed::Left,
        Extremes::Float32(0.0, 0.0),
    );
    let BinSpec::Uniform32(u) = &s else { panic!() };
    // np.histogram(np.float32([-1e38, 0, 1e38]), 4, range=(-2e38, 2e38)) -> [0, 1, 1, 1]
    let bins: Vec<usize> = [-1e38f32, 0.0, 1e38].iter().map(|&x| u.bin(x)).collect();
    assert_eq!(bins, [1, 2, 3]);
}

/// Where numpy's edges overflow (NaN edges, then an IndexError), the edges stay finite and
/// every value in the range is counted in its edge bin.
#[test]
fn ranges_wider_than_float64_keep_finite_edges() {
    for (n, lo, hi) in [
        (1, -1e308, 1.5e308),
        (4, -1e308, 1e308),
        (7, -f64::MAX, f64::MAX),
    ] {
        for closed in [Closed::Left, Closed::Right] {
            let s = spec(Binning::Count(n), Some((lo, hi)), closed, Extremes::Empty);
            let edges = s.edges_f64().unwrap();
            assert!(edges.iter().all(|e| e.is_finite()), "{edges:?}");
            assert!(edges.windows(2).all(|w| w[0] < w[1]), "{edges:?}");
            assert_eq!((edges[0], edges[n]), (lo, hi));
            for x in [lo, -1.0, 0.0, 1.0, hi] {
                let b = bin64(&s, x);
                assert!(b < n, "x={x} n={n}");
                let inside = match closed {
                    Closed::Left => edges[b] <= x && (x < edges[b + 1] || b == n - 1),
                    Closed::Right => (edges[b] < x || b == 0) && x <= edges[b + 1],
                };
                assert!(inside, "x={x} in bin {b} of {edges:?}");
            }
        }
    }
}

/// numpy float32 scalars as the range: linspace and norm_denom in float32.
#[test]
fn a_float32_range_makes_float32_edges() {
    let r = Range {
        lo: 0.1f32 as f64,
        hi: 0.7f32 as f64,
        single: true,
        wide: false,
    };
    let f64_data = BinSpec::resolve(
        &Binning::Count(3),
        Some(r),
        Closed::Left,
        ValueKind::Float64,
        || Ok(Extremes::Empty),
    )
    .unwrap();
    let expected = linspace(0.1f32, 0.7f32, 3).unwrap();
    let expected: Vec<f64> = expected.all().iter().map(|&e| e as f64).collect();
    assert_eq!(f64_data.edges_f64().unwrap(), expected);
    let BinSpec::Uniform64(u) = &f64_data else {
        panic!()
    };
    assert_eq!(u.estimate.denom, (0.7f32 - 0.1f32) as f64);
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
