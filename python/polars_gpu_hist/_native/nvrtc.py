"""Find NVRTC where pip puts it: the PyPI package `nvidia-cuda-nvrtc` installs
`nvidia/cu13/lib/libnvrtc.so.13` inside site-packages, which the loader does not search. Loading
it by path first lets the native module's dlopen("libnvrtc.so.13") find it (as PyTorch does for
its CUDA wheels). A system NVRTC, when there is one, is found without this.

Only the files the installed distribution itself lists are loaded, and only when they lie in
one of the interpreter's site directories: the `nvidia` namespace package also spans the working
directory and every other `sys.path` entry, so a directory holding `nvidia/cu13/lib/...` (or a
`*.dist-info` that claims to be the distribution) must never get its library run on import.

Where both NVRTC 13 (`nvidia-cuda-nvrtc`) and NVRTC 12 (`nvidia-cuda-nvrtc-cu12`) are installed,
the newest that the driver's CUDA major version can load is preloaded: a CUDA 12 driver cannot
load what NVRTC 13 makes (issue 33)."""

from __future__ import annotations

import ctypes
import fnmatch
import importlib.metadata
import os
import site
import sysconfig
from collections.abc import Iterator

# The distributions and the library inside each wheel (its RECORD path), not
# `libnvrtc-builtins`, which NVRTC loads itself; the newest CUDA first.
DISTRIBUTIONS = {
    "nvidia-cuda-nvrtc": "nvidia/cu*/lib/libnvrtc.so.*",
    "nvidia-cuda-nvrtc-cu12": "nvidia/cuda_nvrtc/lib/libnvrtc.so.*",
}


def preload_nvrtc() -> str | None:
    """Loads the pip-installed NVRTC (RTLD_GLOBAL) that suits the driver; its path, or ``None``
    where there is none (the system's loader then looks for one)."""
    found = list(installed_nvrtc())
    if len(found) > 1:
        found = for_driver(found, driver_major())
    for path in found:
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        return path
    return None


def for_driver(paths: list[str], driver: int | None) -> list[str]:
    """``paths`` (libnvrtc.so.<major>) that a driver of CUDA major version ``driver`` can use,
    the newest first; all of them, newest first, where the driver is unknown or too old for
    every one (the GPU then says why when it is used)."""
    newest_first = sorted(paths, key=library_major, reverse=True)
    fitting = [p for p in newest_first if driver is not None and library_major(p) <= driver]
    return fitting or newest_first


def library_major(path: str) -> int:
    """The CUDA major version in a library's name (libnvrtc.so.12 -> 12)."""
    suffix = os.path.basename(path).rsplit(".so.", 1)[-1].split(".")[0]
    return int(suffix) if suffix.isdigit() else 0


def driver_major() -> int | None:
    """The CUDA major version of the NVIDIA driver, or None where there is none."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int(0)
        if cuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return version.value // 1000


def installed_nvrtc() -> Iterator[str]:
    """The real paths of `libnvrtc.so.*` listed by the installed NVRTC distributions whose
    files lie inside a site directory."""
    for name, pattern in DISTRIBUTIONS.items():
        yield from _listed(name, pattern)


def _listed(name: str, pattern: str) -> Iterator[str]:
    sites = site_directories()
    try:
        dists = list(importlib.metadata.distributions(name=name))
    except Exception:  # a broken metadata directory on sys.path must not break the import
        return
    for dist in dists:
        base = os.path.realpath(str(dist.locate_file("")))
        if base not in sites:
            continue  # the working directory, PYTHONPATH: not where pip installed it
        for record in sorted(dist.files or [], key=str):
            if not fnmatch.fnmatchcase(record.as_posix(), pattern):
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
