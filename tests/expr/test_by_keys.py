"""`by=` keys of any span: integer keys up to their type's extremes (a span that does not fit
its width) group as Polars' ``group_by`` groups them, on the general path where no table of the
span fits."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from support.by_keys import INT_KEYS, bounds, by_against_group_by


@given(st.sampled_from(INT_KEYS), st.data())
def test_keys_up_to_the_type_extremes_group_as_group_by(dtype: Any, data: st.DataObject) -> None:
    lo, hi = bounds(dtype)
    extreme = st.sampled_from([lo, hi, lo + 1, hi - 1, max(lo, 0), min(hi, 1)])
    keys = data.draw(st.lists(st.one_of(extreme, st.integers(lo, hi)), min_size=1, max_size=80))
    x = data.draw(st.lists(st.floats(0.0, 1.0), min_size=len(keys), max_size=len(keys)), label="x")
    by_against_group_by(pl.DataFrame({"x": x, "g": pl.Series(keys, dtype=dtype)}))


@pytest.mark.parametrize("dtype", INT_KEYS)
def test_the_whole_span_of_each_key_type(dtype: Any) -> None:
    lo, hi = bounds(dtype)
    keys = pl.Series([lo, hi, lo, 0 if lo < 0 else 1, hi], dtype=dtype)
    by_against_group_by(pl.DataFrame({"x": [0.1, 0.2, 0.3, 0.6, 0.9], "g": keys}))


def test_the_reported_int64_span_and_datetime_keys() -> None:
    keys = pl.Series([-(2**63), 2**63 - 1], dtype=pl.Int64)
    frame = pl.DataFrame({"x": [0.25, 0.75], "g": keys})
    by_against_group_by(frame)
    # Temporal keys read their physical Int64 values.
    by_against_group_by(frame.with_columns(pl.col("g").cast(pl.Datetime("ns"))))


@pytest.mark.parametrize("dtype", [pl.Int32, pl.Int64, pl.UInt32])
def test_first_rows_narrow_then_the_extremes(dtype: Any) -> None:
    """A long column whose first rows hold a narrow span, with the type's extremes later: the
    count from the first rows' table is redone on the general path."""
    lo, hi = bounds(dtype)
    n = (1 << 18) * 2 + 10
    g = (np.arange(n, dtype=np.int64) * 31) % 1000 + 100
    keys = pl.Series(g).cast(dtype).scatter([n - 3, n - 1], [lo, hi])
    x = np.random.default_rng(5).random(n)
    by_against_group_by(pl.DataFrame({"x": x, "g": keys}))
