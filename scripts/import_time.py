"""What `import polars_gpu_hist` costs on top of `import polars` (issue 33 item 5): the median
of fresh interpreters, each timing `import polars` and then the package, in seconds.

    python scripts/import_time.py [runs]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

# One fresh interpreter: both imports timed in-process (the interpreter's own start excluded).
_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import polars
t1 = time.perf_counter()
import polars_gpu_hist
t2 = time.perf_counter()
heavy = [m for m in ("numpy", "altair", "dask", "pyarrow", "pandas") if m in sys.modules]
print(json.dumps({"polars": t1 - t0, "package": t2 - t1, "heavy": heavy}))
"""


def main(runs: int = 9) -> None:
    samples = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _CHILD], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(runs)
    ]
    polars_s = statistics.median(s["polars"] for s in samples)
    package_s = statistics.median(s["package"] for s in samples)
    print(f"import polars:                 {polars_s:.3f} s (median of {runs})")
    print(f"import polars_gpu_hist after:  {package_s:.3f} s (median of {runs})")
    print(f"heavy modules loaded:          {samples[0]['heavy'] or 'none'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
