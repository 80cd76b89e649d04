# One entry point for people and CI. `make demo` and `make test` need only python3 and cargo.
VENV  ?= .venv
PY    := $(VENV)/bin/python
# NVRTC from PyPI (nvidia-cuda-nvrtc): the Rust tests compile every kernel with it, no GPU needed,
# for the lowest and the newest architecture (`make bundle` builds every architecture's section).
NVRTC_LIB = $(firstword $(wildcard $(abspath $(VENV))/lib/python3*/site-packages/nvidia/cu13/lib))
FILE  ?=
ARGS  ?= --plot hist.png
# The oldest Polars that pyproject.toml declares: `make test` runs the quick suite against it in a
# second virtual environment (the same abi3 plugin; issue 36).
OLDEST_POLARS ?= 1.43.2
VENV_OLDEST   ?= .venv-oldest
# The newest Polars the package registry serves, whatever pyproject.toml's upper bound says:
# `make test-polars-latest` runs the whole suite against it. The policy (docs/getting-started.md):
# the upper bound is the minor above the newest release this target has passed; when a new
# release passes, the bound moves up (a line in CHANGELOG.md says so).
VENV_LATEST   ?= .venv-latest

.PHONY: demo test test-oldest test-polars-latest develop docs lint bench bench-swaps bundle wheel gpu-stage gpu-stage-dask clean

# What the demo needs (the `demo` group: maturin, numpy, the plot's Altair, NVRTC), then the
# development toolchain on top for `make test` (issue 33: a demo in minutes).
$(VENV)/.demo: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --group demo
	touch $@
$(VENV)/.installed: $(VENV)/.demo
	$(PY) -m pip install -q --group dev --group bench
	touch $@

# Release build of the plugin, installed into the venv; `make test` reuses it (cargo rebuilds
# nothing unchanged). `--group demo` (installed already): without a group maturin installs the
# `dev` group, the whole development toolchain.
develop: $(VENV)/.demo
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q --group demo

# The main job: histogram FILE (Parquet/CSV/IPC), or demo data when FILE is empty.
demo: develop
	$(PY) -m polars_gpu_hist $(FILE) $(ARGS)

# The lint CI holds every commit to (clippy -D warnings, ruff format, mypy --strict over
# python/ against _internal.pyi: pyproject.toml's [tool.mypy]), the whole test suite (GPU tests
# run only where a GPU is found: see scripts/gpu_check.sh), then the quick suite against the
# oldest Polars declared.
test: $(VENV)/.installed develop $(VENV_OLDEST)/.installed
	cargo fmt --all -- --check
	cargo clippy --all-targets --features lazy -- -D warnings
	$(VENV)/bin/ruff check python tests benches scripts docs
	$(VENV)/bin/ruff format --check python tests benches scripts docs
	$(VENV)/bin/mypy
	LD_LIBRARY_PATH=$(NVRTC_LIB):$$LD_LIBRARY_PATH PGH_REQUIRE_NVRTC=1 cargo test --quiet --features lazy
	$(PY) -m pytest -q
	$(SPHINX)
	$(QUICK_OLDEST)

