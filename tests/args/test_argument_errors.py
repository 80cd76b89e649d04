"""Lenient or unclear arguments get a TypeError or ValueError naming the argument and the fix."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from polars_gpu_hist._args import arguments as _args


def test_a_kernel_with_the_cpu_is_refused() -> None:
    s = pl.Series([1.0, 2.0])
    for call in (
        lambda: gh.histogram(s, 2, device="cpu", kernel="shared"),
        lambda: pl.select(pl.lit(s).gpu_hist.histogram(2, device="cpu", kernel="global")),
        lambda: gh.histogramdd(s, s, bins=2, device="cpu", kernel="packed"),
        lambda: gh.explain(s, 2, device="cpu", kernel="segmented"),
    ):
        with pytest.raises(ValueError, match=r"`kernel=.*`device='cpu'`"):
            call()
    # "auto" is no choice, and the GPU or "auto" may take one.
    assert gh.histogram(s, 2, device="cpu", kernel="auto")["count"].to_list() == [1, 1]
    assert gh.histogram(s, 2, device="auto", kernel="shared")["count"].to_list() == [1, 1]


def test_progress_must_be_a_flag_or_a_stream(tmp_path: Path) -> None:
    lf = pl.LazyFrame({"x": [1.0, 2.0]})
    for bad in ("yes", 1, None, object()):
        with pytest.raises(TypeError, match="`progress`"):
            gh.histogram_scan(lf, "x", [0, 3], progress=bad)  # type: ignore[arg-type]
    for good in (True, False, io.StringIO()):
        assert gh.histogram_scan(lf, "x", [0, 3], progress=good).counts.tolist() == [2]


def test_pin_names_what_it_takes() -> None:
    for call in (gh.pin, gh.unpin):
        with pytest.raises(TypeError, match=r"`(un)?pin` takes a Polars Series"):
            call("x")  # type: ignore[arg-type]


def test_weights_of_another_length_are_named_weights() -> None:
    s = pl.Series([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"`weights` has 2 values but the data has 3"):
        gh.histogram(s, 2, weights=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"`weights` has 2 values but the columns have 3"):
        gh.histogramdd(s, s.alias("y"), bins=2, weights=np.ones(2))
    h = gh.Histogram(2, range=(0, 4), weights=True)
    with pytest.raises(ValueError, match=r"`weights` has 2 rows"):
        h.fill(s, weights=np.ones(2))


def test_flow_bins_past_the_limit_are_a_value_error() -> None:
    s = pl.Series([1.0, 2.0])
    with pytest.raises(ValueError, match=r"`flow=True` adds an underflow and an overflow bin"):
        gh.histogram(s, 2**28, flow=True)
    with pytest.raises(ValueError, match="`flow=True`"):
        gh.histogramdd(s, s, bins=2**14, flow=True)
    # Two bins fewer fit (checked without making the 2**28 rows).
    kwargs = _args.histogram_kwargs(
        2**28 - 2, (0, 1), density=False, closed="left", flow=True, device="auto", kernel="auto"
    )
    assert kwargs["bins"] == 2**28 - 2 and kwargs["flow"] is True


@pytest.mark.parametrize(
    "bins",
    [[0, "a", 2], [0, None, 2], [0, True, 2], [0, object(), 2], [0, np.datetime64("NaT"), 2]],
)
def test_bad_edges_name_bins_and_the_edge(bins: list) -> None:
    s = pl.Series([1.0])
    with pytest.raises((TypeError, ValueError), match=r"`bins` edge 1"):
        gh.histogram(s, bins)
    with pytest.raises((TypeError, ValueError), match=r"`bins` edge 1"):
        pl.select(pl.lit(s).gpu_hist.histogram(bins))


def test_edges_that_cannot_bin_the_column_name_bins() -> None:
    import datetime as dt

    with pytest.raises(Exception, match=r"`bins` edge 0 is a"):
        gh.histogram(pl.Series([1.0]), [dt.date(2020, 1, 1), dt.date(2020, 1, 2)])
    # A Histogram takes date edges (issue 49): they make it a Date histogram, which refuses a
    # column of numbers, named by its dtype.
    h = gh.Histogram([dt.date(2020, 1, 1), dt.date(2020, 1, 2)])
    with pytest.raises(ValueError, match=r"first filled with Date; a Float64 column"):
        h.fill(pl.Series([1.0]))


def test_a_device_that_is_no_ordinal_is_refused_before_the_gpu() -> None:
    s = pl.Series("x", [0.5, 1.5])
    for device in ["1", 1.0, True]:
        with pytest.raises(TypeError, match="`device` must be a GPU's ordinal"):
            gh.pin(s, device=device)  # type: ignore[arg-type]
