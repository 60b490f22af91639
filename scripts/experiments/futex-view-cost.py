#!/usr/bin/env python3
"""What the futex view costs the program it watches, measured: each
program runs behind a gate (`sh -c 'read go; exec PROGRAM'`) in rounds,
interleaved in a shuffled order, plain, followed by `contend attach
--no-holder-state --futex-stacks 0` (which follows the shell and,
through exec, the program: the view alone, no interposer), by `contend
attach --no-holder-state` (the view with its user stacks, at the
default budget) and by `contend attach` (the view, its stacks and the
holders' states: every context switch too), and not followed but with
the kernel's syscall tracing path turned on (FLOOR_EVENT: the floor of
any view on syscall tracepoints). Each run
is timed from the gate's opening to the program's exit; a round's ratio
is followed over plain, and the program's cost is the geometric mean of
the rounds' ratios with its 95% t interval, as `contend compare` gives it
(scripts/lib/paired.py); the stacks' own cost is the view with them over
the view without, the split's the view with everything over the view
with its stacks. The futex call rate is the view's calls over the
followed runs' time. The programs: cond_queue.c and raw_futex.c (the
tests'), pipe_pingpong.c (no futex call at all), the five of
futex-view.md (Rust std and parking_lot, GLib, a static C program, Go;
each left out, and said so, where its toolchain is missing) and sysbench
threads (yields in a loop).

Needs root (the tracepoints). Writes docs/results/futex-view-cost.md with
no program given; else prints.   e.g.  scripts/experiments/futex-view-cost.py --rounds 10
"""

import argparse
import contextlib
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402
from paired import paired  # noqa: E402  (scripts/lib/paired.py: the statistics are contend compare's)
from futex_programs import build_gmutex, build_go, build_parking_lot, build_static, build_std  # noqa: E402

# The programs of futex-view.md (scripts/experiments/futex-view-programs.py),
# whose cost the issue asks for too: (name, the tool its build needs, its
# builder). One whose tool is missing is left out, and the page says so.
PAGE_PROGRAMS = [("std_mutex", "rustc", build_std), ("parking_lot_mutex", "cargo", build_parking_lot),
                 ("gmutex", "pkg-config", build_gmutex), ("raw_futex_static", "cc", build_static),
                 ("gomutex", "go", build_go)]

# A syscall tracepoint the programs never fire (getppid): enabled through
# tracefs it records nothing of theirs, but while it is on, every syscall
# of every task takes the kernel's syscall tracing path, which the view's
# tracepoints turn on too. Its cost is the floor any view built on
# syscall tracepoints pays on this kernel.
FLOOR_EVENT = "/sys/kernel/tracing/events/syscalls/sys_enter_getppid/enable"

# The variant not followed, with the tracing path on: a marker, not flags
# (`one` tells it by identity).
FLOOR = object()


@contextlib.contextmanager
def tracing_path():
    """The kernel's syscall tracing path turned on for the block, by
    FLOOR_EVENT; left as it was found."""
    with open(FLOOR_EVENT) as f:
        before = f.read().strip()
    with open(FLOOR_EVENT, "w") as f:
        f.write("1")
    try:
        yield
    finally:
        with open(FLOOR_EVENT, "w") as f:
            f.write(before)


def one(prog, contend, flags, tmp):
    """Seconds from the gate's opening to the exit, the view's calls
    (None when not followed: `flags` None or FLOOR), and the program's
    context switches (its threads', voluntary and not, from wait4's
    rusage). FLOOR: not followed, the syscall tracing path on."""
    if flags is FLOOR:
        with tracing_path():
            return timed(prog, contend, None, tmp)
    return timed(prog, contend, flags, tmp)


