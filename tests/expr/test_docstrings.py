"""The namespace methods' docstrings: every argument, the result and an
example, and the examples of them and of the statistics run as written."""

from __future__ import annotations

import doctest
import inspect
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.stats as hs

METHODS = [
    gh.GpuHistNamespace.histogram,
    gh.GpuHistNamespace.hist,
    gh.GpuHistSeriesNamespace.histogram,
    gh.GpuHistSeriesNamespace.hist,
]


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.__qualname__)
def test_every_namespace_method_documents_its_arguments_result_and_an_example(
    method: Any,
) -> None:
    doc = inspect.getdoc(method) or ""
    for section in ("Parameters\n----------", "Returns\n-------", "Examples\n--------"):
        assert section in doc
    arguments = [p for p in inspect.signature(method).parameters if p != "self"]
    documented = [line for line in doc.splitlines() if line and not line.startswith(" ")]
    for name in arguments:
        assert name in documented, f"{method.__qualname__}: argument {name!r} undocumented"
    # Each description is indented under its name (help() shows it so).
    body = doc.split("Parameters\n----------\n")[1].split("\n\nReturns")[0]
    assert all(line.startswith("    ") for line in body.splitlines() if line not in documented)


def test_help_of_the_expression_method_is_more_than_one_line() -> None:
    doc = inspect.getdoc(pl.col("x").gpu_hist.histogram) or ""
    assert len(doc.splitlines()) > 30 and "weights" in doc and ">>>" in doc


@pytest.mark.parametrize(
    "target",
    [
        *METHODS,
        gh.Histogram.quantile,
        gh.Histogram.mean,
        hs.quantile,
        hs.mean,
        hs.std,
        hs.sum,
    ],
    ids=lambda t: t.__qualname__,
)
def test_examples_run_as_written(target: Any) -> None:
    globs = {"pl": pl, "np": np, "gh": gh, "hs": hs, "Histogram": gh.Histogram}
    globs["df"] = pl.DataFrame({"x": [0.5, 1.5, 1.6, 3.5]})
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    (test,) = finder.find(target, globs=globs)
    assert test.examples
    result = runner.run(test)
    assert result.failed == 0
