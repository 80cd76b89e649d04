"""The house's import rules, read from the source (non-test code only):

- no module uses a module that uses it: no circle between the modules of the Python package,
  nor between the top-level modules of the Rust crate (``src/x.rs`` or ``src/x/``);
- no module of the package imports the package's face (``polars_gpu_hist/__init__.py``);
- one seam alone, ``polars_gpu_hist/_native``, imports the compiled module ``_internal``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "polars_gpu_hist"
NAME = "polars_gpu_hist"
SEAM = f"{NAME}._native"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def python_imports() -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports (anywhere in the file,
    type-checking imports included: a circle in the types is a circle in the design)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        edges = graph.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                # `from a import b` names the module a.b where there is one, else a's names.
                targets = [
                    f"{node.module}.{a.name}"
                    if _is_module(f"{node.module}.{a.name}")
                    else node.module
                    for a in node.names
                ]
            else:
                assert not isinstance(node, ast.ImportFrom), f"{name}: use absolute imports"
                continue
            edges.update(t for t in targets if t == NAME or t.startswith(NAME + "."))
        edges.discard(name)
    return graph


def _strip_test_blocks(source: str) -> str:
    """Rust source without its `#[cfg(test)]` items (a module or function, braces matched)."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", source):
        if m.start() < i:
            continue
        out.append(source[i : m.start()])
        j = re.compile(r"[{;]").search(source, m.end())
        assert j is not None
        if j.group() == ";":  # `mod tests;` in a file of its own
            i = j.end()
            continue
        j, depth = j.start(), 0
        for k in range(j, len(source)):
            depth += {"{": 1, "}": -1}.get(source[k], 0)
            if depth == 0:
                i = k + 1
                break
        else:  # pragma: no cover - unbalanced source does not compile
            i = len(source)
    out.append(source[i:])
    return "".join(out)


def rust_imports() -> dict[str, set[str]]:
    """Each top-level module of `src/` -> the top-level modules its non-test code names through
    `crate::`."""
    src = ROOT / "src"
    top = {p.stem for p in src.glob("*.rs") if p.stem != "lib"} | {
        p.name for p in src.iterdir() if p.is_dir()
    }
    graph: dict[str, set[str]] = {m: set() for m in top}
    for path in src.rglob("*.rs"):
        if path.stem == "tests" or path.stem.endswith("_tests") or path.stem == "lib":
            continue
        owner = path.relative_to(src).parts[0].removesuffix(".rs")
        code = _strip_test_blocks(path.read_text())
        code = re.sub(r"//[^\n]*", "", code)  # comments and doc comments
        for used in re.findall(r"\bcrate::(\w+)", code):
            if used in top and used != owner:
                graph[owner].add(used)
    return graph


def rust_file_imports(folder: str) -> dict[str, set[str]]:
    """Each file of `src/<folder>/` (its mod.rs aside) -> the folder's files its non-test code
    names, through `crate::<folder>::` or `super::`."""
    here = ROOT / "src" / folder
    files = {
        p.stem
        for p in here.glob("*.rs")
        if p.stem not in ("mod", "tests") and not p.stem.endswith("_tests")
    }
    graph: dict[str, set[str]] = {f: set() for f in files}
    for f in files:
        code = _strip_test_blocks((here / f"{f}.rs").read_text())
        code = re.sub(r"//[^\n]*", "", code)
        named = re.findall(rf"\bcrate::{folder}::(\w+)", code) + re.findall(r"\bsuper::(\w+)", code)
        graph[f].update(n for n in named if n in files and n != f)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _describe(graph: dict[str, set[str]], found: Iterable[list[str]]) -> str:
    lines = []
    for component in found:
        members = set(component)
        for v in component:
            inside = sorted(graph[v] & members)
            lines.append(f"{v} -> {', '.join(inside)}")
        lines.append("")
    return "\n".join(lines)


def test_no_circle_between_python_modules() -> None:
    graph = python_imports()
    found = circles(graph)
    assert not found, "modules that use each other:\n" + _describe(graph, found)


def test_no_circle_between_rust_modules() -> None:
    graph = rust_imports()
    found = circles(graph)
    assert not found, "top-level modules that use each other:\n" + _describe(graph, found)


def test_no_circle_between_the_files_of_src_api() -> None:
    graph = rust_file_imports("api")
    found = circles(graph)
    assert not found, "files of src/api that use each other:\n" + _describe(graph, found)


def test_no_module_imports_the_face() -> None:
    graph = python_imports()
    importers = sorted(m for m, edges in graph.items() if NAME in edges)
    assert not importers, f"modules importing the package face: {importers}"


def test_only_the_seam_imports_the_native_module() -> None:
    graph = python_imports()
    importers = sorted(m for m, edges in graph.items() if f"{NAME}._internal" in edges)
    assert importers == [SEAM], f"modules importing _internal: {importers}"


def test_the_reader_sees_circles() -> None:
    # The reader itself: a circle it is shown, and the graphs it reads are not empty.
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    python, rust = python_imports(), rust_imports()
    assert f"{NAME}._expr.functions" in python[NAME]
    assert "bins" in rust["api"]
    assert "axes" in rust_file_imports("api")["hist1d"]
    assert _strip_test_blocks("a #[cfg(test)] mod t { fn f() { x } } b") == "a  b"
    assert _strip_test_blocks('a #[cfg(test)]\n#[path = "t.rs"]\nmod t; b') == "a  b"
