"""Dask partials of CuPy partitions (marker `gpu`): one column's left on its GPU, several
columns' copied to the host; the same counts, sums and flow as the host's partials of the same
rows, merged on the GPU, and with host partials.

Needs no Dask (the partial tasks are plain functions) and no conftest."""

from __future__ import annotations

import numpy as np
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist.dask import tasks


@pytest.fixture(scope="module")
def cp():
    cupy = pytest.importorskip("cupy")
    if not gh.gpu_available():
        pytest.skip("needs an NVIDIA GPU with a driver")
    return cupy


def rows(seed: int, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """Values around [0, 1) with NaN, infinities and values on the edges; whole weights (sums
    exact in any order)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.5, 0.6, (1 << 15, dims))
    x[::101, 0] = np.nan
    x[::97, dims - 1] = np.inf
    x[::89, 0] = -np.inf
    x[::13, dims - 1] = 1.0
    x[::17, 0] = 0.0
    w = rng.integers(-3, 5, len(x)).astype(np.float64)
    return (x[:, 0], w) if dims == 1 else (x, w)


def spec(dims: int, weighted: bool, device: str) -> tasks.Spec:
    kwargs = {
        "bins": 32 if dims == 1 else [8, 5],
        "range": (0.0, 1.0) if dims == 1 else [(0.0, 1.0), (0.25, 0.75)],
        "closed": "left",
        "weights": weighted,
        "device": device,
    }
    return tasks.Spec(kwargs, f"test-{dims}-{weighted}-{device}")


def host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dims", [1, 2])
def test_device_partials_equal_host_partials_and_merge_on_the_gpu(cp, dims, weighted) -> None:
    layout = "column" if dims == 1 else "rows"
    parts = [rows(seed, dims) for seed in range(3)]
    on_gpu = [
        tasks.fill(
            spec(dims, weighted, "gpu"), cp.asarray(x), cp.asarray(w) if weighted else None, layout
        )
        for x, w in parts
    ]
    on_host = [
        tasks.fill(spec(dims, weighted, "cpu"), x, w if weighted else None, layout)
        for x, w in parts
    ]
    for g, h in zip(on_gpu, on_host):
        # One axis: left on the GPU; several: their flow bins are split on the host.
        assert type(g.counts).__module__.startswith("cupy" if dims == 1 else "numpy")
        np.testing.assert_array_equal(host(g.counts), h.counts)
        if weighted:
            np.testing.assert_array_equal(host(g.squares), h.squares)
        assert g.flow == h.flow
        assert g.flow[2] > 0 and g.flow[3] > 0 and g.flow[4] > 0  # NaN, below, above seen
    merged = tasks.merge(*on_gpu)
    assert type(merged.counts).__module__.startswith("cupy" if dims == 1 else "numpy")
    mixed = tasks.merge(on_gpu[0], on_host[1], on_gpu[2])
    assert isinstance(mixed.counts, np.ndarray)
    expected = tasks.merge(*on_host)
    for total in (merged, mixed):
        np.testing.assert_array_equal(host(total.counts), expected.counts)
        assert total.flow == expected.flow
    # The Histogram made at the end equals one host fill of every row.
    x = np.concatenate([x for x, _ in parts])
    w = np.concatenate([w for _, w in parts])
    result = tasks.finish(spec(dims, weighted, "gpu"), *on_gpu)
    columns = (x,) if dims == 1 else (x[:, 0], x[:, 1])
    reference = gh.Histogram(**{**spec(dims, weighted, "cpu").kwargs}).fill(
        *columns, weights=w if weighted else None
    )
    np.testing.assert_array_equal(result.counts, reference.counts)
    assert result.flow == reference.flow
    if weighted:
        np.testing.assert_array_equal(result.variances(), reference.variances())


def test_float32_partitions_and_an_empty_one(cp) -> None:
    x = cp.asarray(np.linspace(-0.5, 1.5, 100_001, dtype=np.float32))
    s = spec(1, False, "gpu")
    partials = [tasks.fill(s, x, None, "column"), tasks.fill(s, x[:0], None, "column")]
    result = tasks.finish(s, *partials)
    expected, _ = np.histogram(host(x), bins=32, range=(0, 1))
    np.testing.assert_array_equal(result.counts, expected)
    assert result.flow.rows == x.size
    assert result._core.dtypes == ["Float32"]
