use super::*;
use crate::bins::Extremes;

fn opts(closed: Closed, storage: Storage) -> AccumulatorOptions {
    AccumulatorOptions {
        closed,
        storage,
        ..Default::default()
    }
}

/// A 1-D histogram as the old positional constructor made it.
fn hist1(
    bins: Binning,
    range: Option<(f64, f64)>,
    closed: Closed,
    weighted: bool,
) -> HistResult<Histogram> {
    let axis = match (bins, range) {
        (Binning::Count(n), Some((lo, hi))) => Axis::regular(n, lo, hi),
        (bins, range) => Axis {
            bins,
            span: range.map_or(Span::None, |(lo, hi)| Span::Range(lo, hi)),
        },
    };
    let storage = if weighted {
        Storage::Weight
    } else {
        Storage::Count
    };
    Histogram::new(vec![axis], opts(closed, storage))
}

fn series(values: &[f64]) -> Series {
    Series::new("x".into(), values)
}

#[test]
fn batches_equal_one_call() {
    let data: Vec<f64> = (0..1000)
        .map(|i| ((i * 7919) % 1013) as f64 / 101.3)
        .collect();
    let opts = crate::HistogramOptions {
        bins: crate::Bins::Count(17),
        range: Some((0.5.into(), 9.0.into())),
        ..Default::default()
    };
    let whole = crate::histogram_frame(&series(&data).into(), None, &opts).unwrap();
    let expected: Vec<u64> = whole
        .column("count")
        .unwrap()
        .u64()
        .unwrap()
        .into_no_null_iter()
        .collect();
    let mut h = hist1(Binning::Count(17), Some((0.5, 9.0)), Closed::Left, false).unwrap();
    for chunk in data.chunks(97) {
        h.fill(&[series(chunk)], None).unwrap();
    }
    assert_eq!(h.exact_counts().unwrap(), &expected[..]);
    assert_eq!(h.to_frame(&[], false).unwrap(), whole);
}

#[test]
fn an_int_bin_count_needs_a_range() {
    let e = hist1(Binning::Count(3), None, Closed::Left, false).unwrap_err();
    // Rust words for Rust callers; the Python module gets its keywords.
    assert!(
        e.to_string()
            .contains("of `Bins::Count(3)` needs `Axis::regular(n, min, max)`"),
        "{e}"
    );
    let python = e.message(crate::error::Spelling::Python);
    assert!(
        python.contains("of `bins=3` needs `range=(min, max)`"),
        "{python}"
    );
    assert!(!e.to_string().contains("histogram_scan") && python.contains("histogram_scan"));
}

#[test]
fn bad_arguments_are_errors_at_construction() {
    assert!(hist1(Binning::Count(0), Some((0.0, 1.0)), Closed::Left, false).is_err());
    assert!(hist1(Binning::Count(3), Some((1.0, 0.0)), Closed::Left, false).is_err());
    assert!(hist1(Binning::Edges(vec![1.0, 0.0]), None, Closed::Left, false).is_err());
}

#[test]
fn merge_refuses_other_binning_and_kinds() {
    let a = hist1(Binning::Count(3), Some((0.0, 1.0)), Closed::Left, false).unwrap();
    let b = hist1(Binning::Count(4), Some((0.0, 1.0)), Closed::Left, false).unwrap();
    let e = (a.clone() + &b).unwrap_err().to_string();
    assert!(e.contains("different binning"), "{e}");
    let c = hist1(Binning::Count(3), Some((0.0, 1.0)), Closed::Right, false).unwrap();
    assert!(a.clone().merge(&c).is_err());
    let w = hist1(Binning::Count(3), Some((0.0, 1.0)), Closed::Left, true).unwrap();
    assert!(a
        .clone()
        .merge(&w)
        .unwrap_err()
        .to_string()
        .contains("weighted"));

    let mut f32h = a.clone();
    f32h.fill(&[Series::new("x".into(), [0.1f32, 0.7])], None)
        .unwrap();
    let mut f64h = a.clone();
    f64h.fill(&[series(&[0.2])], None).unwrap();
    let e = (f32h.clone() + &f64h).unwrap_err().to_string();
    assert!(
        e.contains("f32") || e.contains("Float32") || e.contains("float32"),
        "{e}"
    );
    // A later fill of another float width is refused, and changes nothing.
    let before = f32h.exact_counts().unwrap().to_vec();
    assert!(f32h.fill(&[series(&[0.5])], None).is_err());
    assert_eq!(f32h.exact_counts().unwrap(), &before[..]);
    // Integers bin like float64.
    f64h.fill(&[Series::new("x".into(), [0i64, 1])], None)
        .unwrap();
    assert_eq!(f64h.exact_counts().unwrap(), [2, 0, 1]);
    // An unfilled histogram takes the other's dtype.
    let mut fresh = a.clone();
    fresh.merge(&f32h).unwrap();
    assert_eq!(fresh.dtype(0), Some(&DataType::Float32));
    assert!(fresh.fill(&[series(&[0.5])], None).is_err());
}

