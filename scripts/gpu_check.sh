#!/usr/bin/env bash
# The whole GPU check in one call on the device machine (no network there):
#   make gpu-stage            # here: wheels into .gpu/ (our abi3 wheel, Polars, hypothesis, peers.py,
#                             # and the previous kernels with their lab, for a same-run baseline)
#   device run: bash scripts/gpu_check.sh [check|avx512|bench|largebins|stale|all]   carrying .gpu
# check: build info, the first call in a fresh process (empty kernel cache), the `gpu` tests,
#        compute-sanitizer memcheck + racecheck on every kernel family.
# avx512: explicit edges on each SIMD path, and the CPU suites against numpy with the AVX-512
#         index loops forced (where the CPU has it).
# bench: the peers (../shared/bench/peers.py) and our benchmark in the same run, the kernel lab
#        beside the previous kernels' lab, a table last.
# final: quick without the CPU bench, with compute-sanitizer memcheck and racecheck.
# narrow: counting by value (issue 37): its gpu tests, the narrow-integer table beside the peers
#        and the `auto` grid (benches/narrow_ints.py), compute-sanitizer on every kernel family.
# largebins: issue 37.2 in one short call: old against new beside the peers
#        (benches/large_bins.py), the gpu tests of the spill and batched families (and every
#        family-parametrized test of them), compute-sanitizer memcheck + racecheck on the new
#        kernels, and the kernel lab's bare launches of the four families (each pass timed).
# paths: the kernels' other paths (issue 33): the first call and a sample of the gpu tests
#        through the bundle's PTX (POLARS_GPU_HIST_KERNELS=ptx), then as under a CUDA 12 driver
#        (POLARS_GPU_HIST_DRIVER_VERSION=12000: NVRTC 12.0's PTX); part of check, quick, final.
# swaps: the drop-in swaps of benches/swaps.py alone (15 rounds), the whole table printed.
# session: every gpu test (one line a test) and the whole calls of benches/read_limit.py.
# stale: the 20 gpu tests the closing H200 run of 2026-12-02 failed on stale expectations
#        (benches/results/h200_2026-12-02_close/pytest_failures_again.log), as fixed, by node id
#        (the weighted n-D sums under POLARS_GPU_HIST_SUMS=fixed, as their module needs).
# close1, close2: the end of a session in two calls (each under 600 s): every gpu test and the
#        weighted sums; then files, whole calls and row binning on every core.
# profile: where a scan's time goes (issue 47), every step of benches/files_profile.py, and
#        the CPU sink on 4, 8 and 16 threads.
# every: every gpu test in one call (12 workers), then the fixed-point weighted sums' gpu tests.
# files: files at the read limit (issue 47): benches/files_bench.py on a 4 GiB Parquet column
#        (2^30 float32) and a 1 GiB CSV with nulls beside Polars' own streaming read, each case
#        in a fresh process, medians of 5 alternating runs, peak RSS, a run under a memory cap
#        (the JSON and table in $OUT); then benches/files_profile.py, where the time goes.
# sixteen: the 16-bit counters (issue 37): the kernel lab's packed and spill families on float32
#        and uint16 values, the narrow-integer table and large bins (quick) beside the peers, the
#        gpu tests of both families and of counting by value, compute-sanitizer on both.
# lab50: issue 50 in one call of under 9 minutes: the candidate families' gpu tests (banked,
#        private, radix: pinned, and through the plan where a tuning names them),
#        compute-sanitizer memcheck + racecheck on them, the kernel lab's bare launches of
#        today's families beside the candidates on the same buffers (benches' cases: 2^29
#        float32 at 65,536 / 1M / 16M bins, 2^30 uint8 into 256, 2^29 uint16 into 65,536, 2-D
#        1024 x 1024; uniform and normal, one value for bytes), and whole calls of the numpy
#        drop-in under today's plan and under the candidates' tunings beside torch.histc /
#        cupy.histogram / cupy.bincount / cupy.histogramdd and cupy.sum of the same bytes
#        (benches/read_limit.py); the two tables last, with the SM90 constants they support.
# quick: what fits one call: the first call; the benches while the machine is quiet (the
#        whole-call profile beside torch.histc and cupy.histogram, the drop-in swaps of
#        benches/swaps.py, the fresh range, a Dask partition's steps, the CPU backend on every
#        core); the bundle's CUBIN
#        and PTX paths (not CUDA 12's); the gpu tests of exact integers, infinite edges, the
#        numpy module, hist, flow and one GPU of the multi-device tests, the engine's gpu tests
#        and a sample of the rest (6 workers).
set -uo pipefail
what=${1:-all}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 POLARS_GPU_HIST_CACHE=/tmp/pgh-cache
rm -rf /tmp/site  # a warm machine keeps the last run's install
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpu/*.whl || exit 1
# Polars xz-packed (34 MB where its wheels take 55: scripts/stage_dask.sh makes polars.tar.xz), so
# that a larger wheel or a bundle still fits the 64 MiB carry.
if [[ -f .gpu/polars.tar.xz ]]; then
  python3 - /tmp/site .gpu/polars.tar.xz <<'PY' || exit 1
import sys, tarfile
safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
with tarfile.open(sys.argv[2]) as t:
    t.extractall(sys.argv[1], **safe)
PY
fi
export PYTHONPATH=/tmp/site
# The prebuilt kernels staged beside the wheel win over any it carries (a bundle built after it).
if [[ -f .gpu/kernels.bundle ]]; then
  cp .gpu/kernels.bundle /tmp/site/polars_gpu_hist/
fi
ls -la /tmp/site/polars_gpu_hist/kernels.bundle 2>/dev/null || echo "no kernel bundle: first calls compile"
status=0

# The gpu tests: every `*_gpu.py` file in a concern's folder of tests/ (tests/conftest.py marks each
# of their tests `gpu`; naming the files collects no module that imports what this host lacks).
# The heavy files run in blocks of their own; GPU_REST is every other gpu file, new ones included.
GPU_HEAVY=" tests/engine/test_counts_gpu.py tests/engine/test_engine_gpu.py tests/engine/test_bundle_gpu.py
  tests/engine/test_proof_gpu.py tests/numpy/test_numpy_device_gpu.py tests/dask/test_dask_gpu.py
  tests/dask/test_dask_device_partials_gpu.py "
GPU_REST=()
for f in tests/*/*_gpu.py; do
  [[ $GPU_HEAVY == *[[:space:]]$f[[:space:]]* ]] || GPU_REST+=("$f")
