#!/usr/bin/env python3
"""contend against the original programs it reproduces, per family, over
interleaved passes: docs/results/oracles.md.

Each comparison runs the original and the equivalent contend command once
per pass, the order alternating from pass to pass (original first in odd
passes), and the ratio contend / original is judged over the passes by
`contend compare` (scripts/lib/paired.py: geometric mean of the per-pass
ratios, Student's t 95% interval). A rate compares as a rate; a latency as
its reciprocal, so every ratio reads "contend over the original, above 1:
contend measured more (a higher rate, a shorter latency)". Every ratio
outside 0.97..1.03 names the definition that the two programs differ in,
or says that none is known.

The originals are not part of the project; they are given as arguments:
  --futex-scalability BIN   Gautham Shenoy's futex-scalability.c, built
                            with gcc -O2 -lpthread (the seed table)
  --futex-scalability-aligned BIN
                            the same source with its lock word, clockid and
                            fwait_retry_count each 128-byte aligned: the
                            layout is the one thing it changes
  --lockscale BIN           not compared by this script yet (see the page)
perf (linux-perf) and rt-tests' ptsematest and svsematest are taken from
PATH when installed. A family whose original is missing is listed as not
run, with what would run it.

Usage: scripts/peers/oracles.py [--passes 3] [--seconds 3] [--futex-scalability BIN] [--markdown FILE]
Needs root for the wake-up rows (SCHED_FIFO). A benchmark: it asserts nothing.
"""

import argparse
import importlib.util
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)
sys.path.insert(0, HERE)
from peers import perf_lock_pi_total, sh  # noqa: E402  (scripts/peers/peers.py)
from lockpoint import lock_point  # noqa: E402  (scripts/lib/lockpoint.py)
from paired import paired  # noqa: E402  (scripts/lib/paired.py)

# The wake-up oracle's runners (its file name has a hyphen).
_spec = importlib.util.spec_from_file_location("wakeup_oracle", os.path.join(HERE, "wakeup-oracle.py"))
wakeup_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wakeup_oracle)

BAND = (0.97, 1.03)

# What the two programs define differently, by comparison; quoted on the
# page under every ratio outside BAND (and listed for every row).
DEFINITIONS = {
    "seed": "futex-scalability divides its count by the -t seconds it was asked for (thread start-up and "
            "the last partial cycle inside), contend by the measured window after a warm-up; both run the "
            "same lock (CAS retries, then FUTEX_WAIT) and the same busy hold on the clock, and contend times "
            "one acquisition in 1024 (--latency-every auto). The layout differs: the original's lock word "
            "(thread_mutex) shares its cache line with `clockid`, which the holder reads on every pass of its "
            "timed hold, and `fwait_retry_count`, which a waiter reads after every FUTEX_WAIT; contend's lock "
            "word has its line to itself. The row \"lock on its own line\" runs a copy of the original with "
            "those three variables 128-byte aligned (--futex-scalability-aligned), the only change.",
    "lock-pi pinned": "Placement is the same (perf pins thread i to CPU i mod N; contend: --affinity "
                      "spread), and no definition found so far would explain a ratio outside the band. perf calls "
                      "FUTEX_LOCK_PI on every acquisition without trying the lock word in user space; "
                      "contend's pi tries a CAS first (taken only when the lock is free, which at this "
                      "load it almost never is: 2 futex calls per critical section for both). Both sleep "
                      "1 µs inside with nanosleep (usleep), so the hold is the timer slack (about 50 µs).",
    "lock-pi two threads": "two threads, one per CPU: the lock can only alternate between them, so every "
                           "hand-off crosses CPUs in both programs and one waiter at most sleeps in the "
                           "kernel. At four threads nearly every hand-off crosses CPUs in both, but the "
                           "share that stays on one CPU (set by the order the waiters queued in) varies "
                           "from run to run in both programs (perf record -e sched:sched_waking).",
    "lock-pi unpinned": "as pinned, but contend's workers are not pinned (its default): the scheduler may "
                        "run a woken waiter on the CPU its waker leaves, where perf's placement sends "
                        "nearly every hand-off across CPUs, to a vCPU that has gone idle.",
    "ptsematest": "both time the hop from the unlock (the poster's stamp, taken just before it) to the "
                  "waiter's return from pthread_mutex_lock; rt-tests stamps with gettimeofday (µs, "
                  "truncated; the difference of two truncated stamps is unbiased on average) and "
                  "contend with CLOCK_MONOTONIC in ns. ptsematest's poster, after the unlock, counts, "
                  "and when unpinned asks for its CPU (get_cpu), then blocks in pthread_mutex_lock on its "
                  "own mutex; contend's poster stores two stamps and its CPU before the post and goes "
                  "straight to its wait. On one CPU at equal SCHED_FIFO priority the waiter runs only "
                  "when the poster blocks, so what the poster does between the unlock and its own "
                  "block is inside the hop.",
    "svsematest": "as ptsematest, with a SysV semaphore (semop) in place of the mutex; svsematest's poster, "
                  "after its post, waits on a second semaphore of the same set, which its waiter posts "
                  "right after its stamp, and only then on its own; no definition found so far would "
                  "explain a difference on one CPU.",
}


