"""Where the host time of `gh.histogram` on a device array goes (the frame path), beside the
drop-in on the same array: the array interface, the kwargs, the native call, the unnest.

    python benches/frame_parts.py [log2 rows, 29] [bins, 256]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import cupy as cp

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from polars_gpu_hist import _internal
from polars_gpu_hist._args import arguments as _args
from polars_gpu_hist._expr.functions import _pickled
from polars_gpu_hist._native import cuda_arrays as _cuda


def median_ms(f: Callable[[], object], reps: int = 15) -> float:
    f()
    times = []
    for _ in range(reps):
        cp.cuda.Device().synchronize()
        t = time.perf_counter()
        f()
        cp.cuda.Device().synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> None:
    rows = 1 << int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 29
    bins = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    x = cp.random.default_rng(0).random(rows, dtype=cp.float32)
    kwargs = _pickled(
        _args.histogram_kwargs(
            bins, (0, 1), density=False, closed="left", flow=False, device="auto", kernel="auto"
        )
    )
    iface = _cuda.cuda_array(x)
    sample = _cuda.sample([_cuda.column(iface)])
    options = _internal.HistogramOptions(kwargs)
    series = _internal.histogram_cuda(["x"], sample, options)[0]
    print(f"{rows} float32 rows, {bins} bins (ms, medians)")
    print(f"  cupy.sum (read roofline)     {median_ms(lambda: x.sum()):.3f}")
    print(
        f"  ghnp.histogram               {median_ms(lambda: ghnp.histogram(x, bins, (0, 1))):.3f}"
    )
    frame = median_ms(lambda: gh.histogram(x, bins, range=(0, 1)))
    print(f"  gh.histogram (frame)         {frame:.3f}")
    native = median_ms(lambda: _internal.histogram_cuda(["x"], sample, options))
    print(f"  _internal.histogram_cuda     {native:.3f}")
    host = [
        ("__cuda_array_interface__", lambda: x.__cuda_array_interface__),
        ("_cuda.cuda_array", lambda: _cuda.cuda_array(x)),
        (
            "kwargs + pickle",
            lambda: _pickled(
                _args.histogram_kwargs(
                    bins,
                    (0, 1),
                    density=False,
                    closed="left",
                    flow=False,
                    device="auto",
                    kernel="auto",
                )
            ),
        ),
        ("struct.unnest", lambda: series.struct.unnest()),
    ]
    for name, f in host:
        t = time.perf_counter()
        for _ in range(1000):
            f()
        print(f"  {name:28} {(time.perf_counter() - t) * 1e3:.1f} µs a call")


if __name__ == "__main__":
    main()
