"""Docstrings of the ``gpu_hist`` namespace methods, assembled from the functions they call:
the method keeps its own summary and example, and takes the ``Parameters`` and ``Returns``
sections of its function (numpy style), so that ``help(pl.col("x").gpu_hist.histogram)``
shows every argument and each argument is described in one place."""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# A numpy-style section header: a title line, then a line of dashes.
_HEADER = re.compile(r"^(\w[\w ]*)\n-+\n", re.MULTILINE)


def like(
    source: Callable[..., Any] | str,
    *,
    drop: tuple[str, ...] = (),
    replace: dict[str, str] | None = None,
    returns: str | None = None,
) -> Callable[[F], F]:
    """A decorator: the method's docstring (summary, then ``Examples``) with ``source``'s
    ``Parameters`` (less ``drop``, entries in ``replace`` rewritten) and ``Returns`` (or
    ``returns``) between them. ``source`` is a function or its ``"module:name"`` (for one
    defined after the class)."""

    def decorate(method: F) -> F:
        function = source
        if isinstance(function, str):
            module, name = function.split(":")
            function = getattr(importlib.import_module(module), name)
        own = _sections(inspect.cleandoc(method.__doc__ or ""))
        theirs = _sections(inspect.cleandoc(function.__doc__ or ""))
        entries = _entries(theirs.get("Parameters", ""))
        for name, text in (replace or {}).items():
            entries[name] = _entry(text)
        parameters = "\n".join(text for name, text in entries.items() if name not in drop)
        parts = [
            own[""],
            _section("Parameters", parameters),
            _section("Returns", _entry(returns) if returns else theirs["Returns"]),
            *(_section(title, text) for title, text in own.items() if title),
        ]
        method.__doc__ = "\n\n".join(p.rstrip() for p in parts if p.strip()) + "\n"
        return method

    return decorate


def _sections(doc: str) -> dict[str, str]:
    """``{"": summary, title: body, ...}`` of a numpy-style docstring."""
    marks = list(_HEADER.finditer(doc))
    out = {"": doc[: marks[0].start()] if marks else doc}
    for mark, following in zip(marks, [*marks[1:], None]):
        end = following.start() if following else len(doc)
        out[mark.group(1)] = doc[mark.end() : end].rstrip("\n")
    return out


def _entries(parameters: str) -> dict[str, str]:
    """The entries of a ``Parameters`` section by name: a line at the margin names one (or
    several, ``a, b``), the indented lines below describe it."""
    entries: dict[str, str] = {}
    name = None
    for line in parameters.splitlines():
        if line and not line.startswith(" "):
            name = line.strip()
            entries[name] = line
        elif name is not None:
            entries[name] += "\n" + line
    return entries


def _entry(text: str) -> str:
    """An entry written in place: its first line at the margin, its description under it."""
    first, *rest = inspect.cleandoc(text).splitlines()
    return "\n".join([first, *("    " + line if line else line for line in rest)])


def _section(title: str, body: str) -> str:
    return f"{title}\n{'-' * len(title)}\n{body}" if body.strip() else ""
