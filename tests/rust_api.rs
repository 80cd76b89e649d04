//! The public Rust API over Series: chunked columns, nulls, weights, options from JSON.

use polars::prelude::*;
use polars_gpu_hist::{histogram, histogram_frame, Bins, Closed, HistogramOptions};

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
    let mut a = Series::new("x".into(), [Some(0.0), None, Some(1.0), Some(2.0)]);
    let b = Series::new("x".into(), [Some(3.0), Some(f64::NAN), None, Some(2.5)]);
    a.append(&b).unwrap();
    assert_eq!(a.n_chunks(), 2);
    let opts = HistogramOptions {
        bins: Bins::Count(3),
        ..Default::default()
    };
    let chunked = histogram_frame(&a, None, &opts).unwrap();
    let single = histogram_frame(&a.rechunk(), None, &opts).unwrap();
    assert_eq!(counts_u64(&chunked), vec![1, 1, 3]);
    assert!(chunked.equals(&single));
}

#[test]
fn weights_chunked_differently_from_values() {
    let mut x = Series::new("x".into(), [0.0, 1.0, 2.0]);
    x.append(&Series::new("x".into(), [3.0, 4.0])).unwrap();
    let mut w = Series::new("w".into(), [1.0]);
    w.append(&Series::new(
        "w".into(),
        [Some(2.0), None, Some(8.0), Some(16.0)],
    ))
    .unwrap();
    let opts = HistogramOptions {
        bins: Bins::edges([0.0, 2.0, 5.0]),
        ..Default::default()
    };
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
    let s = Series::new("v".into(), [0i32, 1, 2, 3]);
    let out = histogram(&s, None, &opts).unwrap();
    assert_eq!(out.name().as_str(), "v");
    assert_eq!(out.len(), 2);
}

#[test]
fn unsupported_dtype_is_an_error_naming_it() {
    let s = Series::new("s".into(), ["a", "b"]);
    let err = histogram(&s, None, &HistogramOptions::default()).unwrap_err();
    assert!(err.to_string().contains("String"), "{err}");
}

#[test]
fn more_than_u32_rows_per_bin_would_not_wrap() {
    // The private u32 counters are flushed long before 2^32; check the flush path on a column
    // big enough to span several tasks.
    let n = 3_000_000usize;
    let s = Series::new("x".into(), vec![1u8; n]);
    let opts = HistogramOptions {
        bins: Bins::Count(1),
        ..Default::default()
    };
    assert_eq!(
        counts_u64(&histogram_frame(&s, None, &opts).unwrap()),
        vec![n as u64]
    );
}
