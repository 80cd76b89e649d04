"""Host data of every kind scikit-hep and Arrow hand a user (issue 49 item 1): awkward arrays of
every layout, Arrow extension types, objects of the Arrow C data interface or with
``__array__``, through every entry point that takes data: ``Histogram.fill``, ``histogram``,
``histogramdd``, the numpy drop-in, and Polars columns through the expressions. Each is counted
as numpy counts the numbers it holds (missing values not counted) or refused with the fix;
nothing panics."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_gpu_hist as gh
import polars_gpu_hist.numpy as ghnp

ak = pytest.importorskip("awkward")
pa = pytest.importorskip("pyarrow")

RANGE = (0.0, 4.0)


def counted(values: list[Any]) -> np.ndarray:
    """numpy's counts of the values that are not missing, over 4 bins of RANGE."""
    present = np.array([v for v in values if v is not None], dtype=np.float64)
    return np.histogram(present, 4, RANGE)[0]


# Every entry point that takes host data, as counts over 4 bins of RANGE.
ENTRIES: dict[str, Callable[[Any], np.ndarray]] = {
    "Histogram.fill": lambda x: np.asarray(gh.Histogram(4, range=RANGE).fill(x).counts),
    "histogram": lambda x: gh.histogram(x, 4, range=RANGE)["count"].to_numpy(),
    "numpy.histogram": lambda x: ghnp.histogram(x, 4, RANGE)[0],
}


def _indexed() -> Any:
    index = ak.index.Index64(np.array([2, 0, 1, 2]))
    return ak.Array(
        ak.contents.IndexedArray(index, ak.contents.NumpyArray(np.array([0.5, 1.5, 3.5])))
    )


def _byte_masked() -> Any:
    mask = ak.index.Index8(np.array([1, 0, 1, 1], np.int8))
    content = ak.contents.NumpyArray(np.array([0.5, 9.0, 2.5, 3.5]))
    return ak.Array(ak.contents.ByteMaskedArray(mask, content, valid_when=True))


def _bit_masked() -> Any:
    mask = ak.index.IndexU8(np.array([0b1101], np.uint8))
    content = ak.contents.NumpyArray(np.array([0.5, 9.0, 2.5, 3.5]))
    layout = ak.contents.BitMaskedArray(mask, content, valid_when=True, length=4, lsb_order=True)
    return ak.Array(layout)


def _unmasked() -> Any:
    return ak.Array(ak.contents.UnmaskedArray(ak.contents.NumpyArray(np.array([0.5, 1.5]))))


# Layouts counted: the array, and the values numpy counts (None: not counted).
COUNTED = {
    "numpy": (lambda: ak.Array([0.5, 1.5, 1.6, 3.9]), [0.5, 1.5, 1.6, 3.9]),
    "int32": (lambda: ak.Array(np.array([0, 1, 3, 3], np.int32)), [0, 1, 3, 3]),
    "regular": (lambda: ak.to_regular(ak.Array([[0.5, 1.5], [2.5, 3.5]])), [0.5, 1.5, 2.5, 3.5]),
    "2-D numpy": (lambda: ak.Array(np.arange(6.0).reshape(3, 2) / 2), [0, 0.5, 1, 1.5, 2, 2.5]),
    "option": (lambda: ak.Array([0.5, None, 2.5]), [0.5, None, 2.5]),
    "regular of options": (
        lambda: ak.to_regular(ak.Array([[0.5, None], [2.5, 3.5]])),
        [0.5, None, 2.5, 3.5],
    ),
    "indexed": (_indexed, [3.5, 0.5, 1.5, 3.5]),
    "byte-masked": (_byte_masked, [0.5, None, 2.5, 3.5]),
    "bit-masked": (_bit_masked, [0.5, None, 2.5, 3.5]),
    "unmasked": (_unmasked, [0.5, 1.5]),
    "record of one field": (lambda: ak.Array([{"pt": 0.5}, {"pt": 2.5}]), [0.5, 2.5]),
    "optional record": (lambda: ak.Array([{"pt": 0.5}, None, {"pt": 3.0}]), [0.5, None, 3.0]),
    "tuple of one": (lambda: ak.zip((ak.Array([1.0, 2.0]),)), [1.0, 2.0]),
    "empty": (lambda: ak.Array([]), []),
}


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("layout", COUNTED)
def test_awkward_layouts_are_counted_as_numpy_counts_their_numbers(entry: str, layout: str) -> None:
    make, values = COUNTED[layout]
    array = make()
    np.testing.assert_array_equal(ENTRIES[entry](array), counted(values))


