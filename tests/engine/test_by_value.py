"""Narrow integer columns with enough rows are counted value by value, one counter per value of the
type, then folded into their bins by a table of every value's bin made by the CPU's own rule
(`ByValue` in src/job.rs, src/cpu/table.rs): 8-bit columns on both backends, 16-bit columns on the
GPU from 2^24 rows. The counts must be numpy's for every binning: equal bins over any range,
explicit edges, both closed sides, flow bins, nulls."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh
from polars_gpu_hist import numpy as ghnp
from support.by_value import NARROW, binnings, column, rows_by_value, values_of


@pytest.mark.parametrize("name", ["int8", "uint8"])
@settings(max_examples=40, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["uniform", "normal", "extremes", "sorted", "one"]))
def test_eight_bit_columns_count_as_numpy(name: str, data: st.DataObject, kind: str) -> None:
    np_dtype = NARROW[name]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    rows = rows_by_value(np_dtype) + data.draw(st.integers(0, 5000))
    x = column(rng, np_dtype, kind, rows)
    kwargs = data.draw(binnings(np_dtype))
    want, want_edges = np.histogram(x, **kwargs)
    got, got_edges = ghnp.histogram(x, **kwargs)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_edges, want_edges)


@pytest.mark.parametrize("name", ["int16", "uint16"])
@pytest.mark.parametrize("kind", ["uniform", "normal", "extremes", "one"])
def test_sixteen_bit_columns_count_as_numpy(name: str, kind: str) -> None:
    """Binned row by row on the CPU (counting by value did not pay there): numpy's counts."""
    np_dtype = NARROW[name]
    rng = np.random.default_rng(16)
    x = column(rng, np_dtype, kind, (1 << 20) + 7)
    info = np.iinfo(np_dtype)
    for kwargs in [
        {"bins": 65_536, "range": (int(info.min), int(info.max) + 1)},
        {"bins": 1000, "range": (-300.5, 20_000.25)},
        {"bins": sorted({int(info.min), -1, 0, 1, 255, 256, int(info.max)} & values_of(info))},
        {"bins": 10},
    ]:
        want, _ = np.histogram(x, **kwargs)
        got, _ = ghnp.histogram(x, **kwargs)
        np.testing.assert_array_equal(got, want, err_msg=str(kwargs))


def test_nulls_closed_right_and_flow_count_as_binning_row_by_row() -> None:
    """The table's fold against the same column with fewer rows than the path needs (binned row
    by row): Polars' closed right, nulls, flow bins, many chunks."""
    rng = np.random.default_rng(5)
    x = column(rng, np.int8, "uniform", rows_by_value(np.int8) * 2)
    mask = rng.random(x.size) < 0.1
    s = pl.Series("x", x).scatter(np.flatnonzero(mask), None)
    s = pl.concat([s[:1000], s[1000:5000], s[5000:]], rechunk=False)
    for kwargs in [
        {"bins": [-100, -3, 0, 5, 90]},
        {"bins": 9, "range": (-50, 50), "closed": "right"},
        {"bins": [-100, -3, 0, 5, 90], "closed": "right"},
    ]:
        got = s.gpu_hist.histogram(**kwargs)
        parts = [s[i : i + 1000].gpu_hist.histogram(**kwargs) for i in range(0, s.len(), 1000)]
        want = np.sum([p.struct.field("count").to_numpy() for p in parts], axis=0)
        np.testing.assert_array_equal(got.struct.field("count").to_numpy(), want, str(kwargs))
    whole = gh.Histogram(7, range=(-20, 20))
    whole.fill(x)
    pieces = gh.Histogram(7, range=(-20, 20))
    for i in range(0, x.size, 1000):
        pieces.fill(x[i : i + 1000])
    np.testing.assert_array_equal(whole.values(flow=True), pieces.values(flow=True))
    assert whole.values(flow=True).sum() == x.size


def test_explain_names_the_path() -> None:
    text = gh.explain(pl.Series("x", np.zeros(rows_by_value(np.uint8), np.uint8)), bins=10)
    assert "one counter per uint8 value (256)" in text, text
    few = gh.explain(pl.Series("x", np.zeros(100, np.uint8)), bins=10)
    assert "one counter per" not in few, few
    sixteen = gh.explain(pl.Series("x", np.zeros(1 << 24, np.uint16)), bins=10, device="cpu")
    assert "one counter per" not in sixteen, sixteen
    weighted = gh.explain(
        pl.Series("x", np.zeros(rows_by_value(np.uint8), np.uint8)), bins=10, weights=True
    )
    assert "one counter per" not in weighted, weighted
