"""The kernel lab's candidate families (issue 50) against numpy on the GPU tests' adversarial
patterns: banked and private (few bins of cheap rows: bytes counted by value) and radix (the
partition passes after a leaner partition, 1M-16M bins and 2-D). Each pinned in this process
(rows binned one by one), and as the plan chooses it where a tuning names it
(`POLARS_GPU_HIST_TUNING`, read when a process opens its GPU: a child process each). Run on a
machine with a GPU: -m gpu (this file's name marks its tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh

cp = pytest.importorskip("cupy")

INF = np.inf


def rng_for(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def counts(x: np.ndarray, bins, kernel: str, **kw) -> np.ndarray:
    return gh.histogram(cp.asarray(x), bins, kernel=kernel, **kw)["count"].to_numpy()


def strays(x: np.ndarray) -> np.ndarray:
    """x with NaN, +-inf, values past both ends of [0, 1) and on its edges, every few rows."""
    x = x.copy()
    x[::11] = np.nan
    x[1::13] = INF
    x[2::17] = -INF
    x[3::19] = 1.5
    x[4::23] = -0.5
    x[5::29] = 1.0
    x[6::31] = 0.0
    return x


BYTE_PATTERNS = [
    "uniform",
    "image",
    "one value",
    "sorted",
    "hot among spread",
    "alternating neighbours",
    "each value in turn",
    "the ends",
]


def bytes_of(pattern: str, dtype, n: int) -> np.ndarray:
    """n 8-bit values of a pattern: one value (every thread's counter wraps many times), a hot
    value among spread ones, neighbouring values alternating (bytes of one counter word), every
    value in turn, only the type's least and greatest values."""
    info = np.iinfo(dtype)
    rng = rng_for("bytes", pattern, np.dtype(dtype).name, n)
    spread = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    i = np.arange(n)
    x = {
        "uniform": lambda: spread,
        "image": lambda: np.clip(
            rng.normal(0, 1, n) * 23 + (info.min + info.max) / 2, info.min, info.max
        ),
        "one value": lambda: np.full(n, info.min + 77),
        "sorted": lambda: np.sort(spread),
        "hot among spread": lambda: np.where(rng.random(n) < 0.97, info.min + 200, spread),
        "alternating neighbours": lambda: np.where(i % 2 == 0, info.min + 4, info.min + 5),
        "each value in turn": lambda: info.min + i % 256,
        "the ends": lambda: np.where(i % 3 == 0, info.min, info.max),
    }[pattern]()
    return np.asarray(x).astype(dtype)


# ---- banked and private, pinned: rows binned one by one into their counters ----


@pytest.mark.parametrize("family", ["banked", "private"])
@pytest.mark.parametrize("pattern", BYTE_PATTERNS)
def test_byte_families_pinned_count_every_pattern(family: str, pattern: str) -> None:
    # 2^25 + 7 rows: about 280 a thread of the private family (896 threads on each of 132
    # SMs), so one value wraps every thread's 8-bit counter; an odd length leaves a ragged tail
    # and a misaligned start a head.
    for dtype in [np.uint8, np.int8]:
        info = np.iinfo(dtype)
        x = bytes_of(pattern, dtype, (1 << 25) + 8)[1:]
        edges = (info.min, info.max + 1)
        for bins in [256, 100, 7]:
            want, _ = np.histogram(x, bins, range=edges)
            got = counts(x, bins, family, range=edges)
            np.testing.assert_array_equal(got, want, err_msg=f"{dtype.__name__} {bins} bins")


@pytest.mark.parametrize("family", ["banked", "private"])
@pytest.mark.parametrize("bins", [1, 64, 255, 1000])
def test_byte_families_pinned_leave_rows_not_counted_out(family: str, bins: int) -> None:
    # Float rows with NaN, infinities, values outside and on the edges: rows not counted go to
    # the spare counter, never merged; closed on either side; through a frame with nulls too.
    rng = rng_for("floats", family, bins)
    x = strays(rng.random((1 << 24) + 3, dtype=np.float32))
    for closed in ["left", "right"]:
        want = gh.histogram(x, bins, range=(0, 1), closed=closed, device="cpu")["count"]
        got = counts(x, bins, family, range=(0, 1), closed=closed)
        np.testing.assert_array_equal(got, want.to_numpy(), err_msg=closed)
    frame = pl.DataFrame({"x": x}).with_columns(
        pl.when(pl.int_range(pl.len()) % 5 == 0).then(None).otherwise(pl.col("x")).alias("x")
    )
    run = lambda d, k: frame.select(  # noqa: E731
        pl.col("x").gpu_hist.histogram(bins, range=(0, 1), device=d, kernel=k)
    )
    assert run("gpu", family).equals(run("cpu", "auto"))


# ---- radix, pinned: the leaner partition pass before seg_scan and the count pass ----


@pytest.mark.parametrize("bins", [1 << 20, 1 << 22, (1 << 24) + 3])
@pytest.mark.parametrize("dist", ["uniform", "normal", "sorted", "one value", "strays"])
def test_radix_counts_every_pattern(bins: int, dist: str) -> None:
    # 2^25 + 8 rows, a misaligned start: whole tiles, then a last partial one and a ragged
    # tail; 1M bins make the count pass's long runs, 4M and 16M its short ones; rows not counted
    # (strays) fill the partition of their own.
    rng = rng_for("radix", bins, dist)
    n = (1 << 25) + 9
    x = {
        "uniform": lambda: rng.random(n),
        "normal": lambda: rng.normal(0.5, 0.05, n),
        "sorted": lambda: np.sort(rng.random(n)),
        "one value": lambda: np.full(n, 0.3),
        "strays": lambda: strays(rng.random(n)),
    }[dist]()[1:].astype(np.float32)
    span: tuple[float, float] = (0, 1)
    if bins > 1 << 24:
        # float32 edges over [0, 1] cannot make more than 2^24 bins of positive width: numpy
        # and we refuse them alike (docs/semantics.md), and float64 bounds make float64 bins
        # for the same float32 rows (numpy's types, NEP 50).
        with pytest.raises(ValueError, match="Too many bins"):
            np.histogram(x, bins, range=span)
        with pytest.raises(pl.exceptions.ComputeError, match=r"too many bins .* in float32"):
            counts(x, bins, "radix", range=span)
        span = (np.float64(0), np.float64(1))
    want, edges = np.histogram(x, bins=bins, range=span)
    assert edges.dtype == (np.float32 if bins <= 1 << 24 else np.float64)
    np.testing.assert_array_equal(counts(x, bins, "radix", range=span), want)
    if dist == "strays":
        right = gh.histogram(x, bins, range=span, closed="right", device="cpu")["count"]
        got = counts(x, bins, "radix", range=span, closed="right")
        np.testing.assert_array_equal(got, right.to_numpy())


@pytest.mark.parametrize("rows", [1, 1000, 16384 * 4 - 1, 16384 * 4, 16384 * 4 + 1, 3 << 20])
def test_radix_at_tile_boundaries(rows: int) -> None:
    # Fewer rows than a tile, a tile of float32 units (16,384 x 4 rows) and one row either side.
    rng = rng_for("radix tiles", rows)
    x = strays(rng.random(rows + 1, dtype=np.float32))[1:]
    want, _ = np.histogram(x, bins=1 << 20, range=(0, 1))
    np.testing.assert_array_equal(counts(x, 1 << 20, "radix", range=(0, 1)), want)


def test_radix_counts_2d_cells_and_nulls() -> None:
    # A (n, 2) array's 1024 x 1024 cells (1M: the 2-D target's grid), every row's cell its
    # coordinates' bins, with strays in either column; then host columns with nulls.
    rng = rng_for("radix 2d")
    xy = rng.random(((1 << 22) + 5, 2)).astype(np.float32)
    xy[::7] = np.float32(0.25)
    xy[1::11, 0] = np.nan
    xy[2::13, 1] = 2.0
    xy[3::17, 0] = -INF
    xy[4::19, 1] = 1.0
    expected, _ = np.histogramdd(xy, bins=1024, range=[(0, 1), (0, 1)])
    got = gh.histogramdd(cp.asarray(xy), bins=1024, range=[(0, 1), (0, 1)], kernel="radix")
    np.testing.assert_array_equal(got["count"].to_numpy(), expected.ravel())
    frame = pl.DataFrame({"x": xy[:, 0], "y": xy[:, 1]}).with_columns(
        pl.when(pl.int_range(pl.len()) % 9 == 0).then(None).otherwise(pl.col("y")).alias("y")
    )
    run = lambda d, k: frame.select(  # noqa: E731
        gh.histogramdd("x", "y", bins=1024, range=[(0, 1), (0, 1)], device=d, kernel=k)
    )
    assert run("gpu", "radix").equals(run("cpu", "auto"))


def test_radix_and_private_refuse_weights() -> None:
    # Refused where the call is written (tests/args/test_kernel_argument.py), device arrays too;
    # the next call counts.
    x = cp.asarray(np.arange(1000, dtype=np.float32))
    w = cp.ones(1000, dtype=cp.float64)
    for kernel in ["radix", "banked", "private"]:
        with pytest.raises(ValueError, match="weighted sums"):
            gh.histogram(x, 64, weights=w, kernel=kernel)
        with pytest.raises(ValueError, match="weighted sums"):
            gh.histogramdd(x, x, bins=8, weights=w, kernel=kernel)
    assert gh.histogram(x, 64, weights=w)["count"].sum() == 1000


# ---- as the plan chooses them, where a tuning names them (a child process each) ----


CHILD = textwrap.dedent(
    """
    import json, sys, zlib
    import cupy as cp
    import numpy as np
    import polars_gpu_hist as gh
    import polars_gpu_hist.numpy as ghnp

    cases = json.loads(sys.argv[1])
    out = []
    for dtype, pattern, n, bins, lo, hi in cases:
        rng = np.random.default_rng(zlib.crc32(repr((dtype, pattern, n)).encode()))
        if dtype == "float32":
            x = rng.random(n, dtype=np.float32)
            if pattern == "strays":
                x[::11] = np.nan
                x[1::13] = np.inf
                x[3::19] = 1.5
                x[5::29] = 1.0
            elif pattern == "sorted":
                x = np.sort(x)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
            if pattern == "one value":
                x[:] = info.min + 77
            elif pattern == "image":
                x = np.clip(rng.normal(0, 1, n) * 23 + (info.min + info.max) / 2,
                            info.min, info.max).astype(dtype)
            elif pattern == "sorted":
                x = np.sort(x)
        d = cp.asarray(x)
        want, _ = np.histogram(x, bins, range=(lo, hi))
        got, _ = ghnp.histogram(d, bins, range=(lo, hi))
        kernels = [l for l in gh.explain(d, bins, range=(lo, hi)).splitlines()
                   if l.startswith("kernel")]
        out.append([bool(np.array_equal(cp.asnumpy(got), want)), kernels])
    print(json.dumps(out))
    """
)


def tuned(tuning: str, cases: list[list]) -> list[list]:
    """Each case counted in a child process whose GPU opens with `tuning`: [equal to numpy,
    explain's kernel lines]."""
    env = dict(os.environ, POLARS_GPU_HIST_TUNING=tuning)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(cases)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("family", "more"), [("banked", ""), ("banked", ",banked_blocks=1"), ("private", "")]
)
def test_bytes_counted_by_value_take_a_tuned_family(family: str, more: str) -> None:
    # uint8 and int8 columns of 2^25 rows count by value into 256 counters, then fold: into
    # 256, 10 and 64 bins over part of the values.
    cases = [
        [dtype, pattern, (1 << 25) + 3, bins, lo, hi]
        for dtype, lo0 in [("uint8", 0), ("int8", -128)]
        for pattern in ["uniform", "image", "one value", "sorted"]
        for bins, lo, hi in [(256, lo0, lo0 + 256), (10, lo0, lo0 + 256), (64, lo0 + 16, lo0 + 240)]
    ]
    for case, (equal, kernels) in zip(cases, tuned(f"bytes={family}{more}", cases)):
        assert equal, case
        assert any(f"count_{family}_" in k for k in kernels), (case, kernels)


