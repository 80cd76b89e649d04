"""NVRTC is preloaded only from the installed `nvidia-cuda-nvrtc` distribution's own files, never
from the working directory or another directory that shadows the `nvidia` namespace package."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from polars_gpu_hist._native import nvrtc as _nvrtc

PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")

METADATA = "Metadata-Version: 2.1\nName: nvidia-cuda-nvrtc\nVersion: 99.0\n"

PROBE = """
import json
import polars_gpu_hist  # preloads NVRTC on import
from polars_gpu_hist._native.nvrtc import preload_nvrtc

mapped = sorted({line.split()[-1] for line in open("/proc/self/maps") if "/" in line})
print(json.dumps({"preloaded": preload_nvrtc(), "mapped": mapped}))
"""


def installed_library() -> str | None:
    """The real `libnvrtc.so.*` of the interpreter's `nvidia-cuda-nvrtc`, if installed."""
    try:
        dist = importlib.metadata.distribution("nvidia-cuda-nvrtc")
    except importlib.metadata.PackageNotFoundError:
        return None
    for record in dist.files or []:
        if record.name.startswith("libnvrtc.so."):
            return os.path.realpath(dist.locate_file(record))
    return None


def plant_fake(root: Path) -> Path:
    """`root/nvidia/cu13/lib/libnvrtc.so.13`: a loadable shared object (a copy of an extension
    module), so that loading it would show in /proc/self/maps, and a `*.dist-info` claiming it
    belongs to `nvidia-cuda-nvrtc`."""
    import _ctypes

    fake = root / "nvidia" / "cu13" / "lib" / "libnvrtc.so.13"
    fake.parent.mkdir(parents=True)
    shutil.copyfile(_ctypes.__file__, fake)
    info = root / "nvidia_cuda_nvrtc-99.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nvidia-cuda-nvrtc\nVersion: 99.0\n"
    )
    (info / "RECORD").write_text("nvidia/cu13/lib/libnvrtc.so.13,,\n")
    return fake


@pytest.mark.parametrize("where", ["cwd", "sys.path"])
def test_a_library_in_the_working_directory_is_never_loaded(tmp_path: Path, where: str) -> None:
    fake = plant_fake(tmp_path / "evil")
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR}
    cwd = tmp_path / "evil"
    if where == "sys.path":
        # First on sys.path, ahead of site-packages, from another working directory.
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "evil"), PYTHON_DIR])
        cwd = tmp_path
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert str(fake) not in report["mapped"]
    assert not any(str(tmp_path) in path for path in report["mapped"])
    real = installed_library()
    assert report["preloaded"] == real
    if real is not None:
        assert real in report["mapped"]


def test_the_installed_library_is_found() -> None:
    real = installed_library()
    if real is None:
        pytest.skip("nvidia-cuda-nvrtc is not installed in this interpreter")
    assert list(_nvrtc.installed_nvrtc()) == [real]
    assert os.path.realpath(real).startswith(tuple(_nvrtc.site_directories()))


def test_only_files_inside_the_site_directory_count(tmp_path: Path, monkeypatch) -> None:
    """A distribution in a site directory whose RECORD points outside it (a `..` path, a
    symlink) gets none of those files loaded."""
    site_dir = tmp_path / "site-packages"
    outside = tmp_path / "outside" / "lib" / "libnvrtc.so.13"
    outside.parent.mkdir(parents=True)
    outside.write_bytes(b"not a library")
    lib = site_dir / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libnvrtc.so.13").write_bytes(b"inside")
    (lib / "libnvrtc.so.12").symlink_to(outside)
    info = site_dir / "nvidia_cuda_nvrtc-99.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nvidia-cuda-nvrtc\nVersion: 99.0\n"
    )
    (info / "RECORD").write_text(
        "nvidia/cu13/lib/libnvrtc.so.13,,\n"
        "nvidia/cu13/lib/libnvrtc.so.12,,\n"
        "nvidia/cu13/../../../outside/lib/libnvrtc.so.13,,\n"
    )
    monkeypatch.syspath_prepend(str(site_dir))
    monkeypatch.setattr(_nvrtc, "site_directories", lambda: {os.path.realpath(site_dir)})
    assert list(_nvrtc.installed_nvrtc()) == [os.path.realpath(lib / "libnvrtc.so.13")]
    # Not a site directory: nothing.
    monkeypatch.setattr(_nvrtc, "site_directories", lambda: set())
    assert list(_nvrtc.installed_nvrtc()) == []


def test_the_nvrtc_a_cuda_12_driver_can_load_is_chosen() -> None:
    """With NVRTC 13 and 12 both installed, the driver's CUDA major version picks (an injected
    version: this machine may have no driver)."""
    both = ["/site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "/site/nvidia/cu13/lib/libnvrtc.so.13"]
    assert _nvrtc.for_driver(both, 13) == both[::-1]
    assert _nvrtc.for_driver(both, 12) == both[:1]
    # No driver, or one too old for both: newest first, and the GPU says why when used.
    assert _nvrtc.for_driver(both, None) == both[::-1]
    assert _nvrtc.for_driver(both, 11) == both[::-1]
    assert _nvrtc.library_major("/x/libnvrtc.so.12") == 12
