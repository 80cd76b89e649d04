//! A histogram per group of a DataFrame, from a plain Rust Polars pipeline (no Python).
//!
//! cargo run --release --example pipeline

use polars::prelude::*;
use polars_gpu_hist::{histogram_frame, Bins, HistogramOptions};

fn main() -> PolarsResult<()> {
    let n = 1_000_000i32;
    let df = df!(
        "sensor" => (0..n).map(|i| i % 3).collect::<Vec<_>>(),
        "reading" => (0..n).map(|i| ((i as i64 * 7919) % 1000) as f64 / 10.0).collect::<Vec<_>>(),
    )?;
    let options = HistogramOptions {
        bins: Bins::Edges(vec![0.0, 10.0, 25.0, 50.0, 100.0]),
        ..Default::default()
    };
    let sensors = df.column("sensor")?.i32()?;
    for sensor in 0..3 {
        let part = df.filter(&sensors.equal(sensor))?;
        let readings = part.column("reading")?.as_materialized_series();
        let hist = histogram_frame(readings, None, &options)?;
        println!("sensor {sensor}\n{hist}");
    }
    Ok(())
}
