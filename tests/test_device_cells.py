"""The split of cells counted with flow bins, as a Dask partial left on its GPU does it
(`_device_cells.split`), against each cell classified one by one by the flow's rule: NaN on some
axis first, else the first axis on which the cell lies outside. numpy arrays here; CuPy arrays
take the same slices (tests/test_dask_gpu.py compares those partials with host fills)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from polars_gpu_hist import _device_cells


def classify(index: tuple[int, ...], shape: tuple[int, ...]) -> str:
    if any(i == n + 2 for i, n in zip(index, shape)):
        return "nan"
    for i, n in zip(index, shape):
        if i == 0:
            return "below"
        if i == n + 1:
            return "above"
    return "inside"


@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    seed=st.integers(0, 2**32 - 1),
    weighted=st.booleans(),
)
def test_split_classifies_every_cell_by_the_flow_rule(
    shape: tuple[int, ...], seed: int, weighted: bool
) -> None:
    rng = np.random.default_rng(seed)
    extended = tuple(n + 3 for n in shape)
    counts = rng.integers(0, 1 << 40, extended, dtype=np.uint64)
    # Whole numbers: sums exact in any order.
    weights = rng.integers(-50, 50, extended).astype(np.float64)
    squares = weights * weights
    sums = (weights.ravel(), squares.ravel()) if weighted else None
    rows = int(counts.sum())
    got_bins, got_squares, flow = _device_cells.split(counts.ravel(), sums, shape, rows)

    totals = {"nan": 0, "below": 0, "above": 0}
    flow_weights = {"below": [0.0, 0.0], "above": [0.0, 0.0]}
    for index in itertools.product(*(range(e) for e in extended)):
        kind = classify(index, shape)
        if kind == "inside":
            continue
        totals[kind] += int(counts[index])
        if kind != "nan":
            flow_weights[kind][0] += weights[index]
            flow_weights[kind][1] += squares[index]
    inside = tuple(slice(1, n + 1) for n in shape)
    assert flow[:5] == (rows, 0, totals["nan"], totals["below"], totals["above"])
    if not weighted:
        np.testing.assert_array_equal(got_bins, counts[inside].ravel())
        assert rows == int(got_bins.sum()) + sum(totals.values())
        assert got_squares is None
        assert flow[5:] == (0.0, 0.0, 0.0, 0.0)
        return
    np.testing.assert_array_equal(got_bins, weights[inside].ravel())
    np.testing.assert_array_equal(got_squares, squares[inside].ravel())
    below, above = flow_weights["below"], flow_weights["above"]
    assert flow[5:] == (below[0], above[0], below[1], above[1])