done

echo "== build info"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
nvcc --version | tail -1
python3 -c "import polars, polars_gpu_hist as g; print('polars', polars.__version__, 'polars-gpu-hist', g.__version__); from polars_gpu_hist import _internal as i; print(i.gpu_info())"
grep -q avx512f /proc/cpuinfo && echo "cpu: AVX-512" || echo "cpu: no AVX-512"

echo "== the first call: a fresh process, an empty kernel cache (import to counts, synchronized)"
for dtype in float32 float64 int16; do
  rm -rf /tmp/pgh-first
  POLARS_GPU_HIST_CACHE=/tmp/pgh-first python3 - "$dtype" <<'PY'
import sys, time
import cupy as cp
x = cp.random.default_rng(0).random(1 << 24).astype(sys.argv[1])
cp.cuda.Device().synchronize()
t0 = time.perf_counter()
import polars_gpu_hist as gh
t1 = time.perf_counter()
gh.histogram(x, 256)
t2 = time.perf_counter()
gh.histogram(x, 1 << 20)
t3 = time.perf_counter()
print(f"  {sys.argv[1]}: import {t1 - t0:.2f} s, first histogram {t2 - t1:.2f} s "
      f"(import to counts {t2 - t0:.2f} s); a second kernel family {t3 - t2:.2f} s")
PY
done

