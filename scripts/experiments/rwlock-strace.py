#!/usr/bin/env python3
"""futex-rw's own wait and wake counters against strace's count of the
futex syscalls, for docs/experiments/rwlock.md.

For each read share, one `contend lock --lock futex-rw` run under
`strace -f -c -e trace=futex`, with a 10 ms warm-up and a long window so
that nearly every call falls inside it. strace counts the whole process:
the harness's own futex calls (thread start, the start gate, joins) are
measured once with 100% reads, where the lock never sleeps, and taken
off. The lock's counters cover the window alone, so they may read a
little below strace's (calls made in the warm-up and the drain).

e.g.   scripts/experiments/rwlock-strace.py [--duration 3s]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def run(contend, read, duration, tmp):
    """(futex calls strace saw, the lock's waits + wakes in the window)."""
    trace, export = os.path.join(tmp, "strace.txt"), os.path.join(tmp, "run.json")
    subprocess.run(["strace", "-f", "-c", "-e", "trace=futex", "-o", trace, contend, "lock",
                    "--lock", "futex-rw", "--threads", "4", "--read", read, "--hold", "1us", "--idle", "1us",
                    "--duration", duration, "--warmup", "10ms", "--runs", "1", "--count-futex", "off",
                    "--latency-every", "off", "--no-progress", "--quiet", "--export-json", export],
                   check=True, stdout=subprocess.DEVNULL)
    calls = 0
    with open(trace) as f:
        for line in f:
            fields = line.split()
            if fields and fields[-1] == "futex":
                calls = int(fields[3])
    with open(export) as f:
        c = json.load(f)["points"][0]["runs"][0]["lock_counters"]
    return calls, c["waits"] + c["wakes"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", default=os.path.join(ROOT, "target", "release", "contend"))
    parser.add_argument("--duration", default="3s")
    args = parser.parse_args()
    print(machine.header())
    with tempfile.TemporaryDirectory() as tmp:
        harness, own = run(args.contend, "100%", args.duration, tmp)
        assert own == 0, f"100% reads should never sleep: {own} waits and wakes"
        print(f"harness's own futex calls (100% reads): {harness}")
        print("| reads | strace, less the harness | futex-rw's waits + wakes | ratio |")
        print("|---|---|---|---|")
        for read in ["0%", "50%", "90%", "99%"]:
            calls, own = run(args.contend, read, args.duration, tmp)
            lock = calls - harness
            print(f"| {read} | {lock} | {own} | {own / lock:.3f} |" if lock > 0 else f"| {read} | {lock} | {own} | - |",
                  flush=True)


if __name__ == "__main__":
    main()
