"""awkward arrays (uproot's default output) as flat numbers: each layout with its answer.

- numpy and regular layouts (``N * float64``, ``N * 3 * int32``) are counted, flattened as numpy
  flattens an n-D array;
- option types (``?float64``: IndexedOptionArray, ByteMasked, BitMasked, Unmasked) are counted
  with their missing values as nulls;
- indexed layouts are counted by the values they index; a record of one field counts that
  field (through options and regular lists);
- variable-length lists (jagged: ``N * var * float32``) are refused with the fix,
  ``ak.flatten``; records of several fields, strings and unions of unlike types likewise.

awkward is never imported here: an awkward array can only be passed once its module is loaded.
"""

from __future__ import annotations

import sys
from typing import Any


def is_awkward(data: Any) -> bool:
    """Whether ``data`` is an awkward ``Array`` (or ``Record``); awkward's Arrow extension
    arrays (``ak.to_arrow(..., extensionarray=True)``) are Arrow arrays, taken as such."""
    if type(data).__module__.split(".")[0] != "awkward":
        return False
    ak = sys.modules["awkward"]
    return isinstance(data, (ak.Array, ak.Record))


def values(data: Any, what: str) -> tuple[Any, Any]:
    """The numbers of an awkward array, flattened: a numpy array and a boolean numpy array of
    its missing values (None where nothing is missing). Refused with the fix where a layout
    holds no one number per entry."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    ak = sys.modules["awkward"]
    import numpy as np

    if not isinstance(data, ak.Array):
        raise TypeError(
            f"`{what}` is an awkward {type(data).__name__}, one entry: histogram an ak.Array"
        )
    fields = ak.fields(data)
    if len(fields) == 1:
        data = data[fields[0]]
    elif fields:
        raise TypeError(
            f"`{what}` is an awkward array of records with fields {fields} ({data.type}): pick "
            f"the field to histogram, e.g. array[{fields[0]!r}]"
        )
    _check_type(data.type.content, data.type, what)
    if ak.backend(data) != "cpu":
        raise TypeError(
            f"`{what}` is an awkward array on the {ak.backend(data)!r} backend: histogram "
            "ak.to_cupy(array) (counted where it lies) or ak.to_backend(array, 'cpu')"
        )
    array = ak.to_numpy(data, allow_missing=True)
    if isinstance(array, np.ma.MaskedArray):
        missing = np.ma.getmaskarray(array).reshape(-1)
        return np.asarray(array.data).reshape(-1), missing if missing.any() else None
    return array.reshape(-1), None


def _check_type(t: Any, whole: Any, what: str) -> None:
    """Refuses the types that hold no one number per entry, with the fix."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    types = sys.modules["awkward"].types
    kind = t.parameter("__array__") if hasattr(t, "parameter") else None
    if kind in ("string", "bytestring", "char", "byte") or (
        kind == "categorical" and _holds_strings(t)
    ):
        raise TypeError(
            f"`{what}` is an awkward array of strings ({whole}), which have no numeric value: "
            "convert them to numbers"
        )
    if isinstance(t, types.ListType):
        raise ValueError(
            f"`{what}` is an awkward array of variable-length lists ({whole}): a histogram "
            "counts one number per entry; flatten it with ak.flatten(array) to count every "
            "value, or pick one per entry (e.g. ak.firsts(array))"
        )
    if isinstance(t, types.UnionType):
        raise TypeError(
            f"`{what}` is an awkward union of unlike types ({whole}): select its numbers first "
            "(e.g. ak.enforce_type(array, 'float64') where they all are numbers)"
        )
    if isinstance(t, types.RecordType):
        raise TypeError(
            f"`{what}` holds records ({whole}) below its lists: pick a field to histogram, "
            "e.g. array[field]"
        )
    if isinstance(t, (types.OptionType, types.RegularType)):
        _check_type(t.content, whole, what)


def _holds_strings(t: Any) -> bool:
    types = sys.modules["awkward"].types
    while isinstance(t, (types.OptionType, types.RegularType)):
        t = t.content
    return t.parameter("__array__") in ("string", "bytestring")
