"""UHI indexing (https://uhi.readthedocs.io/en/latest/indexing.html), as boost-histogram and hist
read it, on a histogram's contents with its flow bins (:mod:`.contents`):

- an integer picks a bin (negative from the end); ``underflow``/``overflow`` and ``loc(x)``
  (the bin ``x`` falls in, by numpy's edges) pick flow bins too; a complex number ``xj`` is
  hist's ``loc(x)`` (``a + xj``: ``loc(x) + a``);
- a slice keeps the bins ``start:stop``; the bins cut off go to the flow bins (boost's
  ``shrink``); its step may be ``rebin(k)`` (``kj`` for hist), merging ``k`` bins at a time (the
  bins left over go to the overflow) or by ``groups``, or ``sum``: the axis summed over
  ``start:stop`` (the flow bins in where a bound is left out) and removed;
- a dict indexes axes by number or name, ``...`` stands for the axes not written.

:func:`select` resolves an index into one operation per axis and applies them with numpy; the
histogram builds the result from what it returns. :func:`assign` is the same for
``h[...] = value``.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from polars_gpu_hist._histogram.axes import Axis, AxisKind
from polars_gpu_hist._histogram.contents import Contents


class Pick(NamedTuple):
    """Axis removed at one bin: ``-1`` the underflow, ``len`` the overflow."""

    at: int


class Cut(NamedTuple):
    """Axis kept: bins ``start:stop`` (within ``[0, len]``) merged by ``groups`` (sizes)."""

    start: int
    stop: int
    groups: tuple[int, ...]


class Sum(NamedTuple):
    """Axis summed over ``start:stop`` (``-1`` and ``len + 1``: the flow bins in) and removed."""

    start: int
    stop: int


Operation = Pick | Cut | Sum


class Selected(NamedTuple):
    """What an index keeps: for each axis kept, its number, the edge indices it keeps (None:
    all of them) and its kind; the contents of the result (of rank 0 for a single value)."""

    axes: list[tuple[int, list[int] | None, AxisKind]]
    contents: Contents


def expand(index: Any, axes: Sequence[Axis]) -> list[Any]:
    """One entry per axis: a dict by number or name, a tuple with ``...``, or one entry."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    d = len(axes)
    if isinstance(index, Mapping):
        entries: list[Any] = [slice(None)] * d
        seen: set[int] = set()
        for key, value in index.items():
            i = _axis_number(key, axes)
            if i in seen:
                raise ValueError(f"axis {key!r} is indexed twice: numbers and names overlap")
            seen.add(i)
            entries[i] = value
        return entries
    items = list(index) if isinstance(index, tuple) else [index]
    if builtins.sum(1 for x in items if x is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [slice(None)] * (d - len(items) + 1)
    if len(items) != d:
        raise IndexError(
            f"this histogram has {d} axes: an index takes {d} entries, got {len(items)}"
        )
    return items


def _axis_number(key: Any, axes: Sequence[Axis]) -> int:
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(key, str):
        for i, axis in enumerate(axes):
            if axis.name == key:
                return i
        raise KeyError(f"no axis named {key!r}: the axes are {[a.name for a in axes]}")
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        if not -len(axes) <= key < len(axes):
            raise IndexError(f"axis {key} of a histogram of {len(axes)} axes")
        return int(key) % len(axes)
    raise TypeError(f"a dict index takes axis numbers or names, got {key!r}")


def operation(entry: Any, axis: Axis) -> Operation | None:
    """What one entry does to its axis (None: nothing)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    n, flow = len(axis), axis.traits.underflow
    if entry is builtins.sum or _is_rebin(entry):
        entry = slice(None, None, entry)
    if isinstance(entry, slice):
        return _slice(entry, axis)
    if isinstance(entry, (bool, np.bool_)):
        raise TypeError(f"a boolean ({entry!r}) is no index of a histogram's axis")
    if isinstance(entry, complex) or callable(entry):
        at = _locate(entry, axis)
    elif isinstance(entry, (int, np.integer)):
        if not -n <= entry < n:
            raise IndexError(f"bin {entry} of an axis of {n} bins")
        at = int(entry) % n
    elif isinstance(entry, (float, np.floating)):
        raise TypeError(f"index {entry} must be an integer, or loc({entry}) for a value")
    else:
        raise IndexError(
            f"an axis takes an integer, a slice, a locator (loc, underflow, overflow), sum or "
            f"rebin, got {entry!r}"
        )
    if not -1 <= at <= n or (not flow and not 0 <= at < n):
        raise IndexError(f"bin {at} of an axis of {n} bins" + ("" if flow else " (no flow bins)"))
    return Pick(at)


def _is_rebin(x: Any) -> bool:
    return getattr(x, "factor", None) is not None or hasattr(x, "group_mapping")


def _locate(x: Any, axis: Axis) -> int:
    """A bin from a locator: a callable of the axis (UHI: ``loc``, ``underflow``, ...) or a
    complex number (hist: ``xj`` is ``loc(x)``, ``a + xj`` is ``loc(x) + a``)."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if isinstance(x, complex):
        if x.real % 1 != 0:
            raise ValueError(f"{x}: the real part of a complex index is an offset, an integer")
        return int(axis.index(x.imag)) + int(x.real)
    located: int = int(x(axis))
    return located


def _bound(x: Any, axis: Axis, default: int) -> int:
    """A slice bound: left out, the default (the flow bin where there is one); an integer as
    numpy's (negative from the end, clamped to the bins); a locator as it says."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    if x is None:
        return default
    if isinstance(x, complex) or callable(x):
        return _locate(x, axis)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"a slice bound is an integer or a locator, got {x!r}")
    n = len(axis)
    at = int(x) + n if x < 0 else int(x)
    return min(max(at, 0), n)


def _slice(entry: slice, axis: Axis) -> Operation | None:
    __tracebackhide__ = True  # IPython shows the caller's frame
    step = entry.step
    if isinstance(step, complex):
        if step.real != 0 or step.imag % 1 != 0:
            raise ValueError(f"a complex step ({step}) is hist's rebin: an integer times 1j")
        step = _Factor(int(step.imag))
    if any(isinstance(v, slice) for v in (entry.start, entry.stop, step)):
        raise TypeError("a slice in a slice: did you forget the braces of a dict, [{...}]?")
    if entry.start is None and entry.stop is None and step is None:
        return None
    n, flow = len(axis), axis.traits.underflow
    start = _bound(entry.start, axis, -1 if flow else 0)
    stop = _bound(entry.stop, axis, n + 1 if flow else n)
    if step is builtins.sum:
        if entry.start is not None or entry.stop is not None:
            # A bounded sum of flow bins alone (h[:0:sum], the underflow) is theirs; boost 1.8
            # gives it where other axes are picked and refuses it alone ("bins > 0 required").
            _check_nonempty(start, stop, entry)
        return Sum(start, stop)
    first, last = max(start, 0), min(stop, n)
    _check_nonempty(first, last, entry)
    if step is None:
        return Cut(first, last, (1,) * (last - first))
    if not _is_rebin(step):
        raise IndexError(f"the step of a slice must be rebin(...) or sum, got {step!r}")
    factor = getattr(step, "factor", None)
    if factor is not None:
        if factor < 1:
            raise ValueError(f"rebin({factor}): the factor must be positive")
        if factor > 1 and axis.traits.discrete:
            # As boost: the bins of an integer axis are values, not intervals to merge
            # (rebin(groups=...) makes uneven bins of them).
            raise ValueError(f"rebin({factor}) cannot merge the bins of an integer axis")
        count = (last - first) // factor
        if count == 0:
            raise ValueError(f"rebin({factor}) of {last - first} bins leaves none")
        return Cut(first, last, (factor,) * count)
    groups = tuple(int(g) for g in step.group_mapping(_CutAxis(axis, first, last)))
    if builtins.sum(groups) != last - first or any(g < 1 for g in groups):
        raise ValueError(f"rebin groups {groups} must be positive and add up to {last - first}")
    return Cut(first, last, groups)


def _check_nonempty(start: int, stop: int, entry: slice) -> None:
    __tracebackhide__ = True  # IPython shows the caller's frame
    if stop <= start:
        raise IndexError(
            f"the slice [{entry.start}:{entry.stop}] selects no bins (an axis has at least one)"
        )


class _Factor:
    """A rebin by a factor (hist's complex step)."""

    def __init__(self, factor: int) -> None:
        self.factor = factor


class _CutAxis:
    """The bins ``start:stop`` of an axis, as a rebin's ``group_mapping`` reads them."""

    def __init__(self, axis: Axis, start: int, stop: int) -> None:
        self.edges = axis.edges[start : stop + 1]
        self.traits = axis.traits

    def __len__(self) -> int:
        return len(self.edges) - 1


def select(index: Any, axes: Sequence[Axis], contents: Contents) -> Selected:
    """The axes and contents that ``h[index]`` keeps."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    entries = expand(index, axes)
    ops = list(map(operation, entries, axes))  # no frame of its own in a traceback
    values, variances = contents.values, contents.variances
    offset = 1 if contents.flow else 0
    kept: list[tuple[int, list[int] | None, AxisKind]] = []
    # Axes are applied last first, so that an axis removed leaves the numbers before it alone.
    for i in reversed(range(len(axes))):
        op, axis = ops[i], axes[i]
        if op is None:
            kept.append((i, None, axis.kind))
            continue
        if isinstance(op, Pick):
            values = np.take(values, op.at + offset, axis=i)
            variances = None if variances is None else np.take(variances, op.at + offset, axis=i)
            continue
        if isinstance(op, Sum):
            lo, hi = op.start + offset, op.stop + offset
            if not contents.flow:
                lo, hi = max(lo, 0), min(hi, len(axis))
            values = _summed(values, i, lo, hi)
            variances = None if variances is None else _summed(variances, i, lo, hi)
            continue
        values = _cut(values, i, op, len(axis), contents.flow)
        variances = None if variances is None else _cut(variances, i, op, len(axis), contents.flow)
        edges = [op.start, *(op.start + int(c) for c in np.cumsum(op.groups))]
        merge = op.groups[0] if len(set(op.groups)) == 1 else 0
        kind = (
            axis.kind.sliced(op.start, edges[-1], merge)
            if merge
            else AxisKind("variable", len(op.groups))
        )
        kept.append((i, edges, kind))
    kept.reverse()
    return Selected(kept, Contents(values, variances, contents.flow))


def _summed(values: np.ndarray, axis: int, lo: int, hi: int) -> np.ndarray:
    taken = np.take(values, np.arange(lo, hi), axis=axis)
    total: np.ndarray = taken.sum(axis=axis, dtype=values.dtype)
    return total


def _cut(values: np.ndarray, axis: int, op: Cut, n: int, flow: bool) -> np.ndarray:
    """The bins ``op`` keeps along ``axis``, merged; with flow bins, those cut off added to
    them (the underflow takes the bins before, the overflow those after and any left over)."""
    moved = np.moveaxis(values, axis, 0)
    offset = 1 if flow else 0
    begin, end = op.start + offset, op.start + builtins.sum(op.groups) + offset
    starts = np.concatenate([[0], np.cumsum(op.groups)[:-1]]).astype(np.intp)
    merged = np.add.reduceat(moved[begin:end], starts, axis=0)
    if flow:
        under = moved[:begin].sum(axis=0, dtype=values.dtype)
        over = moved[end:].sum(axis=0, dtype=values.dtype)
        merged = np.concatenate([under[None], merged, over[None]], axis=0)
    out: np.ndarray = np.moveaxis(merged.astype(values.dtype, copy=False), 0, axis)
    return out


def assign(index: Any, axes: Sequence[Axis], value: Any, flow: bool) -> tuple[Any, ...]:
    """The numpy index into the contents (with flow bins where ``flow``) that ``h[index] =
    value`` writes, with boost-histogram's rule for the value's shape: a slice takes an array
    of its bins, or of its bins and the flow bins its left-out bounds reach."""
    __tracebackhide__ = True  # IPython shows the caller's frame
    entries = expand(index, axes)
    value_shape = np.shape(value)
    offset = 1 if flow else 0
    out: list[Any] = []
    dim = 0
    sliced = builtins.sum(1 for e, a in zip(entries, axes) if isinstance(_as_slice(e), slice))
    if len(value_shape) not in (0, sliced):
        raise ValueError(
            f"setting {sliced} sliced axes takes an array of {sliced} dimensions (or a number), "
            f"got one of shape {value_shape}"
        )
    for entry, axis in zip(entries, axes):
        entry = _as_slice(entry)
        n = len(axis)
        if not isinstance(entry, slice):
            op = operation(entry, axis)
            assert isinstance(op, Pick)
            out.append(op.at + offset)
            continue
        if entry.step is not None:
            raise ValueError("setting takes slices without a step (no rebin, no sum)")
        start = _bound(entry.start, axis, -1 if flow else 0)
        stop = _bound(entry.stop, axis, n + 1 if flow else n)
        inside = min(stop, n) - max(start, 0)
        wanted = value_shape[dim] if value_shape else None
        with_flow = inside + (start < 0) + (stop > n)
        if wanted is None or wanted in (inside, 1) or not flow:
            out.append(slice(max(start, 0) + offset, min(stop, n) + offset))
        elif wanted == with_flow:
            out.append(slice(start + offset, stop + offset))
        else:
            raise ValueError(
                f"axis {axis.name!r}: {wanted} values for {inside} bins"
                + (f" ({with_flow} with the flow bins)" if with_flow != inside else "")
            )
        dim += 1
    return tuple(out)


def _as_slice(entry: Any) -> Any:
    return slice(None, None, entry) if entry is builtins.sum or _is_rebin(entry) else entry
