#!/usr/bin/env bash
# The aarch64 build and the NEON index loops, checked on an x86-64 machine: clippy for aarch64
# (with and without the Python plugin), then the library's tests cross-built and run under
# qemu-user, where the SIMD tests compare the NEON path with the scalar one on every case.
# Needs rustup, and Debian's gcc-aarch64-linux-gnu and qemu-user (installed here when missing).
# The one test left out spawns hundreds of threads, too slow under emulation.
set -euo pipefail
target=aarch64-unknown-linux-gnu
rustup target list --installed | grep -qx "$target" || rustup target add "$target"
if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  apt-get install -y -q gcc-aarch64-linux-gnu qemu-user
fi
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
cargo clippy --target "$target" --all-targets -- -D warnings
PYO3_CROSS_PYTHON_VERSION=3.11 cargo clippy --target "$target" --lib --features python -- -D warnings
cargo test --target "$target" --lib -- --skip tasks_asking_one_proof_at_once_all_get_it
cargo test --target "$target" --lib -- --nocapture paths_parse_and_fall_back 2>&1 | grep "paths tested"
