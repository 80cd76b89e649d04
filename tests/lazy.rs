//! `polars_gpu_hist::lazy`: the histograms as methods of expressions in lazy Rust queries
//! (`col("x").gpu_hist().histogram(options)`), equal to the eager functions on the same data.
#![cfg(feature = "lazy")]

use polars::prelude::*;
use polars_gpu_hist::lazy::GpuHistExt;
use polars_gpu_hist::{Bins, Closed, HistogramDdOptions, HistogramOptions};

fn frame() -> DataFrame {
    let n = 10_000usize;
    df!(
        "g" => (0..n).map(|i| (i * 7 % 5) as i32).collect::<Vec<_>>(),
        "x" => (0..n).map(|i| ((i * 7919) % 1000) as f64 / 10.0).collect::<Vec<_>>(),
        "y" => (0..n).map(|i| ((i * 104_729) % 997) as f32).collect::<Vec<_>>(),
        "w" => (0..n).map(|i| (i % 3) as f64 * 0.5).collect::<Vec<_>>(),
    )
    .unwrap()
}

fn options(bins: usize) -> HistogramOptions {
    HistogramOptions::default()
        .bins(Bins::Count(bins))
        .range(0.0, 100.0)
}

fn column(df: &DataFrame, name: &str) -> Column {
    df.column(name).unwrap().clone()
}

fn series(df: &DataFrame, name: &str) -> Series {
    column(df, name).as_materialized_series().clone()
}

#[test]
fn select_gives_the_eager_histogram() {
    let df = frame();
    for weights in [None, Some("w")] {
        let opts = options(7).closed(Closed::Right);
        let out = df
            .clone()
            .lazy()
            .select([match weights {
                Some(w) => col("x").gpu_hist().weights(col(w)),
                None => col("x").gpu_hist(),
            }
            .histogram(opts.clone())])
            .collect()
            .unwrap();
        let w = weights.map(|w| column(&df, w));
        let eager = polars_gpu_hist::histogram(&column(&df, "x"), w.as_ref(), &opts).unwrap();
        assert_eq!(series(&out, "x"), eager);
    }
}

#[test]
fn agg_gives_each_groups_histogram() {
    let df = frame();
    let out = df
        .clone()
        .lazy()
        .group_by_stable([col("g")])
        .agg([col("x").gpu_hist().weights(col("w")).histogram(options(4))])
        .collect()
        .unwrap();
    assert_eq!(out.height(), 5);
    let keys = series(&out, "g");
    let lists = series(&out, "x");
    for (row, key) in keys.i32().unwrap().into_no_null_iter().enumerate() {
        let part = df.filter(&series(&df, "g").equal(key).unwrap()).unwrap();
        let eager =
            polars_gpu_hist::histogram(&column(&part, "x"), Some(&column(&part, "w")), &options(4))
                .unwrap();
        let got = lists.list().unwrap().get_as_series(row).unwrap();
        assert_eq!(got, eager, "group {key}");
    }
}

#[test]
fn by_in_one_pass_equals_the_eager_by() {
    let df = frame();
    let out = df
        .clone()
        .lazy()
        .select([col("x").gpu_hist().by([col("g")]).histogram(options(5))])
        .collect()
        .unwrap();
    let eager =
        polars_gpu_hist::histogram_by(&column(&df, "x"), &column(&df, "g"), None, &options(5))
            .unwrap();
    assert_eq!(series(&out, "x"), eager);
    assert_eq!(eager.len(), 5 * 5);
}

#[test]
fn by_several_keys_equals_the_eager_one_and_a_struct_key() {
    let df = frame()
        .lazy()
        .with_column((col("g") % lit(2)).alias("h"))
        .collect()
        .unwrap();
    let keys = [column(&df, "g"), column(&df, "h")];
    let eager =
        polars_gpu_hist::histogram_by_keys(&column(&df, "x"), &keys, None, &options(5)).unwrap();
    let fields: Vec<String> = eager
        .struct_()
        .unwrap()
        .fields_as_series()
        .iter()
        .map(|s| s.name().to_string())
        .collect();
    assert_eq!(fields, ["g", "h", "bin_start", "bin_end", "count"]);
    for keys in [
        vec![col("g"), col("h")],
        vec![as_struct(vec![col("g"), col("h")])],
    ] {
        let out = df
            .clone()
            .lazy()
            .select([col("x").gpu_hist().by(keys).histogram(options(5))])
            .collect()
            .unwrap();
        assert_eq!(series(&out, "x"), eager);
    }
    // g determines h: as many groups as g has.
    assert_eq!(eager.len(), 5 * 5);
}

#[test]
fn histogramdd_equals_the_eager_one_and_checks_when_planned() {
    let df = frame();
    let opts = HistogramDdOptions::default().bins([Bins::Count(3), Bins::Count(4)]);
    let out = df
        .clone()
        .lazy()
        .select([col("x").gpu_hist().histogramdd([col("y")], opts.clone())])
        .collect()
        .unwrap();
    let eager =
        polars_gpu_hist::histogramdd(&[column(&df, "x"), column(&df, "y")], None, &opts).unwrap();
    assert_eq!(series(&out, "x"), eager);

    let three = df
        .clone()
        .lazy()
        .select([col("x")
            .gpu_hist()
            .histogramdd([col("y"), col("w")], opts.clone())])
        .collect_schema();
    let err = three.unwrap_err().to_string();
    assert!(err.contains("`bins` has 2 entries for 3 columns"), "{err}");

    // `by` groups 1-D histograms only: said when the query is planned.
    let by = df
        .lazy()
        .select([col("x")
            .gpu_hist()
            .by([col("g")])
            .histogramdd([col("y")], opts)])
        .collect_schema();
    let err = by.unwrap_err().to_string();
    assert!(err.contains("`by` groups a 1-D histogram"), "{err}");
}

#[test]
fn unsupported_dtypes_fail_when_the_query_is_planned() {
    let df = df!("s" => ["a", "b"]).unwrap();
    let err = df
        .lazy()
        .select([col("s").gpu_hist().histogram(options(2))])
        .collect_schema()
        .unwrap_err();
    assert!(err.to_string().contains("String"), "{err}");
}
