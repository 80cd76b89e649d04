"""Files at the read limit (issue 47): each way of histogramming a Parquet column (and a CSV
column with nulls) beside Polars' own streaming read of the same column, the floor.

    python benches/files_bench.py --size 1GiB            # the 2-core machine: 2^28 float32
    python benches/files_bench.py --size 4GiB            # the GPU host: 2^30 float32
    python benches/files_bench.py --size 4GiB --cases floor,scan-cpu --runs 7

The data is written once per call into ``--dir`` (and kept there with ``--keep``): a Parquet
file of float32 uniform on [0, 1) (snappy, row groups of 2^22 rows), a CSV file of about
1 GiB (at most the Parquet file's size) holding the same kind of values with 1 in 20 missing
(``NA``). Writing is
timed apart. The page cache is warm (each file is read once before the runs; said in the JSON).

Each case runs in a fresh process, the cases alternating run after run (``--runs``, median
reported), with its peak RSS (``VmHWM``). 256 bins over (0, 1). Every case's counts are checked
against numpy's over the whole column once (``np.histogram`` of the column in memory).

Cases: ``floor`` (``pl.scan_parquet(p).select(pl.col("x").sum(), pl.len())
.collect(engine="streaming")``), ``scan-auto``, ``scan-gpu``, ``scan-cpu``
(``histogram_scan(p, "x", 256, range=(0, 1), device=...)``), ``lazy-ns``
(``pl.scan_parquet(p).gpu_hist.histogram("x", bins=256, range=(0, 1))``), ``lazy-expr`` (the
expression inside a lazy scan, streaming engine: it reads the column into memory), ``polars-hist``
(Polars' own ``hist``, streaming), ``csv-floor`` and ``csv-scan`` (the CSV file, as above), and
``capped`` (``scan-cpu`` and ``scan-auto`` under a memory cap smaller than the data, by default
half of it, at least 0.5 GiB: a cgroup v2 ``memory.max`` where one can be made, else a watchdog
that kills the child once its RSS passes the cap; the method is reported). Ratios are to the
floor's median of the same run. One JSON object on stdout (and in ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BINS, RANGE = 256, (0.0, 1.0)
ROW_GROUP = 1 << 22
SIZES = {"1GiB": 1 << 28, "4GiB": 1 << 30, "256MiB": 1 << 26, "64MiB": 1 << 24}
PARQUET_CASES = ["floor", "scan-auto", "scan-gpu", "scan-cpu", "lazy-ns", "lazy-expr"]
CSV_CASES = ["csv-floor", "csv-scan"]
SLOW_CASES = ["polars-hist"]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1GiB", choices=sorted(SIZES), help="the Parquet column")
    p.add_argument("--dir", default=None, help="where the files are written (default: a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the files (reused when present)")
    p.add_argument("--runs", type=int, default=5, help="runs of each case (median)")
    p.add_argument("--slow-runs", type=int, default=3, help="runs of Polars' own hist")
    p.add_argument("--cases", default="all", help="comma-separated cases, or all")
    p.add_argument("--cap-gib", type=float, default=None, help="memory cap (default: data / 2)")
    p.add_argument("--out", default=None, help="also write the JSON here")
    p.add_argument("--case", default=None, help=argparse.SUPPRESS)  # a child run
    p.add_argument("--parquet", default=None, help=argparse.SUPPRESS)
    p.add_argument("--csv", default=None, help=argparse.SUPPRESS)
    p.add_argument("--counts", default=None, help=argparse.SUPPRESS)
    return p.parse_args()


# The child: one case, timed in its own process.


def run_case(case: str, parquet: str, csv: str) -> dict[str, Any]:
    import polars as pl

    t0 = time.perf_counter()
    import polars_gpu_hist as gh

    imported = time.perf_counter() - t0
    counts = None
    start = time.perf_counter()
    if case == "floor":
        pl.scan_parquet(parquet).select(pl.col("x").sum(), pl.len()).collect(engine="streaming")
    elif case.startswith("scan-") or case.startswith("capped-"):
        device = case.split("-", 1)[1]
        h = gh.histogram_scan(parquet, "x", BINS, range=RANGE, device=device)
        counts = h.counts
    elif case == "lazy-ns":
        out = pl.scan_parquet(parquet).gpu_hist.histogram("x", bins=BINS, range=RANGE)
        counts = out.unnest("x")["count"].to_numpy()
    elif case == "lazy-expr":
        out = (
            pl.scan_parquet(parquet)
            .select(pl.col("x").gpu_hist.histogram(bins=BINS, range=RANGE))
            .collect(engine="streaming")
        )
        counts = out.unnest("x")["count"].to_numpy()
    elif case == "polars-hist":
        edges = [RANGE[0] + (RANGE[1] - RANGE[0]) * i / BINS for i in range(BINS + 1)]
        pl.scan_parquet(parquet).select(pl.col("x").hist(bins=edges)).collect(engine="streaming")
    elif case == "csv-floor":
        lf = pl.scan_csv(csv, null_values=["NA"], schema={"x": pl.Float32})
        lf.select(pl.col("x").sum(), pl.len()).collect(engine="streaming")
    elif case == "csv-scan":
        reader = {"null_values": ["NA"], "schema": {"x": pl.Float32}}
        h = gh.histogram_scan(csv, "x", BINS, range=RANGE, device="auto", reader_options=reader)
        counts = h.counts
    else:
        raise SystemExit(f"unknown case {case}")
    seconds = time.perf_counter() - start
    return {
        "case": case,
        "seconds": seconds,
        "import_s": imported,
        "peak_rss_gb": _status_kib("VmHWM") * 1024 / 1e9,
        "counts": None if counts is None else [int(c) for c in counts],
    }


def _status_kib(key: str) -> int:
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


# The parent: files, runs, the cap, the table.


def write_files(directory: Path, rows: int) -> dict[str, Any]:
    import numpy as np
    import polars as pl

    parquet, csv = directory / f"x_{rows}.parquet", directory / f"x_{rows}.csv"
    timing: dict[str, Any] = {}
    if not parquet.exists():
        t = time.perf_counter()
        rng = np.random.default_rng(47)
        # Written a row group at a time: the data is never whole in memory.
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema([("x", pa.float32())])
        with pq.ParquetWriter(parquet, schema, compression="snappy") as w:
            for start in range(0, rows, ROW_GROUP):
                n = min(ROW_GROUP, rows - start)
                x = rng.random(n, dtype=np.float32)
                w.write_table(pa.table({"x": x}), row_group_size=ROW_GROUP)
        timing["parquet_write_s"] = time.perf_counter() - t
    if not csv.exists():
        t = time.perf_counter()
        rng = np.random.default_rng(48)
        # 1 GiB (or the Parquet file's size, if smaller): about 11 bytes a line.
        csv_bytes = min(parquet.stat().st_size, 1 << 30)
        csv_rows = max(1 << 20, (csv_bytes // 11) // ROW_GROUP * ROW_GROUP)
        with open(csv, "w") as f:
            f.write("x\n")
            for start in range(0, csv_rows, ROW_GROUP):
                n = min(ROW_GROUP, csv_rows - start)
                x = pl.Series("x", rng.random(n, dtype=np.float32).round(6))
                x = pl.select(pl.when(pl.int_range(n) % 20 == 7).then(None).otherwise(x))
                x.write_csv(f, include_header=False, null_value="NA")
        timing["csv_write_s"] = time.perf_counter() - t
    return {
        "parquet": str(parquet),
        "csv": str(csv),
        "parquet_bytes": parquet.stat().st_size,
        "csv_bytes": csv.stat().st_size,
        **timing,
    }


def reference(path: str, csv: bool = False) -> list[int]:
    """numpy's counts over the whole column, in memory (not timed)."""
    import numpy as np
    import polars as pl

    if csv:
        x = pl.read_csv(path, null_values=["NA"], schema={"x": pl.Float32})["x"]
    else:
        x = pl.read_parquet(path)["x"]
    values = x.drop_nulls().to_numpy()
    counts, _ = np.histogram(values, BINS, range=RANGE)
    return [int(c) for c in counts]


