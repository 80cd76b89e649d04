//! The bin contract's own tests: numpy's and Polars' rules on chosen values.

use super::*;
use crate::bins::edges::EdgeBins;

pub(super) fn spec(
    bins: Binning,
    range: Option<(f64, f64)>,
    closed: Closed,
    ext: Extremes,
) -> BinSpec {
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
        half: false,
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
