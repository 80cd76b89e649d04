//! `cargo bench`: whole calls of the public Rust API, as a Rust Polars pipeline makes them, on
//! the CPU (all cores) and, where one is found, the GPU. The Python benchmarks beside this file
//! time the same work from Python against the peers.
//!
//! `cargo bench --bench histogram -- <filter>`; `--features lazy` adds the lazy `group_by` rows.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use polars::prelude::*;
use polars_gpu_hist::{
    histogram, histogram_by, histogramdd, Bins, Device, HistogramDdOptions, HistogramOptions,
};

const ROWS: usize = 1 << 22;

/// Reproducible values in [0, 1): SplitMix64, no dependency.
fn uniform(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as f64 / 2f64.powi(64)
        })
        .collect()
}

fn column(name: &str, n: usize, seed: u64) -> Column {
    Column::new(name.into(), uniform(n, seed))
}

/// The backends to time: the CPU always, the GPU when this machine has one.
fn devices() -> Vec<Device> {
    let mut devices = vec![Device::Cpu];
    if polars_gpu_hist::gpu_available() {
        devices.push(Device::Gpu);
    }
    devices
}

fn one_dimension(c: &mut Criterion) {
    let x = column("x", ROWS, 1);
    let mut group = c.benchmark_group("1-D, 2^22 float64");
    group.throughput(Throughput::Elements(ROWS as u64));
    let bins = [
        ("256 bins, range", Bins::Count(256), true),
        ("256 bins, data range", Bins::Count(256), false),
        (
            "257 uneven edges",
            Bins::edges((0..=256).map(|i| (i as f64 / 256.0).powi(2))),
            false,
        ),
        ("1M bins, range", Bins::Count(1 << 20), true),
    ];
    for device in devices() {
        for (label, bins, ranged) in &bins {
            let mut options = HistogramOptions::default()
                .bins(bins.clone())
                .device(device);
            if *ranged {
                options = options.range(0.0, 1.0);
            }
            group.bench_with_input(
                BenchmarkId::new(format!("{device:?}"), label),
                &options,
                |b, options| b.iter(|| histogram(black_box(&x), None, options).unwrap()),
            );
        }
    }
    group.finish();
}

fn small_calls(c: &mut Criterion) {
    let mut group = c.benchmark_group("fixed cost, 10 bins");
    for n in [100, 10_000] {
        let x = column("x", n, 2);
        let options = HistogramOptions::default().device(Device::Cpu);
        group.bench_with_input(BenchmarkId::from_parameter(n), &x, |b, x| {
            b.iter(|| histogram(black_box(x), None, &options).unwrap())
        });
    }
    group.finish();
}

fn two_dimensions(c: &mut Criterion) {
    let columns = [column("x", ROWS, 3), column("y", ROWS, 4)];
    let mut group = c.benchmark_group("2-D, 2^22 float64 pairs");
    group.throughput(Throughput::Elements(ROWS as u64));
    for device in devices() {
        for bins in [64, 1024] {
            let options = HistogramDdOptions::default()
                .bins(vec![Bins::Count(bins); 2])
                .ranges([Some((0.0, 1.0)); 2])
                .device(device);
            group.bench_with_input(
                BenchmarkId::new(format!("{device:?}"), format!("{bins}x{bins}")),
                &options,
                |b, options| b.iter(|| histogramdd(black_box(&columns), None, options).unwrap()),
            );
        }
    }
    group.finish();
}

fn per_group(c: &mut Criterion) {
    let x = column("x", ROWS, 5);
    let keys = Column::new(
        "g".into(),
        (0..ROWS as u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9) % 1000) as i64)
            .collect::<Vec<_>>(),
    );
    let mut group = c.benchmark_group("1,000 groups, 2^22 rows, 64 bins");
    group.throughput(Throughput::Elements(ROWS as u64));
    for device in devices() {
        let options = HistogramOptions::default()
            .bins(Bins::Count(64))
            .range(0.0, 1.0)
            .device(device);
        group.bench_function(
            BenchmarkId::new("histogram_by", format!("{device:?}")),
            |b| b.iter(|| histogram_by(black_box(&x), &keys, None, &options).unwrap()),
        );
    }
    #[cfg(feature = "lazy")]
    {
        use polars_gpu_hist::lazy::GpuHistExt;
        let df = DataFrame::new_infer_height(vec![x, keys]).unwrap();
        let options = HistogramOptions::default()
            .bins(Bins::Count(64))
            .range(0.0, 1.0)
            .device(Device::Cpu);
        group.bench_function("lazy group_by().agg()", |b| {
            b.iter(|| {
                df.clone()
                    .lazy()
                    .group_by([col("g")])
                    .agg([col("x").gpu_hist().histogram(options.clone())])
                    .collect()
                    .unwrap()
            })
        });
        group.bench_function("lazy histogram_by", |b| {
            b.iter(|| {
                df.clone()
                    .lazy()
                    .select([col("x")
                        .gpu_hist()
                        .by([col("g")])
                        .histogram(options.clone())])
                    .collect()
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    one_dimension,
    small_calls,
    two_dimensions,
    per_group
);
criterion_main!(benches);
