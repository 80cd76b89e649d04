#!/usr/bin/env bash
# Stage what a Dask run on the GPU host needs (it has Python 3.12, numpy, CuPy, PyTorch, pyarrow
# and pytest, and no network) into .gpu-dask/, within the 64 MiB that travels with the tree:
#   polars.tar.xz  Polars and its runtime for Python 3.12 (made once, kept: about 34 MB)
#   dask.tar.xz    dask, distributed, their pure-Python needs and pandas (for dask.dataframe),
#                  tests left out (about 9 MB); not dask-cuda (it needs numba, 40 MB more)
#   ours.tar.xz    the native module and kernel bundle of our wheel; the Python package is the
#                  tree's own python/ there
# xz packs the Polars runtime into 34 MB where its wheel takes 54. On the host,
# scripts/dask_gpu_check.sh unpacks them with Python's tarfile.
# Usage, from the project root: scripts/stage_dask.sh path/to/polars_gpu_hist-*.whl [DIR]
set -euo pipefail
wheel=${1:?usage: scripts/stage_dask.sh path/to/polars_gpu_hist-...whl [DIR]}
dir=${2:-.gpu-dask}
py=${PYTHON:-.venv/bin/python}
[[ -x $py ]] || py=python3
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64
  --platform manylinux2014_x86_64 --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64
  --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64)
download() {  # DEST SPEC...: wheels for the host's Python 3.12
  local dest=$1; shift
  "$py" -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d "$dest" "$@"
}
unpack_wheels() {  # DEST WHEEL...: what installing them puts in site-packages
  local dest=$1; shift
  "$py" -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' "$dest" "$@"
}
pack() {  # ARCHIVE DIR: an xz tarball of DIR's contents, tests left out
  tar -C "$2" --exclude='*/tests' --exclude='__pycache__' -cf - . | xz -T0 -6 > "$1.part"
  mv "$1.part" "$1"
}

mkdir -p "$dir"
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$dir/" "$exclude" 2>/dev/null || echo "/$dir/" >> "$exclude"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ ! -s $dir/polars.tar.xz ]]; then
  download "$work/polars-wheels" --no-deps polars==2.1.0 polars-runtime-32==2.1.0
  unpack_wheels "$work/polars" "$work"/polars-wheels/*.whl
  pack "$dir/polars.tar.xz" "$work/polars"
fi

dask_version=$("$py" -c 'import dask; print(dask.__version__)' 2>/dev/null || echo 2026.8.0)
download "$work/dask-wheels" "dask==$dask_version" "distributed==$dask_version"
# dask.dataframe's pandas (the host's pyarrow serves it), without numpy: the host has its own.
download "$work/dask-wheels" --no-deps "pandas==${PANDAS_VERSION:-3.1.1}" python-dateutil tzdata
rm -f "$work"/dask-wheels/numpy-*.whl
unpack_wheels "$work/dask" "$work"/dask-wheels/*.whl
pack "$dir/dask.tar.xz" "$work/dask"

"$py" - "$wheel" "$work/ours" <<'PY'
import sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
native = [n for n in wheel.namelist() if n.startswith("polars_gpu_hist/") and n.endswith((".so", ".bundle"))]
if not any(n.endswith(".so") for n in native):
    sys.exit(f"{sys.argv[1]} holds no polars_gpu_hist/*.so")
wheel.extractall(sys.argv[2], native)
PY
pack "$dir/ours.tar.xz" "$work/ours"

ls -l "$dir"
du -cb "$dir"/*.tar.xz | tail -1