# The first call and a sample of the gpu tests through one kernel path: $1 names it, the rest is
# its environment. The driver's JIT cache starts empty, then is warm for a second process.
path_pass() {
  local name=$1; shift
  rm -rf /tmp/pgh-path /tmp/nv-jit-cache
  echo "== $name: $*"
  for run in cold warm; do
    env "$@" POLARS_GPU_HIST_CACHE=/tmp/pgh-path CUDA_CACHE_PATH=/tmp/nv-jit-cache python3 - "$run" <<'PY'
import sys, time
import cupy as cp
x = cp.random.default_rng(0).random(1 << 24).astype("float32")
cp.cuda.Device().synchronize()
t0 = time.perf_counter()
import polars_gpu_hist as gh
gh.histogram(x, 256)
t1 = time.perf_counter()
kernels = [l for l in gh.explain(x, 256).splitlines() if l.startswith("kernels")]
print(f"  first call ({sys.argv[1]} driver JIT cache) {t1 - t0:.2f} s; " + " | ".join(kernels))
PY
  done
  env "$@" POLARS_GPU_HIST_CACHE=/tmp/pgh-path CUDA_CACHE_PATH=/tmp/nv-jit-cache timeout 200 \
    python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 --maxfail=30 -rf --tb=line \
    tests/engine/test_engine_gpu.py tests/numpy/test_numpy_device_gpu.py tests/contract/test_exact_integers_gpu.py \
    tests/contract/test_infinite_edges_gpu.py tests/histogram/test_histogram_flow_gpu.py tests/engine/test_by_value_gpu.py 2>&1 | tee "$OUT/pytest_gpu_$name.log" | tail -12
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
}
if [[ $what == stale ]]; then
  # One node id a failure of that run (renamed where the name said what no longer holds:
  # test_batched_is_chosen_... is test_a_partition_family_is_chosen_...), and the boundary
  # test's float16 case, which moved to its own id (a dtype the GPU refuses: TypeError).
  STALE=(
    tests/engine/test_counts_gpu.py::test_errors_are_clear_and_leave_the_gpu_usable
    tests/engine/test_counts_gpu.py::test_explain_names_the_kernel
    "tests/engine/test_families_gpu.py::test_radix_counts_every_pattern[uniform-16777219]"
    "tests/engine/test_families_gpu.py::test_radix_counts_every_pattern[normal-16777219]"
    "tests/engine/test_families_gpu.py::test_radix_counts_every_pattern[sorted-16777219]"
    "tests/engine/test_families_gpu.py::test_radix_counts_every_pattern[one value-16777219]"
    "tests/engine/test_families_gpu.py::test_radix_counts_every_pattern[strays-16777219]"
    tests/engine/test_families_gpu.py::test_radix_and_private_refuse_weights
    tests/engine/test_large_bins_gpu.py::test_spill_refuses_weights_where_they_are_written
    tests/engine/test_large_bins_gpu.py::test_a_partition_family_is_chosen_past_16_bit_counters_and_counts_2d_cells
    "tests/boundary/test_boundary_gpu.py::test_the_numpy_drop_in_on_device_arrays_raises_numpys_types[data1-fd-OverflowError]"
    "tests/boundary/test_boundary_gpu.py::test_the_numpy_drop_in_on_device_arrays_raises_numpys_types[data3-fd-TypeError]"
    "tests/engine/test_engine_gpu.py::test_n_d_cells_in_every_family[shared]"
    "tests/engine/test_engine_gpu.py::test_n_d_cells_in_every_family[packed]"
    "tests/engine/test_engine_gpu.py::test_n_d_cells_in_every_family[spill]"
    "tests/engine/test_engine_gpu.py::test_n_d_cells_in_every_family[private]"
    "tests/engine/test_engine_gpu.py::test_n_d_cells_in_every_family[banked]"
    "tests/histogram/test_uhi_gpu.py::test_device_fills_keep_the_flow_cells_of_several_axes[False-3]"
    "tests/histogram/test_uhi_gpu.py::test_device_fills_keep_the_flow_cells_of_several_axes[True-3]"
    tests/numpy/test_numpy_device_gpu.py::test_a_host_pointer_given_as_device_memory_is_refused
  )
  echo "== the stale gpu tests of the 2026-12-02 close, as fixed (${#STALE[@]} node ids, and one more below)"
  timeout 300 python3 -m pytest -p no:cacheprovider -m gpu -n 6 -v -rf --tb=short "${STALE[@]}" \
    > "$OUT/pytest_stale.log" 2>&1
  [[ $? == 0 ]] || status=1
  grep -E "(PASSED|FAILED|ERROR|SKIPPED) " "$OUT/pytest_stale.log" | sed 's/^\[gw[0-9]*\] \[ *[0-9]*%\] //' | sort
  tail -n 1 "$OUT/pytest_stale.log"
  echo "== the weighted n-D sums under POLARS_GPU_HIST_SUMS=fixed (their module skips without it)"
  POLARS_GPU_HIST_SUMS=fixed timeout 120 python3 -m pytest -p no:cacheprovider -m gpu -v -rf --tb=short \
    tests/contract/test_weighted_sums_gpu.py::test_nd_weighted_sums_are_the_cpus \
    > "$OUT/pytest_stale_fixed_sums.log" 2>&1
  [[ $? == 0 ]] || status=1
  grep -E "(PASSED|FAILED|ERROR|SKIPPED)" "$OUT/pytest_stale_fixed_sums.log" | tail -n 3
  grep -hE "^(E |FAILED)" "$OUT/pytest_stale.log" "$OUT/pytest_stale_fixed_sums.log" | head -40