def child(case: str, files: dict[str, Any], cap: dict[str, Any] | None = None) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--case", case]
    cmd += ["--parquet", files["parquet"], "--csv", files["csv"]]
    if cap is None:
        done = subprocess.run(cmd, capture_output=True, text=True)
        out, err, code, killed = done.stdout, done.stderr, done.returncode, False
    else:
        out, err, code, killed = _capped(cmd, cap)
    if killed:
        return {"case": case, "error": [f"over the cap: RSS passed {cap['limit'] / 2**30:.2f} GiB"]}
    if code != 0:
        return {"case": case, "error": (err or out).strip().splitlines()[-3:]}
    return json.loads(out.strip().splitlines()[-1])


def _capped(cmd: list[str], cap: dict[str, Any]) -> tuple[str, str, int, bool]:
    """The child under the cap: in a cgroup of its own, or watched (RSS read every 5 ms, the
    child killed past the limit) where no cgroup can be made."""
    import signal

    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=cap["preexec"]
    )
    killed = False
    if cap["watch"]:
        status = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            try:
                rss = next(
                    int(line.split()[1]) * 1024
                    for line in status.read_text().splitlines()
                    if line.startswith("VmRSS:")
                )
            except (OSError, StopIteration):
                break
            if rss > cap["limit"]:
                proc.send_signal(signal.SIGKILL)
                killed = True
                break
            time.sleep(0.005)
    out, err = proc.communicate()
    return out, err, proc.returncode, killed