def seed_pair(args, spin):
    """(original's cs/s, contend's cs/s) runners for the seed at `spin`."""
    def original():
        out = sh([args.futex_scalability, "-t", str(args.seconds), "-n", "4", "-c", "1000", "-r", str(spin)])
        return float(re.search(r"\(([\d.]+) M entries/s\)", out).group(1)) * 1e6

    def ours():
        p = lock_point(args.contend, ["--lock", "seed", "--threads", "4", "--hold", "1us", "--spin", str(spin),
                                      "--duration", f"{args.seconds}s", "--runs", "1"])
        return p["stats"]["mean"]
    return original, ours


def lock_pi_pair(args, affinity, threads=4):
    def original():
        return perf_lock_pi_total(threads, args.seconds)

    def ours():
        p = lock_point(args.contend, ["--lock", "pi", "--threads", str(threads), "--hold", "sleep:1us", "--idle", "0",
                                      "--affinity", affinity, "--duration", f"{args.seconds}s", "--runs", "1"])
        return p["stats"]["mean"]
    return original, ours


def wakeup_pair(args, primitive, program, placement, workdir):
    """Latencies as rates (1/µs), so the ratio reads like the others."""
    wargs = argparse.Namespace(loops=args.loops, priority=80, contend=args.contend)

    def original():
        avg, _, _ = wakeup_oracle.run_rt(program, placement[2], wargs, workdir)
        return 1.0 / avg

    def ours():
        _, mean, _ = wakeup_oracle.run_contend(primitive, placement[1], wargs, workdir)
        return 1.0 / mean
    return original, ours


def comparisons(args, workdir):
    """(family, row label, definition key, original cmd, contend cmd, (original, ours)) or a reason not run."""
    rows, skipped = [], []
    if args.futex_scalability:
        for spin in (1, 10, 100, 1000):
            rows.append(("lock (seed)", f"4 threads, hold 1 µs, R = {spin}", "seed",
                         f"futex-scalability -t {args.seconds} -n 4 -c 1000 -r {spin}",
                         f"contend lock --lock seed --threads 4 --hold 1us --spin {spin}",
                         seed_pair(args, spin)))
    else:
        skipped.append("lock (seed): give --futex-scalability BIN (futex-scalability.c, gcc -O2 -lpthread)")
    if args.futex_scalability_aligned:
        aligned = argparse.Namespace(**{**vars(args), "futex_scalability": args.futex_scalability_aligned})
        rows.append(("lock (seed, lock on its own line)", "4 threads, hold 1 µs, R = 100", "seed",
                     f"{os.path.basename(args.futex_scalability_aligned)} -t {args.seconds} -n 4 -c 1000 -r 100",
                     "contend lock --lock seed --threads 4 --hold 1us --spin 100", seed_pair(aligned, 100)))
    if shutil.which("perf"):
        for affinity, key in (("spread", "lock-pi pinned"), ("none", "lock-pi unpinned")):
            rows.append(("lock (pi)", f"4 threads, hold sleep:1 µs, affinity {affinity}", key,
                         f"perf bench futex lock-pi -t 4 -r {args.seconds}",
                         f"contend lock --lock pi --threads 4 --hold sleep:1us --affinity {affinity}",
                         lock_pi_pair(args, affinity)))
        rows.append(("lock (pi)", "2 threads, hold sleep:1 µs, affinity spread", "lock-pi two threads",
                     f"perf bench futex lock-pi -t 2 -r {args.seconds}",
                     "contend lock --lock pi --threads 2 --hold sleep:1us --affinity spread",
                     lock_pi_pair(args, "spread", threads=2)))
    else:
        skipped.append("lock (pi): perf not installed (apt-get install linux-perf)")
    rt = [p for p in ("ptsematest", "svsematest") if shutil.which(p)]
    if rt and os.geteuid() == 0:
        for placement in wakeup_oracle.PLACEMENTS:
            for primitive, program in wakeup_oracle.PAIRS:
                if program in rt:
                    rows.append(("wakeup", f"{primitive}, {placement[0]}", program,
                                 f"{program} -t 1 -p 80 -i 1000 -l {args.loops} {' '.join(placement[2])}",
                                 f"contend wakeup -P {primitive} --policy fifo --priority 80 --interval 1ms "
                                 f"-n {args.loops} {' '.join(placement[1])}",
                                 wakeup_pair(args, primitive, program, placement, workdir)))
    else:
        skipped.append("wakeup: needs rt-tests (apt-get install rt-tests) and root (SCHED_FIFO)")
    skipped.append("lock (lockscale): not in this script; its last comparison (issue 58): 15 of 18 pairs "
                   "within 5%, means 0.969..1.027; `--reopen` matches its open/close per acquisition "
                   "(docs/experiments/lockscale.md)")
    return rows, skipped


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=3, help="length of each lock run (default 3)")
    parser.add_argument("--loops", type=int, default=5000, help="wake-up round trips per run (default 5000)")
    parser.add_argument("--futex-scalability", help="the futex-scalability binary")
    parser.add_argument("--futex-scalability-aligned",
                        help="a build of it with thread_mutex, clockid and fwait_retry_count each "
                             "__attribute__((aligned(128))), its only change")
    parser.add_argument("--only", help="run only the rows whose family contains this text")
    parser.add_argument("--contend", default=os.path.join(HERE, "..", "..", "target", "release", "contend"))
    parser.add_argument("--markdown", help="also write the page here")
    args = parser.parse_args()
    if args.passes < 2:
        sys.exit("oracles: --passes must be at least 2 (an interval needs two)")
    if not os.access(args.contend, os.X_OK):
        sys.exit(f"oracles: {args.contend} not built (cargo build --release)")

    with tempfile.TemporaryDirectory() as workdir:
        rows, skipped = comparisons(args, workdir)
        if args.only:
            rows = [r for r in rows if args.only in r[0]]
        measured = {i: [] for i in range(len(rows))}
        for n in range(args.passes):
            for i, row in enumerate(rows):
                original, ours = row[5]
                first, second = (original, ours) if n % 2 == 0 else (ours, original)
                a = first()
                b = second()
                o, c = (a, b) if n % 2 == 0 else (b, a)
                measured[i].append({"original": o, "contend": c})
                print(f"pass {n + 1}: {row[0]} {row[1]}: contend/original {c / o:.3f}", file=sys.stderr)
    page = render(args, rows, skipped, measured)
    print(page)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(page)


