#!/usr/bin/env bash
# The whole GPU check in one call on the device machine (no network there):
#   make gpu-stage            # here: wheels into .gpu/ (our abi3 wheel, Polars, hypothesis, peers.py)
#   device run: bash scripts/gpu_check.sh [check|bench|all]   carrying .gpu
# check: build info, the `gpu` tests, compute-sanitizer memcheck + racecheck on every kernel family.
# bench: the peers (../shared/bench/peers.py) and our benchmark in the same run, a table last.
set -uo pipefail
what=${1:-all}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 POLARS_GPU_HIST_CACHE=/tmp/pgh-cache
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl || exit 1
export PYTHONPATH=/tmp/site
status=0

echo "== build info"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
nvcc --version | tail -1
python3 -c "import polars, polars_gpu_hist as g; print('polars', polars.__version__, 'polars-gpu-hist', g.__version__); from polars_gpu_hist import _internal as i; print(i.gpu_info())"

echo "== kernels compiled for every column type (NVRTC, in parallel, into the disk cache)"
python3 - <<'PY'
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np


def warm(dtype: str) -> float:
    import cupy as cp

    import polars_gpu_hist as gh

    t0 = time.perf_counter()
    gh.histogram(cp.arange(64).astype(dtype), 4)
    return time.perf_counter() - t0


types = ["float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
         "uint64"]
with ProcessPoolExecutor(len(types)) as pool:
    for dtype, s in zip(types, pool.map(warm, types)):
        print(f"  {dtype}: {s:.1f} s", flush=True)
PY

if [[ $what == check || $what == all ]]; then
  echo "== gpu tests"
  python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py tests/test_accumulator_gpu.py 2>&1 | tee "$OUT/pytest_gpu.log" | tail -25
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    compute-sanitizer --tool $tool --error-exitcode 3 python3 scripts/sanitize_kernels.py \
      > "$OUT/sanitizer_$tool.log" 2>&1
    rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|MISMATCH" "$OUT/sanitizer_$tool.log" | tail -3
    echo "$tool exit code $rc"; [[ $rc == 0 ]] || status=1
  done
fi

if [[ $what == bench || $what == all ]]; then
  echo "== peers"
  (cd "$OUT" && python3 "$OLDPWD/.gpu/peers.py" gpu > "$OUT/peers.log" 2>&1) || status=1
  tail -3 "$OUT/peers.log"
  echo "== ours"
  python3 benches/gpu_bench.py ${BENCH_ARGS:-} > "$OUT/gpu_bench.log" 2>&1 || status=1
  echo "== every family forced (scripts/kernel_lab.py)"
  python3 scripts/kernel_lab.py --variants 4 > "$OUT/kernel_lab.log" 2>&1 || status=1
  tail -n 60 "$OUT/kernel_lab.log" > "$OUT/kernel_lab_table.md"
  echo "== ours beside the peers"
  python3 benches/report.py "$OUT" | tee "$OUT/report.md"
fi
exit $status
