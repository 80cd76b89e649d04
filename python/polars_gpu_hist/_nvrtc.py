"""Find NVRTC where pip puts it: the PyPI package `nvidia-cuda-nvrtc` installs
`nvidia/cu13/lib/libnvrtc.so.13` inside site-packages, which the loader does not search. Loading
it by path first lets the native module's dlopen("libnvrtc.so.13") find it (as PyTorch does for
its CUDA wheels). A system NVRTC, when there is one, is found without this."""

from __future__ import annotations

import ctypes
import glob
import os


def preload_nvrtc() -> str | None:
    try:
        import nvidia
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        for path in sorted(glob.glob(os.path.join(root, "cu*", "lib", "libnvrtc.so.*"))):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return path
            except OSError:
                continue
    return None
