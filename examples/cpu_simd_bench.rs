//! ns/row of the CPU backend's SIMD loops (bin indices, extremes) on every path this CPU runs,
//! per value type, and whole CPU histograms through the public API on 1 and 2 threads.
//!
//! `cargo run --release --example cpu_simd_bench -- [log2 rows, 25] [repeats, 5] [loops|whole|all]`
//!
//! The loops are measured on every supported path; whole histograms run on the process's path:
//! set `POLARS_GPU_HIST_SIMD=scalar` to compare.

use std::time::Instant;

use polars::prelude::*;
use polars_gpu_hist::bins::{BinSpec, Binning, Closed, EdgeBins, Extremes, Range, ValueKind};
use polars_gpu_hist::cpu::index::count_interleaved;
use polars_gpu_hist::cpu::simd::{edge_bins_on, min_max_on, uniform_bins_on, Isa};
use polars_gpu_hist::input::Value;
use polars_gpu_hist::{Bins, Device, HistogramOptions, Scalar};

/// Rows per block, as the CPU backend hands them over.
const BLOCK: usize = polars_gpu_hist::cpu::BLOCK;

/// SplitMix64 and Box-Muller: reproducible data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit().max(1e-300), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// The best of `reps` runs of `f`, in ns per row.
fn ns_per_row(rows: usize, reps: usize, mut f: impl FnMut() -> u64) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        std::hint::black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    best * 1e9 / rows as f64
}

/// Bin indices of `xs` a block at a time on `isa`, as the counting loop asks for them.
fn index_all<T: Value>(isa: Isa, spec: &BinSpec, xs: &[T], out: &mut [u32]) -> u64 {
    let mut acc = 0u64;
    for c in xs.chunks(BLOCK) {
        match spec {
            BinSpec::Uniform64(u) => uniform_bins_on(isa, u, c, out),
            BinSpec::Uniform32(u) => uniform_bins_on(isa, u, c, out),
            BinSpec::Edges(e) => edge_bins_on(isa, e, c, out),
            BinSpec::Integers(_) | BinSpec::Half(_) => unreachable!("no such bins here"),
        }
        acc += out[0] as u64;
    }
    acc
}

fn equal_bins(
    closed: Closed,
    range: Option<(f64, f64)>,
    kind: ValueKind,
    ext: Extremes,
) -> BinSpec {
    let range = range.map(|(lo, hi)| Range::new(lo, hi));
    BinSpec::resolve(&Binning::Count(256), range, closed, kind, || Ok(ext)).expect("bins")
}

/// One line: the index loop of `spec` over `xs` on every path.
fn loop_line<T: Value>(name: &str, spec: &BinSpec, xs: &[T], paths: &[Isa], reps: usize) {
    let mut out = vec![0u32; BLOCK];
    let mut line = format!("  {name:44}");
    for &isa in paths {
        let t = ns_per_row(xs.len(), reps, || index_all(isa, spec, xs, &mut out));
        line += &format!("  {} {t:5.2}", isa.name());
    }
    println!("{line}");
}

fn min_max_line<T: Value>(name: &str, xs: &[T], paths: &[Isa], reps: usize) {
    let mut line = format!("  {name:44}");
    for &isa in paths {
        let t = ns_per_row(xs.len(), reps, || {
            min_max_on(isa, xs).map_or(0, |m| m.0.to_f64() as u64)
        });
        line += &format!("  {} {t:5.2}", isa.name());
    }
    println!("{line}");
}

