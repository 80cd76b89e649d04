"""Every Python example of the documentation pages runs in `make test` (Sybil): a ```python block
that starts with `>>>` is a doctest, any other ```python block runs as code, in page order, one
namespace per page, in a fresh working directory of its own (examples may write files).

An example that needs a GPU is marked by a MyST comment on the line before its block:

    % skip: next if(not GPU, reason="needs a GPU")

and one that needs the network or a cluster by `% skip: next "needs ..."`. `GPU` is True where a
usable NVIDIA GPU and driver are found (never in CI)."""

from __future__ import annotations

import os
import shutil
import tempfile
from doctest import ELLIPSIS, NORMALIZE_WHITESPACE
from typing import Any

from sybil import Sybil
from sybil.parsers.myst import PythonCodeBlockParser, SkipParser


def _setup(namespace: dict[str, Any]) -> None:
    import polars_gpu_hist as gh

    namespace["GPU"] = gh.gpu_available()
    namespace["_previous_dir"] = os.getcwd()
    namespace["_work_dir"] = tempfile.mkdtemp(prefix="pgh-docs-")
    os.chdir(namespace["_work_dir"])


def _teardown(namespace: dict[str, Any]) -> None:
    os.chdir(namespace["_previous_dir"])
    shutil.rmtree(namespace["_work_dir"], ignore_errors=True)


pytest_collect_file = Sybil(
    parsers=[
        PythonCodeBlockParser(doctest_optionflags=ELLIPSIS | NORMALIZE_WHITESPACE),
        SkipParser(),
    ],
    patterns=["*.md"],
    excludes=["_build/*"],
    setup=_setup,
    teardown=_teardown,
).pytest()
