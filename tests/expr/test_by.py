"""`by=` against `group_by().agg()` on the CPU: the same groups in order of first appearance,
one range shared by every group."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given

from support.strategies import (
    STRAYS,
    WIDE_KEYS,
    by_against_hashed_keys,
    by_cases,
    by_first_rows_case,
)


@given(by_cases())
@example((pl.DataFrame({"x": [1.0], "g": [1], "w": [1.0]}), {"bins": [1.0]}))
def test_by_equals_group_by_agg(case: tuple[pl.DataFrame, dict[str, Any]]) -> None:
    frame, kwargs = case
    try:
        by = pl.col("x").gpu_hist.histogram(by="g", device="cpu", **kwargs)
    except ValueError as e:
        # Refused where it is written (bins that are never valid): the 1-D call refuses the same.
        with pytest.raises(ValueError, match=re.escape(str(e))):
            pl.col("x").gpu_hist.histogram(device="cpu", **kwargs)
        return
    if frame.height == 0:
        # No groups, so group_by().agg() never calls the plugin: `by=` is held to the 1-D call on
        # the same empty column, which checks the bins all the same.
        try:
            frame.select(pl.col("x").gpu_hist.histogram(device="cpu", **kwargs))
        except pl.exceptions.PolarsError as e:
            same = re.escape(str(e).splitlines()[0][-30:])
            with pytest.raises(pl.exceptions.PolarsError, match=same):
                frame.select(by)
            return
        assert frame.select(by).unnest("x").height == 0
        return
    try:
        expected = (
            frame.group_by("g", maintain_order=True)
            .agg(pl.col("x").gpu_hist.histogram(device="cpu", **kwargs))
            .explode("x")
            .unnest("x")
        )
    except pl.exceptions.PolarsError as e:
        # Bins that collapse (a float32 range too narrow) are refused either way.
        message = str(e).splitlines()[0].split(": ", 1)[-1]
        with pytest.raises(pl.exceptions.PolarsError, match="too many bins"):
            frame.select(by)
        assert "too many bins" in message
        return
    got = frame.select(by).unnest("x")
    assert got.schema == expected.schema
    # Groups in order of first appearance, then bins: exactly group_by(maintain_order=True).
    np.testing.assert_array_equal(got["g"].to_numpy(), expected["g"].to_numpy())
    np.testing.assert_array_equal(got["bin_start"].to_numpy(), expected["bin_start"].to_numpy())
    np.testing.assert_array_equal(got["count"].to_numpy(), expected["count"].to_numpy())


@pytest.mark.parametrize(
    "layout",
    ["dense", "late key", "sparse span", "chunks"],
)
def test_by_orders_groups_by_first_appearance_in_long_columns(layout: str) -> None:
    """Integer keys are ranked by their first row: read in order until the whole span has
    appeared, the rest in parallel. Keys that first appear late, spans with holes and keys
    split over chunks keep numpy's counts and the order of `unique(maintain_order=True)`."""
    rng = np.random.default_rng(8)
    n = 1 << 19
    g = rng.integers(0, 1_000, n)
    if layout == "late key":
        g[n - 3] = 1_000  # only this row has it, long after the rows read in order
        g[300_000] = -7
    elif layout == "sparse span":
        g = rng.choice(np.arange(0, 200_000, 97), n)
    x = rng.random(n)
    frame = pl.DataFrame({"x": x, "g": g})
    if layout == "chunks":
        frame = pl.concat(
            [frame.slice(0, 70_001), frame.slice(70_001, 1), frame.slice(70_002, n)],
            rechunk=False,
        )
        assert frame["g"].n_chunks() == 3
    out = frame.select(
        pl.col("x").gpu_hist.histogram(bins=4, range=(0.0, 1.0), by="g", device="cpu")
    ).unnest("x")
    keys = frame["g"].unique(maintain_order=True).to_numpy()
    np.testing.assert_array_equal(out["g"].to_numpy()[::4], keys)
    counts = out["count"].to_numpy().reshape(-1, 4)
    for k in (0, len(keys) // 2, len(keys) - 1):
        expected, _ = np.histogram(x[g == keys[k]], bins=4, range=(0.0, 1.0))
        np.testing.assert_array_equal(counts[k], expected)
    assert counts.sum() == n


@pytest.mark.parametrize("dtype", WIDE_KEYS)
@pytest.mark.parametrize("stray", STRAYS)
def test_by_groups_from_the_first_rows_are_checked_against_every_row(
    dtype: pl.DataType, stray: str
) -> None:
    """Wide integer keys are grouped from the first rows where those show every key of a narrow
    span: every later row is checked against that span while it is counted, and a key outside
    it has the count redone from every row, so the groups and counts are those of hashing."""
    by_against_hashed_keys(by_first_rows_case(dtype, stray), "cpu")


def test_by_shares_the_whole_columns_range() -> None:
    frame = pl.DataFrame({"x": [0.0, 1.0, 10.0, 11.0], "g": ["a", "a", "b", "b"]})
    out = frame.select(pl.col("x").gpu_hist.histogram(bins=2, by="g")).unnest("x")
    assert out["bin_start"].to_list() == [0.0, 5.5, 0.0, 5.5]
    assert out["count"].to_list() == [2, 0, 0, 2]


def test_by_key_of_another_length_is_an_error() -> None:
    frame = pl.DataFrame({"x": [0.0, 1.0, 2.0]})
    with pytest.raises(pl.exceptions.PolarsError, match="same length"):
        frame.select(pl.col("x").gpu_hist.histogram(bins=2, by=pl.Series("g", [1, 2])))
