"""`explain` prints the decision a call takes: the engine decides both from
one function, so the backend, the reason and, on the GPU, the plan it prints are the plan the
call records. Host calls on the CPU here; the GPU's plans in test_explain_gpu.py."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
from support.explain import host_report


@pytest.mark.parametrize("dtype", [pl.UInt8, pl.Float64])
def test_explain_says_what_a_host_call_on_the_cpu_runs(dtype: pl.DataType) -> None:
    # 20,000 bytes count by value on the CPU (one counter per value, then a fold); floats go
    # row by row: `explain` names the same way.
    values = pl.Series("x", np.arange(20_000) % 251).cast(dtype)
    said = gh.explain(values, 64, range=(0, 1), device="cpu")
    ran = host_report(values, 64, "cpu")
    assert said == ran
    assert ("one counter per uint8 value" in said) == (dtype == pl.UInt8)
