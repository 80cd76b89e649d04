"""Integer edges compared exactly on the GPU: the same cases as test_exact_integers.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given

from polars_gpu_hist import numpy as ghnp
from support.exact_integers import (
    check_by,
    check_histogram,
    check_histogramdd,
    exact_cases,
    numpy_cases,
)


@given(exact_cases())
def test_integer_edges_compare_exactly_on_gpu(case: dict[str, Any]) -> None:
    check_histogram(case, "gpu")


@given(exact_cases(["Int64", "UInt64", "Datetime"]))
def test_histogramdd_compares_each_axis_exactly_on_gpu(case: dict[str, Any]) -> None:
    check_histogramdd(case, "gpu")


@given(exact_cases())
def test_by_compares_exactly_on_gpu(case: dict[str, Any]) -> None:
    check_by(case, "gpu")


@given(numpy_cases())
def test_numpy_module_follows_numpys_promotion_on_device_arrays(
    case: tuple[np.ndarray, np.ndarray],
) -> None:
    """The same promotion for CuPy arrays, counted on the GPU where they lie."""
    cp = pytest.importorskip("cupy")
    x, edges = case
    expected = np.histogram(x, edges)[0].tolist()
    assert cp.asnumpy(ghnp.histogram(cp.asarray(x), edges)[0]).tolist() == expected
    if x.dtype.kind != edges.dtype.kind and edges.dtype.kind in "iu":
        return  # numpy.histogramdd's own mixture (test_histogramdd_of_mixed_signedness...)
    y = x[::-1].copy()
    got = ghnp.histogramdd(cp.asarray(np.stack([x, y], axis=1)), bins=[edges, edges])[0]
    want = np.histogramdd(np.stack([x, y], axis=1), bins=[edges, edges])[0]
    assert cp.asnumpy(got).tolist() == want.tolist()
