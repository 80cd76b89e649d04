"""Builds the wheel's kernel bundle (`make bundle`): every common kernel compiled by NVRTC for the
architectures given. Run with the NVRTC to build with first on LD_LIBRARY_PATH: the native module
is loaded on its own, without the package (whose import would load the pip-installed NVRTC).
The bundle records that NVRTC's version and is used only under drivers at least as new, so the
Makefile builds it with NVRTC 13.0, the first of CUDA 13.

Usage: python scripts/build_bundle.py OUT ARCH [ARCH...]
"""

from __future__ import annotations

import glob
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    out, *archs = sys.argv[1:]
    native = glob.glob(str(ROOT / "python" / "polars_gpu_hist" / "_internal*.so"))
    if not native:
        raise SystemExit("build the native module first (make develop)")
    spec = importlib.util.spec_from_file_location("polars_gpu_hist._internal", native[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    count = module.build_kernel_bundle(out, [int(a) for a in archs], 2)
    print(f"{count} kernels in {out}")


if __name__ == "__main__":
    main()
