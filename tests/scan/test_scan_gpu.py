"""The scan's GPU fill (issue 47): morsels handed to the sink's feeder thread, counted in batches
on the GPU, give the CPU's counts (every count, the flow, the edges), for files and LazyFrames,
weights, several columns, a range from the data, many bins, by= and the lazy namespace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist import _native


@pytest.fixture(scope="module")
def path(tmp_path_factory) -> Path:
    rng = np.random.default_rng(47)
    n = 9_000_000  # two of the feeder's batches of 2^22 rows and a part
    x = rng.random(n, dtype=np.float32)
    x[::1013] = np.nan
    frame = pl.DataFrame(
        {
            "x": x,
            "y": rng.normal(0, 1, n),
            "i": rng.integers(-1000, 1000, n),
            "w": rng.integers(0, 4, n).astype(np.float64),
            "k": rng.choice(["a", "b"], n),
        }
    ).with_columns(pl.when(pl.int_range(pl.len()) % 31 == 0).then(None).otherwise("w").alias("w"))
    out = tmp_path_factory.mktemp("gpu") / "d.parquet"
    frame.write_parquet(out, row_group_size=1 << 18)
    return out


@pytest.mark.parametrize(
    "column, kwargs",
    [
        ("x", dict(bins=256, range=(0, 1))),
        ("x", dict(bins=65_536, range=(0, 1))),
        ("x", dict(bins=1 << 20, range=(0, 1))),
        ("x", dict(bins=100, range="auto", weights="w")),
        ("y", dict(bins="sturges")),
        ("i", dict(bins="integer")),
        (["x", "y"], dict(bins=[64, 64], range=[(0, 1), (-3, 3)])),
    ],
)
def test_the_gpu_fill_equals_the_cpus(path: Path, column, kwargs) -> None:
    cpu = gh.histogram_scan(path, column, **kwargs, device="cpu")
    gpu = gh.histogram_scan(path, column, **kwargs, device="gpu")
    assert gpu == cpu or (gpu.weighted and np.allclose(gpu.counts, cpu.counts, rtol=1e-12))
    assert gpu.flow == cpu.flow


def test_auto_takes_the_gpu_for_a_scan(path: Path) -> None:
    h = gh.Histogram(256, range=(0, 1)).fill(pl.Series("x", [], pl.Float32))
    assert _native.ScanSink(h._core, "gpu").counting == "batched on gpu"
    assert "batched on the GPU" in gh.explain(pl.scan_parquet(path), 256, column="x", range=(0, 1))


def test_the_lazy_namespace_on_the_gpu(path: Path) -> None:
    lf = pl.scan_parquet(path)
    for kwargs in [dict(bins=50), dict(bins=8, by="k", range=(0, 1))]:
        got = lf.gpu_hist.histogram("x", **kwargs, device="gpu")
        want = lf.select(pl.col("x").gpu_hist.histogram(**kwargs, device="cpu")).collect()
        assert got.equals(want)
