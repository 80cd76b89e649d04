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
  echo "== ours beside the peers"
  python3 benches/report.py "$OUT" | tee "$OUT/report.md"
fi
exit $status
