#!/usr/bin/env bash
# The whole test suite, on a fresh machine: formatting, lints, every test of
# the workspace (unit, lock conformance, CLI) and the loom models of the futex
# protocols. This is the command the README gives and .ci/run calls.
#
# Needs only the Rust toolchain (cargo with rustfmt and clippy). As root it
# also mounts tracefs if needed, so the futex syscall counters are exercised;
# without it those columns read "-" and the tests still pass.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "scripts/test.sh: cargo not found; install Rust (https://rustup.rs) first" >&2
    exit 1
fi

if [ "$(id -u)" = 0 ] && [ ! -d /sys/kernel/tracing/events/syscalls ] && [ -d /sys/kernel/tracing ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== cargo test"
cargo test --workspace --release
echo "== loom models of the futex protocols"
# Its own target directory: --cfg loom rebuilds every dependency, and
# sharing target/ would throw away the normal build each time.
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p locks --test loom --release
