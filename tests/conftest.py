from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import polars_gpu_hist  # noqa: F401  (registers the namespace)

# CI runs thousands of generated cases; PGH_HYPOTHESIS_PROFILE=quick for a fast local loop.
settings.register_profile(
    "ci", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("quick", max_examples=40, deadline=None)
settings.load_profile(os.environ.get("PGH_HYPOTHESIS_PROFILE", "ci"))

# The one rule for GPU tests: they live in `*_gpu.py` files in the folder of their concern, and
# every test there carries the `gpu` marker, set here from the file's name (`-m gpu` selects
# them all, `make test` deselects them). A `gpu` marker written anywhere else is an error: such
# a test would run or be skipped by accident, so it moves to its concern's `*_gpu.py` file.
GPU_FILE_SUFFIX = "_gpu.py"


def gpu_available() -> bool:
    try:
        from polars_gpu_hist import gpu_available as available
    except ImportError:
        return False
    return available()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    stray = []
    for item in items:
        if item.path.name.endswith(GPU_FILE_SUFFIX):
            item.add_marker(pytest.mark.gpu)
        elif item.get_closest_marker("gpu") is not None:
            stray.append(item.nodeid)
    if stray:
        raise pytest.UsageError(
            f"`gpu` marker outside a *{GPU_FILE_SUFFIX} file (move these tests there; the file's "
            "name marks them): " + ", ".join(stray)
        )
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no usable NVIDIA GPU and driver here")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
