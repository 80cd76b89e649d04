"""Arrow extension columns (a user's own ``pa.ExtensionType``, awkward's) through every entry
point, drawn by hypothesis: counted as their storage where the package takes data (the
functions, the Series namespace, ``Histogram.fill`` of the Series or the Arrow array itself, the
numpy drop-in, ``histogram_scan`` of a frame), refused in an expression with Polars'
``ComputeError`` naming ``.ext.storage()``, whose fix counts the same; never a panic.
scripts/campaigns/arrow_extensions.py runs the same at length."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

pa: Any = pytest.importorskip("pyarrow")
ak: Any = pytest.importorskip("awkward")

if not hasattr(pl, "BaseExtension"):
    pytest.skip("Polars reads Arrow extension types as their storage", allow_module_level=True)

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
DTYPES += ["float32", "float64"]
RANGE = (-50.0, 50.0)


class _Tagged(pa.ExtensionType):  # type: ignore[misc]
    def __init__(self, storage: Any) -> None:
        super().__init__(storage, "polars_gpu_hist.test.tagged")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: Any, serialized: bytes) -> _Tagged:
        return cls(storage_type)


@st.composite
def extension_arrays(draw: st.DrawFn) -> tuple[Any, np.ndarray]:
    """An extension array and the storage values numpy counts (valid, finite)."""
    dtype: np.dtype[Any] = np.dtype(draw(st.sampled_from(DTYPES)))
    element: st.SearchStrategy[float | int]
    if dtype.kind in "iu":
        info = np.iinfo(dtype.type)
        element = st.integers(max(int(info.min), -60), min(int(info.max), 60))
    else:
        element = st.floats(-60, 60, width=32) | st.sampled_from([np.nan, np.inf, -np.inf])
    values = draw(st.lists(st.none() | element, min_size=1, max_size=40))
    valid = np.array([v is not None for v in values])
    x = np.array([0 if v is None else v for v in values], dtype)
    storage = pa.array(x, mask=~valid)
    if draw(st.booleans()):
        array = pa.ExtensionArray.from_storage(_Tagged(storage.type), storage)
    else:
        array = ak.to_arrow(ak.from_arrow(storage), extensionarray=True)
    if len(array) > 2 and draw(st.booleans()):
        cut = draw(st.integers(1, len(array) - 1))
        array = pa.chunked_array([array[:cut], array[cut:]])
    kept = x[valid].astype(np.float64)
    return array, kept[np.isfinite(kept)]


@settings(max_examples=60, deadline=None)
@given(extension_arrays(), st.sampled_from([1, 4, 16]))
def test_an_extension_column_counts_as_its_storage_through_every_entry(
    case: tuple[Any, np.ndarray], bins: int
) -> None:
    array, kept = case
    want = np.histogram(kept, bins, RANGE)[0]
    s = pl.Series("x", array)
    assert isinstance(s.dtype, pl.BaseExtension)
    got = {
        "histogram": gh.histogram(s, bins, range=RANGE)["count"].to_numpy(),
        "Series namespace": s.gpu_hist.histogram(bins, range=RANGE).struct.field("count"),
        "fill": gh.Histogram(bins, range=RANGE).fill(s).counts,
        "fill of the Arrow array": gh.Histogram(bins, range=RANGE).fill(array).counts,
        "numpy drop-in": ghnp.histogram(s, bins, RANGE)[0],
        "histogram_scan": gh.histogram_scan(s.to_frame().lazy(), "x", bins, range=RANGE).counts,
        "the expression's fix": s.to_frame()
        .select(pl.col("x").ext.storage().gpu_hist.histogram(bins, range=RANGE))["x"]
        .struct.field("count"),
    }
    for entry, counts in got.items():
        np.testing.assert_array_equal(np.asarray(counts), want, err_msg=entry)
    with pytest.raises(pl.exceptions.ComputeError, match=r"ext\.storage\(\)") as e:
        s.to_frame().select(pl.col("x").gpu_hist.histogram(bins, range=RANGE))
    assert "panicked" not in str(e.value)