#[test]
fn weights_are_required_or_refused() {
    let mut c = hist1(Binning::Count(2), Some((0.0, 1.0)), Closed::Left, false).unwrap();
    let w = series(&[2.0]);
    assert!(c.fill(&[series(&[0.1])], Some(&w)).is_err());
    let mut s = hist1(Binning::Count(2), Some((0.0, 1.0)), Closed::Left, true).unwrap();
    assert!(s.fill(&[series(&[0.1])], None).is_err());
    s.fill(
        &[series(&[0.1, 0.9, 0.95])],
        Some(&series(&[2.0, 0.5, 0.25])),
    )
    .unwrap();
    s.fill(&[series(&[])], Some(&series(&[]))).unwrap();
    assert_eq!(s.counts(), &Counts::Weighted(vec![2.0, 0.75]));
}

#[test]
fn data_range_reproduces_numpy_float32_edges() {
    // np.histogram(np.float32([0.1, 0.7]), bins=3): float32 linspace over the data.
    let mut h = Histogram::new(
        vec![Axis::data_range(3, Extremes::Float32(0.1, 0.7))],
        opts(Closed::Left, Storage::Count),
    )
    .unwrap();
    let x = Series::new("x".into(), [0.1f32, 0.3, 0.7]);
    h.fill(std::slice::from_ref(&x), None).unwrap();
    let opts = crate::HistogramOptions {
        bins: crate::Bins::Count(3),
        ..Default::default()
    };
    assert_eq!(
        h.to_frame(&[], false).unwrap(),
        crate::histogram_frame(&x.clone().into(), None, &opts).unwrap()
    );
    assert!(h.fill(&[series(&[0.5])], None).is_err());
}

#[test]
fn temporal_fills_keep_their_dtype() {
    let dates = Series::new("d".into(), [0i32, 10, 20])
        .cast(&DataType::Date)
        .unwrap();
    let mut h = hist1(Binning::Count(2), Some((0.0, 20.0)), Closed::Left, false).unwrap();
    h.fill(&[dates], None).unwrap();
    assert_eq!(
        h.to_series("d", &[], false)
            .unwrap()
            .struct_()
            .unwrap()
            .fields_as_series()[0]
            .dtype(),
        &DataType::Date
    );
    assert!(h.fill(&[Series::new("x".into(), [1i32])], None).is_err());
}

#[test]
fn serde_round_trip_keeps_everything() {
    let axes = vec![Axis::variable(vec![0.0, 1.0, 3.0])];
    let options = AccumulatorOptions {
        closed: Closed::Right,
        storage: Storage::Weight,
        device: Device::Cpu,
        kernel: None,
    };
    let mut h = Histogram::new(axes, options).unwrap();
    let dt = DataType::Datetime(TimeUnit::Microseconds, None);
    let x = Series::new("t".into(), [1i64, 2, 3]).cast(&dt).unwrap();
    h.fill(std::slice::from_ref(&x), Some(&series(&[1.5, 2.0, 4.0])))
        .unwrap();
    let json = serde_json::to_string(&h).unwrap();
    let back: Histogram = serde_json::from_str(&json).unwrap();
    assert_eq!(back.counts(), h.counts());
    assert_eq!(back.squared_weights(), Some(&[2.25, 20.0][..]));
    assert_eq!(back.dtype(0), Some(&dt));
    assert_eq!(back.options().device, Device::Cpu);
    assert_eq!(
        back.to_frame(&[], false).unwrap(),
        h.to_frame(&[], false).unwrap()
    );
}

