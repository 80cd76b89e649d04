"""Repro of a hang found on 2026-11-27: several processes at once on one GPU host.

Run eight at once on the GPU host (`for i in $(seq 8); do python3 scripts/concurrent_processes.py &
done; wait`): on an H200 host, 5 of 8 stopped for good in the 65,536-bin call on a chunked host
column with nulls, every thread waiting on a futex, with either transfer mode
(POLARS_GPU_HIST_TRANSFER=pageable or staged). One process at a time never did (8 of 8), nor
did eight with one-thread pools (POLARS_MAX_THREADS=1 or RAYON_NUM_THREADS=1). The likely
cause, equal bins' proof walked in parallel inside a once-only initializer, is fixed; run this
to confirm. The faulthandler ends a stuck process after 25 s and prints where Python waited.
"""

import faulthandler
import time

import numpy as np
import polars as pl

import polars_gpu_hist as gh

faulthandler.dump_traceback_later(25, exit=True)
rng = np.random.default_rng(7)
parts = [pl.Series("x", rng.normal(size=n)) for n in [300_000, 1, 0, 250_001, 700_000]]
parts = [p.scatter(rng.integers(0, len(p), len(p) // 100), None) for p in parts]
series = pl.concat(parts, rechunk=False)
for bins in [16, 256, 65536]:
    t0 = time.perf_counter()
    gh.histogram(series, bins)
    print(f"bins={bins}: {time.perf_counter() - t0:.3f} s", flush=True)
print("done")
