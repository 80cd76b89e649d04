//! The public Rust API over Polars columns: chunked columns, nulls, weights, options from JSON.

use polars::prelude::*;
use polars_gpu_hist::{
    histogram, histogram_frame, histogramdd, AccumulatorOptions, Axis, BinRule, Bins, Closed,
    Estimator, HistError, HistogramDdOptions, HistogramOptions, Spelling,
};

fn counts_u64(df: &DataFrame) -> Vec<u64> {
    df.column("count")
        .unwrap()
        .u64()
        .unwrap()
        .into_no_null_iter()
        .collect()
}

#[test]
fn many_chunks_with_nulls_count_like_one() {
    let mut a = Column::new("x".into(), [Some(0.0), None, Some(1.0), Some(2.0)]);
    let b = Column::new("x".into(), [Some(3.0), Some(f64::NAN), None, Some(2.5)]);
    a.append(&b).unwrap();
    assert_eq!(a.n_chunks(), 2);
    let opts = HistogramOptions::default().bins(Bins::Count(3));
    let chunked = histogram_frame(&a, None, &opts).unwrap();
    let single = histogram_frame(&a.rechunk(), None, &opts).unwrap();
    assert_eq!(counts_u64(&chunked), vec![1, 1, 3]);
    assert!(chunked.equals(&single));
}

#[test]
fn weights_chunked_differently_from_values() {
    let mut x = Column::new("x".into(), [0.0, 1.0, 2.0]);
    x.append(&Column::new("x".into(), [3.0, 4.0])).unwrap();
    let mut w = Column::new("w".into(), [1.0]);
    w.append(&Column::new(
        "w".into(),
        [Some(2.0), None, Some(8.0), Some(16.0)],
    ))
    .unwrap();
    let opts = HistogramOptions::default().bins(Bins::edges([0.0, 2.0, 5.0]));
    let hist = histogram_frame(&x, Some(&w), &opts).unwrap();
    let sums: Vec<f64> = hist
        .column("count")
        .unwrap()
        .f64()
        .unwrap()
        .into_no_null_iter()
        .collect();
    assert_eq!(sums, vec![3.0, 24.0]);
}

#[test]
fn options_deserialize_from_the_python_shape() {
    let json = r#"{"bins": [0.0, 1.0, 3.0], "range": null, "density": true,
                   "closed": "right", "device": "cpu"}"#;
    let opts: HistogramOptions = serde_json::from_str(json).unwrap();
    assert_eq!(opts.bins, Bins::edges([0.0, 1.0, 3.0]));
    assert_eq!(opts.closed, Closed::Right);
    let s = Column::new("v".into(), [0i32, 1, 2, 3]);
    let out = histogram(&s, None, &opts).unwrap();
    assert_eq!(out.name().as_str(), "v");
    assert_eq!(out.len(), 2);
}

#[test]
fn errors_are_one_type_worded_for_rust() {
    let x = Column::new("x".into(), [0.5, 1.5]);
    let integer = HistogramOptions::default().bins(BinRule::Integer);
    // Every public function returns HistError; `?` makes it a PolarsError where one is wanted.
    let err: HistError = histogram(&x, None, &integer).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("`Bins::Rule(BinRule::Integer)` needs an integer"),
        "{text}"
    );
    assert!(!text.contains("bins=") && !text.contains("pl."), "{text}");
    // The Python module asks for its own words.
    let python = err.message(Spelling::Python);
    assert!(
        python.starts_with("`bins=\"integer\"` needs an integer"),
        "{python}"
    );
    let polars = || -> PolarsResult<DataFrame> { Ok(histogram_frame(&x, None, &integer)?) };
    assert!(matches!(polars(), Err(PolarsError::InvalidOperation(_))));

    let weighted = HistogramOptions::default().bins(Estimator::Fd);
    let err = histogram(&x, Some(&x), &weighted).unwrap_err().to_string();
    assert!(
        err.starts_with("`Bins::Rule(BinRule::Estimator(Estimator::Fd))` cannot be combined"),
        "{err}"
    );

    let y = Column::new("y".into(), [0.5, 1.5]);
    let dd = HistogramDdOptions::default()
        .bins(vec![Bins::Count(2); 2])
        .ranges([None::<(f64, f64)>; 3]);
    let err = histogramdd(&[x.clone(), y], None, &dd)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("one `Some((min, max))` or `None` per column"),
        "{err}"
    );

    let options = AccumulatorOptions::default();
    let err = polars_gpu_hist::Histogram::new(vec![Axis::regular(2, 0.0, 1.0)], options)
        .unwrap()
        .fill(
            std::slice::from_ref(x.as_materialized_series()),
            Some(x.as_materialized_series()),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("make it with `Storage::Weight`"), "{err}");
    let inf = Column::new("x".into(), [0.0, f64::INFINITY]);
    let err = histogram(&inf, None, &HistogramOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("pass `range: Some((min, max))`"),
        "{err}"
    );
}

#[test]
fn unsupported_dtype_is_an_error_naming_it() {
    let s = Column::new("s".into(), ["a", "b"]);
    let err = histogram(&s, None, &HistogramOptions::default()).unwrap_err();
    assert!(err.to_string().contains("String"), "{err}");
}

#[test]
fn more_than_u32_rows_per_bin_would_not_wrap() {
    // The private u32 counters are flushed long before 2^32; check the flush path on a column
    // big enough to span several tasks.
    let n = 3_000_000usize;
    let s = Column::new("x".into(), vec![1u8; n]);
    let opts = HistogramOptions::default().bins(Bins::Count(1));
    assert_eq!(
        counts_u64(&histogram_frame(&s, None, &opts).unwrap()),
        vec![n as u64]
    );
}

/// Time bins from Rust (`Bins::every`) and from Python's shape (`{"every": "1w"}`): daily bins
/// of a Date column, counted as the days' rows; a width on a Float column names the fix.
#[test]
fn time_bins_from_rust_and_from_the_python_shape() {
    // 2024-01-01 (a Monday, day 19723) .. 2024-01-10, one row per day, two on the 3rd.
    let days: Vec<i32> = (19_723..19_733).chain([19_725]).collect();
    let dates = Column::new("d".into(), days).cast(&DataType::Date).unwrap();
    let daily = HistogramOptions::default().bins(Bins::every("1d"));
    let out = histogram_frame(&dates, None, &daily).unwrap();
    assert_eq!(counts_u64(&out), vec![1, 1, 2, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(out.column("bin_start").unwrap().dtype(), &DataType::Date);
    let weekly: HistogramOptions = serde_json::from_str(r#"{"bins": {"every": "1w"}}"#).unwrap();
    assert_eq!(weekly.bins, Bins::every("1w"));
    assert_eq!(
        counts_u64(&histogram_frame(&dates, None, &weekly).unwrap()),
        vec![8, 3]
    );
    let floats = Column::new("x".into(), [0.5, 1.5]);
    let message = histogram_frame(&floats, None, &daily)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("`Bins::every(\"1d\")` names time bins"),
        "{message}"
    );
}