@pytest.mark.parametrize("count", ["paired", "batched"])
def test_large_bins_take_radix_where_tuned(count: str) -> None:
    cases = [
        ["float32", pattern, (1 << 25) + 1, bins, 0.0, 1.0]
        for pattern in ["uniform", "strays", "sorted"]
        for bins in [1 << 20, 1 << 24]
    ]
    results = tuned(f"large_bins=radix,radix_count={count}", cases)
    for case, (equal, kernels) in zip(cases, results):
        # (Sorted rows run long in one bin: the call's sample sends them to the global family,
        # which explain, without rows to sample, does not see.)
        assert equal, case
        assert any("count_radix_" in k for k in kernels), (case, kernels)


def test_todays_families_where_a_tuning_names_them() -> None:
    # The choices made before the lab timed the candidates, named: shared bytes, batched large
    # bins (whatever SM90 says now).
    cases = [
        ["uint8", "uniform", (1 << 20) + 3, 256, 0, 256],
        ["float32", "uniform", (1 << 22) + 1, 1 << 20, 0.0, 1.0],
    ]
    results = tuned("bytes=shared,large_bins=batched,interleaved=no", cases)
    for (equal, kernels), family in zip(results, ["count_shared_uint8_index", "count_batched"]):
        assert equal
        assert any(family in k for k in kernels), kernels


