"""`by=` with several keys (a list of columns, or a ``pl.struct``): one key field per key, groups
in order of first appearance, a null a value of its own in each key, equal to
``group_by(keys, maintain_order=True).agg(...)`` with the same binning."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_gpu_hist  # noqa: F401  (registers the namespace)
from support.several_keys import by, frames, group_by_agg


@given(frames(), st.sampled_from(["list", "struct", "lazy"]))
def test_several_keys_equal_group_by_agg(case: tuple[pl.DataFrame, list[str]], form: str) -> None:
    frame, keys = case
    binning = {"bins": 4, "range": (0.0, 1.0)}
    if form == "list":
        got = by(frame, keys, **binning)
    elif form == "struct":
        got = by(frame, pl.struct(keys), **binning)
    else:
        got = by(frame.lazy(), [pl.col(k) for k in keys], **binning)
    expected = group_by_agg(frame, keys, **binning)
    if frame.height == 0:
        # No groups: group_by().agg() never calls the plugin, and its schema is its own guess.
        assert got.height == 0
        assert got.columns == [*keys, "bin_start", "bin_end", "count"]
        return
    assert_frame_equal(got, expected)


@given(frames())
def test_several_keys_count_as_numpy_per_group(case: tuple[pl.DataFrame, list[str]]) -> None:
    """Independent of the plugin's own per-group call: numpy's histogram of each group."""
    frame, keys = case
    got = by(frame, keys, bins=3, range=(0.0, 1.0))
    groups = frame.group_by(keys, maintain_order=True).agg(pl.col("x"))
    assert got.height == 3 * groups.height
    for k in keys:
        assert got[k].to_list() == [v for v in groups[k].to_list() for _ in range(3)]
    expected = [
        c
        for values in groups["x"].to_list()
        for c in np.histogram(np.array([v for v in values if v is not None]), 3, (0.0, 1.0))[0]
    ]
    assert got["count"].to_list() == expected


@pytest.mark.parametrize("density", [False, True])
def test_the_shared_range_weights_and_density_follow_each_group(density: bool) -> None:
    frame = pl.DataFrame(
        {
            "x": [0.0, 1.0, 10.0, 11.0, 5.0, 6.0],
            "a": [1, 1, 2, 2, 1, 1],
            "b": ["p", "p", "q", "q", "q", "q"],
            "w": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        }
    )
    got = by(frame, ["a", "b"], bins=2, weights="w", density=density)
    expected = (
        frame.group_by(["a", "b"], maintain_order=True)
        .agg(
            pl.col("x").gpu_hist.histogram(
                bins=[0.0, 5.5, 11.0], weights="w", density=density, device="cpu"
            )
        )
        .explode("x")
        .unnest("x")
    )
    assert_frame_equal(got, expected)


def test_one_row_and_one_key_in_a_list() -> None:
    frame = pl.DataFrame({"x": [0.5], "a": [None], "b": ["z"]}, schema_overrides={"a": pl.Int32})
    got = by(frame, ["a", "b"], bins=2, range=(0.0, 1.0))
    assert got.to_dicts() == [
        {"a": None, "b": "z", "bin_start": 0.0, "bin_end": 0.5, "count": 0},
        {"a": None, "b": "z", "bin_start": 0.5, "bin_end": 1.0, "count": 1},
    ]
    # A list of one key is that key: today's single-key result.
    assert_frame_equal(by(frame, ["b"], bins=2), by(frame, "b", bins=2))


def test_keys_as_expressions_and_series_keep_their_names() -> None:
    frame = pl.DataFrame({"x": [0.1, 0.2, 0.9, 0.4], "t": [1, 2, 3, 4]})
    parity = pl.Series("parity", [0, 1, 0, 1])
    got = by(frame, [(pl.col("t") > 2).alias("late"), parity], bins=2, range=(0.0, 1.0))
    assert got.columns == ["late", "parity", "bin_start", "bin_end", "count"]
    assert got["count"].to_list() == [1, 0, 1, 0, 0, 1, 1, 0]


def test_a_struct_key_with_null_rows_reads_nulls_in_every_field() -> None:
    key = pl.Series("s", [{"a": 1, "b": "p"}, None, {"a": None, "b": None}, {"a": 1, "b": "p"}])
    frame = pl.DataFrame({"x": [0.1, 0.6, 0.7, 0.2], "s": key})
    got = by(frame, "s", bins=2, range=(0.0, 1.0))
    assert got.columns == ["a", "b", "bin_start", "bin_end", "count"]
    assert got["a"].to_list() == [1, 1, None, None]
    assert got["count"].to_list() == [2, 0, 0, 2]


def test_in_group_by_agg_and_over() -> None:
    """Inside ``agg`` Polars hands the plugin the keys without their names: the names travel
    with the options."""
    frame = pl.DataFrame(
        {"x": [0.1, 0.6, 0.7, 0.2, 0.3], "o": [1, 1, 1, 2, 2], "a": [1, 2, 1, 1, 1]}
    )
    frame = frame.with_columns(b=pl.col("a") * 10)
    hist = pl.col("x").gpu_hist.histogram(bins=2, range=(0.0, 1.0), by=["a", "b"], device="cpu")
    got = frame.group_by("o", maintain_order=True).agg(hist).explode("x").unnest("x")
    assert got.columns == ["o", "a", "b", "bin_start", "bin_end", "count"]
    assert got["count"].to_list() == [1, 1, 0, 1, 2, 0]


def test_many_groups_in_long_columns() -> None:
    """10^4 groups of two integer keys and of a string and a date key, over chunks."""
    rng = np.random.default_rng(3)
    n = 300_000
    a = rng.integers(0, 100, n)
    b = rng.integers(-50, 50, n)
    frame = pl.DataFrame({"x": rng.random(n), "a": a, "b": b})
    frame = pl.concat([frame.slice(0, 1000), frame.slice(1000, n)], rechunk=False)
    expected = group_by_agg(frame, ["a", "b"], bins=8, range=(0.0, 1.0))
    assert_frame_equal(by(frame, ["a", "b"], bins=8, range=(0.0, 1.0)), expected)
    mixed = frame.with_columns(
        pl.col("a").cast(pl.String), pl.date(2024, 1, 1) + pl.duration(days=pl.col("b"))
    )
    expected = group_by_agg(mixed, ["a", "b"], bins=8, range=(0.0, 1.0))
    assert_frame_equal(by(mixed, ["a", "b"], bins=8, range=(0.0, 1.0)), expected)


def test_combinations_past_32_bits() -> None:
    """Four keys of 2^9 distinct values each: 2^36 combinations, numbered again on the way."""
    n = 1 << 12
    i = np.arange(n)
    frame = pl.DataFrame(
        {"x": (i % 10) / 10, "a": i % 512, "b": (i * 7) % 512, "c": (i * 13) % 512, "d": i // 8}
    )
    keys = ["a", "b", "c", "d"]
    expected = group_by_agg(frame, keys, bins=2, range=(0.0, 1.0))
    assert_frame_equal(by(frame, keys, bins=2, range=(0.0, 1.0)), expected)


@pytest.mark.parametrize(
    ("keys", "error", "message"),
    [
        ([], ValueError, "`by` got an empty list"),
        (["a", 3], TypeError, "`by` takes a column name"),
        (["a", "a"], ValueError, "`by` has two keys named 'a'"),
        (["a", pl.Series("s", [1, 2])], pl.exceptions.PolarsError, '`by` key "s" has 2 rows'),
        (["a", "l"], pl.exceptions.PolarsError, 'the `by` key "l" is a List.*explode'),
        (["a", "f"], pl.exceptions.PolarsError, '`by`.*"f".*cast it to an integer'),
        (["a", "count"], pl.exceptions.PolarsError, 'the `by` key "count".*alias it'),
        (pl.struct("a", pl.struct("a").alias("n")), pl.exceptions.PolarsError, '"n" is a Struct'),
    ],
)
def test_bad_keys_are_clear_errors(keys: Any, error: type[Exception], message: str) -> None:
    frame = pl.DataFrame(
        {"x": [0.1, 0.2, 0.3], "a": [1, 2, 3], "l": [[1], [2], [3]], "f": [1.0, 2.0, 3.0]}
    ).with_columns(count=pl.col("a"))
    with pytest.raises(error, match=message):
        by(frame, keys, bins=2)
