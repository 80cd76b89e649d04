#!/usr/bin/env bash
# Dask on the GPU host in one call (no network there):
#   make gpu-stage-dask       # here: our wheel, Polars and the Dask stack into .gpu-dask/
#   device run (kind nvidia-h200-x2): bash scripts/dask_gpu_check.sh [check|bench|all]  carrying .gpu-dask
# check: the `gpu` Dask tests (two workers, one per GPU: LocalCUDACluster when dask-cuda is
# installed there, and one Nanny per GPU always), and arrays on both GPUs of one process
# (tests/test_multi_device.py). bench: benches/dask_bench.py (BENCH_ARGS).
set -uo pipefail
what=${1:-all}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 POLARS_GPU_HIST_CACHE=/tmp/pgh-cache
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-dask .gpu-dask/*.whl || exit 1
export PYTHONPATH=/tmp/site-dask
status=0
nvidia-smi -L
python3 -c "import dask, polars_gpu_hist as g; print('dask', dask.__version__, 'gpu', g.gpu_available())"
python3 -c "import dask_cuda; print('dask_cuda', dask_cuda.__version__)" 2>/dev/null || echo "dask_cuda: not installed"

if [[ $what == check || $what == all ]]; then
  echo "== dask gpu tests"
  # No conftest: it needs hypothesis, which is not staged (the carry limit).
  python3 -m pytest -q -p no:cacheprovider --noconftest -m gpu -rs \
    tests/test_dask_gpu.py tests/test_accumulator_gpu.py tests/test_multi_device.py 2>&1 \
    | tee "$OUT/pytest_dask_gpu.log" | tail -15
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
fi

if [[ $what == bench || $what == all ]]; then
  echo "== dask bench"
  python3 benches/dask_bench.py ${BENCH_ARGS:-} > "$OUT/dask_bench.json" 2> "$OUT/dask_bench.log" || status=1
  cat "$OUT/dask_bench.json"
fi
exit $status
