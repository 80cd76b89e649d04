# ruff: noqa: B023, E731
# (Each launch closure is timed at once, inside the loop iteration that binds its variables.)
"""Kernel lab: the kernels of kernels/ compiled by NVRTC on the device as the crate compiles
them (one module per kernel, its variant fixed by -D flags: src/gpu/kernel.rs), launched through
CuPy family by family on data already on the device. Every result is checked against a plain
reference kernel (one global atomic a row, the same binners); times are CUDA-event medians beside
a cupy.sum of the same bytes (the read roofline). The plan in src/gpu/plan.rs is what ships; this
is where its numbers come from.

Usage: python scripts/kernel_lab.py [--log2n 29] [--only shared,packed,...] [--tag name]
       [--dtype uint16] (2^log2n uint16 values counted by value, one bin a value)
       [--define -DPACKED_LOADS_IN_FLIGHT=2 ...] (the counting kernels' tunables)
       [--suite lab50] (issue 50's cases: float32 at 65,536 / 1M / 16M bins, uint8 into 256
       counters, uint16 into 65,536, 2-D 1024 x 1024 pairs; today's families beside the
       candidates, and the tuning constants the table supports)
       [--dry] (no GPU: compile every module of the run for sm_90 and pack its parameters)
Writes $OUT/kernel_lab[_tag].json and prints a table last.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import ctypes
import glob
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEG_TILE_ROWS = 16384
SEG_WIDTH_BITS = 15
PRIVATE_GROUP_THREADS = 128
HEADERS = [
    "abi.cuh",
    "bin_rule.cuh",
    "binners.cuh",
    "rows.cuh",
    "cells.cuh",
    "counters.cuh",
    "fixed.cuh",
    "families.cuh",
    "segmented.cuh",
    "radix.cuh",
    "proof.cuh",
    "extremes.cuh",
]
# The partition families as (first pass, count pass, rows read whole a 16-byte load), and the
# lab's own combinations: radix_b is the radix partition pass followed by the batched count pass
# (radix runs its own, two long runs at once); *_i read an (n, 2) array's rows whole
# (InterleavedCells) where the others read a column at a time.
PARTITION_FAMILIES = {
    "segmented": ("segmented", "seg_count", False),
    "batched": ("batched", "seg_count_batched", False),
    "radix": ("radix", "seg_count_paired", False),
    "radix_b": ("radix", "seg_count_batched", False),
    "batched_i": ("batched", "seg_count_batched", True),
    "radix_i": ("radix", "seg_count_paired", True),
}


def source(extra: str = "") -> str:
    """histogram.cu with its headers inlined, as src/gpu/compile.rs inlines them."""
    text = (ROOT / "kernels" / "histogram.cu").read_text()
    for name in HEADERS:
        text = text.replace(f'#include "{name}"', (ROOT / "kernels" / name).read_text())
    return text + extra


def nvrtc_library() -> ctypes.CDLL:
    found = sorted(
        glob.glob(f"{sys.prefix}/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.*")
    )
    found += sorted(glob.glob("/usr/local/cuda/lib64/libnvrtc.so*"))
    return ctypes.CDLL(found[0])


def cubin(arch: str, *defines: str, extra: str = "") -> bytes:
    """A CUBIN as the crate compiles it (CuPy's own compile would add -ftz=true). Thread-safe:
    each call is a program of its own, and ctypes releases the GIL while NVRTC works."""
    nv = nvrtc_library()
    prog = ctypes.c_void_p()
    code = source(extra).encode()
    assert nv.nvrtcCreateProgram(ctypes.byref(prog), code, b"lab.cu", 0, None, None) == 0
    opts = [f"--gpu-architecture={arch}", "-std=c++17", "--fmad=false", "-default-device"]
    opts += list(defines)
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    if nv.nvrtcCompileProgram(prog, len(opts), arr) != 0:
        size = ctypes.c_size_t()
        nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(f"{' '.join(defines)}:\n{log.value.decode()}")
    size = ctypes.c_size_t()
    nv.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    out = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetCUBIN(prog, out)
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    return out.raw


COLUMN = [
    ("values", "u8"),
    ("validity", "u8"),
    ("validity_offset", "u8"),
    ("len", "u8"),
    ("stride", "u8"),
]
WEIGHTS = [("values", "u8"), ("validity", "u8"), ("validity_offset", "u8")]
RULE = [
    ("edges", "u8"),
    ("table", "u8"),
    ("lo", "i8"),
    ("n", "u4"),
    ("pad", "u4"),
    ("first", "f8"),
    ("last", "f8"),
    ("denom", "f8"),
    ("n_f", "f8"),
    ("scale", "f8"),
    ("margin", "f8"),
    ("start", "f8"),
    ("step", "f8"),
    ("at_min", "u4"),
    ("at_max", "u4"),
]
SEGMENTS = [
    ("keys", "u8"),
    ("starts", "u8"),
    ("cum", "u8"),
    ("totals", "u8"),
    ("partitions", "u4"),
    ("width_bits", "u4"),
    ("tiles", "u4"),
    ("rows_per_item", "u4"),
]
MAX_RANK = 8
COUNT_PARAMS = np.dtype(
    [
        ("columns", COLUMN, (MAX_RANK,)),
        ("rules", RULE, (MAX_RANK,)),
        ("cell_strides", "u4", (MAX_RANK,)),
        ("cells", "u4"),
        ("pad", "u4"),
        ("weights", WEIGHTS),
        ("shared", [("replicas", "u4"), ("stride", "u4")]),
        ("seg", SEGMENTS),
        ("out", "u8"),
    ],
    align=True,
)
SEGMENTS_DTYPE = np.dtype(SEGMENTS, align=True)
assert COUNT_PARAMS.itemsize == 1280, "kernels/abi.cuh's CountParams (src/gpu/abi.rs asserts it)"
assert SEGMENTS_DTYPE.itemsize == 48, "kernels/abi.cuh's Segments"


def rule32(n: int) -> tuple[np.ndarray, dict, bool, float, int]:
    """numpy's float32 bins over [0, 1] (float32 linspace, as float32 data's own extremes make
    them) and the cheap rule's proof (bins/uniform.rs, in numpy)."""
    f32 = np.float32
    edges = np.linspace(f32(0), f32(1), n + 1, dtype=f32)
    lo, hi = edges[0], edges[-1]
    denom = f32(hi - lo)
    scale = f32(n / (float(hi) - float(lo)))
    first = edges[:-1]
    last = np.nextafter(edges[1:], f32(-np.inf)).astype(f32)
    last[-1] = edges[-1]
    b = np.arange(n, dtype=np.float64)

    def numpy_est(x):
        with np.errstate(all="ignore"):
            i = np.trunc(((x - lo) / denom) * f32(n)).astype(np.float64)
        return np.minimum(i, n - 1)

    literal = not bool(np.all((numpy_est(first) + 1 >= b) & (numpy_est(last) <= b + 1)))
    margin = 0.5
    if not literal and n < (1 << 22):
        est_first = ((first - lo) * scale).astype(f32).astype(np.float64)
        est_last = ((last - lo) * scale).astype(f32).astype(np.float64)
        worst = float(np.max(np.maximum(np.maximum(b - est_first, est_last - (b + 1)), 0.0)))
        m = 2.0 * worst + 1e-3
        margin = m if m < 0.25 else 0.5
    # Recomputed from the float32 linspace formula that made them (src/gpu/kernel.rs).
    formula = 2
    step = f32(f32(hi - lo) / f32(n))
    rule = dict(
        edges=0,
        n=n,
        first=float(lo),
        last=float(hi),
        denom=float(denom),
        n_f=float(n),
        scale=float(scale),
        margin=margin,
        start=float(lo),
        step=float(step),
    )
    return edges, rule, literal, margin, formula