def render(args, rows, skipped, measured):
    lines = ["# contend against the originals it reproduces", "",
             machine.header(), "",
             f"Generated by `{machine.command()}`. Each row ran the original and contend once per pass, "
             f"{args.passes} passes, the order alternating; the ratio is contend / original (a latency "
             "as its reciprocal: above 1, contend measured more work per second or a shorter wait), the "
             "geometric mean over the passes with its 95% interval (`contend compare`). Ratios outside "
             f"{BAND[0]:.2f}..{BAND[1]:.2f} are marked: \"differs\" when the interval leaves 1 out, "
             "\"interval holds 1\" when the passes cannot tell the ratio from 1. What the two programs "
             "define differently is listed under the table, per comparison.", "",
             "| family | point | original | contend | per pass | ratio (95%) | verdict |",
             "|---|---|---|---|---|---|---|"]
    outside = []
    for i, row in enumerate(rows):
        runs = measured[i]
        judged = paired(args.contend, [{"original": r["original"], "contend": r["contend"]} for r in runs],
                        "original")["contend"]
        ratio, ci = judged["ratio"], judged["ci95"]
        inside = BAND[0] <= ratio <= BAND[1]
        if inside:
            verdict = "agrees"
        elif ci and ci[0] <= 1.0 <= ci[1]:
            verdict = "**outside the band, interval holds 1**"
        else:
            verdict = "**differs**"
        if not inside:
            outside.append(row)
        per_pass = ", ".join(f"{r['contend'] / r['original']:.3f}" for r in runs)
        interval = f"{ratio:.3f} ({ci[0]:.3f}..{ci[1]:.3f})" if ci else f"{ratio:.3f}"
        original_mean = sum(r["original"] for r in runs) / len(runs)
        contend_mean = sum(r["contend"] for r in runs) / len(runs)
        unit = (lambda v: f"{1 / v:.2f} µs") if row[0] == "wakeup" else (lambda v: f"{v:,.0f}/s")
        lines.append(f"| {row[0]} | {row[1]} | {unit(original_mean)} | {unit(contend_mean)} | {per_pass} | "
                     f"{interval} | {verdict} |")
    lines += ["", "The commands (each with the pass's length; contend's with `--runs 1`):", ""]
    for row in rows:
        lines.append(f"- {row[0]}, {row[1]}: `{row[3]}` against `{row[4]}`")
    lines += ["", "## What the two programs define differently", ""]
    for key in dict.fromkeys(r[2] for r in rows):
        marked = [r[1] for r in outside if r[2] == key]
        lead = f"**outside the band: {'; '.join(marked)}.** " if marked else ""
        lines.append(f"- **{key}**: {lead}{DEFINITIONS[key]}")
    if skipped:
        lines += ["", "## Not run here", ""] + [f"- {s}" for s in skipped]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
