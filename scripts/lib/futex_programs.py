"""Builds the programs the futex view's pages run (futex-view.md, from
scripts/experiments/futex-view-programs.py, and futex-stacks-oracle.md,
from scripts/peers/futex-stacks-oracle.py), each from its source into a
directory the caller owns: the tests' raw_futex.c and std_mutex.rs, and
the page programs of scripts/experiments/futex-view-programs/. Each
builder returns the executable's path; a failed build raises
CalledProcessError."""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(ROOT, "tests", "programs")
PAGE = os.path.join(ROOT, "scripts", "experiments", "futex-view-programs")


def built(tmp, name, command):
    """Runs compiler `command` with `-o` a file `name` in `tmp`: that file."""
    out = os.path.join(tmp, name)
    subprocess.run(command + ["-o", out], check=True)
    return out


def build_raw(tmp):
    """raw_futex.c as tests/common builds it (frame pointers kept, no PIE)."""
    return built(tmp, "raw_futex", ["cc", "-g", "-O1", "-fno-optimize-sibling-calls", "-no-pie", "-pthread",
                                     os.path.join(TESTS, "raw_futex.c")])


def build_static(tmp):
    return built(tmp, "raw_futex_static", ["cc", "-g", "-O1", "-static", "-pthread",
                                            os.path.join(TESTS, "raw_futex.c")])


def build_std(tmp):
    return built(tmp, "std_mutex", ["rustc", "-O", "-g", "--edition", "2021", os.path.join(TESTS, "std_mutex.rs")])


def build_parking_lot(tmp):
    target = os.path.join(tmp, "cargo")
    subprocess.run(["cargo", "build", "--quiet", "--release", "--manifest-path",
                    os.path.join(PAGE, "parking_lot_mutex", "Cargo.toml"), "--target-dir", target], check=True)
    return os.path.join(target, "release", "parking_lot_mutex")


def build_gmutex(tmp):
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "glib-2.0"], check=True, capture_output=True,
                           text=True).stdout.split()
    return built(tmp, "gmutex", ["cc", "-g", "-O1", "-pthread", os.path.join(PAGE, "gmutex.c")] + flags)


def build_go(tmp):
    out = os.path.join(tmp, "gomutex")
    env = dict(os.environ, GOCACHE=os.path.join(tmp, "gocache"), GO111MODULE="off")
    subprocess.run(["go", "build", "-o", out, os.path.join(PAGE, "gomutex.go")], check=True, env=env)
    return out