# One global atomic a row, the binners of the kernel (each axis's, its cell row-major).
REFERENCE = r"""
typedef BinnerOf<AXIS0, false>::type RefBin0;
#if RANK > 1
typedef BinnerOf<AXIS1, false>::type RefBin1;
#endif
extern "C" __global__ void reference(const __grid_constant__ CountParams p)
{
    const RefBin0 bin0(p.rules[0]);
    const RefBin0::Value* x = static_cast<const RefBin0::Value*>(p.columns[0].values);
#if RANK > 1
    const RefBin1 bin1(p.rules[1]);
    const RefBin1::Value* y = static_cast<const RefBin1::Value*>(p.columns[1].values);
#endif
    const u64 threads = (u64)gridDim.x * blockDim.x;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < p.columns[0].len; i += threads) {
        const unsigned int b = bin0(x[i * p.columns[0].stride]);
        if (b >= bin0.n) continue;
#if RANK > 1
        const unsigned int c = bin1(y[i * p.columns[1].stride]);
        if (c >= bin1.n) continue;
        atomicAdd(static_cast<u64*>(p.out) + b * p.cell_strides[0] + c * p.cell_strides[1], 1ull);
#else
        atomicAdd(static_cast<u64*>(p.out) + b, 1ull);
#endif
    }
}
"""


