"""The typed seam: `_internal.pyi` declares exactly what the native module exports (names both
ways, each function's and constructor's parameters, methods, properties and static methods).
CI has no GPU: a renamed native function or a reordered argument on a GPU-only path fails here,
not on a user's GPU. (`make test` runs mypy --strict over the package against this stub.)"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import polars_gpu_hist
from polars_gpu_hist import _internal

PACKAGE = Path(polars_gpu_hist.__file__).parent
STUB = PACKAGE / "_internal.pyi"


def _stub() -> dict[str, ast.stmt]:
    """The stub's top-level declarations by name. Plain assignments are stub-only type aliases
    (``Flow = tuple[...]``), not exports."""
    out: dict[str, ast.stmt] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return out


def _exports() -> set[str]:
    """What the native module defines (module dunders aside, `__version__` kept)."""
    return {n for n in dir(_internal) if not (n.startswith("__") and n.endswith("__"))} | {
        "__version__"
    }


def _params(args: ast.arguments, skip_first: bool) -> list[tuple[str, bool]]:
    """(name, has a default) of each parameter a stub declares."""
    positional = args.posonlyargs + args.args
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    out = [(a.arg, d) for a, d in zip(positional, defaults)]
    out += [(a.arg, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    return out[1:] if skip_first else out


def _runtime_params(obj: object) -> list[tuple[str, bool]] | None:
    """(name, has a default) of each parameter pyo3's text signature gives, or None."""
    try:
        signature = inspect.signature(obj)  # pyo3's __text_signature__
    except (TypeError, ValueError):
        return None
    return [
        (p.name, p.default is not inspect.Parameter.empty)
        for p in signature.parameters.values()
        if p.name not in ("self", "cls", "$self", "$cls")
    ]


def test_every_export_is_declared_and_every_declaration_exported() -> None:
    stub, exports = set(_stub()), _exports()
    assert exports - stub == set(), "exported by the native module but missing from the stub"
    assert stub - exports == set(), "declared in the stub but not exported by the module"


@pytest.mark.parametrize(
    "name", sorted(n for n, node in _stub().items() if isinstance(node, ast.FunctionDef))
)
def test_functions_take_the_declared_parameters(name: str) -> None:
    node = _stub()[name]
    assert isinstance(node, ast.FunctionDef)
    runtime = _runtime_params(getattr(_internal, name))
    assert runtime is not None, f"{name} has no text signature to check"
    assert runtime == _params(node.args, skip_first=False)


def _members(node: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}


def _decorators(f: ast.FunctionDef) -> set[str]:
    return {d.id for d in f.decorator_list if isinstance(d, ast.Name)}


@pytest.mark.parametrize(
    "name", sorted(n for n, node in _stub().items() if isinstance(node, ast.ClassDef))
)
def test_classes_have_the_declared_members(name: str) -> None:
    node = _stub()[name]
    assert isinstance(node, ast.ClassDef)
    cls = getattr(_internal, name)
    declared = _members(node)
    inherited = set(dir(object))
    runtime = {
        n for n in dir(cls) if n not in inherited and not (n.startswith("__") and n.endswith("__"))
    }
    # Dunder members the stub declares (`__cuda_array_interface__`) must exist too.
    runtime |= {n for n in declared if n != "__new__" and hasattr(cls, n)}
    assert runtime == set(declared) - {"__new__"}
    for member, f in declared.items():
        if member == "__new__":
            params = _runtime_params(cls)
            if params is not None:
                assert params == _params(f.args, skip_first=True), f"{name}()"
            continue
        attribute = inspect.getattr_static(cls, member)
        kinds = _decorators(f)
        if "property" in kinds:
            assert inspect.isdatadescriptor(attribute), f"{name}.{member} is no property"
            continue
        if "staticmethod" in kinds:
            assert isinstance(attribute, staticmethod) or not inspect.ismethoddescriptor(
                attribute
            ), f"{name}.{member} is no static method"
        params = _runtime_params(getattr(cls, member))
        if params is not None:
            skip = "staticmethod" not in kinds
            assert params == _params(f.args, skip_first=skip), f"{name}.{member}"