#[test]
fn n_d_batches_equal_histogramdd() {
    let x: Vec<f64> = (0..600).map(|i| ((i * 37) % 101) as f64 / 10.0).collect();
    let y: Vec<f32> = (0..600).map(|i| ((i * 53) % 97) as f32 / 9.7).collect();
    let (xs, ys) = (series(&x), Series::new("y".into(), &y));
    let dd = crate::HistogramDdOptions {
        bins: vec![
            crate::Bins::Count(4),
            crate::Bins::edges([0.0, 2.5, 7.0, 10.0]),
        ],
        range: vec![Some((0.0.into(), 10.0.into())), None],
        ..Default::default()
    };
    let whole = crate::histogramdd(&[xs.clone().into(), ys.clone().into()], None, &dd).unwrap();
    let axes = vec![
        Axis::regular(4, 0.0, 10.0),
        Axis::variable(vec![0.0, 2.5, 7.0, 10.0]),
    ];
    let mut h = Histogram::new(axes, AccumulatorOptions::default()).unwrap();
    assert_eq!(h.shape(), [4, 3]);
    for start in (0..600).step_by(128) {
        let len = 128.min(600 - start);
        h.fill(
            &[xs.slice(start as i64, len), ys.slice(start as i64, len)],
            None,
        )
        .unwrap();
    }
    assert_eq!(h.to_series("x", &["x", "y"], false).unwrap(), whole);
    assert!(
        h.fill(std::slice::from_ref(&xs), None).is_err(),
        "one column for two axes"
    );
    // The sample's common dtype is Float64: a later Float64-only fill bins alike.
    h.fill(&[xs.clone(), series(&x)], None).unwrap();
}

#[test]
fn weighted_storage_keeps_the_squares_through_merges() {
    let options = opts(Closed::Left, Storage::Weight);
    let mut a = Histogram::new(vec![Axis::regular(2, 0.0, 2.0)], options).unwrap();
    let mut b = a.empty_like().unwrap();
    a.fill(&[series(&[0.5, 1.5])], Some(&series(&[2.0, 3.0])))
        .unwrap();
    b.fill(&[series(&[0.5, 1.0])], Some(&series(&[-1.0, 0.5])))
        .unwrap();
    let total = (a + &b).unwrap();
    assert_eq!(total.counts(), &Counts::Weighted(vec![1.0, 3.5]));
    assert_eq!(total.squared_weights(), Some(&[5.0, 9.25][..]));
    assert_eq!(
        total.empty_like().unwrap().squared_weights(),
        Some(&[0.0, 0.0][..])
    );
}

#[test]
fn axis_counts_outside_one_to_max_dims_are_refused() {
    let options = AccumulatorOptions::default();
    assert!(Histogram::new(vec![], options).is_err());
    let many = vec![Axis::regular(2, 0.0, 1.0); crate::MAX_DIMS + 1];
    assert!(Histogram::new(many, options).is_err());
}

#[test]
fn too_many_cells_are_refused_before_any_allocation() {
    // 2^28 x 2^28 cells: refused from the bin counts alone (resolving the first axis would
    // already take 2 GiB of edges).
    let axes = vec![Axis::regular(crate::bins::MAX_BINS, 0.0, 1.0); 2];
    let err = Histogram::new(axes, AccumulatorOptions::default()).unwrap_err();
    assert!(err.to_string().contains("cells"), "{err}");
}

#[test]
fn a_state_is_validated_before_its_axes_are_resolved() {
    let h = Histogram::new(
        vec![Axis::regular(2, 0.0, 1.0); 2],
        AccumulatorOptions::default(),
    )
    .unwrap();
    let mut state: serde_json::Value = serde_json::to_value(&h).unwrap();
    for axis in state["axes"].as_array_mut().unwrap() {
        axis["bins"] = serde_json::json!(crate::bins::MAX_BINS);
    }
    let err = serde_json::from_value::<Histogram>(state.clone()).unwrap_err();
    assert!(err.to_string().contains("cells"), "{err}");
    // One large axis whose stored counts do not match: refused before its edges are made.
    state["axes"] = serde_json::json!([state["axes"][0]]);
    state["dtypes"] = serde_json::json!([null]);
    let err = serde_json::from_value::<Histogram>(state).unwrap_err();
    assert!(err.to_string().contains("do not match"), "{err}");
}

