"""Arguments are checked where they are written (when the expression is built, at the call),
and again where the plugin runs."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist import _native


@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        ({"device": "tpu"}, ValueError, "device"),
        ({"closed": "both"}, ValueError, "closed"),
        ({"kernel": "fast"}, ValueError, "kernel"),
        ({"bins": 2**63}, ValueError, "bins"),
        ({"density": "no"}, TypeError, "density"),
        ({"bins": {"a": 1}}, TypeError, "bins"),
        ({"bins": {1.0, 2.0}}, TypeError, "bins"),
        ({"bins": ["0", "1"]}, TypeError, "edge"),
        ({"bins": "many"}, ValueError, "bins"),
        ({"range": "auto"}, TypeError, "range"),
        ({"range": (0, 1, 2)}, TypeError, "range"),
        ({"range": (1, 0)}, ValueError, r"`range` must have min <= max.*swap"),
        ({"range": (0, float("nan"))}, ValueError, r"`range` must be finite"),
        ({"range": (float("-inf"), 0)}, ValueError, r"`range` must be finite"),
        ({"range": (dt.date(2024, 2, 1), dt.date(2024, 1, 1))}, ValueError, "min <= max"),
        ({"bins": [2, 1]}, ValueError, r"`bins` edges must increase strictly.*sort"),
        ({"bins": [0, 1, 1]}, ValueError, "increase strictly"),
        ({"bins": [0, float("nan")]}, ValueError, r"`bins` edges must be numbers.*NaN"),
        ({"bins": [1.0]}, ValueError, "at least two edges"),
    ],
)
def test_bad_arguments_raise_when_the_expression_is_built(kwargs, error, names) -> None:
    kwargs = {"bins": 4, **kwargs}
    with pytest.raises(error, match=names):
        pl.col("x").gpu_hist.histogram(**kwargs)


def test_histogramdd_without_columns_fails_at_the_call() -> None:
    with pytest.raises(ValueError, match="2 to 8 columns"):
        gh.histogramdd()
    with pytest.raises(ValueError, match="2 to 8 columns, got 1: use histogram"):
        gh.histogramdd("x")
    with pytest.raises(ValueError, match="2 to 8 columns"):
        gh.histogramdd(*[f"x{i}" for i in range(9)])
    with pytest.raises(ValueError, match="min <= max"):
        gh.histogramdd("x", "y", range=[(1, 0), None])
    with pytest.raises(ValueError, match="increase strictly"):
        gh.histogramdd("x", "y", bins=[[0, 2, 1], 3])
    with pytest.raises(ValueError, match="min <= max"):
        gh.Histogram(4, range=(1, 0))


def test_histogramdd_of_a_sample_and_positional_bins_names_the_keyword() -> None:
    # numpy's `histogramdd(sample, bins)`: here `bins` is a keyword, not a second column.
    sample = np.random.default_rng(0).random((100, 2))
    with pytest.raises(ValueError, match=r"bins=\(64, 64\)"):
        gh.histogramdd(sample, (64, 64))
    with pytest.raises(ValueError, match=r"an \(n, d\) array is the whole sample"):
        gh.histogramdd(sample, sample[:, 0])
    got = gh.histogramdd(sample, bins=(4, 4), range=[(0, 1), (0, 1)], device="cpu")
    want, _ = np.histogramdd(sample, (4, 4), range=[(0, 1), (0, 1)])
    np.testing.assert_array_equal(got["count"].to_numpy(), want.ravel())


def test_the_plugin_checks_arguments_too() -> None:
    # Rust callers (and kwargs made by hand) are checked where the plugin runs.
    from polars.plugins import register_plugin_function

    df = pl.DataFrame({"x": [0.5]})
    for bins, rng, match in (
        ([2.0, 1.0], None, "increase strictly"),
        (4, (1.0, 0.0), "min <= max"),
    ):
        kwargs = {"bins": bins, "range": rng, "device": "cpu"}
        expr = register_plugin_function(
            plugin_path=_native.PLUGIN_PATH,
            function_name="histogram",
            args=[pl.col("x")],
            kwargs=kwargs,
            is_elementwise=False,
            changes_length=True,
        )
        with pytest.raises(pl.exceptions.PolarsError, match=match):
            df.select(expr)
