"""Errors raised by the native side speak Python: keywords as the user wrote them, never Rust
types."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda: gh.histogram(pl.Series([0.5]), "integer"), '`bins="integer"` needs an integer'),
        (
            lambda: gh.histogram(np.arange(3.0), "fd", weights=np.ones(3)),
            '`bins="fd"` cannot be combined with `weights`',
        ),
        (lambda: gh.histogram(pl.Series([0.0, np.inf]), 3), "pass `range=(min, max)`"),
        (lambda: gh.histogram(pl.Series([0.0, np.inf]), "sqrt"), "pass `range=(min, max)`"),
        (lambda: gh.Histogram(3, range=(0, 1)).fill([0.5], weights=[1.0]), "`weights=True`"),
        (lambda: gh.explain(pl.Float64, "auto"), '`bins="auto"` estimates the bins'),
    ],
)
def test_native_errors_name_python_keywords_not_rust_types(call: Any, text: str) -> None:
    # The Rust API words the same errors in its own terms (tests/rust_api.rs).
    with pytest.raises(Exception) as raised:
        call()
    message = str(raised.value)
    assert text in message, message
    assert "BinRule" not in message and "Storage::" not in message and "Some((" not in message
