"""Compile kernels/histogram.cu with NVRTC for every column type and target, as the plugin does.

Needs no GPU: only libnvrtc from the `nvidia-cuda-nvrtc` wheel. Any NVRTC message, a warning
included, fails the check, and so does a missing kernel entry point.

    .venv/bin/python scripts/nvrtc_check.py
"""

from __future__ import annotations

import ctypes
import re
import sys
from pathlib import Path

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
HEADER = "bin_rule.cuh"

VALUE_TYPES = [
    "float",
    "double",
    "signed char",
    "short",
    "int",
    "long long",
    "unsigned char",
    "unsigned short",
    "unsigned int",
    "unsigned long long",
]

# The flags the plugin must compile with: IEEE arithmetic, no contraction into FMAs.
COMMON_OPTIONS = ["-std=c++17", "--fmad=false", "--ftz=false", "--prec-div=true"]

# (target option, output kind)
TARGETS = [
    ("--gpu-architecture=sm_80", "cubin"),
    ("--gpu-architecture=sm_90", "cubin"),
    ("--gpu-architecture=compute_90", "ptx"),
]

ENTRY_POINTS = [
    f"hist_{family}_{kind}_{closed}"
    for family in ("shared", "global", "shared_weighted", "global_weighted")
    for kind in ("u32", "u64", "edges")
    for closed in ("left", "right")
]


def load_nvrtc() -> ctypes.CDLL:
    import nvidia

    for root in map(Path, nvidia.__path__):
        for lib in sorted(root.glob("*/lib/libnvrtc.so*")):
            if "builtins" not in lib.name:
                return ctypes.CDLL(str(lib))
    sys.exit("libnvrtc not found: install the nvidia-cuda-nvrtc package")


class Nvrtc:
    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)))
        self.version = f"{major.value}.{minor.value}"

    def check(self, result: int) -> None:
        if result != 0:
            raise RuntimeError(self.lib.nvrtcGetErrorString(result).decode())

    def _read(self, prog: ctypes.c_void_p, what: str) -> bytes:
        size = ctypes.c_size_t()
        self.check(getattr(self.lib, f"nvrtcGet{what}Size")(prog, ctypes.byref(size)))
        buf = ctypes.create_string_buffer(size.value)
        self.check(getattr(self.lib, f"nvrtcGet{what}")(prog, buf))
        return buf.raw[: size.value]

    def compile(
        self, source: str, headers: dict[str, str], options: list[str], output: str
    ) -> tuple[bool, str, bytes]:
        """Returns (ok, log, PTX or CUBIN)."""
        prog = ctypes.c_void_p()
        names = (ctypes.c_char_p * len(headers))(*(n.encode() for n in headers))
        texts = (ctypes.c_char_p * len(headers))(*(t.encode() for t in headers.values()))
        self.check(
            self.lib.nvrtcCreateProgram(
                ctypes.byref(prog), source.encode(), b"histogram.cu", len(headers), texts, names
            )
        )
        try:
            opts = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
            result = self.lib.nvrtcCompileProgram(prog, len(options), opts)
            log = self._read(prog, "ProgramLog").rstrip(b"\0").decode().strip()
            if result != 0:
                return False, log or self.lib.nvrtcGetErrorString(result).decode(), b""
            # The PTX names the entry points whatever the target; the CUBIN proves ptxas ran.
            ptx = self._read(prog, "PTX")
            return True, log, ptx if output == "ptx" else self._read(prog, "CUBIN")
        finally:
            self.check(self.lib.nvrtcDestroyProgram(ctypes.byref(prog)))


def main() -> int:
    nvrtc = Nvrtc(load_nvrtc())
    source = (KERNELS / "histogram.cu").read_text()
    headers = {HEADER: (KERNELS / HEADER).read_text()}
    print(f"NVRTC {nvrtc.version}")
    failures = 0
    for value_type in VALUE_TYPES:
        for target, output in TARGETS:
            options = [*COMMON_OPTIONS, target, f"-DVALUE_T={value_type}"]
            ok, log, image = nvrtc.compile(source, headers, options, output)
            problem = log
            if ok and output == "ptx":
                entries = set(re.findall(rb"\.entry\s+(\w+)", image))
                missing = [e for e in ENTRY_POINTS if e.encode() not in entries]
                if missing:
                    problem = f"missing entry points: {', '.join(missing)}"
            status = "ok" if ok and not problem else "FAIL"
            size = f"{len(image)} bytes {output}" if ok else "no output"
            print(f"{status:4}  VALUE_T={value_type:<18} {target:<32} {size}")
            if problem:
                failures += 1
                print(problem, file=sys.stderr)
    if failures:
        print(f"{failures} compile(s) failed or warned", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