# ---- an (n, d) array's rows read whole a 16-byte load, where a tuning says so ----


ROWS_CHILD = textwrap.dedent(
    """
    import json, sys
    import cupy as cp
    import numpy as np
    import polars_gpu_hist as gh
    import polars_gpu_hist.numpy as ghnp

    rng = np.random.default_rng(5)
    out = []
    for dtype, d, bins, start, weighted in json.loads(sys.argv[1]):
        n = (1 << 22) + 7
        if dtype in ("float32", "float64"):
            x = rng.random((n, d)).astype(dtype)
            x[::7] = 0.25
            x[1::11, 0] = np.nan
            x[2::13, d - 1] = 2.0
            x[3::17, 0] = -np.inf
            x[4::19, d - 1] = 1.0
            ranges = [(0.0, 1.0)] * d
        else:
            x = rng.integers(0, 256, (n, d)).astype(dtype)
            ranges = [(0, 256)] * d
        x = x[start:]
        w = rng.random(len(x)) if weighted else None
        want, _ = np.histogramdd(x, bins, range=ranges, weights=w)
        got, _ = ghnp.histogramdd(
            cp.asarray(x), bins, range=ranges, weights=None if w is None else cp.asarray(w)
        )
        got = cp.asnumpy(got)
        equal = bool(np.allclose(got, want) if weighted else np.array_equal(got, want))
        out.append(equal)
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("large_bins", ["batched", "radix"])
def test_rows_of_one_array_read_whole_where_tuned(large_bins: str) -> None:
    # float32 pairs into 16^2 (shared), 256^2 (packed) and 1024^2 cells (the partition families),
    # a view from row 1 (a head of one row before the first 16-byte boundary), weights; float64
    # pairs (a row a load), four float32 columns, uint8 rows of 8, and float32 triples (12-byte
    # rows: read a column at a time).
    cases = [["float32", 2, bins, start, False] for bins in [16, 256, 1024] for start in [0, 1]]
    cases += [
        ["float32", 2, 16, 1, True],
        ["float64", 2, 1024, 1, False],
        ["float32", 4, 16, 3, False],
        ["uint8", 8, 2, 5, False],
        ["float32", 3, 64, 0, False],
    ]
    env = dict(os.environ, POLARS_GPU_HIST_TUNING=f"interleaved=yes,large_bins={large_bins}")
    done = subprocess.run(
        [sys.executable, "-c", ROWS_CHILD, json.dumps(cases)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(results), [c for c, ok in zip(cases, results) if not ok]