fi
if [[ $what == session ]]; then
  # The end of a session in one call: every gpu test (each test's outcome on its own line, so a
  # run cut short by its timeout still names what failed), then whole calls beside the peers.
  echo "== every gpu test (tests/*/*_gpu.py)"
  timeout 360 python3 -m pytest -p no:cacheprovider -m gpu -n 8 -v --maxfail=60 -rf --tb=short \
    tests/*/*_gpu.py > "$OUT/pytest_session.log" 2>&1
  [[ $? == 0 ]] || status=1
  grep -E "(FAILED|ERROR) " "$OUT/pytest_session.log" | sort -u | head -40
  tail -n 3 "$OUT/pytest_session.log"
  echo "== whole calls beside the peers and the read roofline (benches/read_limit.py)"
  timeout 150 python3 benches/read_limit.py --reps 5 --tuning "" > "$OUT/read_limit.log" \
    2> "$OUT/read_limit_rows.log" || status=1
  tail -n 40 "$OUT/read_limit.log"
  exit $status
fi
if [[ $what == close1 ]]; then
  # The session's close, first of two calls: every gpu test, then the deterministic weighted sums
  # (bit-identity across runs and against the CPU, their cost against the float path) and the
  # weighted fill beside the one-shot call, from device arrays.
  echo "== every gpu test (tests/*/*_gpu.py)"
  timeout 350 python3 -m pytest -p no:cacheprovider -m gpu -n 8 -v --maxfail=60 -rf --tb=short \
    tests/*/*_gpu.py > "$OUT/pytest_session.log" 2>&1
  [[ $? == 0 ]] || status=1
  grep -E "(FAILED|ERROR) " "$OUT/pytest_session.log" | sort -u | head -40
  tail -n 3 "$OUT/pytest_session.log"
  if [[ -f benches/weighted_sums.py ]]; then
    echo "== deterministic weighted sums on the GPU (benches/weighted_sums.py)"
    timeout 60 python3 benches/weighted_sums.py --device gpu 2>&1 | tee "$OUT/weighted_sums_gpu.log" | tail -n 16
  fi
  if [[ -f benches/weighted_fill.py ]]; then
    echo "== a weighted Histogram.fill from device arrays (benches/weighted_fill.py)"
    timeout 30 python3 benches/weighted_fill.py --device gpu 2>&1 | tee "$OUT/weighted_fill_gpu.log" | tail -n 8
  fi
  exit $status
fi
if [[ $what == close2 ]]; then
  # The second call: files at the read limit on every core, the whole calls under today's plan
  # (SM90 as the lab set it), row binning beside Polars' own calls on 16 cores and the GPU.
  echo "== files at the read limit (benches/files_bench.py): 4 GiB Parquet, 1 GiB CSV, $(nproc) cores"
  timeout 320 python3 benches/files_bench.py --size 4GiB --dir /tmp/pgh-files --keep \
    --out "$OUT/files_bench.json" 2> "$OUT/files_bench.log" > /dev/null || status=1
  tail -n 14 "$OUT/files_bench.log"
  echo "== whole calls beside the peers and the read roofline (benches/read_limit.py)"
  timeout 150 python3 benches/read_limit.py --reps 5 --tuning "" > "$OUT/read_limit.log" \
    2> "$OUT/read_limit_rows.log" || status=1
  tail -n 40 "$OUT/read_limit.log"
  if [[ -f benches/row_binning.py ]]; then
    echo "== row binning beside Polars' own calls, $(nproc) cores (benches/row_binning.py)"
    # device="gpu" is refused (no GPU row-binning kernel yet): `auto` is every core here.
    timeout 75 python3 benches/row_binning.py --device auto --json "$OUT/row_binning_auto.json" \
      2>&1 | tee "$OUT/row_binning_auto.log" | tail -n 14
  fi
  exit $status
fi
if [[ $what == files ]]; then
  echo "== the scan's GPU fill against the CPU's (tests/scan/test_scan_gpu.py)"
  timeout 90 python3 -m pytest -q -p no:cacheprovider -m gpu -rf --tb=short tests/scan/test_scan_gpu.py \
    2>&1 | tee "$OUT/pytest_scan_gpu.log" | tail -6
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  echo "== files at the read limit (benches/files_bench.py): 4 GiB Parquet, 1 GiB CSV, $(nproc) cores"
  timeout 360 python3 benches/files_bench.py --size 4GiB --dir /tmp/pgh-files --keep \
    --out "$OUT/files_bench.json" 2> "$OUT/files_bench.log" > /dev/null || status=1
  tail -n 14 "$OUT/files_bench.log"
  echo "== where a scan's time goes (benches/files_profile.py)"
  timeout 150 python3 benches/files_profile.py --size 4GiB --dir /tmp/pgh-files --keep --runs 1 \
    --steps decode,sink-cpu,sink-gpu,gpu-batches \
    --out "$OUT/files_profile.json" 2>&1 >/dev/null | tee "$OUT/files_profile.log" | tail -n 6
  exit $status
fi
if [[ $what == every ]]; then
  # Every gpu test in one call (16 cores: 12 workers), then the weighted n-D sums under fixed
  # sums (their module skips without the flag).
  echo "== every gpu test (tests/*/*_gpu.py)"
  timeout 480 python3 -m pytest -p no:cacheprovider -m gpu -n 12 -v --maxfail=60 -rf --tb=short \
    tests/*/*_gpu.py > "$OUT/pytest_every.log" 2>&1
  [[ $? == 0 ]] || status=1
  grep -E "(FAILED|ERROR) " "$OUT/pytest_every.log" | sort -u | head -40
  tail -n 3 "$OUT/pytest_every.log"
  POLARS_GPU_HIST_SUMS=fixed timeout 60 python3 -m pytest -p no:cacheprovider -m gpu -q -rf \
    --tb=short tests/contract/test_weighted_sums_gpu.py tests/contract/test_fixed_sums_flag_gpu.py \
    2>&1 | tail -n 4
  exit $status
fi
if [[ $what == profile ]]; then
  # Where a scan's time goes, alone (issue 47): every step of benches/files_profile.py on the
  # 4 GiB column (the GPU fill per batch size, the CPU fill per morsel), then the floor and the
  # CPU sink on 4, 8 and 16 of the engine's threads.
  echo "== where a scan's time goes (benches/files_profile.py), $(nproc) cores"
  timeout 300 python3 benches/files_profile.py --size 4GiB --dir /tmp/pgh-files --keep --runs 1 \
    --out "$OUT/files_profile.json" 2>&1 >/dev/null | tee "$OUT/files_profile.log" | tail -n 12
  for threads in 4 8 16; do
    echo "== POLARS_MAX_THREADS=$threads: the floor and the CPU sink"
    POLARS_MAX_THREADS=$threads timeout 60 python3 benches/files_profile.py --size 4GiB \
      --dir /tmp/pgh-files --keep --runs 1 --steps decode,sink-cpu,sink-gpu \
      --out "$OUT/files_profile_t$threads.json" 2>&1 >/dev/null | tail -n 3
  done
  exit $status
fi
if [[ $what == swaps ]]; then
  echo "== the drop-in swaps alone, more rounds (benches/swaps.py)"
  timeout 400 python3 benches/swaps.py --rounds 15 --sample-ms 20 --json "$OUT/swaps.json" \
    > "$OUT/swaps.log" 2>&1
  cat "$OUT/swaps.log"
fi

# The benches first, on a machine not yet warmed by the tests.
if [[ $what == quick || $what == final ]]; then
  echo "== where whole calls spend their time, beside the peers (benches/gpu_profile.py)"
  timeout 150 python3 benches/gpu_profile.py --reps 9 2>&1 | tee "$OUT/gpu_profile.log" \
    | grep -vE "^(backend|kernel|input|grid|shared|why|copy|kernels) "
  echo "== the drop-in swaps beside the calls they replace, every core (benches/swaps.py)"
  timeout 200 python3 benches/swaps.py --rounds 7 --sample-ms 10 --json "$OUT/swaps.json" \
    > "$OUT/swaps.log" 2>&1
  tail -n 28 "$OUT/swaps.log"
  echo "== a range never seen before against a repeated one (benches/fresh_range.py)"
  timeout 60 python3 benches/fresh_range.py 2>&1 | tee "$OUT/fresh_range.log"
  echo "== one Dask partition's steps, 1 GiB (benches/partition_cost.py)"
  timeout 60 python3 benches/partition_cost.py --profile 0 2>&1 | tee "$OUT/partition_cost.log"
  if [[ $what == quick ]]; then
    echo "== the CPU backend on every core (benches/cpu_bench.py)"
    timeout 150 python3 benches/cpu_bench.py --log2n 26 --gib > "$OUT/cpu_bench.log" 2>&1
    tail -n 25 "$OUT/cpu_bench.log"
  fi
fi

if [[ $what == paths || $what == quick || $what == final || $what == check ]]; then
  echo "== the bundle's CUBIN, PTX and CUDA 12 paths in fresh processes (tests/engine/test_bundle_gpu.py)"
  timeout 400 python3 -m pytest -q -p no:cacheprovider -m gpu -rf --tb=short tests/engine/test_bundle_gpu.py \
    2>&1 | tee "$OUT/pytest_gpu_bundle.log" | tail -8
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  path_pass ptx POLARS_GPU_HIST_KERNELS=ptx
  # Kernels missing from the bundle are refused under CUDA 12 with one sentence (NVRTC 13 is too
  # new for the driver): count those apart from real failures.
  if [[ $what != quick ]]; then  # quick leaves it out: its one call has no time for it
    path_pass cuda12 POLARS_GPU_HIST_DRIVER_VERSION=12000
    echo "  of which 'not prebuilt for CUDA 12' refusals: $(grep -c 'not prebuilt for CUDA 12' "$OUT/pytest_gpu_cuda12.log")"
  fi
fi

if [[ $what == quick || $what == final ]]; then
  echo "== every gpu test but the heavy files' (exact integers, infinite edges, the numpy module, hist, flow, by=, explain, ...)"
  timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 --maxfail=20 -rf --tb=short "${GPU_REST[@]}" \
    2>&1 | tee "$OUT/pytest_gpu_new.log" | tail -15
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  echo "== gpu tests: the engine's, the accumulator's, and a sample of the rest"
  timeout 210 python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 --maxfail=20 -rf --tb=short \
    tests/engine/test_engine_gpu.py tests/numpy/test_numpy_device_gpu.py tests/histogram/test_histogram_gpu.py \
    tests/engine/test_counts_gpu.py tests/engine/test_proof_gpu.py \
    -k "engine or accumulator or device_arrays_match_numpy or nd or by_ or explain or segmented or packed or errors or proof or fresh_range" \
    2>&1 | tee "$OUT/pytest_gpu.log" | tail -30
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
fi
if [[ $what == narrow ]]; then
  echo "== gpu tests of counting by value"
  timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 -rf --tb=short tests/engine/test_by_value_gpu.py \
    tests/expr/test_by_several_keys_gpu.py tests/engine/test_engine_gpu.py tests/numpy/test_numpy_device_gpu.py -k "by_value or several or explain or auto" \
    2>&1 | tee "$OUT/pytest_by_value.log" | tail -8
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  echo "== narrow integers beside the peers, CUB's axes, auto against each backend (benches/narrow_ints.py)"
  timeout 300 python3 benches/narrow_ints.py --reps 7 2>&1 | tee "$OUT/narrow_ints.log"
fi
if [[ $what == final || $what == narrow ]]; then
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 python3 scripts/sanitize_kernels.py \
      > "$OUT/sanitizer_$tool.log" 2>&1
    rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|MISMATCH" "$OUT/sanitizer_$tool.log" | tail -3
    echo "$tool exit code $rc"; [[ $rc == 0 ]] || status=1
  done
fi
if [[ $what == check || $what == all ]]; then
  echo "== gpu tests"
  python3 -m pytest -q -p no:cacheprovider -m gpu tests/engine/test_counts_gpu.py tests/engine/test_engine_gpu.py \
    tests/numpy/test_numpy_device_gpu.py tests/engine/test_proof_gpu.py tests/histogram/test_histogram_gpu.py \
    tests/expr/test_polars_hist_gpu.py tests/engine/test_explain_gpu.py 2>&1 | tee "$OUT/pytest_gpu.log" | tail -30
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    compute-sanitizer --tool $tool --error-exitcode 3 python3 scripts/sanitize_kernels.py \
      > "$OUT/sanitizer_$tool.log" 2>&1
    rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|MISMATCH" "$OUT/sanitizer_$tool.log" | tail -3
    echo "$tool exit code $rc"; [[ $rc == 0 ]] || status=1
  done
fi
if [[ $what == avx512 || $what == all ]]; then
  if grep -q avx512f /proc/cpuinfo; then
    echo "== explicit edges on the CPU, each SIMD path forced (scripts/edges_check.py)"
    for isa in avx512 avx2 scalar; do
      echo "  $isa: $(POLARS_GPU_HIST_SIMD=$isa timeout 60 python3 scripts/edges_check.py | tail -1)"
    done
    # Eight processes at once (-n 8): the suites stopped here on 2026-11-27 until equal bins'
    # proof stopped walking inside its once-only cell (scripts/concurrent_processes.py).
    echo "== the CPU suites against numpy with the AVX-512 index loops forced"
    POLARS_GPU_HIST_SIMD=avx512 timeout 300 python3 -m pytest -q -p no:cacheprovider -n 8 tests/contract/test_numpy_parity.py \
      tests/expr/test_histogramdd.py tests/expr/test_by.py tests/args/test_bin_estimators.py tests/args/test_integer_bins.py \
      tests/expr/test_flow_bins.py tests/expr/test_series_namespace.py tests/boundary/test_error_names.py 2>&1 | tee "$OUT/pytest_avx512.log" | tail -3
    [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  fi
fi

if [[ $what == largebins ]]; then
  # About 8 minutes in all: the table first, then the tests, the sanitizer on the new kernels,
  # and the kernel lab's pass-by-pass times.
  echo "== old family against new, peers beside them (benches/large_bins.py)"
  timeout 150 python3 benches/large_bins.py --reps 7 2>&1 | tee "$OUT/large_bins.log" | tail -110
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  echo "== gpu tests of the spill and batched families, the extremes kernel's 16-byte reads"
  timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 --maxfail=20 -rf --tb=short \
    tests/engine/test_large_bins_gpu.py tests/engine/test_counts_gpu.py tests/engine/test_engine_gpu.py \
    tests/numpy/test_numpy_device_gpu.py tests/contract/test_infinite_edges_gpu.py \
    -k "large_bins or spill or batched or explain" \
    2>&1 | tee "$OUT/pytest_large_bins.log" | tail -15
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool on the spill, batched and extremes kernels"
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 3 python3 scripts/sanitize_kernels.py \
      spill batched extremes > "$OUT/sanitizer_largebins_$tool.log" 2>&1
    rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|MISMATCH" "$OUT/sanitizer_largebins_$tool.log" | tail -3
    echo "$tool exit code $rc"; [[ $rc == 0 ]] || status=1
  done
  echo "== the four families launched bare, each segmented pass timed (scripts/kernel_lab.py)"
  timeout 75 python3 scripts/kernel_lab.py --only packed,spill,segmented,batched \
    --bins 65536,1048576,16777216 --dists uniform,normal --tag largebins \
    > "$OUT/kernel_lab_largebins.log" 2>&1
  tail -n 16 "$OUT/kernel_lab_largebins.log"
fi
if [[ $what == lab50 ]]; then
  # The sanitizer's kernels that the bundle lacks compile meanwhile (on first use, into the cache
  # both sanitizer runs then read), its counts checked against the CPU once without the tool.
  POLARS_GPU_HIST_TUNING=bytes=private timeout 150 python3 scripts/sanitize_kernels.py \
    private banked radix bytes > "$OUT/sanitize_plain_lab50.log" 2>&1 &
  warm=$!
  echo "== gpu tests of the candidate families (tests/engine/test_families_gpu.py) and of today's large bins"
  timeout 140 python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 --maxfail=20 -rf --tb=short \
    tests/engine/test_families_gpu.py tests/engine/test_large_bins_gpu.py -k "families or radix or banked or private or batched or tuned" \
    2>&1 | tee "$OUT/pytest_lab50.log" | tail -12
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  wait $warm || status=1
  echo "  the sanitizer's cases without the tool: $(grep -c ' ok' "$OUT/sanitize_plain_lab50.log") ok, $(grep -c MISMATCH "$OUT/sanitize_plain_lab50.log") mismatched"
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool on the private, banked and radix kernels (bytes by value: private)"
    POLARS_GPU_HIST_TUNING=bytes=private timeout $([[ $tool == memcheck ]] && echo 50 || echo 70) \
      compute-sanitizer --tool $tool --error-exitcode 3 python3 scripts/sanitize_kernels.py \
      private banked radix bytes > "$OUT/sanitizer_lab50_$tool.log" 2>&1
    rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|MISMATCH" "$OUT/sanitizer_lab50_$tool.log" | tail -3
    echo "$tool exit code $rc"; [[ $rc == 0 ]] || status=1
  done
  echo "== the kernel lab: today's families beside the candidates, bare launches (scripts/kernel_lab.py --suite lab50)"
  timeout 110 python3 scripts/kernel_lab.py --suite lab50 --tag lab50 > "$OUT/kernel_lab_lab50.log" 2>&1 \
    || { status=1; tail -n 20 "$OUT/kernel_lab_lab50.log"; }
  echo "== whole calls under today's plan and the candidates' tunings, beside the peers (benches/read_limit.py)"
  timeout 140 python3 benches/read_limit.py --reps 7 > "$OUT/read_limit.log" 2> "$OUT/read_limit_rows.log" \
    || { status=1; tail -n 20 "$OUT/read_limit_rows.log"; }
  echo "== the kernel lab's table (ms, times the read of the same bytes, each pass) and the SM90 constants it supports"
  sed -n '/each family.s bare launches/,$p' "$OUT/kernel_lab_lab50.log"
  echo "== whole calls, synchronized wall medians (times that case's cupy.sum; the kernel chosen)"
  cat "$OUT/read_limit.log"
fi
if [[ $what == sixteen ]]; then
  echo "== the 16-bit families launched bare (scripts/kernel_lab.py)"
  timeout 60 python3 scripts/kernel_lab.py --only shared,packed,spill --bins 32768,65536 \
    --tag sixteen_f32 2>&1 | grep "^|"
  timeout 40 python3 scripts/kernel_lab.py --dtype uint16 --only packed,spill --tag sixteen_u16 \
    2>&1 | grep "^|"
  echo "== narrow integers beside the peers (benches/narrow_ints.py --only narrow)"
  timeout 120 python3 benches/narrow_ints.py --reps 7 --only narrow 2>&1 | tee "$OUT/narrow_ints.log" | tail -40
  echo "== large bins beside the peers (benches/large_bins.py --quick)"
  timeout 120 python3 benches/large_bins.py --reps 7 --quick 2>&1 | tee "$OUT/large_bins.log" | tail -30
  echo "== gpu tests of the 16-bit families and of counting by value"
  timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 --maxfail=20 -rf --tb=short \
    tests/engine/test_large_bins_gpu.py tests/engine/test_counts_gpu.py tests/engine/test_engine_gpu.py \
    tests/engine/test_by_value_gpu.py tests/contract/test_infinite_edges_gpu.py -k "spill or packed or by_value or explain or engine" \
    2>&1 | tee "$OUT/pytest_sixteen.log" | tail -12
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool on the packed and spill kernels"
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 3 python3 scripts/sanitize_kernels.py \
      packed spill > "$OUT/sanitizer_sixteen_$tool.log" 2>&1
    rc=$?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|MISMATCH" "$OUT/sanitizer_sixteen_$tool.log" | tail -3
    echo "$tool exit code $rc"; [[ $rc == 0 ]] || status=1
  done
fi
if [[ $what == bench || $what == all ]]; then
  echo "== peers"
  (cd "$OUT" && python3 "$OLDPWD/.gpu/peers.py" gpu > "$OUT/peers.log" 2>&1) || status=1
  tail -3 "$OUT/peers.log"
  echo "== where whole calls spend their time (benches/gpu_profile.py)"
  python3 benches/gpu_profile.py > "$OUT/gpu_profile.log" 2>&1 || status=1
  grep -vE "^(backend|kernel|input|grid|shared|why|copy|kernels) " "$OUT/gpu_profile.log"
  echo "== ours"
  python3 benches/gpu_bench.py ${BENCH_ARGS:-} > "$OUT/gpu_bench.log" 2>&1 || status=1
  tail -5 "$OUT/gpu_bench.log"
  echo "== the CPU backend on every core, beside boost-histogram and Polars (benches/cpu_bench.py)"
  python3 benches/cpu_bench.py --log2n 26 --gib > "$OUT/cpu_bench.log" 2>&1 || status=1
  tail -n 30 "$OUT/cpu_bench.log"
  echo "== every family forced (scripts/kernel_lab.py), then the previous kernels' lab"
  python3 scripts/kernel_lab.py --tag current > "$OUT/kernel_lab.log" 2>&1 || status=1
  tail -n 45 "$OUT/kernel_lab.log" > "$OUT/kernel_lab_table.md"
  if [[ -d .gpu/baseline ]]; then
    (cd .gpu/baseline && python3 scripts/kernel_lab.py --variants 4 > "$OUT/kernel_lab_baseline.log" 2>&1)
    tail -n 45 "$OUT/kernel_lab_baseline.log" > "$OUT/kernel_lab_baseline_table.md"
  fi
  echo "== ours beside the peers"
  python3 benches/report.py "$OUT" | tee "$OUT/report.md"
fi
# The device tool brings back only a few files of $OUT: every log goes back in one archive.
tar czf /tmp/gpu_check_logs.tgz -C "$OUT" . && find "$OUT" -mindepth 1 -delete \
  && mv /tmp/gpu_check_logs.tgz "$OUT/logs.tgz"
exit $status
