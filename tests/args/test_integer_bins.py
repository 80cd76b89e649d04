"""`bins="integer"`: one bin per integer, numpy's `arange` edges, with a range and on dates."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import polars_gpu_hist as gh


@settings(max_examples=80, deadline=None)
@given(
    x=hnp.arrays(np.int64, st.integers(1, 200), elements=st.integers(-50, 50)),
    dtype=st.sampled_from([pl.Int8, pl.Int32, pl.UInt16, pl.Int64]),
)
def test_integer_bins_are_numpy_arange_edges(x: np.ndarray, dtype: pl.DataType) -> None:
    if dtype == pl.UInt16:
        x = np.abs(x)
    s = pl.Series("x", x).cast(dtype)
    lo, hi = int(x.min()), int(x.max())
    expected, edges = np.histogram(x, bins=np.arange(lo, hi + 2))
    out = gh.histogram(s, "integer", device="cpu")
    assert out["count"].to_list() == expected.tolist()
    assert out["bin_start"].to_list() == edges[:-1].astype(float).tolist()


def test_integer_bins_with_a_range_and_on_dates() -> None:
    s = pl.Series("n", [0, 1, 1, 2, 5, 9])
    out = gh.histogram(s, "integer", range=(1, 4), device="cpu")
    assert out["bin_start"].to_list() == [1.0, 2.0, 3.0, 4.0]
    # numpy's last bin [4, 5] is closed: the 5 counts, as np.histogram(s, np.arange(1, 6)).
    expected, _ = np.histogram(s.to_numpy(), np.arange(1, 6))
    assert out["count"].to_list() == expected.tolist() == [2, 1, 0, 1]
    days = pl.Series("d", [dt.date(2024, 1, 1), dt.date(2024, 1, 3), dt.date(2024, 1, 3)])
    out = gh.histogram(days, "integer", device="cpu")
    assert out["bin_start"].to_list() == [dt.date(2024, 1, d) for d in (1, 2, 3)]
    assert out["count"].to_list() == [1, 0, 2]
    with pytest.raises(pl.exceptions.PolarsError, match="integer"):
        gh.histogram(pl.Series([0.5]), "integer", device="cpu")
