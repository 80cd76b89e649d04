//! What one small call costs on the host: `histogram` of 210 float64 rows into 64 bins, as
//! `group_by().agg()` calls it once per group. `cargo run --profile dev-fast --example call_cost`
use polars::prelude::*;
use polars_gpu_hist::{histogram, Bins, Device, HistogramOptions, Scalar};

fn main() {
    let x = Series::new(
        "x".into(),
        (0..210)
            .map(|i| (i as f64 * 0.618).fract())
            .collect::<Vec<_>>(),
    );
    let options = HistogramOptions {
        bins: Bins::Count(64),
        range: Some((Scalar::Float(0.0), Scalar::Float(1.0))),
        device: Device::Cpu,
        ..Default::default()
    };
    let calls = 200_000;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        for _ in 0..calls {
            let _ = std::hint::black_box(histogram(&x, None, &options).unwrap());
        }
        println!(
            "{:.3} us a call",
            t.elapsed().as_secs_f64() * 1e6 / calls as f64
        );
    }
}
