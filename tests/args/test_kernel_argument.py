"""`kernel=`: the families it pins, the two deprecated ones (a DeprecationWarning at the line
the user wrote, naming the families that remain), and its refusals. No GPU needed: the
arguments are checked where the call is written."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh

FAMILIES = ["shared", "packed", "batched", "global", "private", "banked", "radix"]


@pytest.mark.parametrize("kernel", ["auto", *FAMILIES])
def test_every_family_is_taken_without_a_warning(kernel: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pl.col("x").gpu_hist.histogram(8, device="gpu", kernel=kernel)
        gh.histogramdd("x", "y", bins=4, device="gpu", kernel=kernel)


@pytest.mark.parametrize("kernel", ["spill", "segmented"])
def test_the_deprecated_families_warn_at_the_callers_line(kernel: str) -> None:
    with pytest.warns(DeprecationWarning, match="next release refuses it") as caught:
        pl.col("x").gpu_hist.histogram(8, device="gpu", kernel=kernel)
    (warning,) = caught.list
    assert warning.filename == __file__
    message = str(warning.message)
    assert f"`kernel={kernel!r}` is deprecated" in message
    for family in FAMILIES[1:]:
        assert repr(family) in message
    with pytest.warns(DeprecationWarning, match=kernel) as caught:
        gh.histogramdd("x", "y", bins=4, device="gpu", kernel=kernel)
    assert caught.list[0].filename == __file__


def test_an_unknown_family_names_every_one() -> None:
    with pytest.raises(ValueError, match="'radix'") as info:
        pl.col("x").gpu_hist.histogram(8, device="gpu", kernel="sorted")
    assert "'banked'" in str(info.value) and "'private'" in str(info.value)


def test_a_pinned_family_with_the_cpu_is_refused_before_any_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="device='cpu'"):
            pl.col("x").gpu_hist.histogram(8, device="cpu", kernel="spill")


@pytest.mark.parametrize(
    "kernel", ["packed", "batched", "private", "banked", "radix", "spill", "segmented"]
)
def test_a_family_that_counts_rows_only_refuses_weights_where_written(kernel: str) -> None:
    # The arguments alone decide it: refused where the call is written (no GPU, no data read),
    # by every entry that takes both, as the same pin with device="cpu" is.
    x = np.arange(4.0)
    calls = [
        lambda: pl.col("x").gpu_hist.histogram(8, weights="w", device="gpu", kernel=kernel),
        lambda: gh.histogramdd("x", "y", bins=4, weights="w", device="gpu", kernel=kernel),
        lambda: gh.histogram(x, 8, weights=np.ones(4), kernel=kernel),
        lambda: gh.histogramdd(x, x, bins=4, weights=np.ones(4), kernel=kernel),
        lambda: pl.Series("x", x).gpu_hist.histogram(8, weights=np.ones(4), kernel=kernel),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # spill, segmented
        for call in calls:
            with pytest.raises(ValueError, match="weighted sums take kernel='shared' or 'global'"):
                call()


@pytest.mark.parametrize("kernel", ["auto", "shared", "global"])
def test_the_families_that_sum_weights_take_them(kernel: str) -> None:
    pl.col("x").gpu_hist.histogram(8, weights="w", device="gpu", kernel=kernel)
    gh.histogramdd("x", "y", bins=4, weights="w", device="gpu", kernel=kernel)