# The documentation site from docs/ (MyST Markdown, the API reference from the docstrings), into
# docs/_build/html; warnings are errors. `make test` builds it too, and pytest runs every Python
# example of its pages (docs/conftest.py).
SPHINX = $(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html
docs: $(VENV)/.installed develop
	$(SPHINX)
	@echo "docs/_build/html/index.html"

# Only what the quick suite and its conftest import, beside the oldest Polars.
$(VENV_OLDEST)/.installed: Makefile
	python3 -m venv $(VENV_OLDEST)
	$(VENV_OLDEST)/bin/python -m pip install -q --upgrade pip
	$(VENV_OLDEST)/bin/python -m pip install -q "polars==$(OLDEST_POLARS)" "numpy>=1.26" "pytest>=8" "hypothesis>=6.100"
	touch $@

# `develop` leaves the plugin in python/polars_gpu_hist (an editable install): the oldest venv
# imports that same abi3 library from the source tree (about 5 s on 2 cores).
QUICK_OLDEST = PYTHONPATH=$(abspath python) $(VENV_OLDEST)/bin/python -m pytest -q -p no:cacheprovider tests/package/test_quick_api.py
test-oldest: develop $(VENV_OLDEST)/.installed
	$(QUICK_OLDEST)

# The development toolchain, then the newest Polars on top of the demo group's pin; each run
# upgrades it again, so that a release made since the venv was built is the one tested.
$(VENV_LATEST)/.installed: pyproject.toml
	python3 -m venv $(VENV_LATEST)
	$(VENV_LATEST)/bin/python -m pip install -q --upgrade pip
	$(VENV_LATEST)/bin/python -m pip install -q --group dev
	touch $@
test-polars-latest: develop $(VENV_LATEST)/.installed
	$(VENV_LATEST)/bin/python -m pip install -q --upgrade polars
	$(VENV_LATEST)/bin/python -c "import polars; print('polars', polars.__version__)"
	PYTHONPATH=$(abspath python) $(VENV_LATEST)/bin/python -m pytest -q -p no:cacheprovider

lint: $(VENV)/.installed
	cargo fmt --all -- --check
	cargo clippy --all-targets --features lazy,internals -- -D warnings
	cargo clippy --features python --lib -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --features lazy
	$(VENV)/bin/ruff check python tests benches scripts docs
	$(VENV)/bin/ruff format --check python tests benches scripts docs
	$(VENV)/bin/mypy

bench: develop
	$(PY) benches/cpu_bench.py

# Each drop-in beside the call it replaces (issue 31): a markdown table.
bench-swaps: develop
	$(PY) benches/swaps.py

# The common kernels prebuilt (scripts/build_bundle.py), carried by the wheel: CUBINs for every
# architecture NVRTC 13.0 lists and PTX for its lowest (the driver compiles it for newer GPUs),
# by NVRTC 13.0, the first of CUDA 13 (a section is used only under drivers at least as new as
# its NVRTC); and PTX by NVRTC 12.0, which every CUDA 12 driver compiles (for sm_70 and newer).
BUNDLE := python/polars_gpu_hist/kernels.bundle
BUNDLE_NVRTC := .nvrtc-13.0
BUNDLE_NVRTC12 := .nvrtc-12.0
BUNDLE_PARTS := target/bundle
$(BUNDLE_NVRTC)/.installed:
	$(PY) -m pip install -q --no-deps --target $(BUNDLE_NVRTC) "nvidia-cuda-nvrtc==13.0.*"
	touch $@
$(BUNDLE_NVRTC12)/.installed:
	$(PY) -m pip install -q --no-deps --target $(BUNDLE_NVRTC12) "nvidia-cuda-nvrtc-cu12==12.0.*"
	touch $@
KERNEL_SOURCES := $(wildcard kernels/*) src/gpu/kernel.rs src/gpu/bundle.rs src/gpu/bundle_kernels.rs
NVRTC13_ENV := LD_LIBRARY_PATH=$(abspath $(BUNDLE_NVRTC))/nvidia/cu13/lib
NVRTC12_ENV := LD_LIBRARY_PATH=$(abspath $(BUNDLE_NVRTC12))/nvidia/cuda_nvrtc/lib
bundle: $(BUNDLE)
$(BUNDLE_PARTS)/cuda13.bundle: $(KERNEL_SOURCES) | develop $(BUNDLE_NVRTC)/.installed
	mkdir -p $(BUNDLE_PARTS)
	$(NVRTC13_ENV) $(PY) scripts/build_bundle.py $@ --cubin all --ptx lowest
$(BUNDLE_PARTS)/cuda12.bundle: $(KERNEL_SOURCES) | develop $(BUNDLE_NVRTC12)/.installed
	mkdir -p $(BUNDLE_PARTS)
	$(NVRTC12_ENV) $(PY) scripts/build_bundle.py $@ --cubin none --ptx 70
$(BUNDLE): $(BUNDLE_PARTS)/cuda13.bundle $(BUNDLE_PARTS)/cuda12.bundle
	$(PY) scripts/build_bundle.py --merge $@ $^

# The GPU host's sections alone (sm_90 CUBINs, NVRTC 13.0's and 12.0's PTX: every path
# gpu_check.sh tries on an H100 or H200), 2.4 MB: with the full bundle (10 MB) the wheel would not
# fit beside Polars in the 64 MiB that travel to the host.
HOST_BUNDLE := $(BUNDLE_PARTS)/host.bundle
$(BUNDLE_PARTS)/cuda13-sm90.bundle: $(KERNEL_SOURCES) | develop $(BUNDLE_NVRTC)/.installed
	mkdir -p $(BUNDLE_PARTS)
	$(NVRTC13_ENV) $(PY) scripts/build_bundle.py $@ --cubin 90 --ptx lowest
$(HOST_BUNDLE): $(BUNDLE_PARTS)/cuda13-sm90.bundle $(BUNDLE_PARTS)/cuda12.bundle
	$(PY) scripts/build_bundle.py --merge $@ $^

# The abi3 wheel a release would publish (one for every Python from 3.9), with the full bundle.
wheel: $(BUNDLE)
	$(VENV)/bin/maturin build --release --strip -o dist
	ls -la dist/*.whl

# A stripped wheel for the GPU host into $(1), carrying the host's bundle: maturin packs whatever
# lies at $(BUNDLE), so the full one steps aside for the build (`make bundle` merges it back from
# its parts in seconds).
STAGE_WHEEL = rm -f $(BUNDLE) && cp $(HOST_BUNDLE) $(BUNDLE) && \
	$(VENV)/bin/maturin build --release --strip -o $(1); status=$$?; rm -f $(BUNDLE); exit $$status

# Everything the GPU host needs, in the ignored .gpu/: our stripped abi3 wheel with the host's
# bundle, the Polars wheels, boost-histogram (the CPU peer), peers.py (the host has hypothesis).
# Then: device run `bash scripts/gpu_check.sh all` carrying .gpu.
gpu-stage: $(VENV)/.installed $(HOST_BUNDLE)
	rm -rf .gpu && bash ../shared/gpu/stage.sh .gpu
	rm -f .gpu/fast_histogram-*
	# Polars xz-packed (34 MB where its wheels take 55), so that our wheel fits the 64 MiB carry.
	rm -rf target/polars-unpacked && mkdir -p target/polars-unpacked
	for w in .gpu/polars-*.whl .gpu/polars_runtime_32-*.whl; do unzip -qo $$w -d target/polars-unpacked; done
	tar -C target/polars-unpacked -cf - . | xz -T0 -6 > .gpu/polars.tar.xz
	rm -rf target/polars-unpacked .gpu/polars-*.whl .gpu/polars_runtime_32-*.whl
	$(call STAGE_WHEEL,.gpu)
	# The previous kernels and their lab, for the kernel lab's same-run baseline.
	mkdir -p .gpu/baseline && git archive 64d993f kernels scripts/kernel_lab.py | tar -x -C .gpu/baseline
	du -sh .gpu

# The Dask scaling run on a 2-GPU host, in the ignored .gpu-dask/ (no hypothesis or peers: the
# carry limit is 64 MiB). Then: device run `bash scripts/dask_gpu_check.sh` carrying .gpu-dask.
# Dask on a 2- or 4-GPU host (scripts/dask_gpu_check.sh): our wheel's native module, Polars and
# the Dask stack, xz-packed into .gpu-dask/ to fit the 64 MiB carry. WHEEL is a wheel already
# built (this target builds nothing): make gpu-stage-dask WHEEL=path/to/polars_gpu_hist-...whl
gpu-stage-dask:
	@test -n "$(WHEEL)" || { echo "usage: make gpu-stage-dask WHEEL=path/to/polars_gpu_hist-...whl"; exit 2; }
	PYTHON=$(PY) bash scripts/stage_dask.sh $(WHEEL) .gpu-dask

clean:
	rm -rf $(VENV) $(VENV_OLDEST) $(VENV_LATEST) $(BUNDLE_NVRTC) $(BUNDLE_NVRTC12) target dist
