//! What one small call costs on the host, without Polars' FFI: `histogram` of 210 float64 rows
//! into 64 bins with a range, as `group_by().agg()` calls it once per group, and of 100 rows into
//! 10 bins with the range from the data, as the small-call benchmark calls it.
//! `cargo run --release --example call_cost`
use polars::prelude::*;
use polars_gpu_hist::{histogram, Bins, Device, HistogramOptions};

fn main() {
    let per_group = HistogramOptions::default()
        .bins(Bins::Count(64))
        .range(0.0, 1.0)
        .device(Device::Cpu);
    let small = HistogramOptions::default()
        .bins(Bins::Count(10))
        .device(Device::Cpu);
    measure("210 rows, 64 bins, a range", 210, &per_group);
    measure("100 rows, 10 bins, the range from the data", 100, &small);
}

fn measure(what: &str, rows: usize, options: &HistogramOptions) {
    let x = Column::new(
        "x".into(),
        (0..rows)
            .map(|i| (i as f64 * 0.618).fract())
            .collect::<Vec<_>>(),
    );
    let calls = 20_000;
    println!("{what}:");
    for _ in 0..3 {
        let t = std::time::Instant::now();
        for _ in 0..calls {
            let _ = std::hint::black_box(histogram(&x, None, options).unwrap());
        }
        let back_to_back = t.elapsed().as_secs_f64() * 1e6 / calls as f64;
        // Between Polars' calls its own code runs and ours leaves the caches: time calls 200 us
        // apart too (no thread pool is involved at these sizes).
        let mut apart = std::time::Duration::ZERO;
        for _ in 0..calls / 10 {
            std::thread::sleep(std::time::Duration::from_micros(200));
            let t = std::time::Instant::now();
            let _ = std::hint::black_box(histogram(&x, None, options).unwrap());
            apart += t.elapsed();
        }
        let apart = apart.as_secs_f64() * 1e6 / (calls / 10) as f64;
        println!("  {back_to_back:.2} us a call back to back, {apart:.2} us 200 us apart");
    }
}
