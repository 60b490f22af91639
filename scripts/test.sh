#!/usr/bin/env bash
# The whole test suite, on a fresh machine: formatting, lints, every test of
# the workspace (unit, lock conformance, CLI) and the loom models of the futex
# protocols. This is the command the README gives and .ci/run calls.
#
# Needs the Rust toolchain (cargo with rustfmt and clippy). As root it also
# mounts tracefs if needed, so the futex syscall counters are exercised, and
# installs the Debian allocator packages for `contend alloc`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "scripts/test.sh: cargo not found; install Rust (https://rustup.rs) first" >&2
    exit 1
fi

if [ "$(id -u)" = 0 ] && [ ! -d /sys/kernel/tracing/events/syscalls ] && [ -d /sys/kernel/tracing ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

# From Debian: the allocators `contend alloc` compares (with them installed
# the alloc tests require all four: CONTEND_REQUIRE_ALLOCATORS), rt-tests
# (svsematest, ptsematest), the oracle for `contend wakeup`, chromium,
# which opens `contend report`'s page headless and screenshots it, and the
# real programs `contend run` is tested on: sysbench and pigz; g++ builds
# the C++ test program; strace counts what --reopen opens; python3 runs
# the source checks and the scripts.
PACKAGES="python3 g++ strace libtcmalloc-minimal4 libjemalloc2 libmimalloc2.0 rt-tests chromium sysbench pigz"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    if ! dpkg -s $PACKAGES >/dev/null 2>&1; then
        echo "== installing $PACKAGES"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
    fi
    export CONTEND_REQUIRE_ALLOCATORS=1
    # Every precondition a test needs is here now (root, tracefs, the
    # packages above, setpriv, prlimit): a test that would skip fails.
    export CONTEND_NO_SKIP=1
else
    echo "scripts/test.sh: not root or no apt-get: missing allocators and rt-tests are skipped" >&2
fi

if ! command -v python3 >/dev/null; then
    echo "scripts/test.sh: python3 not found; it runs the source checks (apt-get install python3)" >&2
    exit 1
fi
echo "== import circles"
# Dependencies point one way, file by file and room by room (ARCHITECTURE.md).
python3 scripts/check/import-cycles.py
echo "== results pages indexed"
# Every page of docs/results is in its index, and names the script that made it.
python3 scripts/check/results-index.py --check
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== cargo test"
# Tests that cannot check what they are about say so in this file (see
# tests/common): it is read back and counted at the end.
SKIPPED=target/skipped-tests.txt
mkdir -p target && : > "$SKIPPED"
# The interposer (a cdylib) is built next to the contend binary, where the
# tests that preload it themselves look for it (contend carries its own
# copy: build.rs); `cargo test` alone may not build it.
cargo build --workspace --release
# The loom models (about four minutes, nearly all of it one model) run
# beside the tests rather than after them: most tests wait on processes
# they start, and the suite then fits in 12 minutes on 2 vCPUs. Their own
# target directory: --cfg loom rebuilds every dependency, and sharing
# target/ would throw away the normal build each time. Their own process
# group, so that a failing suite takes them down with it.
LOOM_LOG=target/loom-models.log
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom setsid cargo test -p locks --test loom --release \
    > "$LOOM_LOG" 2>&1 &
LOOM_PID=$!
trap 'kill -- -"$LOOM_PID" 2>/dev/null || true' EXIT
cargo test --workspace --release
echo "== loom models of the futex protocols"
if ! wait "$LOOM_PID"; then
    cat "$LOOM_LOG"
    echo "scripts/test.sh: the loom models failed (above)" >&2
    exit 1
fi
trap - EXIT
grep -E '^(test |test result)' "$LOOM_LOG"
echo "== cargo install into an empty root; contend run --profile from another directory"
# What the README's install line promises: the installed binary alone runs
# a real program under the interposer it carries. The same target
# directory as the build above, so nothing is compiled twice.
INSTALL_ROOT=$(mktemp -d)
cargo install --quiet --locked --path . --root "$INSTALL_ROOT" --target-dir target
ls "$INSTALL_ROOT/bin"
if command -v sysbench >/dev/null; then
    if ! (cd / && env -u CONTEND_INTERPOSER "$INSTALL_ROOT/bin/contend" run --profile --runs 1 --count-futex off \
        --no-progress --export-json "$INSTALL_ROOT/run.json" -- \
        sysbench --threads=2 mutex --mutex-num=4 --mutex-locks=20000 run >/dev/null 2> "$INSTALL_ROOT/run.err"); then
        cat "$INSTALL_ROOT/run.err"
        echo "scripts/test.sh: the installed contend failed to run sysbench (above)" >&2
        exit 1
    fi
    python3 scripts/check/installed-run.py "$INSTALL_ROOT/run.json"
else
    echo "installed run skipped: no sysbench" >> "$SKIPPED"
fi
rm -rf "$INSTALL_ROOT"
if [ "$(id -u)" = 0 ] && command -v svsematest >/dev/null && command -v python3 >/dev/null; then
    # The benchmark script must keep working; its numbers are not asserted.
    echo "== wakeup oracle (rt-tests), smoke run"
    python3 scripts/peers/wakeup-oracle.py --loops 200
fi

if [ -s "$SKIPPED" ]; then
    echo "== $(wc -l < "$SKIPPED") test(s) skipped in whole or in part (each line: a check that did not run):"
    sed 's/^/   /' "$SKIPPED"
else
    echo "== no test skipped"
fi