def timed(prog, contend, flags, tmp):
    """`one` with the tracing path as it is."""
    gate = subprocess.Popen(["sh", "-c", "read go; exec " + shlex.join(prog)], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    attach = None
    if flags is not None:
        export = os.path.join(tmp, "attach.json")
        attach = subprocess.Popen([contend, "attach", str(gate.pid), "--export-json", export, "--top", "1"] + flags,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while "following process" not in (attach.stderr.readline() or "following process"):
            pass
    t = time.perf_counter()
    gate.stdin.write(b"go\n")
    gate.stdin.close()
    _, status, usage = os.wait4(gate.pid, 0)
    wall = time.perf_counter() - t
    gate.returncode = os.waitstatus_to_exitcode(status)
    if gate.returncode != 0:
        sys.exit(f"{shlex.join(prog)} exited {gate.returncode}")
    calls = None
    if attach:
        attach.wait()
        doc = json.load(open(export))
        calls = doc["points"][0]["sample"]["futex_view"]["calls"]
    return wall, calls, usage.ru_nvcsw + usage.ru_nivcsw


VARIANTS = {"plain": None, "floor": FLOOR, "view": ["--no-holder-state", "--futex-stacks", "0"],
            "stacks": ["--no-holder-state"], "split": []}


def slowdown(vs):
    """compare's ratio is a variant's rate over the baseline's: its
    reciprocal is the wall-time ratio, with its interval."""
    lo, hi = vs["ci95"] or (vs["ratio"], vs["ratio"])
    return 1 / vs["ratio"], (1 / hi, 1 / lo)


def measure(prog, contend, rounds, tmp):
    """The view over plain, the syscall tracing path alone over plain,
    the view over that path alone, the stacks over the view alone,
    everything over plain, and the split over the view with its stacks
    (wall time, each with its 95% interval), the futex call rate
    followed, and the context-switch rate of the plain runs."""
    times, calls, followed, switches, plain = [], 0, 0.0, 0, 0.0
    for _ in range(rounds):
        order = list(VARIANTS)
        random.shuffle(order)
        got = {v: one(prog, contend, VARIANTS[v], tmp) for v in order}
        # Rates for contend compare: a time goes as its reciprocal.
        times.append({v: 1 / got[v][0] for v in order})
        calls += got["view"][1]
        followed += got["view"][0]
        switches += got["plain"][2]
        plain += got["plain"][0]
    over_plain = paired(contend, times, "plain")
    over_floor = paired(contend, times, "floor")
    over_view = paired(contend, times, "view")
    over_stacks = paired(contend, times, "stacks")
    return (slowdown(over_plain["view"]), slowdown(over_plain["floor"]), slowdown(over_floor["view"]),
            slowdown(over_view["stacks"]), slowdown(over_plain["split"]), slowdown(over_stacks["split"]),
            calls / followed, switches / plain)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--contend", default=os.path.join(ROOT, "target", "release", "contend"))
    ap.add_argument("program", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("futex-view-cost.py: needs root (the futex tracepoints)")
    if not os.path.exists(FLOOR_EVENT):
        sys.exit(f"futex-view-cost.py: no {FLOOR_EVENT} (mount -t tracefs nodev /sys/kernel/tracing)")
    prog = a.program[1:] if a.program[:1] == ["--"] else a.program
    left_out = []
    with tempfile.TemporaryDirectory() as tmp:
        if prog:
            programs = [prog]
        else:
            src = os.path.join(ROOT, "tests", "programs")
            programs = []
            own = os.path.join(ROOT, "scripts", "experiments", "futex-view-cost")
            for name, where in [("cond_queue", src), ("raw_futex", src), ("pipe_pingpong", own)]:
                exe = os.path.join(tmp, name)
                subprocess.run(["cc", "-O1", "-pthread", "-o", exe, os.path.join(where, name + ".c")], check=True)
                programs.append([exe])
            for name, tool, build in PAGE_PROGRAMS:
                if not shutil.which(tool):
                    left_out.append(f"{name} ({tool} not installed)")
                    continue
                try:
                    programs.append([build(tmp)])
                except subprocess.CalledProcessError:
                    left_out.append(f"{name} (its build failed)")
            # Bounded by events, not by --time: a program that runs for a
            # fixed time has the same wall time whatever slows it.
            if shutil.which("sysbench"):
                for locks in ["4", "3"]:
                    programs.append(["sysbench", "threads", "--threads=4", f"--thread-locks={locks}", "--time=0",
                                     "--events=1500", "run"])
        rows = []
        for p in programs:
            print(f"{shlex.join(p)} ...", file=sys.stderr)
            rows.append((p,) + measure(p, a.contend, a.rounds, tmp))
    command = f"scripts/experiments/futex-view-cost.py --rounds {a.rounds}"
    command += " -- " + shlex.join(prog) if prog else ""
    lines = ["# What the futex view costs the program", "", machine.header(), "",
             f"Generated by `{command}`: each program behind a gate, plain, followed by `contend attach "
             "--no-holder-state --futex-stacks 0` (the view alone), by `contend attach --no-holder-state` (the "
             "view with its waiters' and wakers' user stacks, at the default budget of stacks a second) and by "
             "`contend attach` (all that and the holders' states, which also samples every context switch of "
             "the program's threads), interleaved in shuffled rounds; geometric mean of the rounds' ratios with "
             "its 95% interval (contend compare's, through scripts/lib/paired.py). The view takes every futex "
             "call's entry and return through BPF programs on the syscall tracepoints, which send on only the "
             "followed threads' calls (locks::sys::task_filter): its cost grows with the program's futex call "
             "rate, and with its rate of other syscalls, which take the kernel's syscall tracing path while any "
             "syscall tracepoint is in use; the stacks' with the calls' rate up to the budget, then with the "
             "budget; the split's with the context-switch rate (a router on sched_switch sends each switch of a "
             "followed thread, and the kernel's stack of each one into sleep). "
             "pipe_pingpong.c (scripts/experiments/futex-view-cost/) makes no futex call and hands a byte "
             "between two threads through pipes: under the view alone it pays only the syscall tracing path. "
             "A program must be bounded by its work, not by a time (sysbench's --time=1 gives 1 s whatever the "
             "view costs). *Tracing path*: the program not followed, with a syscall tracepoint it never fires "
             "(sys_enter_getppid) enabled through tracefs, in the same rounds: it records nothing of the "
             "program's, but every syscall then takes the kernel's tracing path, as under the view; it is the "
             "floor of any view built on syscall tracepoints (this kernel has no kprobes and no BTF, so none "
             "can attach to the futex code itself), and *view / tracing path* is what the view adds above it. "
             "std_mutex, parking_lot_mutex, gmutex, raw_futex_static and gomutex are the programs of "
             "[futex-view.md](futex-view.md), built as its script builds them."
             + (f" Left out: {', '.join(left_out)}." if left_out else ""),
             "",
             "| program | futex calls/s (followed) | context switches/s (plain) | view / plain | "
             "tracing path / plain | view / tracing path | stacks / view alone | everything / plain | "
             "holder states / view with stacks |",
             "|---|---|---|---|---|---|---|---|---|"]
    cell = lambda r: f"{r[0]:.3f} ({r[1][0]:.3f}..{r[1][1]:.3f})"  # noqa: E731
    for p, view, floor, above, stacks, split, own, rate, switching in rows:
        name = " ".join([os.path.basename(p[0])] + p[1:])
        lines.append(f"| `{name}` | {rate:,.0f} | {switching:,.0f} | {cell(view)} | {cell(floor)} | {cell(above)} "
                     f"| {cell(stacks)} | {cell(split)} | {cell(own)} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not prog:
        with open(os.path.join(ROOT, "docs", "results", "futex-view-cost.md"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
