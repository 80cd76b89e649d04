"""Sphinx configuration of the documentation site (`make docs`; `make test` builds it too, warnings
as errors). Pages are MyST Markdown; the API reference is generated from the numpydoc docstrings
of the public names."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The package as built in place (`make develop` leaves the native module in python/).
sys.path.insert(0, str(ROOT / "python"))

import polars_gpu_hist  # noqa: E402

project = "polars-gpu-hist"
author = "the polars-gpu-hist developers"
copyright = "the polars-gpu-hist developers"
release = polars_gpu_hist.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
]

# .rst only because numpydoc loads autosummary, which asks for it; the pages are Markdown.
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "conftest.py", "README.md"]

# MyST: fenced blocks with `{directive}`, `:::` fences, `$math$`, definition lists, anchors for
# `[text](page.md#heading)` links down to the third level.
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "fieldlist"]
myst_heading_anchors = 3

# autodoc + numpydoc: the docstrings are numpy style; signatures keep the annotations as written
# (the package's aliases, not their expansions).
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# No network where CI runs: no intersphinx inventories, no remote images.
html_theme = "pydata_sphinx_theme"
html_title = f"polars-gpu-hist {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []
nitpicky = False
