"""numpy's own tests of its histogram functions, run against `polars_gpu_hist.numpy`.

The tests are numpy's file `numpy/lib/tests/test_histograms.py`, read from the installed numpy
package at test time (numpy's wheels ship their tests; nothing of it is copied here). Its
classes are collected here, and a fixture swaps `np.histogram`, `np.histogram_bin_edges`,
`np.histogramdd` and `np.histogram2d` (and the names the file imports from numpy) for ours
around every test. The fixture also counts the calls that reach ours: a test that reaches none
fails, so a swap that stopped working cannot pass unnoticed.

The tests that fail on purpose are the deviations docs/semantics.md lists, in `DEVIATIONS` under
the test's name and marked `xfail(strict=True)`: a fix makes them pass, which fails here until
the entry and the page's row are removed.
"""

from __future__ import annotations

import functools
import importlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polars_gpu_hist.numpy as ghnp

# numpy's file, imported from numpy's own tests package (its globals are patched per test, and
# restored after it, by `monkeypatch`).
suite = importlib.import_module("numpy.lib.tests.test_histograms")

SWAPPED = ("histogram", "histogram_bin_edges", "histogramdd", "histogram2d")

# Each documented deviation (docs/semantics.md, "Where we differ from numpy on purpose"), by test.
DEVIATIONS = {
    "TestHistogram::test_some_nan_values": (
        "NaN in the data: numpy raises ValueError when an estimator takes the range from the "
        "data; we leave NaN out and take the range from the other values (docs/semantics.md)"
    ),
}

# numpy's classes, collected in this module (and so under its fixture).
TestHistogram = suite.TestHistogram
TestHistogramOptimBinNums = suite.TestHistogramOptimBinNums
TestHistogramdd = suite.TestHistogramdd


def _counted(name: str, function: Callable[..., Any], calls: Counter[str]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return function(*args, **kwargs)

    return wrapper


@pytest.fixture(autouse=True)
def ours(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter]:
    """numpy's histogram functions swapped for ours, counting the calls that reach ours."""
    key = f"{request.node.cls.__name__}::{request.node.originalname}" if request.node.cls else ""
    if key in DEVIATIONS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=DEVIATIONS[key]))
    calls: Counter[str] = Counter()
    for name in SWAPPED:
        swapped = _counted(name, getattr(ghnp, name), calls)
        monkeypatch.setattr(np, name, swapped)
        if hasattr(suite, name):
            monkeypatch.setattr(suite, name, swapped)
    yield calls
    if request.node.cls is not None:
        assert sum(calls.values()) > 0, "numpy's test reached none of polars_gpu_hist.numpy"


def test_the_swap_reaches_ours(ours: Counter) -> None:
    """Both ways numpy's file names the functions lead to ours: its own imports and `np.`."""
    for name in SWAPPED:
        assert np.__dict__[name].__wrapped__ is getattr(ghnp, name)
    for name in ("histogram", "histogram_bin_edges", "histogramdd"):
        assert suite.__dict__[name] is np.__dict__[name]
    suite.TestHistogram().test_one_bin()
    suite.TestHistogramdd().test_equal_edges()
    np.histogram2d([0.5], [0.5], bins=2)
    assert ours["histogram"] >= 3 and ours["histogramdd"] >= 1 and ours["histogram2d"] == 1


def test_numpy_ships_the_file_we_run() -> None:
    """The file is numpy's installed one, and it still has the tests this module expects."""
    assert Path(suite.__file__).parts[-4:] == ("numpy", "lib", "tests", "test_histograms.py")
    assert Path(suite.__file__).parent.parent.parent == Path(np.__file__).parent
    tests = [
        f"{cls.__name__}::{name}"
        for cls in (TestHistogram, TestHistogramOptimBinNums, TestHistogramdd)
        for name in dir(cls)
        if name.startswith("test_")
    ]
    assert len(tests) >= 50
    for key in DEVIATIONS:
        assert key in tests, f"{key} is no longer in numpy's file: drop it from DEVIATIONS"