#[test]
fn float16_decimal_and_128_bit_fills_bin_as_histogram_does() {
    let x = Series::new("x".into(), [0.1f64, 0.3, 0.5, 0.7, 0.9, 0.3, 1.0]);
    for dtype in [
        DataType::Float16,
        DataType::Decimal(10, 2),
        DataType::Int128,
        DataType::UInt128,
    ] {
        let (column, hi) = if dtype.is_integer() {
            ((&x * 10.0).cast(&dtype).unwrap(), 10.0)
        } else {
            (x.cast(&dtype).unwrap(), 1.0)
        };
        let options = crate::HistogramOptions {
            bins: crate::Bins::Count(4),
            range: Some((0.0.into(), hi.into())),
            ..Default::default()
        };
        let expected = crate::histogram_frame(&column.clone().into(), None, &options).unwrap();
        let mut h = Histogram::new(
            vec![Axis::regular(4, 0.0, hi)],
            AccumulatorOptions::default(),
        )
        .unwrap();
        h.fill(std::slice::from_ref(&column), None).unwrap();
        h.fill(std::slice::from_ref(&column), None).unwrap();
        let expected: Vec<u64> = expected
            .column("count")
            .unwrap()
            .u64()
            .unwrap()
            .into_no_null_iter()
            .map(|c| 2 * c)
            .collect();
        assert_eq!(expected.iter().sum::<u64>(), 14, "{dtype:?}");
        assert_eq!(h.exact_counts().unwrap(), expected, "{dtype:?}");
        assert_eq!(h.dtype(0), Some(&dtype));
        let json = serde_json::to_string(&h).unwrap();
        let back: Histogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back.counts(), h.counts(), "{dtype:?}");
        assert_eq!(back.edges(0).unwrap(), h.edges(0).unwrap(), "{dtype:?}");
    }
}

#[test]
fn flow_accounts_for_every_row_and_survives_merges_and_serde() {
    let mut h = hist1(Binning::Count(4), Some((0.0, 1.0)), Closed::Left, false).unwrap();
    let x = Series::new(
        "x".into(),
        [Some(-5.0), Some(0.5), Some(7.0), Some(f64::NAN), None],
    );
    h.fill(std::slice::from_ref(&x), None).unwrap();
    let f = *h.flow();
    assert_eq!(
        (f.rows, f.null, f.nan, f.underflow, f.overflow),
        (5, 1, 1, 1, 1)
    );
    assert_eq!(f.counted(), 1);
    assert!(h.to_string().contains("underflow=1"), "{h}");
    let mut other = h.empty_like().unwrap();
    assert_eq!(*other.flow(), Flow::default());
    other.fill(&[series(&[1.0, 2.0])], None).unwrap();
    h.merge(&other).unwrap();
    let f = *h.flow();
    assert_eq!((f.rows, f.overflow, f.counted()), (7, 2, 2));
    let json = serde_json::to_string(&h).unwrap();
    let back: Histogram = serde_json::from_str(&json).unwrap();
    assert_eq!(back.flow(), h.flow());
}

#[test]
fn flow_of_weighted_and_n_d_fills() {
    let mut w = hist1(Binning::Count(2), Some((0.0, 2.0)), Closed::Right, true).unwrap();
    let weights = Series::new("w".into(), [Some(2.0), Some(1.0), Some(3.0), None]);
    w.fill(&[series(&[-1.0, 0.0, 3.0, 1.0])], Some(&weights))
        .unwrap();
    let f = *w.flow();
    assert_eq!((f.rows, f.null, f.underflow, f.overflow), (4, 1, 1, 1));
    assert_eq!((f.underflow_weight, f.overflow_weight), (2.0, 3.0));
    assert_eq!((f.underflow_squares, f.overflow_squares), (4.0, 9.0));

    let axes = vec![Axis::regular(2, 0.0, 1.0), Axis::regular(2, 0.0, 1.0)];
    let mut dd = Histogram::new(axes, AccumulatorOptions::default()).unwrap();
    let x = series(&[0.5, 2.0, 0.5, f64::NAN]);
    let y = series(&[0.5, -1.0, -1.0, 9.0]);
    dd.fill(&[x, y], None).unwrap();
    // The first axis on which a row is outside decides; NaN comes before outside.
    let f = *dd.flow();
    assert_eq!((f.nan, f.underflow, f.overflow, f.counted()), (1, 1, 1, 1));
}

