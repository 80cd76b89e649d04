"""UHI's serialization schema (https://uhi.readthedocs.io/en/latest/serialization.html) for
:class:`polars_gpu_hist.Histogram`: ``_to_uhi_`` writes it (``uhi.io.json``, ``uhi.io.zip``,
``uhi.io.hdf5`` take the result), ``_from_uhi_`` reads it, from this package or from what
boost-histogram and hist write.

- Axes: equal bins are ``regular`` (bins, lower, upper: a reader makes its own edges of them,
  ours numpy's), ``bins="integer"`` a ``regular`` axis of integer bounds marked ``Integer`` as
  boost-histogram marks its own, explicit edges ``variable``; every axis has its flow bins;
  names and labels go in the axis' metadata.
- Storage: ``int`` (counts) or ``weighted`` (sums of weights and of their squares), with the flow
  bins; a ``double`` storage reads as weighted with its values as variances (Poisson).
- What the schema has no place for goes under ``writer_info["polars-gpu-hist"]``: the closed
  side, the dtypes the fills fixed, and the rows not counted for a null or a NaN.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl

from polars_gpu_hist import _native
from polars_gpu_hist._histogram import contents as _contents

WRITER = "polars-gpu-hist"


def to_uhi(h: Any) -> dict[str, Any]:
    """The histogram in UHI's schema (arrays as numpy arrays, as the ``uhi.io`` writers take)."""
    # Without flow cells (several axes pickled before 0.5) the axes have no flow bins.
    c = h._contents()
    axes = []
    for axis, kind in zip(h.axes, h._kinds):
        entry: dict[str, Any] = {
            "underflow": c.flow,
            "overflow": c.flow,
            "circular": False,
        }
        if kind.kind in ("regular", "integer") and kind.bins == len(axis):
            integer = kind.kind == "integer"
            lo, hi = (int(kind.lo), int(kind.hi)) if integer else (float(kind.lo), float(kind.hi))
            entry.update({"type": "regular", "lower": lo, "upper": hi, "bins": len(axis)})
            if integer:
                entry["writer_info"] = {"boost-histogram": {"orig_type": "Integer"}}
        else:
            entry.update({"type": "variable", "edges": np.asarray(axis.edges, dtype=np.float64)})
        entry["metadata"] = {"name": axis.name, "label": axis.label}
        axes.append(entry)
    if c.variances is None:
        storage: dict[str, Any] = {"type": "int", "values": c.values.astype(np.int64)}
    else:
        storage = {"type": "weighted", "values": c.values, "variances": c.variances}
    rows, null, nan, underflow, overflow = h._core.flow()[:5]
    return {
        "uhi_schema": 1,
        "writer_info": {
            WRITER: {
                "version": _native.__version__,
                "closed": h._core.closed,
                # One string: the schema's metadata holds no lists of strings.
                "dtypes": ";".join(d or "" for d in h._core.dtypes),
                "null": int(null),
                "nan": int(nan),
                "rows": int(rows),
                # Rows outside (a weighted histogram's flow bins hold their weights).
                "underflow": int(underflow),
                "overflow": int(overflow),
            }
        },
        "axes": axes,
        "storage": storage,
    }