fn loops(dist: &str, xs: &[f64], paths: &[Isa], reps: usize) {
    let n = xs.len();
    let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    // Integers as a temporal column holds them: microseconds over about a day.
    let ints: Vec<i64> = xs.iter().map(|&x| (x * 8.64e10) as i64).collect();
    let (lo, hi) = min_max_on(Isa::Scalar, xs).expect("values");
    let (lo32, hi32) = min_max_on(Isa::Scalar, &xs32).expect("values");
    let (ilo, ihi) = min_max_on(Isa::Scalar, &ints).expect("values");
    let mut rng = Rng(11);
    let mut uneven: Vec<f64> = (0..257).map(|_| rng.unit()).collect();
    uneven.sort_by(f64::total_cmp);
    (uneven[0], uneven[256]) = (0.0, 1.0);
    let geometric: Vec<f64> = (0..=256)
        .map(|i| 1e-6 * 1e6f64.powf(i as f64 / 256.0))
        .collect();
    let (f64_kind, f32_kind, int_kind) =
        (ValueKind::Float64, ValueKind::Float32, ValueKind::Integer);
    println!("\n{dist}: ns/row, one thread, 256 bins");
    min_max_line("min_max f64", xs, paths, reps);
    min_max_line("min_max f32", &xs32, paths, reps);
    min_max_line("min_max i64", &ints, paths, reps);
    let float64 = [
        (
            "f64 left, range=(0,1)",
            equal_bins(Closed::Left, Some((0.0, 1.0)), f64_kind, Extremes::Empty),
        ),
        (
            "f64 left, range from the data",
            equal_bins(Closed::Left, None, f64_kind, Extremes::Float64(lo, hi)),
        ),
        (
            "f64 right (Polars), from the data",
            equal_bins(Closed::Right, None, f64_kind, Extremes::Float64(lo, hi)),
        ),
        (
            "f64 257 even edges",
            BinSpec::Edges(EdgeBins::new(
                (0..=256).map(|i| i as f64 / 256.0).collect(),
                Closed::Left,
            )),
        ),
        (
            "f64 257 uneven edges",
            BinSpec::Edges(EdgeBins::new(uneven, Closed::Left)),
        ),
        (
            "f64 257 geometric edges (binary search)",
            BinSpec::Edges(EdgeBins::new(geometric, Closed::Left)),
        ),
    ];
    for (name, spec) in &float64 {
        loop_line(name, spec, xs, paths, reps);
    }
    let float32 = [
        (
            "f32 left, range=(0,1)",
            equal_bins(Closed::Left, Some((0.0, 1.0)), f32_kind, Extremes::Empty),
        ),
        (
            "f32 left, range from the data",
            equal_bins(Closed::Left, None, f32_kind, Extremes::Float32(lo32, hi32)),
        ),
    ];
    for (name, spec) in &float32 {
        loop_line(name, spec, &xs32, paths, reps);
    }
    let extremes = Extremes::Integer(ilo as i128, ihi as i128);
    let int_left = equal_bins(Closed::Left, None, int_kind, extremes);
    let int_right = equal_bins(Closed::Right, None, int_kind, extremes);
    loop_line(
        "i64 left, range from the data",
        &int_left,
        &ints,
        paths,
        reps,
    );
    loop_line(
        "i64 right (Polars), from the data",
        &int_right,
        &ints,
        paths,
        reps,
    );
    let ints32: Vec<i32> = ints.iter().map(|&x| (x / 100_000) as i32).collect();
    let (lo32i, hi32i) = min_max_on(Isa::Scalar, &ints32).expect("values");
    let int32_left = equal_bins(
        Closed::Left,
        None,
        int_kind,
        Extremes::Integer(lo32i as i128, hi32i as i128),
    );
    loop_line(
        "i32 left, range from the data",
        &int32_left,
        &ints32,
        paths,
        reps,
    );

    let BinSpec::Uniform64(u) = &float64[0].1 else {
        unreachable!("equal float64 bins")
    };
    let mut idx = vec![0u32; n];
    for (c, o) in xs.chunks(BLOCK).zip(idx.chunks_mut(BLOCK)) {
        uniform_bins_on(Isa::best(), u, c, o);
    }
    let mut replicas = vec![0u32; 4 * 257];
    let t = ns_per_row(n, reps, || {
        replicas.fill(0);
        for c in idx.chunks(BLOCK) {
            count_interleaved(c, &mut replicas, 257);
        }
        replicas[0] as u64
    });
    println!("  {:44}  {t:.2}", "count_interleaved (indices from memory)");
}

/// Whole histograms through the public API on the process's path: 256 bins, 1 and 2 threads.
fn whole(dist: &str, xs: &[f64], reps: usize) {
    let n = xs.len();
    let series = Column::new("x".into(), xs);
    let series32 = series.cast(&DataType::Float32).expect("float32");
    let unit = Some((Scalar::Float(0.0), Scalar::Float(1.0)));
    let cases = [
        ("f64 left, range=(0,1)", &series, unit, Closed::Left),
        ("f64 left, range from the data", &series, None, Closed::Left),
        (
            "f64 right (Polars), from the data",
            &series,
            None,
            Closed::Right,
        ),
        (
            "f32 left, range from the data",
            &series32,
            None,
            Closed::Left,
        ),
    ];
    println!(
        "\n{dist}: whole histograms of 2^{} rows, 256 bins, {} path, ms",
        n.trailing_zeros(),
        Isa::active().name()
    );
    for (name, values, range, closed) in cases {
        let mut options = HistogramOptions::default()
            .bins(Bins::Count(256))
            .closed(closed)
            .device(Device::Cpu);
        options.range = range;
        let mut line = format!("  {name:44}");
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            let ns = ns_per_row(n, reps, || {
                let hist = pool.install(|| polars_gpu_hist::histogram(values, None, &options));
                hist.expect("a histogram").len() as u64
            });
            line += &format!("  {threads} thread(s) {:6.1}", ns * n as f64 / 1e6);
        }
        println!("{line}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| {
        args.get(i).map_or(default, |a| {
            a.parse()
                .expect("arguments: log2 rows, repeats, loops|whole|all")
        })
    };
    let (log2n, reps) = (number(0, 25), number(1, 5));
    let sections = args.get(2).map_or("all", String::as_str);
    let n = 1usize << log2n;
    let paths = Isa::supported();
    println!(
        "2^{log2n} rows, blocks of {BLOCK}, best of {reps}; paths {paths:?}, active {:?}",
        Isa::active()
    );
    let mut rng = Rng(7);
    for dist in ["uniform", "normal", "degenerate"] {
        let xs: Vec<f64> = (0..n)
            .map(|_| match dist {
                "uniform" => rng.unit(),
                "normal" => (0.5 + 0.1 * rng.normal()).clamp(0.0, 1.0),
                _ => 0.3,
            })
            .collect();
        if sections != "whole" {
            loops(dist, &xs, &paths, reps);
        }
        if sections != "loops" {
            whole(dist, &xs, reps);
        }
    }
}
