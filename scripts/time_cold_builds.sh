#!/usr/bin/env bash
# Times what a new user waits for on this machine (issue 33), each from a clean clone of HEAD:
#   demo:  `make demo`, split into installing the demo's packages, the release build, the run;
#   rust:  a cold `cargo check` of the Rust guide's two quick starts (docs/guides/rust.md) (eager, and lazy with the
#          `lazy` feature), each a new crate depending on the clone, with its own target folder.
# Usage: scripts/time_cold_builds.sh [demo|rust|all] [WORKDIR]  (WORKDIR: /tmp/cold-builds)
# FRESH_CACHES=1 also starts pip and cargo with empty download caches, as a fresh machine does
# (downloads then count; the registries must be reachable).
set -euo pipefail
what=${1:-all}
work=${2:-/tmp/cold-builds}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
rm -rf "$work" && mkdir -p "$work"
git clone -q "$repo" "$work/clone"
if [[ ${FRESH_CACHES:-0} == 1 ]]; then
  export PIP_NO_CACHE_DIR=1 CARGO_HOME="$work/cargo-home"
  export PATH="${HOME}/.cargo/bin:$PATH"  # rustup's proxies; the toolchain stays installed
fi
stamp() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.0f} s')" "$1" "$(stamp)"; }
echo "machine: $(nproc) cores, $(git -C "$repo" rev-parse --short HEAD), $(date -u +%FT%TZ)"

if [[ $what == demo || $what == all ]]; then
  cd "$work/clone"
  t0=$(stamp); make -s .venv/.demo > "$work/demo-install.log" 2>&1; echo "demo: install $(since "$t0")"
  t0=$(stamp); make -s develop > "$work/demo-build.log" 2>&1; echo "demo: release build $(since "$t0")"
  t0=$(stamp); make -s demo ARGS="--plot hist.png" > "$work/demo-run.log" 2>&1; echo "demo: run $(since "$t0")"
  tail -3 "$work/demo-run.log"
fi

if [[ $what == rust || $what == all ]]; then
  for flavour in eager lazy; do
    crate="$work/quickstart-$flavour"
    mkdir -p "$crate/src"
    features=""
    [[ $flavour == lazy ]] && features=', features = ["lazy"]'
    cat > "$crate/Cargo.toml" <<TOML
[package]
name = "quickstart-$flavour"
version = "0.1.0"
edition = "2021"

[dependencies]
polars = { version = "0.55.2", default-features = false, features = ["dtype-full"$([[ $flavour == lazy ]] && echo ', "lazy"')] }
polars-gpu-hist = { path = "$work/clone"$features }
TOML
    if [[ $flavour == eager ]]; then
      cat > "$crate/src/main.rs" <<'RS'
use polars::prelude::*;
use polars_gpu_hist::{histogram_frame, Bins, HistogramOptions};

fn main() -> PolarsResult<()> {
    let x = Column::new("x".into(), [0.5, 1.5, 1.7, 9.0]);
    let opts = HistogramOptions::default().bins(Bins::edges([0.0, 1.0, 2.0, 10.0]));
    let hist: DataFrame = histogram_frame(&x, None, &opts)?;
    println!("{hist:?}");
    Ok(())
}
RS
    else
      cat > "$crate/src/main.rs" <<'RS'
use polars::prelude::*;
use polars_gpu_hist::lazy::GpuHistExt;
use polars_gpu_hist::{Bins, HistogramOptions};

fn main() -> PolarsResult<()> {
    let df = df!("sensor" => [1, 1, 2], "reading" => [0.5, 1.5, 9.0])?;
    let opts = HistogramOptions::default().bins(Bins::Count(4));
    let per_group = df
        .lazy()
        .group_by([col("sensor")])
        .agg([col("reading").gpu_hist().histogram(opts)])
        .collect()?;
    println!("{per_group:?}");
    Ok(())
}
RS
    fi
    cd "$crate"
    t0=$(stamp)
    cargo check -q > "$work/check-$flavour.log" 2>&1 || { tail -20 "$work/check-$flavour.log"; exit 1; }
    echo "rust: cold cargo check, $flavour quick start $(since "$t0")"
  done
fi
