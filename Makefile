# One entry point for people and CI. `make demo` and `make test` need only python3 and cargo.
VENV  ?= .venv
PY    := $(VENV)/bin/python
FILE  ?=
ARGS  ?= --plot hist.png

.PHONY: demo test develop lint bench clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --group dev --group bench
	touch $@

# Release build of the plugin, installed into the venv.
develop: $(VENV)/.installed
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q

# The main job: histogram FILE (Parquet/CSV/IPC), or demo data when FILE is empty.
demo: develop
	$(PY) -m polars_gpu_hist $(FILE) $(ARGS)

# The whole test suite (GPU tests run only where a GPU is found: see scripts/gpu_check.sh).
test: develop
	cargo fmt --all -- --check
	$(VENV)/bin/ruff check python tests benches
	cargo test --quiet
	$(PY) -m pytest -q

lint: $(VENV)/.installed
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benches
	$(VENV)/bin/ruff format --check python tests benches

bench: develop
	$(PY) benches/cpu_bench.py

clean:
	rm -rf $(VENV) target
