"""Weighted sums are deterministic (issue 51 item 3, docs/semantics.md): each weight is rounded
once to a grid of 2^-k chosen per call, summed exactly, and rounded once to float64. They are
then math.fsum's correctly rounded sums wherever the weights lie on the grid, the same bits for
any thread count, chunking or task split, and within the documented bound of numpy's sums.

The fixed-point sums are opt-in: this module runs under POLARS_GPU_HIST_SUMS=fixed only
(tests/contract/test_fixed_sums_flag.py runs it so in a child process)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh
from support.fixed_sums import skip_unless_fixed_sums

skip_unless_fixed_sums()


def grid_exponent(largest: float, rows: int) -> int:
    """src/fixed.rs `exponent`: largest < 2^e, rows < 2^b, k = 125 - b - e."""
    _, e = math.frexp(largest)
    return 125 - rows.bit_length() - e


def sums(x: object, bins: int, w: object, range: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    out = gh.histogram(x, bins, range=range, weights=w, device="cpu")["count"]
    return np.asarray(out.to_numpy())


def exact_sums(x: np.ndarray, w: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    """The correctly rounded sum of each bin's weights (numpy's bins for equal bins)."""
    edges = np.linspace(lo, hi, bins + 1)
    idx = np.searchsorted(edges, x, side="right") - 1
    idx[x == hi] = bins - 1
    inside = (x >= lo) & (x <= hi)
    return np.array([math.fsum(w[inside & (idx == i)]) for i in range(bins)])


weights_on_the_grid = st.lists(
    st.tuples(
        st.floats(0, 1, exclude_max=True),
        # Magnitudes within 2^40 of one another: on the grid for any row count below 2^32.
        st.floats(2.0**-20, 2.0**20) | st.floats(-(2.0**20), -(2.0**-20)) | st.just(0.0),
    ),
    min_size=1,
    max_size=300,
)


@settings(max_examples=150, deadline=None)
@given(weights_on_the_grid, st.sampled_from([1, 3, 10, 64]))
def test_sums_are_the_correctly_rounded_exact_sums(
    rows: list[tuple[float, float]], bins: int
) -> None:
    x = np.array([r[0] for r in rows])
    w = np.array([r[1] for r in rows])
    got = sums(x, bins, w, range=(0, 1))
    np.testing.assert_array_equal(got, exact_sums(x, w, bins, 0.0, 1.0))
    # numpy's float sums are within rounding of them.
    want = np.histogram(x, bins, range=(0, 1), weights=w)[0]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=len(rows) * 2.0**-40)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.floats(allow_nan=False, allow_infinity=False, width=64).filter(lambda v: abs(v) < 1e300),
        min_size=1,
        max_size=200,
    )
)
def test_weights_off_the_grid_are_within_the_bound(ws: list[float]) -> None:
    """Any finite weights: each bin within rows * 2^-(k + 1) of its exact sum, before the one
    rounding to float64 (half an ulp of the result)."""
    w = np.array(ws)
    x = np.linspace(0.0, 0.999, len(ws))
    got = sums(x, 4, w, range=(0, 1))
    exact = exact_sums(x, w, 4, 0.0, 1.0)
    largest = float(np.max(np.abs(w)))
    if largest == 0.0:
        assert (got == 0).all()
        return
    step = 2.0 ** -grid_exponent(largest, len(ws))
    bound = len(ws) * step / 2 + np.spacing(np.abs(exact))
    assert (np.abs(got - exact) <= bound).all(), (got, exact, bound)


def test_exact_where_float_sums_lose_bits() -> None:
    x = np.full(4, 0.5)
    w = np.array([1e16, 1.0, 1.0, -1e16])
    # numpy adds in order: 1e16 + 1 + 1 rounds the ones away.
    assert np.histogram(x, 1, range=(0, 1), weights=w)[0].tolist() == [0.0]
    assert sums(x, 1, w, range=(0, 1)).tolist() == [2.0]
    # Integer and dyadic weights: exact in any case.
    w = np.array([0.1, 0.2, 0.3, -0.6])
    assert sums(x, 1, w, range=(0, 1)).tolist() == [math.fsum(w)]


def test_non_finite_weights_keep_numpy_float_sums_across_tasks() -> None:
    """A NaN or both infinities make a bin NaN, one infinity that infinity, wherever in the rows
    (and so in whichever task) they are."""
    n = 1 << 18
    x = np.linspace(0, 1, n, endpoint=False)
    w = np.ones(n)
    w[10] = np.nan  # bin 0
    w[n // 4 + 7] = np.inf  # bin 1
    w[n // 2 + 3] = np.inf  # bin 2, with -inf far away in the same bin
    w[3 * n // 4 - 1] = -np.inf
    w[3 * n // 4 + 5] = -np.inf  # bin 3
    got = sums(x, 4, w, range=(0, 1))
    assert np.isnan(got[0]) and np.isnan(got[2])
    assert got[1] == np.inf and got[3] == -np.inf
    want = np.histogram(x, 4, range=(0, 1), weights=w)[0]
    np.testing.assert_array_equal(got, want)


def test_float32_weights_and_null_weights() -> None:
    x = pl.Series("x", [0.1, 0.2, 0.3, 0.7, 0.8], dtype=pl.Float32)
    w = pl.Series("w", [0.1, None, 0.3, 2.5, None], dtype=pl.Float32)
    got = sums(x, 2, w, range=(0, 1)).tolist()
    w64 = np.float64(np.float32(0.1)), np.float64(np.float32(0.3))
    assert got == [math.fsum(w64), 2.5]


def _digest_script(sums_way: str | None = None) -> str:
    return """