def test_missing_awkward_values_are_nulls_in_the_flow() -> None:
    h = gh.Histogram(4, range=RANGE).fill(ak.Array([0.5, None, None, 7.0]))
    assert (h.flow.null, h.flow.counted, h.flow.overflow) == (2, 1, 1)


def test_awkward_weights_follow_the_data_and_their_missing_values() -> None:
    x = ak.Array([0.5, None, 2.5, 3.5])
    w = ak.Array([2.0, 5.0, None, 1.0])
    expected = np.histogram([0.5, 3.5], 4, RANGE, weights=[2.0, 1.0])[0]
    h = gh.Histogram(4, range=RANGE, weights=True).fill(x, weights=w)
    np.testing.assert_array_equal(h.values(), expected)
    np.testing.assert_array_equal(ghnp.histogram(x, 4, RANGE, weights=w)[0], expected)
    frame = gh.histogram(x, 4, range=RANGE, weights=w)
    np.testing.assert_array_equal(frame["count"].to_numpy(), expected)


# Layouts refused: the array, the exception, and a part of the fix the message must name.
REFUSED = {
    "jagged": (lambda: ak.Array([[1.0], [], [2.0, 3.0]]), ValueError, "ak.flatten"),
    "jagged of options": (lambda: ak.Array([[1.0, None], [2.0]]), ValueError, "ak.flatten"),
    "records": (lambda: ak.Array([{"pt": 1.0, "eta": 0.1}]), TypeError, "array['pt']"),
    "strings": (lambda: ak.Array(["a", "b"]), TypeError, "strings"),
    "categorical": (
        lambda: ak.str.to_categorical(ak.Array(["a", "b", "a"])),
        TypeError,
        "strings",
    ),
    "union": (lambda: ak.concatenate([ak.Array([1, 2]), ak.Array(["a"])]), TypeError, "union"),
    "records in lists": (lambda: ak.Array([[{"pt": 1.0}], [{"pt": 2.0}]]), ValueError, "flatten"),
    "a record": (lambda: ak.Array([{"pt": 1.0}])[0], TypeError, "ak.Array"),
}


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("layout", REFUSED)
def test_awkward_layouts_without_one_number_per_entry_are_refused_with_the_fix(
    entry: str, layout: str
) -> None:
    make, error, fix = REFUSED[layout]
    with pytest.raises(error, match=fix.replace("[", r"\[").replace("(", r"\(")):
        ENTRIES[entry](make())


def test_histogramdd_and_a_histogram_of_several_axes_take_awkward_columns() -> None:
    x = ak.Array([0.5, None, 2.5, 3.5])
    y = ak.Array([1.0, 1.0, None, 3.0])
    expected = np.histogramdd(([0.5, 3.5], [1.0, 3.0]), bins=2, range=[RANGE, RANGE])[0]
    h = gh.Histogram([2, 2], range=[RANGE, RANGE]).fill(x, y)
    np.testing.assert_array_equal(h.counts, expected)
    assert h.flow.null == 2
    frame = gh.histogramdd(x, y, bins=2, range=[RANGE, RANGE])
    np.testing.assert_array_equal(frame["count"].to_numpy().reshape(2, 2), expected)
    np.testing.assert_array_equal(ghnp.histogramdd([x, y], 2, [RANGE, RANGE])[0], expected)


def _awkward_frame(values: Any) -> pl.DataFrame:
    return pl.from_arrow(ak.to_arrow_table(ak.Array({"x": values})))  # type: ignore[return-value]


def test_an_arrow_extension_column_counts_as_its_storage_where_data_is_taken() -> None:
    column = _awkward_frame([0.5, None, 2.5, 3.5])["x"]
    assert isinstance(column.dtype, pl.BaseExtension)
    expected = counted([0.5, None, 2.5, 3.5])
    for entry in ENTRIES.values():
        np.testing.assert_array_equal(entry(column), expected)


