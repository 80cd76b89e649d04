#!/usr/bin/env bash
# Dask on a GPU host of 2 or 4 GPUs in one call (the host has no network, nor Polars or Dask):
#   here:   make gpu-stage-dask WHEEL=path/to/polars_gpu_hist-*.whl   (scripts/stage_dask.sh)
#   device: kind nvidia-h100-x2 (or -x4), carry [".gpu-dask"]:
#           bash scripts/dask_gpu_check.sh [check|cost|bench|files|all]
# check: the `gpu` Dask tests (two workers, one per GPU), the Histogram's GPU tests and arrays on
# both GPUs of one process (tests/engine/test_multi_device_gpu.py), at most 170 s. cost: one partition's
# cost (benches/partition_cost.py, COST_ARGS add to it), at most 90 s. bench: cost, then
# benches/dask_bench.py --gpus <the host's GPUs> (BENCH_ARGS add to it), at most 350 s, its
# JSON written after each cluster to $OUT/dask_bench.json, so a run cut short still reports.
# files (issue 52, alone: not part of all): the gpu tests of polars_gpu_hist.dask.histogram_scan,
# then benches/dask_files.py on 16 GiB of Parquet files (FILES_ARGS add to it) on 1, 2 and 4 GPUs
# (those the host has) beside the CPU cluster, at most 480 s, its JSON in $OUT/dask_files.json.
# All of them together stay inside the device's 600 s.
set -uo pipefail
what=${1:-all}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 POLARS_GPU_HIST_CACHE=/tmp/pgh-cache
site=/tmp/site-dask
if [[ ! -e $site/.unpacked ]]; then  # a warm machine keeps it
  python3 - "$site" .gpu-dask/*.tar.xz <<'PY' || exit 1
import sys, tarfile
safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
for archive in sys.argv[2:]:
    with tarfile.open(archive) as t:
        t.extractall(sys.argv[1], **safe)
open(f"{sys.argv[1]}/.unpacked", "w").close()
PY
fi
# The tree's own Python package, with the staged wheel's native module and kernels.
cp "$site"/polars_gpu_hist/* python/polars_gpu_hist/ || exit 1
export PYTHONPATH=$PWD/python:$site
gpus=$(nvidia-smi -L | grep -c '^GPU ')
echo "GPUs: $gpus"
python3 -c "import dask, distributed, polars, polars_gpu_hist as g; print('dask', dask.__version__, 'polars', polars.__version__, 'gpu', g.gpu_available())" || exit 1
python3 -c "import dask_cuda; print('dask_cuda', dask_cuda.__version__)" 2>/dev/null || echo "dask_cuda: not installed (one Nanny per GPU instead)"
status=0

if [[ $what == check || $what == all ]]; then
  echo "== dask gpu tests"
  # No conftest: it needs hypothesis, which is not staged (the carry limit). Without it nothing is
  # marked `gpu` (the conftest marks the *_gpu.py files), so the files named run whole, each test
  # checking for its GPUs itself.
  timeout 170 python3 -m pytest -q -p no:cacheprovider --noconftest -rs \
    tests/dask/test_dask_gpu.py tests/histogram/test_histogram_gpu.py tests/histogram/test_histogram_flow_gpu.py \
    tests/dask/test_dask_device_partials_gpu.py tests/engine/test_multi_device_gpu.py 2>&1 | tee "$OUT/pytest_dask_gpu.log" | tail -25
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
fi

if [[ $what == files ]]; then
  echo "== dask file scans: gpu tests"
  timeout 90 python3 -m pytest -q -p no:cacheprovider --noconftest -rs tests/dask/test_dask_scan_gpu.py \
    2>&1 | tee "$OUT/pytest_dask_scan_gpu.log" | tail -8
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  echo "== dask file scans: benches/dask_files.py"
  # shellcheck disable=SC2086
  timeout 480 python3 benches/dask_files.py --gpus 1,2,4 --gib 16 --repeats 2 \
    --out "$OUT/dask_files.json" ${FILES_ARGS:-} > /dev/null 2> "$OUT/dask_files.log" || status=1
  grep -v "distributed\." "$OUT/dask_files.log" | tail -8
  exit $status
fi

if [[ $what == cost || $what == bench || $what == all ]]; then
  echo "== one partition's cost beyond its count (one GPU)"
  # shellcheck disable=SC2086
  timeout 90 python3 benches/partition_cost.py --profile 0 --json "$OUT/partition_cost.json" \
    ${COST_ARGS:-} 2>&1 | tee "$OUT/partition_cost.log" | tail -40
fi

if [[ $what == bench || $what == all ]]; then
  echo "== dask bench"
  # shellcheck disable=SC2086
  timeout 350 python3 benches/dask_bench.py --gpus "$gpus" --out "$OUT/dask_bench.json" \
    ${BENCH_ARGS:-} > "$OUT/dask_bench.stdout" 2> "$OUT/dask_bench.log" || status=1
  tail -5 "$OUT/dask_bench.log"
  python3 - "$OUT/dask_bench.json" <<'PY'
import json, sys
try:
    out = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"no bench JSON: {e}")
print(json.dumps({k: out.get(k) for k in ("scaling", "same_counts_everywhere", "equal_to_numpy", "total_s")}, indent=1))
for c in out["clusters"]:
    print(c["gpus"], c.get("error") or c.get("skipped") or "", c.get("copy_rates"), c.get("cluster_s"))
    for r in c.get("runs", []):
        print("  ", r["residency"], r["bins"], r["median_s"], r["where_time_goes"])
    print("   alone:", c.get("one_partition_alone"))
PY
fi
exit $status
