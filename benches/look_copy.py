"""What the plan's look at the rows costs by way of copy (CuPy alone, no wheel): 32 windows of 64
float32 from 2^29 rows into page-locked memory, as one 2-D copy, as 32 1-D copies, as a gather
kernel and one copy, against a bare synchronize (BENCHMARKS.md, fourth session of 2026-11-27)."""

import time

import cupy as cp
import numpy as np

N, WINDOWS, ROWS = 1 << 29, 32, 64
x = cp.random.random(N, dtype=cp.float32)
cp.cuda.Device().synchronize()
starts = np.array([w * (N - ROWS) // (WINDOWS - 1) for w in range(WINDOWS)])
step = int(starts[1] - starts[0])
spaced = all(int(starts[i + 1] - starts[i]) == step for i in range(WINDOWS - 1))
print("windows an equal step apart:", spaced)
host = cp.cuda.alloc_pinned_memory(WINDOWS * ROWS * 4)
stream = cp.cuda.Stream(non_blocking=True)
rt = cp.cuda.runtime
idx = cp.asarray((starts[:, None] + np.arange(ROWS)[None, :]).ravel())
buf = cp.empty(WINDOWS * ROWS, cp.float32)


def median_us(fn, reps: int = 200) -> float:
    for _ in range(20):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6


def copy_2d() -> None:
    rt.memcpy2DAsync(
        host.ptr,
        ROWS * 4,
        x.data.ptr,
        step * 4,
        ROWS * 4,
        WINDOWS,
        rt.memcpyDeviceToHost,
        stream.ptr,
    )
    stream.synchronize()


def copies_1d() -> None:
    for w in range(WINDOWS):
        src = x.data.ptr + int(starts[w]) * 4
        rt.memcpyAsync(host.ptr + w * ROWS * 4, src, ROWS * 4, rt.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()


def gather() -> None:
    with stream:
        cp.take(x, idx, out=buf)
    rt.memcpyAsync(host.ptr, buf.data.ptr, WINDOWS * ROWS * 4, rt.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()


for name, fn in [
    ("one 2-D copy", copy_2d),
    ("32 1-D copies", copies_1d),
    ("gather kernel + one copy", gather),
    ("bare synchronize", stream.synchronize),
]:
    print(f"{name:26s} {median_us(fn):8.1f} us")