def test_an_arrow_extension_column_through_the_expression_is_a_polars_error_naming_the_fix() -> (
    None
):
    frame = _awkward_frame([0.5, 2.5, 3.5])
    calls = [
        pl.col("x").gpu_hist.histogram(bins=3),
        pl.col("x").gpu_hist.hist(bin_count=3),
        gh.histogramdd(pl.col("x"), pl.col("x"), bins=2),
        pl.col("x").gpu_hist.histogram(bins=3, by=pl.lit(1)),
    ]
    for call in calls:
        with pytest.raises(pl.exceptions.ComputeError, match=r"ext\.storage\(\)") as e:
            frame.select(call)
        assert "panicked" not in str(e.value)
        assert 'pl.col("x").ext.storage()' in str(e.value)
    # The fix works.
    out = frame.select(pl.col("x").ext.storage().gpu_hist.histogram(bins=3, range=(0, 3)))
    assert out["x"].struct.field("count").to_list() == [1, 0, 1]


def test_an_extension_type_nested_in_a_list_is_refused_without_a_panic() -> None:
    frame = pl.from_arrow(ak.to_arrow_table(ak.Array({"l": [[1.0], [], [2.0]]})))
    assert isinstance(frame, pl.DataFrame)
    with pytest.raises(pl.exceptions.ComputeError, match="extension") as e:
        frame.select(pl.col("l").gpu_hist.histogram(bins=3))
    assert "panicked" not in str(e.value)
    with pytest.raises(TypeError, match="extension"):
        gh.Histogram(3, range=RANGE).fill(frame["l"])


class _Extension(pa.ExtensionType):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__(pa.int64(), "polars_gpu_hist.test")

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: Any, serialized: bytes) -> _Extension:
        return cls()


def test_a_pyarrow_extension_array_counts_as_its_storage() -> None:
    array = pa.ExtensionArray.from_storage(_Extension(), pa.array([0, 1, None, 3]))
    expected = counted([0, 1, None, 3])
    for entry in ENTRIES.values():
        np.testing.assert_array_equal(entry(array), expected)


class _ArrowOnly:
    """An object of the Arrow C data interface and nothing else."""

    def __init__(self, array: Any) -> None:
        self._array = array

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        return self._array.__arrow_c_array__(requested_schema)


class _StreamOnly:
    """An object of the Arrow C stream interface and nothing else."""

    def __init__(self, array: Any) -> None:
        self._array = array

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._array.__arrow_c_stream__(requested_schema)


class _ArrayOnly:
    """An object with ``__array__`` and nothing else (xarray, pint, ...)."""

    def __init__(self, values: np.ndarray) -> None:
        self._values = values

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._values


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_arrow_c_data_interface_and_array_objects_are_read(entry: str) -> None:
    values = [0.5, None, 2.5, 3.5]
    for data in (
        pa.array(values),
        pa.chunked_array([values[:2], values[2:]]),
        _ArrowOnly(pa.array(values)),
        _StreamOnly(pa.chunked_array([values])),
    ):
        np.testing.assert_array_equal(ENTRIES[entry](data), counted(values))
    grid = np.array([[0.5, 1.5], [2.5, 3.5]])
    np.testing.assert_array_equal(ENTRIES[entry](_ArrayOnly(grid)), counted(list(grid.ravel())))


def test_a_fill_flattens_an_image_as_numpy_and_wants_weights_of_its_shape() -> None:
    image = np.arange(12, dtype=np.uint8).reshape(3, 4)
    h = gh.Histogram(4, range=(0, 12)).fill(image)
    np.testing.assert_array_equal(h.counts, np.histogram(image, 4, (0, 12))[0])
    weights = np.ones((3, 4))
    hw = gh.Histogram(4, range=(0, 12), weights=True).fill(image, weights=weights)
    np.testing.assert_array_equal(hw.values(), np.histogram(image, 4, (0, 12), weights=weights)[0])
    with pytest.raises(ValueError, match="shape"):
        gh.Histogram(4, range=(0, 12), weights=True).fill(image, weights=np.ones(12))


