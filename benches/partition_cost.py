"""Where one Dask partition's time goes on the GPU, beyond its kernels (issue 35: at most 1 ms).

One partition of float32 values made on the GPU (1 GiB by default), timed step by step as the
partial task runs them, each step alone (synchronized, median of --repeats after a warm-up):

- count:   ``polars_gpu_hist.numpy.histogram``, the counts left on the device (the kernels and
           the call around them: the floor of a partition)
- host_partial: the native count of a partial copied to the host (the count with its flow
           bins, the copy, the split and the sum), as partials were made before they stayed on
           the GPU
- fill:    ``Histogram.fill`` (native and the Python around it)
- task:    the partial task of ``polars_gpu_hist.dask``: the counts left on the GPU, the flow
           split off there
- merge8:  eight such partials summed, as a node of the tree reduction sums them (on the GPU)
- finish:  the Histogram made of a partial: its counts copied to the host, once a graph
- pickle:  the partial pickled with its arrays in the stream (a CuPy partial's counts copied to
           the host: what moving it to another worker costs)
- pickle_oob: the same with the arrays out of band, as Dask's protocol 5 pickling sends them

    python benches/partition_cost.py [--gib 1] [--bins 256,65536,1048576] [--repeats 9]
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import time
from collections.abc import Callable
from typing import Any

RANGE = (0.0, 1.0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gib", type=float, default=1.0)
    p.add_argument("--bins", default="256,65536,1048576")
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--json", help="also write the results here")
    p.add_argument(
        "--profile", type=int, default=65536, help="cProfile the task at this bin count (0: none)"
    )
    args = p.parse_args()

    import cupy as cp

    from polars_gpu_hist.dask import tasks as _dask_tasks

    n = int(args.gib * (1 << 30)) // 4
    x = cp.random.default_rng(0).random(n, dtype=cp.float32)
    cp.cuda.Device().synchronize()

    def timed(run: Callable[[], Any]) -> float:
        run()
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            run()
            cp.cuda.Device().synchronize()
            times.append(time.perf_counter() - t)
        return round(statistics.median(times) * 1e3, 3)

    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"{name}, {n:,} float32 values ({args.gib} GiB) in one partition; ms, median")
    rows: dict[str, dict[str, float]] = {}
    for bins in (int(b) for b in args.bins.split(",")):
        row = steps(bins, x, timed)
        rows[str(bins)] = row
        print(f"{bins:>9,} bins: " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()))
        if bins == args.profile:
            spec = _dask_tasks.Spec(kwargs_of(bins), f"bench-{bins}")
            profile(lambda spec=spec: _dask_tasks.fill(spec, x, None, "column"), cp)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "values": n, "ms": rows}, f, indent=1)


def kwargs_of(bins: int) -> dict[str, Any]:
    """The arguments of a Dask histogram, as ``polars_gpu_hist.dask`` gives its tasks."""
    return {"bins": bins, "range": RANGE, "closed": "left", "weights": False, "device": "gpu"}


def steps(bins: int, x: Any, timed: Callable[[Callable[[], Any]], float]) -> dict[str, float]:
    """Each step of a partition's partial at `bins` bins, timed alone."""
    import polars_gpu_hist as gh
    import polars_gpu_hist.numpy as ghnp
    from polars_gpu_hist._native import cuda_arrays as _cuda
    from polars_gpu_hist.dask import tasks as _dask_tasks

    kwargs = kwargs_of(bins)
    spec = _dask_tasks.Spec(kwargs, f"bench-{bins}")
    h = gh.Histogram(**kwargs)
    sample = _cuda.sample([_cuda.column(_cuda.cuda_array(x))], None)
    partial = _dask_tasks.fill(spec, x, None, "column")
    row = {
        "count": timed(lambda: ghnp.histogram(x, bins, range=RANGE)),
        "host_partial": timed(lambda: h._core.counted_cuda(sample, None)),
        "fill": timed(lambda: gh.Histogram(**kwargs).fill(x)),
        "task": timed(lambda: _dask_tasks.fill(spec, x, None, "column")),
        "merge8": timed(lambda: _dask_tasks.merge(*[partial] * 8)),
        "finish": timed(lambda: _dask_tasks.finish(spec, partial)),
        "pickle": timed(lambda: pickle.dumps(partial, protocol=5)),
        "pickle_oob": timed(
            lambda: pickle.dumps(partial, protocol=5, buffer_callback=lambda _: None)
        ),
    }
    row["task_beyond_count"] = round(row["task"] - row["count"], 3)
    return row


def profile(run: Callable[[], Any], cp: Any) -> None:
    """The task's calls by cumulative time, over 20 runs (synchronized after each)."""
    import cProfile
    import pstats

    def runs() -> None:
        for _ in range(20):
            run()
            cp.cuda.Device().synchronize()

    profiler = cProfile.Profile()
    profiler.runcall(runs)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(18)


if __name__ == "__main__":
    main()
