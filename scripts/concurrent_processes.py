"""Repro of a hang found on 2026-11-27: several processes at once on one GPU host.

Run eight at once on the GPU host (`for i in $(seq 8); do python3 scripts/concurrent_processes.py &
done; wait`): on an H200 host, 5 of 8 stopped for good in the 65,536-bin call on a chunked host
column with nulls, every thread waiting on a futex. The cause: equal bins' proof walked the bins
in parallel inside a once-only initializer, and a counting task handed to a waiting thread asked
for that same proof. Fixed the same day (`tasks_asking_one_proof_at_once_all_get_it` in
src/bins/tests.rs holds it); three rounds of eight then all finished on the H200 host. The
faulthandler ends a stuck process after 25 s and prints where Python waited.
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