def _every_dtype() -> dict[str, pl.Series]:
    """A Series of every Polars dtype (with a null), Arrow extension types among them."""
    base: dict[str, pl.Series] = {
        str(d): pl.Series("c", [1, None, 2], dtype=d)
        for d in (
            pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.Int128, pl.UInt8, pl.UInt16,
            pl.UInt32, pl.UInt64, pl.Float32, pl.Float64, pl.Decimal(10, 2),
        )
    }  # fmt: skip
    for unit in ("ns", "us", "ms"):
        base[f"Datetime({unit})"] = pl.Series("c", [dt.datetime(2020, 1, 1), None]).cast(
            pl.Datetime(unit)
        )
        base[f"Duration({unit})"] = pl.Series("c", [dt.timedelta(1), None]).cast(pl.Duration(unit))
    base["Datetime(tz)"] = base["Datetime(us)"].dt.replace_time_zone("Europe/Paris")
    base.update(
        {
            "Float16": pl.Series("c", [1.0, None]).cast(getattr(pl, "Float16", pl.Float32)),
            "UInt128": pl.Series("c", [1, None], dtype=getattr(pl, "UInt128", pl.UInt64)),
            "Date": pl.Series("c", [dt.date(2020, 1, 1), None]),
            "Time": pl.Series("c", [dt.time(1), None]),
            "Boolean": pl.Series("c", [True, None]),
            "String": pl.Series("c", ["a", None]),
            "Categorical": pl.Series("c", ["a", None], dtype=pl.Categorical),
            "Enum": pl.Series("c", ["a", None], dtype=pl.Enum(["a"])),
            "Binary": pl.Series("c", [b"a", None]),
            "Null": pl.Series("c", [None, None]),
            "Object": pl.Series("c", [object(), None], dtype=pl.Object),
            "List": pl.Series("c", [[1.0], None]),
            "Array": pl.Series("c", [[1.0, 2.0], None], dtype=pl.Array(pl.Float64, 2)),
            "Struct": pl.Series("c", [{"a": 1.0}, None]),
        }
    )
    extensions = pl.from_arrow(
        ak.to_arrow_table(
            ak.Array(
                {
                    "float": [1.0, None],
                    "int": [1, 2],
                    "list": [[1.0], []],
                    "record": [{"a": 1.0}, {"a": 2.0}],
                    "string": ["a", "b"],
                }
            )
        )
    )
    assert isinstance(extensions, pl.DataFrame)
    for c in extensions.columns:
        base[f"awkward {c}"] = extensions[c].alias("c")
    base["pyarrow extension"] = pl.Series(
        "c", pa.ExtensionArray.from_storage(_Extension(), pa.array([1, None]))
    )
    return base


EVERY_DTYPE = _every_dtype()


def _calls(s: pl.Series) -> dict[str, Callable[[], Any]]:
    frame = s.to_frame()
    return {
        "expression": lambda: frame.select(pl.col("c").gpu_hist.histogram(bins=3)),
        "expression with range": lambda: frame.select(
            pl.col("c").gpu_hist.histogram(bins=3, range=(0, 4))
        ),
        "hist": lambda: frame.select(pl.col("c").gpu_hist.hist(bin_count=3)),
        "histogramdd": lambda: frame.select(gh.histogramdd("c", pl.col("c").alias("d"), bins=2)),
        "by": lambda: frame.select(pl.col("c").gpu_hist.histogram(bins=3, by=pl.lit(1))),
        "Series namespace": lambda: s.gpu_hist.histogram(bins=3),
        "histogram": lambda: gh.histogram(s, 3),
        "Histogram.fill": lambda: gh.Histogram(3, range=(0, 4)).fill(s),
        "numpy": lambda: ghnp.histogram(s, 3),
    }


@pytest.mark.parametrize("dtype", EVERY_DTYPE)
def test_every_polars_dtype_is_binned_or_refused_through_every_entry_without_a_panic(
    dtype: str,
) -> None:
    for name, call in _calls(EVERY_DTYPE[dtype]).items():
        try:
            call()
        except BaseException as e:  # a PanicException is a BaseException
            assert isinstance(e, Exception), f"{dtype} through {name}: {type(e).__name__} {e}"
            message = str(e)
            assert "panic" not in message.lower(), f"{dtype} through {name}: {message}"
            # No Rust debug dump of a dtype.
            assert "ExtensionType {" not in message, f"{dtype} through {name}: {message}"
