"""Builds the wheel's kernel bundle (`make bundle`): the common kernels compiled by the NVRTC on
LD_LIBRARY_PATH, CUBINs for every architecture it supports (or those given) and PTX for its
lowest (or those given), with a table of what each section costs. `--merge` joins bundles that
NVRTCs of different CUDA versions built, each in a process of its own (a process loads one NVRTC).

The native module is loaded on its own, without the package, whose import would load the
pip-installed NVRTC. A section records its NVRTC's version and is used only under drivers at least
as new, so the Makefile builds with NVRTC 13.0 (the first of CUDA 13) and NVRTC 12.0 (PTX any
CUDA 12 driver compiles).

Usage:
    python scripts/build_bundle.py OUT [--cubin all|none|ARCH,...] [--ptx lowest|none|ARCH,...]
    python scripts/build_bundle.py --merge OUT IN [IN...]
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def native() -> ModuleType:
    # A weighted kernel's name and source follow the process's way of summing (src/fixed.rs): the
    # bundle holds the default's (float sums), whatever the builder's environment says.
    os.environ.pop("POLARS_GPU_HIST_SUMS", None)
    found = glob.glob(str(ROOT / "python" / "polars_gpu_hist" / "_internal*.so"))
    if not found:
        raise SystemExit("build the native module first (make develop)")
    spec = importlib.util.spec_from_file_location("polars_gpu_hist._internal", found[0])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def archs(value: str) -> list[int] | None:
    """`all`/`lowest` (None: the native side asks NVRTC which), `none`, or a comma list."""
    if value in ("all", "lowest"):
        return None
    if value == "none":
        return []
    return [int(a) for a in value.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("inputs", nargs="*", type=Path)
    parser.add_argument("--merge", action="store_true", help="join the bundles given as inputs")
    parser.add_argument("--cubin", default="all")
    parser.add_argument("--ptx", default="lowest")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    module = native()
    if args.merge:
        sections = module.merge_kernel_bundles(args.out, args.inputs)
        size = args.out.stat().st_size
        print(f"{sections} sections in {args.out}: {size / 1e6:.1f} MB")
        return
    started = time.perf_counter()
    report = module.build_kernel_bundle(args.out, archs(args.cubin), archs(args.ptx), args.threads)
    seconds = time.perf_counter() - started
    # Every kernel built for every section (a kernel that fails to compile has failed the build
    # already): the proof that `make test` takes for the lowest and newest architecture only.
    counts = {kernels for _, _, _, kernels, _, _ in report}
    if len(counts) != 1 or 0 in counts:
        raise SystemExit(f"the sections hold different numbers of kernels: {sorted(counts)}")
    print("| section | NVRTC | kernels | unpacked MB | packed MB |")
    print("|---|---|---:|---:|---:|")
    for fmt, arch, built_by, kernels, unpacked, packed in report:
        name = f"{fmt} {'sm' if fmt == 'cubin' else 'compute'}_{arch}"
        nvrtc = f"{built_by // 1000}.{built_by % 1000 // 10}"
        print(f"| {name} | {nvrtc} | {kernels} | {unpacked / 1e6:.2f} | {packed / 1e6:.2f} |")
    total = args.out.stat().st_size
    print(f"{args.out}: {total / 1e6:.1f} MB, built in {seconds:.0f} s on {args.threads} threads")


if __name__ == "__main__":
    main()
