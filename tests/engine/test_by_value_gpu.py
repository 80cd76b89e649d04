"""Device columns counted by value, as numpy counts them."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist import numpy as ghnp
from support.by_value import NARROW, column, rows_by_value, values_of


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "uint16"])
@pytest.mark.parametrize("kind", ["uniform", "normal", "extremes", "sorted", "one"])
def test_device_columns_count_by_value_as_numpy(name: str, kind: str) -> None:
    import cupy as cp

    np_dtype = NARROW[name]
    info = np.iinfo(np_dtype)
    rng = np.random.default_rng(37)
    x = column(rng, np_dtype, kind, rows_by_value(np_dtype) + 13)
    d = cp.asarray(x)
    for kwargs in [
        {"bins": 256, "range": (0, 256)},
        # 16-bit columns of these rows count by value on the GPU past 32,768 equal bins, or with
        # edges.
        {"bins": 40_000, "range": (int(info.min), int(info.max) + 1)},
        {"bins": 10},
        {"bins": 64, "range": (int(info.min) + 3, int(info.max) // 2 + 0.5)},
        {"bins": sorted({int(info.min), -1, 0, 1, 17, int(info.max)} & values_of(info))},
        {"bins": int(info.max - info.min + 1), "range": (int(info.min), int(info.max) + 1)},
    ]:
        want, _ = np.histogram(x, **kwargs)
        got, _ = ghnp.histogram(d, **kwargs)
        np.testing.assert_array_equal(cp.asnumpy(got), want, err_msg=str(kwargs))
    # Host columns on the GPU: nulls, flow bins, the plan names the fold.
    s = pl.Series("x", x).scatter([0, 5, 9], None)
    got = s.gpu_hist.histogram(bins=[0, 3, 50, 100], device="gpu")
    want = s.gpu_hist.histogram(bins=[0, 3, 50, 100], device="cpu")
    assert got.equals(want)
    h_gpu = gh.Histogram(5, range=(0, 100), device="gpu")
    h_gpu.fill(x)
    h_cpu = gh.Histogram(5, range=(0, 100), device="cpu")
    h_cpu.fill(x)
    np.testing.assert_array_equal(h_gpu.values(flow=True), h_cpu.values(flow=True))
    assert "fold " in gh.explain(pl.Series("x", x), bins=[0, 3, 50, 100], device="gpu")
    if np.dtype(np_dtype).itemsize == 2:  # few equal bins, under 2^28 rows: row by row
        assert "fold " not in gh.explain(pl.Series("x", x), bins=10, device="gpu")
