"""numpy's "stone" scores each bin count with `p.dot(p)` through its BLAS, whose kernels round
differently (AVX-512 against AVX2): counts whose scores lie within that rounding tie, and the
machine decides. The Python package breaks those ties with the numpy installed here (the tests
compare with it), so the choice is that numpy's; the Rust API's rule is documented on
`Estimator::Stone`."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import polars_gpu_hist.numpy as ghnp


def stone_bins(f, x: np.ndarray) -> int:  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return len(f(x, "stone")[0])


def test_the_case_of_the_issue() -> None:
    x = np.array([1.0, 4.0, 30.0])
    assert stone_bins(ghnp.histogram, x) == stone_bins(np.histogram, x)


@given(st.lists(st.integers(-3000, 3000).map(lambda v: v / 10 ** (v % 3)), min_size=2, max_size=6))
def test_few_values_tie_as_the_installed_numpy_breaks_them(values: list[float]) -> None:
    # Few round values: the scores of many counts tie to the last bit.
    x = np.array(values)
    assert stone_bins(ghnp.histogram, x) == stone_bins(np.histogram, x)


@given(st.integers(0, 2**32 - 1), st.sampled_from([np.float32, np.float64, np.int16]))
def test_larger_samples_pick_numpys_count(seed: int, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal(int(rng.integers(3, 400))) * 50).astype(dtype)
    assert stone_bins(ghnp.histogram, x) == stone_bins(np.histogram, x)