import hashlib, json, sys
import numpy as np, polars as pl
import polars_gpu_hist as gh
rng = np.random.default_rng(51)
x = rng.random(600_000)
w = rng.standard_normal(600_000) * np.exp(rng.uniform(-20, 20, 600_000))
out = {}
for bins in (256, 65536):
    for chunks in (1, 7):
        xs = pl.concat([pl.Series(p) for p in np.array_split(x, chunks)], rechunk=False)
        ws = pl.concat([pl.Series(p) for p in np.array_split(w, chunks)], rechunk=False)
        s = gh.histogram(xs, bins, range=(0, 1), weights=ws, device="cpu")["count"].to_numpy()
        out[f"{bins}/{chunks}"] = hashlib.sha256(s.tobytes()).hexdigest()
print(json.dumps(out))
"""


def _digests(threads: int, sums_way: str | None = None) -> dict[str, str]:
    env = dict(os.environ, POLARS_MAX_THREADS=str(threads))
    if sums_way is not None:
        env["POLARS_GPU_HIST_SUMS"] = sums_way
    out = subprocess.run(
        [sys.executable, "-c", _digest_script()],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_same_bits_for_every_thread_count_and_chunking() -> None:
    """One, two and three threads (so one, two and three tasks and their merges), one chunk or
    seven: the same bits at 256 and 65,536 bins."""
    runs = [_digests(t) for t in (1, 2, 3)]
    for bins in (256, 65536):
        seen = {r[f"{bins}/{c}"] for r in runs for c in (1, 7)}
        assert len(seen) == 1, bins


def test_float_sums_are_kept_behind_the_switch() -> None:
    """POLARS_GPU_HIST_SUMS=float sums in float64 additions (the benchmark's baseline): close to
    the fixed-point sums, not held to their bits."""
    code = """
import numpy as np, polars_gpu_hist as gh, json
rng = np.random.default_rng(3)
x, w = rng.random(10_000), rng.standard_normal(10_000)
print(json.dumps(gh.histogram(x, 16, range=(0, 1), weights=w, device="cpu")["count"].to_list()))
"""
    env = dict(os.environ, POLARS_GPU_HIST_SUMS="float")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    floats = np.array(json.loads(out.stdout.strip().splitlines()[-1]))
    rng = np.random.default_rng(3)
    x, w = rng.random(10_000), rng.standard_normal(10_000)
    np.testing.assert_allclose(floats, sums(x, 16, w, range=(0, 1)), rtol=1e-12)


@pytest.mark.parametrize("bins", [8, 300])
def test_histogram_fills_sum_weights_and_squares_exactly(bins: int) -> None:
    """A Histogram's weighted fill: the sums and the sums of squares are the correctly rounded
    exact sums, and two fills merged give the one fill's bits where the sums are exact in float64
    (dyadic weights)."""
    rng = np.random.default_rng(bins)
    x = rng.random(50_000)
    w = rng.integers(-64, 64, x.size) / 8.0
    one = gh.Histogram(bins, range=(0, 1), weights=True)
    one.fill(x, weights=w)
    exact = exact_sums(x, w, bins, 0.0, 1.0)
    np.testing.assert_array_equal(one.values(), exact)
    np.testing.assert_array_equal(one.variances(), exact_sums(x, w * w, bins, 0.0, 1.0))
    halves = gh.Histogram(bins, range=(0, 1), weights=True)
    halves.fill(x[: x.size // 3], weights=w[: x.size // 3])
    rest = gh.Histogram(bins, range=(0, 1), weights=True)
    rest.fill(x[x.size // 3 :], weights=w[x.size // 3 :])
    merged = halves + rest
    np.testing.assert_array_equal(merged.values(), one.values())
    np.testing.assert_array_equal(merged.variances(), one.variances())
