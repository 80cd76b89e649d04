"""Find NVRTC where pip puts it: the PyPI package `nvidia-cuda-nvrtc` installs
`nvidia/cu13/lib/libnvrtc.so.13` inside site-packages, which the loader does not search. Loading
it by path first lets the native module's dlopen("libnvrtc.so.13") find it (as PyTorch does for
its CUDA wheels). A system NVRTC, when there is one, is found without this.

Only the files the installed distribution itself lists are loaded, and only when they lie in
one of the interpreter's site directories: the `nvidia` namespace package also spans the working
directory and every other `sys.path` entry, so a directory holding `nvidia/cu13/lib/...` (or a
`*.dist-info` that claims to be the distribution) must never get its library run on import."""

from __future__ import annotations

import ctypes
import fnmatch
import importlib.metadata
import os
import site
import sysconfig
from collections.abc import Iterator

DISTRIBUTION = "nvidia-cuda-nvrtc"
# The library inside the wheel (its RECORD path), not `libnvrtc-builtins`, which NVRTC loads.
LIBRARY_PATTERN = "nvidia/cu*/lib/libnvrtc.so.*"


def preload_nvrtc() -> str | None:
    """Loads the pip-installed NVRTC (RTLD_GLOBAL); its path, or ``None`` where there is none
    (the system's loader then looks for one)."""
    for path in installed_nvrtc():
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        return path
    return None


def installed_nvrtc() -> Iterator[str]:
    """The real paths of `libnvrtc.so.*` listed by the installed `nvidia-cuda-nvrtc`
    distributions whose files lie inside a site directory."""
    sites = site_directories()
    try:
        dists = list(importlib.metadata.distributions(name=DISTRIBUTION))
    except Exception:  # a broken metadata directory on sys.path must not break the import
        return
    for dist in dists:
        base = os.path.realpath(str(dist.locate_file("")))
        if base not in sites:
            continue  # the working directory, PYTHONPATH: not where pip installed it
        for record in sorted(dist.files or [], key=str):
            if not fnmatch.fnmatchcase(record.as_posix(), LIBRARY_PATTERN):
                continue
            path = os.path.realpath(str(dist.locate_file(record)))
            # RECORD may name `../` paths and the file may be a symlink: the target must be
            # inside the distribution's own site directory.
            if os.path.commonpath([base, path]) == base and os.path.isfile(path):
                yield path


def site_directories() -> set[str]:
    """The interpreter's (and the user's, where enabled) site-packages directories."""
    dirs = set()
    try:
        dirs.update(site.getsitepackages())
    except AttributeError:  # old virtualenv's site module
        pass
    if site.ENABLE_USER_SITE:
        dirs.add(site.getusersitepackages())
    paths = sysconfig.get_paths()
    dirs.update(paths[key] for key in ("purelib", "platlib") if key in paths)
    return {os.path.realpath(d) for d in dirs}