@dataclass
class Data:
    """A case's rows on the device: one column (`kind` f32, u8 or u16) or an (n, 2) float32
    array of pairs, with the bins' rule of each axis."""

    kind: str
    dist: str
    columns: list[Any]  # (pointer, length, stride) of each axis, or CuPy arrays
    rows: int
    roof: float = 0.0
    arrays: list[Any] = field(default_factory=list)

    @property
    def label(self) -> str:
        log2 = self.rows.bit_length() - 1
        what = {"f32": "float32", "u8": "uint8", "u16": "uint16", "pairs": "float32 pairs"}
        return f"{what[self.kind]} 2^{log2} {self.dist}"


def axis_define(kind: str, literal: bool, formula: int) -> str:
    """binners.cuh's `BinnerOf` arguments of the kind's axes (src/gpu/kernel.rs binner_args)."""
    if kind == "u16":
        return "unsigned short,4,0,0,0,0,0"  # RULE_INDEX: counted by value
    if kind == "u8":
        return "unsigned char,4,0,0,0,0,0"
    return f"float,1,0,{int(literal)},{formula},0,0"  # RULE_U32 closed left


class Lab:
    """Modules compiled once (in parallel), launches timed on the device."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.dry = args.dry
        self.modules: dict[tuple, Any] = {}
        self.results: list[dict] = []
        if self.dry:
            self.arch = "sm_90"
            self.sms, self.optin, self.per_sm, self.name = 132, 232_448, 233_472, "dry run"
            return
        import cupy as cp

        self.cp = cp
        dev = cp.cuda.Device()
        props = cp.cuda.runtime.getDeviceProperties(dev.id)
        major, minor = dev.compute_capability
        self.arch = f"sm_{major}{minor}"
        self.sms = props["multiProcessorCount"]
        self.optin = props["sharedMemPerBlockOptin"]
        self.per_sm = props["sharedMemPerMultiprocessor"]
        self.name = props["name"].decode()
        print(
            f"device {self.name}: {self.sms} SMs, {self.optin} B shared a block, {self.per_sm} "
            f"a SM, L2 {props['l2CacheSize']}",
            flush=True,
        )

    # ---- modules ----

    @staticmethod
    def defines(key: tuple) -> tuple[list[str], str, str]:
        """The -D flags, appended source and entry point of a module key
        (family, kind, literal, formula, extra defines)."""
        family, kind, literal, formula, extra = key
        axis = axis_define(kind, literal, formula)
        rank = ["-DRANK=2", f"-DAXIS0={axis}", f"-DAXIS1={axis}"] if kind == "pairs" else []
        rank = rank or ["-DRANK=1", f"-DAXIS0={axis}"]
        if family == "reference":
            return rank, REFERENCE, "reference"
        if family == "seg_scan":
            return ["-DKERNEL_SEG_SCAN"], "", "seg_scan"
        if family == "seg_count":
            return ["-DKERNEL_SEG_COUNT"], "", "seg_count"
        if family == "seg_count_batched":
            return ["-DKERNEL_SEG_COUNT_BATCHED"], "", "seg_count_batched"
        if family == "seg_count_paired":
            return ["-DKERNEL_SEG_COUNT_BATCHED", "-DSEG_RUNS_AT_ONCE=2"], "", "seg_count_batched"
        flags = ["-DKERNEL_COUNT", f"-DFAMILY=FAMILY_{family.upper()}", "-DWEIGHTED=0", *rank]
        return [*flags, *extra], "", "count"

    def compile_all(self, keys: list[tuple]) -> None:
        """Every module the run needs, compiled in parallel (NVRTC takes seconds a module)."""
        wanted = [k for k in dict.fromkeys(keys) if k not in self.modules]
        workers = min(len(wanted), os.cpu_count() or 2, 16) or 1

        def build(key: tuple) -> tuple[tuple, bytes]:
            flags, extra, _ = self.defines(key)
            return key, cubin(self.arch, *flags, extra=extra)

        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for key, image in pool.map(build, wanted):
                if self.dry:
                    self.modules[key] = image
                    print(f"compiled {key}: {len(image)} bytes", flush=True)
                    continue
                path = Path(tempfile.mkdtemp()) / "lab.cubin"
                path.write_bytes(image)
                module = self.cp.RawModule(path=str(path))
                f = module.get_function(self.defines(key)[2])
                self.modules[key] = module
                print(f"{key}: {f.num_regs} registers, {f.local_size_bytes} B local", flush=True)

    def function(self, key: tuple, shared: int = 0) -> Any:
        f = self.modules[key].get_function(self.defines(key)[2])
        if shared > 48 * 1024:
            f.max_dynamic_shared_size_bytes = shared
        return f

    # ---- timing ----

    def timed(self, run: Callable[[], Any]) -> float:
        cp = self.cp
        run()
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(self.args.reps):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        return statistics.median(times)

    # ---- data ----

    def make(self, kind: str, dist: str, rows: int) -> Data:
        """A case's rows on the device, and the roofline of their bytes."""
        if self.dry:
            cols = [(0, rows, 1)] if kind != "pairs" else [(0, rows, 2), (4, rows, 2)]
            return Data(kind, dist, cols, rows)
        cp = self.cp
        rng = cp.random.default_rng(7)
        if kind in ("u8", "u16"):
            top, dtype = (256, cp.uint8) if kind == "u8" else (65536, cp.uint16)
            if dist == "uniform":
                x = rng.integers(0, top, rows, dtype=cp.int32).astype(dtype)
            elif dist == "normal":  # image-like: a bright spot
                noise = rng.standard_normal(rows, dtype=cp.float32)
                x = cp.clip(noise * (top / 11) + top / 2, 0, top - 1).astype(dtype)
            elif dist == "sorted":
                x = cp.sort(rng.integers(0, top, rows, dtype=cp.int32).astype(dtype))
            else:
                x = cp.full(rows, top // 3, dtype=dtype)
        else:
            n = rows * (2 if kind == "pairs" else 1)
            if dist == "uniform":
                x = rng.random(n, dtype=cp.float32)
            elif dist == "normal":
                x = cp.clip(rng.standard_normal(n, dtype=cp.float32) * 0.1 + 0.5, 0, 0.999999)
            elif dist == "sorted":
                x = cp.sort(rng.random(n, dtype=cp.float32))
            elif dist == "adversarial":
                # Values on edges, NaN, outside the range and a misaligned start.
                x = rng.random(n + 3, dtype=cp.float32)
                x[::7] = cp.float32(np.nan)
                x[1::11] = 1.0
                x[2::13] = 0.0
                x[3::17] = 1.5
                x = x[1 : n + 1]  # 4-byte misaligned head
            else:
                x = cp.full(n, 0.3, dtype=cp.float32)
            if kind == "pairs":
                x = x.reshape(rows, 2)
        if kind == "pairs":
            cols = [(x.data.ptr, rows, 2), (x.data.ptr + 4, rows, 2)]
        else:
            cols = [(x.data.ptr, rows, 1)]
        data = Data(kind, dist, cols, rows, arrays=[x])
        flat = x.reshape(-1)
        # cupy.sum of the same bytes, as float32 (narrow integers sum slowly as themselves).
        as_f32 = flat.view(cp.float32) if flat.nbytes % 4 == 0 and kind != "f32" else flat
        data.roof = self.timed(lambda: as_f32.sum())
        return data

    # ---- launches ----

    def params(self, data: Data, rules: list[dict], bins: int, out_ptr: int, **extra) -> Any:
        p = np.zeros(1, dtype=COUNT_PARAMS)
        for d, ((ptr, rows, stride), rule) in enumerate(zip(data.columns, rules)):
            p["columns"]["values"][0, d] = ptr
            p["columns"]["len"][0, d] = rows
            p["columns"]["stride"][0, d] = stride
            for k, v in rule.items():
                p["rules"][k][0, d] = v
        per_axis = [r["n"] for r in rules]
        for d in range(len(rules)):
            p["cell_strides"][0, d] = int(np.prod(per_axis[d + 1 :], dtype=np.int64))
        p["cells"] = bins
        p["out"] = out_ptr
        for k, v in extra.items():
            group, name = k.split("__")
            p[group][name] = v
        return p[0]

    def rules(self, kind: str, bins: int) -> tuple[list[dict], bool, int, str]:
        """Each axis's rule, whether it replays numpy's division, its formula, a note."""
        if kind in ("u8", "u16"):
            return [dict(n=bins, lo=0)], False, 0, ""
        per_axis = round(bins**0.5) if kind == "pairs" else bins
        _, rule, literal, margin, formula = rule32(per_axis)
        axes = 2 if kind == "pairs" else 1
        return [rule] * axes, literal, formula, f"margin {margin:.3g}"

    def part_defines(self, whole_rows: bool) -> tuple[str, ...]:
        """A partition pass's tunables, and the interleaved source where rows are read whole."""
        return (*self.args.define, *(["-DINTERLEAVED=1"] if whole_rows else []))

    def keys(self, kind: str, bins: int, families: list[str]) -> list[tuple]:
        """The modules a case runs: the reference, and each family's passes."""
        _, literal, formula, _ = self.rules(kind, bins)
        key = lambda family, extra=(): (family, kind, literal, formula, tuple(extra))
        keys = [key("reference")]
        for family in families:
            if family in PARTITION_FAMILIES:
                part, count, whole_rows = PARTITION_FAMILIES[family]
                keys += [key(part, self.part_defines(whole_rows)), key("seg_scan"), key(count)]
            else:  # banked_1: the banked module on a launch of its own
                keys.append(key(family.removesuffix("_1"), self.args.define))
        # The later passes depend on no axis: one module each.
        return [k if not k[0].startswith("seg_") else (k[0], "", False, 0, ()) for k in keys]

    def case(self, data: Data, bins: int, families: list[str]) -> None:
        """Each family on `data` into `bins` bins (cells), checked against the reference."""
        rules, literal, formula, note = self.rules(data.kind, bins)
        key = lambda family, extra=(): (family, data.kind, literal, formula, tuple(extra))
        self.compile_all(self.keys(data.kind, bins, families))
        if self.dry:
            self.params(data, rules, bins, 0)
            return
        cp = self.cp
        sms, optin, per_sm = self.sms, self.optin, self.per_sm
        ref_out = cp.zeros(bins, dtype=cp.uint64)
        ref_rules = rules
        ref = self.function(key("reference"))
        ref((sms * 8,), (256,), (self.params(data, ref_rules, bins, ref_out.data.ptr),))
        expected = ref_out.get()
        del ref_out
        for family in families:
            out = cp.zeros(bins, dtype=cp.uint64)
            p_of = lambda **extra: self.params(data, rules, bins, out.data.ptr, **extra)
            stages: dict[str, float] = {}
            k = key(family.removesuffix("_1"), self.args.define)
            if family == "shared":
                stride = (bins + 1) | 1
                one = stride * 4
                if one > optin:
                    continue
                blocks = max(b for b in range(1, 5) if b == 1 or (one + 1024) * b <= per_sm)
                block = 512 if blocks > 1 else 1024
                budget = min(per_sm // blocks - 1024, optin)
                replicas = max(1, min(16, budget // one))
                sb = replicas * one
                f = self.function(k, sb)
                p = p_of(shared__replicas=replicas, shared__stride=stride)
                run = lambda: (out.fill(0), f((sms * blocks,), (block,), (p,), shared_mem=sb))
                plan = f"{sms * blocks}x{block} r{replicas}"
            elif family in ("banked", "banked_1"):
                one = (bins + 1) * 128
                if one > optin:
                    continue
                most = 4 if family == "banked" else 1  # SM90.most_banked_blocks
                blocks = max(b for b in range(1, most + 1) if b == 1 or (one + 1024) * b <= per_sm)
                block = 512 if blocks > 1 else 1024
                budget = min(per_sm // blocks - 1024, optin)
                replicas = max(1, min(block // 32, budget // one))
                sb = replicas * one
                f = self.function(k, sb)
                p = p_of(shared__replicas=replicas)
                run = lambda: (out.fill(0), f((sms * blocks,), (block,), (p,), shared_mem=sb))
                plan = f"{sms * blocks}x{block} r{replicas}"
            elif family == "private":
                totals = (bins + 1 + 3) // 4 * 16
                group = (bins + 1) * 128
                room = min(optin, per_sm - 1024) - totals
                groups = max(1, min(8, room // group))
                sb = totals + groups * group
                if sb > optin:
                    continue
                block = groups * PRIVATE_GROUP_THREADS
                blocks = max(1, min(per_sm // (sb + 1024), 2048 // block))
                f = self.function(k, sb)
                p = p_of()
                run = lambda: (out.fill(0), f((sms * blocks,), (block,), (p,), shared_mem=sb))
                plan = f"{sms * blocks}x{block}"
            elif family in ("packed", "spill"):
                # packed sweeps 16 bytes a read: whole groups of four words
                words = (bins + 7) // 8 * 4 if family == "packed" else (bins + 1) // 2
                sb = words * 4
                if sb > optin:
                    continue
                f = self.function(k, sb)
                blocks = max(1, min(2, per_sm // (sb + 1024)))
                p = p_of()
                run = lambda: (out.fill(0), f((sms * blocks,), (1024,), (p,), shared_mem=sb))
                plan = f"{sms * blocks}x1024"
            elif family in PARTITION_FAMILIES:
                part_family, count_pass, whole_rows = PARTITION_FAMILIES[family]
                P = -(-bins // (1 << SEG_WIDTH_BITS))
                tiles = -(-data.rows // SEG_TILE_ROWS)
                keys_buf = cp.empty(tiles * SEG_TILE_ROWS, dtype=cp.uint16)
                starts = cp.empty(tiles * (P + 1), dtype=cp.uint16)
                cum = cp.empty(P * tiles, dtype=cp.uint32)
                totals = cp.empty(P, dtype=cp.uint32)
                counters = P + 1 if part_family == "radix" else P
                part_bytes = (32 + (counters + 3) // 4 * 4 + SEG_TILE_ROWS * 3 // 2) * 4
                count_bytes = (32 + P + 1 + (1 << SEG_WIDTH_BITS)) * 4
                part = self.function(key(part_family, self.part_defines(whole_rows)), part_bytes)
                scan = self.function(("seg_scan", "", False, 0, ()))
                count = self.function((count_pass, "", False, 0, ()), count_bytes)
                part_blocks = max(1, min(2, per_sm // (part_bytes + 1024)))
                per_item = max(data.rows // (2 * sms), SEG_TILE_ROWS)
                seg = np.zeros(1, dtype=SEGMENTS_DTYPE)
                seg[0] = (
                    keys_buf.data.ptr,
                    starts.data.ptr,
                    cum.data.ptr,
                    totals.data.ptr,
                    P,
                    SEG_WIDTH_BITS,
                    tiles,
                    per_item,
                )
                p = p_of(**{f"seg__{n}": seg[0][n] for n in SEGMENTS_DTYPE.names})
                passes = {
                    "partition": lambda: part(
                        (sms * part_blocks,), (512,), (p,), shared_mem=part_bytes
                    ),
                    "scan": lambda: scan((P,), (1024,), (seg[0],)),
                    "count": lambda: count(
                        (sms,), (1024,), (seg[0], np.uint32(bins), out), shared_mem=count_bytes
                    ),
                }

                def run():
                    out.fill(0)
                    for one_pass in passes.values():
                        one_pass()

                stages = {name: round(self.timed(s), 4) for name, s in passes.items()}
                plan = f"P={P} part {sms * part_blocks}x512 count {count_pass}"
            elif family == "global":
                f = self.function(k)
                p = p_of()
                run = lambda: (out.fill(0), f((sms * 4,), (512,), (p,)))
                plan = f"{sms * 4}x512"
            else:
                raise SystemExit(f"no family {family!r}")
            ms = self.timed(run)
            run()
            exact = bool(np.array_equal(out.get(), expected))
            self.record(data, bins, family, ms, exact, plan, stages, note, literal)

    def record(self, data, bins, family, ms, exact, plan, stages, note, literal) -> None:
        row = dict(
            case=data.label,
            kind=data.kind,
            dist=data.dist,
            bins=bins,
            family=family,
            ms=ms,
            roof_ms=data.roof,
            ratio=ms / data.roof,
            exact=exact,
            plan=plan,
            stages=stages,
            note=note,
            literal=literal,
            rows=data.rows,
        )
        self.results.append(row)
        flag = "" if exact else "  MISMATCH"
        print(
            f"{data.label:28s} {bins:9d} {family:9s} {ms:8.3f} ms {ms / data.roof:5.2f}x read"
            f"{flag}  {plan} {stages or ''}",
            flush=True,
        )


LARGE = ["batched", "radix", "radix_b"]
# Issue 50's cases: (kind, log2 rows, distributions, bins, families). Today's families first,
# then the candidates; every family of a case runs on the same buffer.
LAB50 = [
    ("f32", 29, ["uniform", "normal"], 65_536, ["packed"]),
    ("f32", 29, ["uniform", "normal"], 1 << 20, LARGE),
    ("f32", 29, ["uniform", "normal"], 1 << 24, LARGE),
    (
        "u8",
        30,
        ["uniform", "normal", "degenerate"],
        256,
        ["shared", "banked", "banked_1", "private"],
    ),
    ("u16", 29, ["uniform", "normal"], 65_536, ["packed"]),
    (
        "pairs",
        27,
        ["uniform", "normal"],
        1 << 20,
        ["batched", "radix", "radix_b", "batched_i", "radix_i"],
    ),
]


def tuning_advice(results: list[dict]) -> list[str]:
    """Which of src/gpu/plan.rs's SM90 constants the table supports moving: a candidate wins a
    group of cases where it is exact and at least 3% faster than today's family on each."""
    lines = []

    def wins(kinds: set[str], bins: set[int] | None, today: str, candidate: str) -> bool | None:
        rows = [r for r in results if r["kind"] in kinds and (bins is None or r["bins"] in bins)]
        cases = {(r["case"], r["bins"]) for r in rows}
        if not cases:
            return None
        for c in cases:
            by = {r["family"]: r for r in rows if (r["case"], r["bins"]) == c}
            if today not in by or candidate not in by or not by[candidate]["exact"]:
                return False
            if by[candidate]["ms"] > 0.97 * by[today]["ms"]:
                return False
        return True

    for candidate, also in [
        ("banked", ""),
        ("banked_1", ", SM90.most_banked_blocks = 1"),
        ("private", ""),
    ]:
        w = wins({"u8"}, {256}, "shared", candidate)
        if w is not None:
            verdict = "set" if w else "keep Family::Shared; do not set"
            family = candidate.removesuffix("_1").capitalize()
            lines.append(
                f"bytes: {candidate} against shared on every uint8 row: {verdict} "
                f"SM90.bytes = Family::{family}{also}"
            )
    for candidate, count in [("radix", "Paired"), ("radix_b", "Batched")]:
        w = wins({"f32", "pairs"}, {1 << 20, 1 << 24}, "batched", candidate)
        if w is not None:
            verdict = "set" if w else "keep Family::Batched; do not set"
            lines.append(
                f"large bins: {candidate} against batched on every float32 and 2-D row: {verdict} "
                f"SM90.large_bins = Family::Radix, SM90.radix_count = CountPass::{count}"
            )
    for today, candidate in [("batched", "batched_i"), ("radix", "radix_i")]:
        w = wins({"pairs"}, None, today, candidate)
        if w is not None:
            verdict = "set" if w else "keep false; do not set"
            lines.append(
                f"2-D rows: {candidate} against {today} on every 2-D row: {verdict} "
                "SM90.interleaved = true"
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=29)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only", default="", help="families, comma-separated")
    ap.add_argument("--dists", default="", help="distributions, comma-separated")
    ap.add_argument("--bins", default="", help="bin counts, comma-separated")
    ap.add_argument("--tag", default="", help="names the JSON written")
    ap.add_argument("--dtype", default="float32", choices=["float32", "uint16", "uint8"])
    ap.add_argument("--suite", default="", choices=["", "lab50"])
    ap.add_argument("--dry", action="store_true", help="compile and pack only (no GPU)")
    ap.add_argument(
        "--define", action="append", default=[], help="-DNAME=VALUE for the counting kernels"
    )
    args = ap.parse_args()
    lab = Lab(args)
    only = set(filter(None, args.only.split(",")))
    dists = set(filter(None, args.dists.split(",")))
    if args.suite == "lab50":
        plan = [
            (kind, log2, [d for d in ds if not dists or d in dists], bins, fams)
            for kind, log2, ds, bins, fams in LAB50
        ]
    else:
        kind = {"float32": "f32", "uint16": "u16", "uint8": "u8"}[args.dtype]
        every = {
            "f32": [16, 256, 4096, 32768, 65536, 1 << 20, 1 << 24],
            "u16": [65536],
            "u8": [256],
        }[kind]
        wanted = [int(b) for b in args.bins.split(",") if b] or every
        all_dists = ["uniform", "normal", "degenerate", "sorted"]
        all_dists += ["adversarial"] if kind == "f32" else []
        families = ["shared", "banked", "private", "packed", "spill", "segmented", "batched"]
        families += ["radix", "radix_b", "global"]  # (the *_i variants take pairs: --suite)
        plan = []
        for d in all_dists:
            if dists and d not in dists:
                continue
            for b in wanted:
                if d in ("sorted", "adversarial") and b not in (256, 65536, 1 << 20, 1 << 24):
                    continue
                fams = [f for f in families if not only or f in only]
                fams = [
                    f
                    for f in fams
                    if (f not in ("packed", "spill") or b >= 4096)
                    and ((f not in PARTITION_FAMILIES and f != "global") or b >= 32768)
                    and (f not in ("banked", "private") or (b + 1) * 128 <= lab.optin)
                ]
                log2 = args.log2n - 3 if d == "adversarial" else args.log2n
                plan.append((kind, log2, [d], b, fams))
    # Every module of the run at once, in parallel (a case's alone left most cores idle).
    lab.compile_all([k for kind, _, _, bins, fams in plan for k in lab.keys(kind, bins, fams)])
    made: dict[tuple, Data] = {}
    for kind, log2, ds, bins, fams in plan:
        for dist in ds:
            data_key = (kind, dist, log2)
            if data_key not in made:
                made.clear()  # one buffer at a time: 2^30 rows of several cases would not fit
                made[data_key] = lab.make(kind, dist, 1 << log2)
            lab.case(made[data_key], bins, fams)
    if args.dry:
        print(f"dry run: {len(lab.modules)} modules compiled for sm_90, parameters packed")
        return
    out_dir = Path(os.environ.get("OUT", "/tmp"))
    tag = f"_{args.tag}" if args.tag else ""
    (out_dir / f"kernel_lab{tag}.json").write_text(
        json.dumps(dict(device=lab.name, results=lab.results), indent=1)
    )
    print(f"\n{lab.name}: each family's bare launches, times the read roofline (cupy.sum)")
    print("| case | bins | family | ms | x read | exact | passes (ms) |")
    print("|---|---:|---|---:|---:|---|---|")
    for r in lab.results:
        passes = " / ".join(f"{k} {v:.3f}" for k, v in r["stages"].items())
        print(
            f"| {r['case']} | {r['bins']} | {r['family']} | {r['ms']:.3f} | "
            f"{r['ratio']:.2f} | {'yes' if r['exact'] else 'NO'} | {passes} |"
        )
    advice = tuning_advice(lab.results)
    if advice:
        print("\nTuning (src/gpu/plan.rs, SM90), from this table:")
        for line in advice:
            print(f"- {line}")


if __name__ == "__main__":
    main()
