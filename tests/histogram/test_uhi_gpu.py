"""The flow bins of every rank from fills in GPU memory and on the host's GPU path (marker
`gpu`): the flow cells of several axes, counted where the rows lie, equal the CPU's; slices and
projections of them equal boost-histogram's."""

from __future__ import annotations

import numpy as np
import pytest

import polars_gpu_hist as gh


@pytest.fixture(scope="module")
def gpu() -> None:
    if not gh.gpu_available():
        pytest.skip("needs an NVIDIA GPU with a driver")


def sample(d: int) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    columns = [rng.normal(0.5, 0.7, 1 << 18) for _ in range(d)]
    columns[0][::101] = np.nan
    return columns


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_device_fills_keep_the_flow_cells_of_several_axes(
    gpu: None, d: int, weighted: bool
) -> None:
    cupy = pytest.importorskip("cupy")
    columns = sample(d)
    w = np.random.default_rng(2).integers(0, 4, columns[0].size).astype(np.float64)
    weights = (w, cupy.asarray(w)) if weighted else (None, None)
    ranges = [(0, 1)] * d
    on_gpu = gh.Histogram([16] * d, range=ranges, weights=weighted).fill(
        *[cupy.asarray(c) for c in columns], weights=weights[1]
    )
    on_host_gpu = gh.Histogram([16] * d, range=ranges, weights=weighted, device="gpu")
    on_host_gpu.fill(*columns, weights=weights[0])
    on_cpu = gh.Histogram([16] * d, range=ranges, weights=weighted, device="cpu")
    on_cpu.fill(*columns, weights=weights[0])
    for h in (on_gpu, on_host_gpu):
        np.testing.assert_array_equal(h.values(flow=True), on_cpu.values(flow=True))
        np.testing.assert_array_equal(h.variances(flow=True), on_cpu.variances(flow=True))
        assert h.flow == on_cpu.flow
    bh = pytest.importorskip("boost_histogram")
    boost = on_cpu.to_boost()
    # A slice of the first axis, every other axis summed: an index of one entry an axis (both
    # refuse fewer, IndexError).
    index = (slice(2, 9), *[slice(None, None, sum)] * (d - 1))
    np.testing.assert_array_equal(
        on_gpu[index].values(flow=True),
        boost[index].view(flow=True)["value"] if weighted else boost[index].view(flow=True),
    )
    for h in (on_gpu, boost):
        with pytest.raises(IndexError):
            h[index[:-1]]
    assert isinstance(boost, bh.Histogram)