def memory_cap(limit: int) -> dict[str, Any]:
    """How to hold a child under ``limit`` bytes of memory: a cgroup v2 of its own under this
    process's cgroup where one can be made (``memory.max``, swap off), else a watchdog that
    kills the child once its resident set passes the limit."""
    own = Path("/proc/self/cgroup").read_text().splitlines()
    unified = next((line.split("::", 1)[1] for line in own if line.startswith("0::")), None)
    base = Path("/sys/fs/cgroup")
    if unified is not None and (base / "cgroup.controllers").exists():
        group = base / unified.lstrip("/") / f"pgh-bench-{os.getpid()}"
        try:
            group.mkdir()
            (group / "memory.max").write_text(str(limit))
            (group / "memory.swap.max").write_text("0")
        except OSError:
            pass
        else:
            procs = group / "cgroup.procs"
            return {
                "method": f"cgroup v2 memory.max ({group})",
                "limit": limit,
                "preexec": lambda: procs.write_text(str(os.getpid())),
                "watch": False,
                "cleanup": group.rmdir,
            }
    return {
        "method": "RSS watchdog (no writable cgroup): the child is killed past the limit",
        "limit": limit,
        "preexec": None,
        "watch": True,
        "cleanup": None,
    }


def main() -> None:
    args = parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.parquet, args.csv)))
        return
    rows = SIZES[args.size]
    directory = Path(args.dir or tempfile.mkdtemp(prefix="pgh-files-"))
    directory.mkdir(parents=True, exist_ok=True)
    files = write_files(directory, rows)
    wanted = (
        [*PARQUET_CASES, *CSV_CASES, *SLOW_CASES, "capped"]
        if args.cases == "all"
        else args.cases.split(",")
    )
    import polars_gpu_hist as gh

    if not gh.gpu_available():
        wanted = [c for c in wanted if c != "scan-gpu"]
    # Warm page cache: every file read once.
    for f in (files["parquet"], files["csv"]):
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass
    expected = {"parquet": reference(files["parquet"]), "csv": reference(files["csv"], csv=True)}
    results: dict[str, list[dict[str, Any]]] = {}
    timed = [c for c in wanted if c not in ("capped",)]
    for run in range(args.runs):
        for case in timed:
            if case in SLOW_CASES and run >= args.slow_runs:
                continue
            r = child(case, files)
            results.setdefault(case, []).append(r)
            print(f"run {run} {case}: {r.get('seconds', r.get('error'))}", file=sys.stderr)
    capped: dict[str, Any] = {}
    if "capped" in wanted:
        data = rows * 4
        limit = int(args.cap_gib * 2**30) if args.cap_gib else max(1 << 29, data // 2)
        cap = memory_cap(limit)
        capped = {"limit_gib": limit / 2**30, "data_gib": data / 2**30, "method": cap["method"]}
        for case in ("capped-cpu", "capped-auto"):
            capped[case] = child(case, files, cap)
        if cap["cleanup"]:
            cap["cleanup"]()
    summary = summarize(results, expected, args)
    if capped:
        for case in ("capped-cpu", "capped-auto"):
            r = capped[case]
            if "counts" in r:
                r["counts_equal_numpy"] = r.pop("counts") == expected["parquet"]
        summary["capped"] = capped
    summary["files"] = {k: v for k, v in files.items()}
    summary["host"] = {
        "cores": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "gpu": gh.gpu_available(),
        "page_cache": "warm (each file read once before the runs)",
        "date": time.strftime("%Y-%m-%d"),
    }
    import polars as pl

    summary["versions"] = {"polars": pl.__version__, "polars_gpu_hist": gh.__version__}
    text = json.dumps(summary, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    print(table(summary), file=sys.stderr)
    if not args.keep and args.dir is None:
        for f in (files["parquet"], files["csv"]):
            os.unlink(f)


def summarize(
    results: dict[str, list[dict[str, Any]]], expected: dict[str, list[int]], args: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"cases": {}}
    for case, runs in results.items():
        ok = [r for r in runs if "seconds" in r]
        entry: dict[str, Any] = {"runs": len(ok)}
        if len(ok) < len(runs):
            entry["errors"] = [r["error"] for r in runs if "error" in r][:1]
        if ok:
            entry["median_s"] = statistics.median(r["seconds"] for r in ok)
            entry["all_s"] = [round(r["seconds"], 4) for r in ok]
            entry["peak_rss_gb"] = max(r["peak_rss_gb"] for r in ok)
            with_counts = [r for r in ok if r["counts"] is not None]
            if with_counts:
                want = expected["csv" if case.startswith("csv") else "parquet"]
                entry["counts_equal_numpy"] = all(r["counts"] == want for r in with_counts)
        out["cases"][case] = entry
    floors = {"parquet": out["cases"].get("floor"), "csv": out["cases"].get("csv-floor")}
    for case, entry in out["cases"].items():
        floor = floors["csv" if case.startswith("csv") else "parquet"]
        if floor and "median_s" in floor and "median_s" in entry:
            entry["ratio_to_floor"] = entry["median_s"] / floor["median_s"]
            entry["rss_over_floor_gb"] = entry["peak_rss_gb"] - floor["peak_rss_gb"]
    return out


def table(summary: dict[str, Any]) -> str:
    lines = [
        "| case | median s | x floor | peak RSS GB | counts = numpy |",
        "|---|---:|---:|---:|---|",
    ]
    for case, e in summary["cases"].items():
        if "median_s" not in e:
            lines.append(f"| {case} | error | | | |")
            continue
        ratio = f"{e['ratio_to_floor']:.2f}" if "ratio_to_floor" in e else "-"
        same = {True: "yes", False: "NO"}.get(e.get("counts_equal_numpy"), "-")
        lines.append(
            f"| {case} | {e['median_s']:.3f} | {ratio} | {e['peak_rss_gb']:.2f} | {same} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
