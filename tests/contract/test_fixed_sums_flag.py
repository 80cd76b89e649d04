"""Weighted sums by default are float64 additions (issue 51: fixed point cost 2.6-6.5x on the CPU,
past the 10% a default may cost; BENCHMARKS.md): numpy's sums, to float64's rounding. The
deterministic fixed-point sums are opt-in with POLARS_GPU_HIST_SUMS=fixed, read once a process, so
their modules run here in a child pytest under the flag."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp
from support.fixed_sums import fixed_sums_on, run_under_fixed_sums

FIXED_POINT_MODULES = [
    "tests/contract/test_weighted_sums.py",
    "tests/histogram/test_histogram_weight_storage_fixed.py",
]

default_only = pytest.mark.skipif(
    fixed_sums_on(), reason="the default's sums: POLARS_GPU_HIST_SUMS=fixed is set here"
)


@pytest.mark.skipif(fixed_sums_on(), reason="the modules run in this process already")
def test_the_fixed_point_modules_pass_under_the_flag() -> None:
    summary = run_under_fixed_sums(FIXED_POINT_MODULES, "not gpu")
    print(summary)


@default_only
def test_the_default_sums_add_in_float64_as_numpy_does() -> None:
    # Four rows, one task, in row order: numpy's 0.0 (fixed point's exact sum would be 2.0).
    x = np.full(4, 0.5)
    w = np.array([1e16, 1.0, 1.0, -1e16])
    got = gh.histogram(x, 1, range=(0, 1), weights=w, device="cpu")["count"].to_list()
    assert got == np.histogram(x, 1, range=(0, 1), weights=w)[0].tolist() == [0.0]


@default_only
@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1, exclude_max=True),
            st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        ),
        min_size=1,
        max_size=300,
    ),
    st.sampled_from([1, 3, 10, 64]),
)
def test_the_default_sums_are_numpys(rows: list[tuple[float, float]], bins: int) -> None:
    x = np.array([r[0] for r in rows])
    w = np.array([r[1] for r in rows])
    want = np.histogram(x, bins, range=(0, 1), weights=w)[0]
    scale = float(np.abs(w).sum())
    got = gh.histogram(x, bins, range=(0, 1), weights=w, device="cpu")["count"].to_numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=scale * 1e-15)
    got, _ = ghnp.histogram(x, bins, range=(0, 1), weights=w)
    np.testing.assert_allclose(got, want, rtol=0, atol=scale * 1e-15)


@default_only
def test_the_default_sums_of_many_rows_and_threads_are_numpys() -> None:
    rng = np.random.default_rng(51)
    x = rng.random(600_000)
    w = rng.standard_normal(600_000)
    for bins in (256, 65_536):
        want = np.histogram(x, bins, range=(0, 1), weights=w)[0]
        got = gh.histogram(x, bins, range=(0, 1), weights=w, device="cpu")["count"].to_numpy()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
        # Integer weights: exact in any order.
        wi = np.round(w * 1000)
        want = np.histogram(x, bins, range=(0, 1), weights=wi)[0]
        got = gh.histogram(x, bins, range=(0, 1), weights=wi, device="cpu")["count"].to_numpy()
        np.testing.assert_array_equal(got, want)
