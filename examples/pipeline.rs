//! Histograms inside a lazy Rust Polars query (no Python): one per sensor with `group_by`, and
//! all sensors in one pass with `.by(...)`.
//!
//! cargo run --release --features lazy --example pipeline

use polars::prelude::*;
use polars_gpu_hist::lazy::GpuHistExt;
use polars_gpu_hist::{Bins, HistogramOptions};

fn main() -> PolarsResult<()> {
    let n = 1_000_000i32;
    let readings = df!(
        "sensor" => (0..n).map(|i| i % 3).collect::<Vec<_>>(),
        "reading" => (0..n).map(|i| ((i as i64 * 7919) % 1000) as f64 / 10.0).collect::<Vec<_>>(),
    )?
    .lazy();
    let options = HistogramOptions::default().bins(Bins::edges([0.0, 10.0, 25.0, 50.0, 100.0]));

    // A list of bins per sensor, beside any other aggregation.
    let per_sensor = readings
        .clone()
        .filter(col("reading").gt(lit(1.0)))
        .group_by_stable([col("sensor")])
        .agg([
            col("reading")
                .gpu_hist()
                .histogram(options.clone())
                .alias("histogram"),
            col("reading").mean().alias("mean"),
        ])
        .collect()?;
    println!("{per_sensor}");

    // Every sensor's bins in one pass over the column: one row per sensor and bin.
    let long = readings
        .select([col("reading")
            .gpu_hist()
            .by([col("sensor")])
            .histogram(options)])
        .unnest(by_name(["reading"], true, false), None)
        .collect()?;
    println!("{long}");
    Ok(())
}