#[test]
fn a_state_without_flow_reads_with_its_counted_rows() {
    let mut h = hist1(Binning::Count(2), Some((0.0, 1.0)), Closed::Left, false).unwrap();
    h.fill(&[series(&[0.2, 0.7, 5.0])], None).unwrap();
    let mut state: serde_json::Value = serde_json::to_value(&h).unwrap();
    state["format"] = 3.into();
    state.as_object_mut().unwrap().remove("flow");
    let old: Histogram = serde_json::from_value(state).unwrap();
    assert_eq!(old.flow().rows, 2);
    assert_eq!(old.flow().counted(), 2);
}

#[test]
fn flow_of_exact_integer_edges_compares_exactly() {
    let big = 1i64 << 62;
    let axis = Axis {
        bins: Binning::Integers(vec![big as i128, big as i128 + 1, big as i128 + 3]),
        span: Span::None,
    };
    for storage in [Storage::Count, Storage::Weight] {
        let mut h = Histogram::new(vec![axis.clone()], opts(Closed::Left, storage)).unwrap();
        let x = Series::new("x".into(), [big - 1, big, big + 2, big + 3, big + 4]);
        let w = (storage == Storage::Weight).then(|| series(&[1.0; 5]));
        h.fill(std::slice::from_ref(&x), w.as_ref()).unwrap();
        let f = *h.flow();
        assert_eq!(
            (f.underflow, f.overflow, f.counted()),
            (1, 1, 3),
            "{storage:?}"
        );
    }
}

#[test]
fn describe_writes_numbers_as_users_write_them() {
    let from_data = |extremes| Axis {
        bins: Binning::Count(4),
        span: Span::Data(extremes),
    };
    let integers = from_data(DataExtremes::Integer("-43".into(), "1301".into()));
    let h = Histogram::new(vec![integers], opts(Closed::Left, Storage::Count)).unwrap();
    assert!(
        h.describe().contains("range=(-43, 1301) (from the data)"),
        "{}",
        h.describe()
    );
    let floats = from_data(DataExtremes::Float32(0.1, 3e38));
    let h = Histogram::new(vec![floats], opts(Closed::Left, Storage::Count)).unwrap();
    assert!(
        h.describe().contains("range=(0.1, 3e38) (from the data)"),
        "{}",
        h.describe()
    );
    let empty = from_data(DataExtremes::Empty);
    let h = Histogram::new(vec![empty], opts(Closed::Left, Storage::Count)).unwrap();
    assert!(
        h.describe().contains("range from the data (no values)"),
        "{}",
        h.describe()
    );
    let wide = hist1(
        Binning::Count(4),
        Some((1e-300, 1e300)),
        Closed::Left,
        false,
    )
    .unwrap();
    assert!(
        wide.describe().contains("range=(1e-300, 1e300)"),
        "{}",
        wide.describe()
    );
    let whole = hist1(Binning::Count(4), Some((0.0, 1.0)), Closed::Left, false).unwrap();
    assert!(
        whole.describe().contains("range=(0, 1)"),
        "{}",
        whole.describe()
    );
}