def from_uhi(cls: Any, data: dict[str, Any]) -> Any:
    """A histogram of ``cls`` from UHI's schema."""
    if data.get("uhi_schema") != 1:
        raise ValueError(f"UHI schema version {data.get('uhi_schema')!r}: this reads version 1")
    ours = data.get("writer_info", {}).get(WRITER, {})
    bins: list[Any] = []
    ranges: list[Any] = []
    names: list[str | None] = []
    labels: list[str | None] = []
    flows: list[tuple[bool, bool]] = []
    for i, axis in enumerate(data["axes"]):
        kind = axis.get("type")
        if axis.get("circular"):
            raise ValueError(f"axis {i} is circular: a Histogram's axes are not")
        orig = axis.get("writer_info", {}).get("boost-histogram", {}).get("orig_type")
        if kind == "regular" and orig == "Integer":
            bins.append("integer")
            ranges.append((int(axis["lower"]), int(axis["upper"]) - 1))
        elif kind == "regular":
            bins.append(int(axis["bins"]))
            ranges.append((float(axis["lower"]), float(axis["upper"])))
        elif kind == "variable":
            bins.append(np.asarray(axis["edges"], dtype=np.float64).tolist())
            ranges.append(None)
        else:
            raise ValueError(
                f"axis {i} is of type {kind!r}: a Histogram has regular and variable axes "
                "(categories and booleans are not binned here)"
            )
        metadata = axis.get("metadata", {})
        names.append(metadata.get("name") or None)
        labels.append(metadata.get("label") or None)
        flows.append((bool(axis.get("underflow")), bool(axis.get("overflow"))))
    storage = data["storage"]
    kind = storage["type"]
    if kind not in ("int", "double", "weighted"):
        raise ValueError(
            f"storage {kind!r}: a Histogram holds counts or sums of weights (int, double, "
            "weighted), not means"
        )
    weighted = kind != "int"
    one = len(bins) == 1
    h = cls(
        bins[0] if one else bins,
        range=ranges[0] if one else ranges,
        closed=ours.get("closed", "left"),
        weights=weighted,
        name=names[0] if one else names,
        label=labels[0] if one else labels,
    )
    dtypes = [_dtype(d) for d in str(ours.get("dtypes", "")).split(";")]
    if len(dtypes) == len(bins) and all(d is not None for d in dtypes):
        # A fill of no rows fixes the dtypes, as the writer's fills had.
        h.fill(
            *[pl.Series(f"x{i}", [], dtype=d) for i, d in enumerate(dtypes)],
            weights=(pl.Series("w", [], dtype=pl.Float64) if weighted else None),
        )
    shape = tuple(h.shape)
    values = _with_flow(storage["values"], shape, flows)
    variances = None
    if weighted:
        variances = _with_flow(storage.get("variances", storage["values"]), shape, flows)
        values = values.astype(np.float64)
    else:
        if np.any(values < 0) or np.any(np.mod(values, 1) != 0):
            raise ValueError("an int storage holds whole numbers >= 0")
        values = values.astype(np.uint64)
    flow = h._core.flow()
    null, nan = int(ours.get("null", 0)), int(ours.get("nan", 0))
    total = float(values.sum() if not weighted else 0)
    rows = int(ours.get("rows", total + null + nan))
    rows_outside = (int(ours.get("underflow", 0)), int(ours.get("overflow", 0)))
    flow = (rows, null, nan, *rows_outside, *flow[5:])
    _contents.write(h._core, _contents.Contents(values, variances, True), flow)
    return h


def _dtype(text: str) -> pl.DataType | None:
    """A dtype as the native histogram names it (``Float32``, ``Datetime('us', 'UTC')``,
    ``Duration('ns')``), or None (not filled, or a name this version does not read)."""
    if not text:
        return None
    head, _, rest = text.partition("(")
    if head in ("Datetime", "Duration"):
        words = re.findall(r"'([^']*)'|None", rest)
        if not words or words[0] not in ("ns", "us", "ms"):
            return None
        if head == "Duration":
            return pl.Duration(words[0])
        return pl.Datetime(words[0], (words[1] or None) if len(words) > 1 else None)
    if head == "Decimal":
        return None
    dtype = getattr(pl, head, None)
    return dtype() if isinstance(dtype, type) and issubclass(dtype, pl.DataType) else None


def _with_flow(values: Any, shape: tuple[int, ...], flows: list[tuple[bool, bool]]) -> np.ndarray:
    """The values with the flow bins of every axis, zeros where the writer's axis had none."""
    array = np.asarray(values)
    expected = tuple(n + under + over for n, (under, over) in zip(shape, flows))
    if array.size != int(np.prod(expected)):
        raise ValueError(f"the storage holds {array.size} values, the axes {expected} cells")
    array = array.reshape(expected)
    full = np.zeros(tuple(n + 2 for n in shape), dtype=array.dtype)
    where = tuple(
        slice(0 if under else 1, n + 1 + (1 if over else 0))
        for n, (under, over) in zip(shape, flows)
    )
    full[where] = array
    return full
