from __future__ import annotations

import os

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, settings

import polars_gpu_hist  # noqa: F401  (registers the namespace)

# CI runs thousands of generated cases; PGH_HYPOTHESIS_PROFILE=quick for a fast local loop.
settings.register_profile(
    "ci", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("quick", max_examples=40, deadline=None)
settings.load_profile(os.environ.get("PGH_HYPOTHESIS_PROFILE", "ci"))

NUMERIC = {
    pl.Int8: np.int8,
    pl.Int16: np.int16,
    pl.Int32: np.int32,
    pl.Int64: np.int64,
    pl.UInt8: np.uint8,
    pl.UInt16: np.uint16,
    pl.UInt32: np.uint32,
    pl.UInt64: np.uint64,
    pl.Float32: np.float32,
    pl.Float64: np.float64,
}


def gpu_available() -> bool:
    try:
        from polars_gpu_hist import gpu_available as available
    except ImportError:
        return False
    return available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no usable NVIDIA GPU and driver here")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