/// The first fill moves its counts in, the next ones add; `empty_like` starts from zero
/// whatever its source holds, and a histogram read from a state adds (its counts are not zero).
#[test]
fn fills_move_into_an_empty_histogram_and_add_after() {
    for weighted in [false, true] {
        let mut h = hist1(Binning::Count(4), Some((0.0, 1.0)), Closed::Left, weighted).unwrap();
        let x = series(&[0.1, 0.3, 0.3, 0.9, 2.0]);
        let w = Series::new("w".into(), [1.0, 2.0, 3.0, 4.0, 5.0]);
        let w = weighted.then_some(&w);
        h.fill(std::slice::from_ref(&x), w).unwrap();
        let once = h.try_clone().unwrap();
        h.fill(std::slice::from_ref(&x), w).unwrap();
        let twice = (once.try_clone().unwrap() + &once).unwrap();
        assert_eq!(h.counts(), twice.counts());
        assert_eq!(h.squared_weights(), twice.squared_weights());
        let empty = h.empty_like().unwrap();
        assert_eq!(empty.counts(), &Counts::zeros(4, weighted).unwrap());
        assert_eq!(*empty.flow(), Flow::default());
        let mut read: Histogram =
            serde_json::from_value(serde_json::to_value(&once).unwrap()).unwrap();
        read.fill(std::slice::from_ref(&x), w).unwrap();
        assert_eq!(read.counts(), twice.counts());
        assert_eq!(read.squared_weights(), twice.squared_weights());
    }
}

