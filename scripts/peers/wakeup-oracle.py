#!/usr/bin/env python3
"""Oracle check for `contend wakeup`: run rt-tests' svsematest and ptsematest
next to the equivalent contend commands, under the same placement, policy,
priority, interval and loop count, and print the ratios.

What is compared: rt-tests time one direction of each round. The thread
with the interval (#0) sleeps, posts #1 and waits; #1 wakes, stamps the
clock and posts #0 back; #0 wakes and stamps: the reported latency
("#1 -> #0") is that second hop. In contend's terms #0 is A and #1 is B,
so the like-for-like number is B->A (`b_to_a` in contend's JSON), not
A->B: A->B starts on a CPU that has just left idle for the timer and is
slower (we print it for context). We print contend's B->A median (what
the issue asks) and mean (like for like with rt-tests' average), and both
ratios.

rt-tests read the clock in microseconds; a difference of two truncated
timestamps is unbiased on average, so their average stays comparable, but
their min and max are quantized to 1 us.

Usage: scripts/peers/wakeup-oracle.py [--loops N] [--priority P] [--contend PATH]
Needs root (SCHED_FIFO) and rt-tests (apt-get install rt-tests).
This is a benchmark, not a test: it asserts nothing about the numbers.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)

# (label, contend placement args, rt-tests placement args)
PLACEMENTS = [
    ("same CPU (pinned to CPU 0)", ["--affinity", "same", "--cpus", "0"], ["--affinity=0"]),
    ("unpinned", ["--affinity", "none"], []),
]

# (contend primitive, rt-tests program)
PAIRS = [("sysv-sem", "svsematest"), ("mutex-handoff", "ptsematest")]


def run_rt(program, placement, args, workdir):
    out = os.path.join(workdir, f"{program}.json")
    # A full path: svsematest derives its SysV key with ftok(argv[0]), which
    # fails (and still exits 0) when argv[0] is a bare name.
    cmd = [shutil.which(program), "-t", "1", "-p", str(args.priority), "-i", "1000",
           "-l", str(args.loops), "-q", f"--json={out}"] + placement
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0 or not os.path.exists(out):
        sys.exit(f"wakeup-oracle: {' '.join(cmd)} failed: {done.stderr.strip()}")
    with open(out) as f:
        receiver = json.load(f)["thread"]["0"]["receiver"]
    return receiver["avg"], receiver["min"], receiver["max"]


def run_contend(primitive, placement, args, workdir):
    out = os.path.join(workdir, f"{primitive}.json")
    cmd = [args.contend, "wakeup", "-P", primitive, "--policy", "fifo",
           "--priority", str(args.priority), "--interval", "1ms", "-n", str(args.loops), "--runs", "1",
           "--no-progress", "--export-json", out] + placement
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        pair = json.load(f)["points"][0]["sample"]["pairs"][0]
    b_to_a, a_to_b = pair["b_to_a"], pair["a_to_b"]
    return b_to_a["p50_ns"] / 1e3, b_to_a["mean_ns"] / 1e3, a_to_b["p50_ns"] / 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=5000, help="round trips per run (default 5000)")
    parser.add_argument("--priority", type=int, default=80, help="SCHED_FIFO priority (default 80)")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--contend", default=os.path.join(here, "..", "..", "target", "release", "contend"))
    args = parser.parse_args()

    missing = [p for _, p in PAIRS if shutil.which(p) is None]
    if missing:
        sys.exit(f"wakeup-oracle: {', '.join(missing)} not found (apt-get install rt-tests)")
    if os.geteuid() != 0:
        sys.exit("wakeup-oracle: needs root: both tools run at SCHED_FIFO priority")
    if not os.access(args.contend, os.X_OK):
        sys.exit(f"wakeup-oracle: {args.contend} not built (cargo build --release)")

    print(machine.header())
    print(f"one-way wake-up latency, µs: {args.loops} rounds, 1 ms interval, SCHED_FIFO {args.priority}")
    print("contend B->A (median, mean) against rt-tests' average; A->B median for context")
    header = f"{'placement':28} {'contend':14} {'rt-tests':11} {'B>A p50':>8} {'B>A mean':>9} {'rt avg':>8} " \
             f"{'p50/avg':>8} {'mean/avg':>9} {'A>B p50':>8}"
    print(header)
    with tempfile.TemporaryDirectory() as workdir:
        for label, contend_place, rt_place in PLACEMENTS:
            for primitive, program in PAIRS:
                p50, mean, cold = run_contend(primitive, contend_place, args, workdir)
                avg, _, _ = run_rt(program, rt_place, args, workdir)
                print(f"{label:28} {primitive:14} {program:11} {p50:8.2f} {mean:9.2f} {avg:8.2f} "
                      f"{p50 / avg:8.2f} {mean / avg:9.2f} {cold:8.2f}")


if __name__ == "__main__":
    main()