/// What a fill would add, counted without adding it: equal to what the fill adds, and the
/// histogram unchanged.
#[test]
fn counted_is_what_a_fill_adds_and_changes_nothing() {
    for weighted in [false, true] {
        let mut h = hist1(Binning::Count(4), Some((0.0, 1.0)), Closed::Left, weighted).unwrap();
        let x = series(&[0.1, 0.3, 0.3, 0.9, 2.0, f64::NAN]);
        let w = Series::new("w".into(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let w = weighted.then_some(&w);
        h.fill(std::slice::from_ref(&x), w).unwrap();
        let before = h.try_clone().unwrap();
        let filled = h.counted(std::slice::from_ref(&x), w).unwrap();
        assert_eq!(h.counts(), before.counts());
        assert_eq!(h.flow(), before.flow());
        let mut once = h.empty_like().unwrap();
        once.fill(std::slice::from_ref(&x), w).unwrap();
        assert_eq!(&filled.counts, once.counts());
        assert_eq!(filled.squares.as_deref(), once.squared_weights());
        assert_eq!(&filled.flow, once.flow());
        assert!(filled.flow.nan == 1 && filled.flow.overflow == 1);
    }
}

/// A total summed elsewhere replaces the contents when it has the histogram's cells and kinds;
/// fills add to it after.
#[test]
fn set_contents_takes_a_total_of_the_same_cells_and_kinds() {
    let x = series(&[0.1, 0.3, 0.3, 0.9, 2.0, f64::NAN]);
    let mut total = hist1(Binning::Count(4), Some((0.0, 1.0)), Closed::Left, false).unwrap();
    total.fill(std::slice::from_ref(&x), None).unwrap();
    let mut h = total.empty_like().unwrap();
    let counts = total.counts().try_clone().unwrap();
    h.set_contents(counts, None, *total.flow(), None).unwrap();
    assert_eq!(h.counts(), total.counts());
    assert_eq!(h.flow(), total.flow());
    h.fill(std::slice::from_ref(&x), None).unwrap();
    assert_eq!(h.exact_counts().unwrap(), [2, 4, 0, 2]);
    for (counts, squares) in [
        (Counts::zeros(3, false).unwrap(), None),
        (Counts::zeros(4, true).unwrap(), None),
        (Counts::zeros(4, false).unwrap(), Some(vec![0.0; 4])),
    ] {
        let before = h.try_clone().unwrap();
        assert!(h
            .set_contents(counts, squares, Flow::default(), None)
            .is_err());
        assert_eq!(h.counts(), before.counts());
    }
}

/// A fill of no rows counts nothing and adds nothing; it still checks its columns.
#[test]
fn a_fill_of_no_rows_adds_nothing() {
    for weighted in [false, true] {
        let mut h = hist1(Binning::Count(4), Some((0.0, 1.0)), Closed::Left, weighted).unwrap();
        let x = series(&[0.1, 0.3]);
        let w = Series::new("w".into(), [1.0, 2.0]);
        let w = weighted.then_some(&w);
        h.fill(std::slice::from_ref(&x), w).unwrap();
        let before = h.try_clone().unwrap();
        let none = series(&[]);
        let no_weights = Series::new("w".into(), Vec::<f64>::new());
        h.fill(std::slice::from_ref(&none), weighted.then_some(&no_weights))
            .unwrap();
        assert_eq!(h.counts(), before.counts());
        assert_eq!(h.squared_weights(), before.squared_weights());
        assert_eq!(h.flow(), before.flow());
        // Still checked: a weighted histogram needs weights, a counting one refuses them.
        assert!(h.fill(&[none], (!weighted).then_some(&no_weights)).is_err());
    }
}

/// The flow cells of several axes: the cells of the grid with flow bins that are not bins, as
/// the rows fell (a point below x at y inside, one above y at x inside), added by merges, kept
/// by serde, and not known for a state written before them (format 4).
#[test]
fn n_d_flow_cells_follow_the_rows_through_merges_and_serde() {
    let axes = || vec![Axis::regular(2, 0.0, 1.0), Axis::regular(2, 0.0, 1.0)];
    let mut h = Histogram::new(axes(), AccumulatorOptions::default()).unwrap();
    let x = series(&[-1.0, 0.25, 0.25, 2.0]);
    let y = series(&[0.25, 3.0, 0.25, -1.0]);
    h.fill(&[x.clone(), y.clone()], None).unwrap();
    // The 4 x 4 grid without its 2 x 2 bins: 12 cells, row-major.
    let cells = |h: &Histogram| match h.flow_cells().unwrap().unwrap().counts {
        Counts::Exact(c) => c,
        Counts::Weighted(_) => unreachable!(),
    };
    let mut expected = vec![0u64; 12];
    expected[1] = 1; // (x below, y bin 0): grid (0, 1)
    expected[5] = 1; // (x bin 0, y above): grid (1, 3), after the 4 cells of row 0 and 1 of row 1
    expected[8] = 1; // (x above, y below): grid (3, 0), the first of row 3
    assert_eq!(cells(&h), expected);
    let merged = (h.try_clone().unwrap() + &h).unwrap();
    assert_eq!(
        cells(&merged),
        expected.iter().map(|c| c * 2).collect::<Vec<_>>()
    );
    let json = serde_json::to_string(&merged).unwrap();
    let back: Histogram = serde_json::from_str(&json).unwrap();
    assert_eq!(cells(&back), cells(&merged));
    let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
    old["format"] = 4.into();
    old.as_object_mut().unwrap().remove("flow_counts");
    let old: Histogram = serde_json::from_value(old).unwrap();
    assert!(old.flow_cells().unwrap().is_none());
    // One axis: below and above, the flow's.
    let mut one = hist1(Binning::Count(2), Some((0.0, 1.0)), Closed::Left, false).unwrap();
    one.fill(&[x], None).unwrap();
    assert_eq!(
        one.flow_cells().unwrap().unwrap().counts,
        Counts::Exact(vec![1, 1])
    );
}

/// A histogram reshaped keeps the axes kept (mergeable with one made alike), cuts the others to
/// exact edges, and carries the dtypes.
#[test]
fn reshaped_keeps_or_cuts_axes_and_carries_the_dtypes() {
    let axes = vec![Axis::regular(4, 0.0, 1.0), Axis::regular(3, 0.0, 3.0)];
    let mut h = Histogram::new(axes, AccumulatorOptions::default()).unwrap();
    let x = Series::new("x".into(), [0.1f32, 0.6]);
    let y = Series::new("y".into(), [0.5f32, 2.5]);
    h.fill(&[x, y], None).unwrap();
    let cut = h
        .reshaped(&[(0, Some(vec![1, 3]))], Storage::Count)
        .unwrap();
    assert_eq!(cut.shape(), vec![1]);
    assert_eq!(cut.edges(0).unwrap(), [0.25, 0.75]);
    assert_eq!(cut.dtype(0), Some(&DataType::Float32));
    let same = h
        .reshaped(&[(0, None), (1, None)], Storage::Weight)
        .unwrap();
    assert!(same.is_weighted() && same.shape() == vec![4, 3]);
    assert!(h.reshaped(&[(2, None)], Storage::Count).is_err());
    assert!(h
        .reshaped(&[(0, Some(vec![3, 1]))], Storage::Count)
        .is_err());
}
