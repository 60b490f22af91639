#!/usr/bin/env python3
"""The figures and tables of docs/experiments/latency.md, kernel.md,
glibc-spin.md and rwlock.md, regenerated on this host: (a) the wait to acquire (p50 and
p99) beside cs/s and fairness, five locks against the thread count at a
1 us hold; (b) the futex lock (spin 1: waiters sleep at once) and glibc's
mutex, 64 threads spread over 16 locks whose holders sleep 20 us inside,
so that every critical section costs futex calls on 16 addresses, against
the size of the process's private futex hash (PR_FUTEX_HASH); (c) glibc's adaptive mutex against its spin count
(glibc.pthread.mutex_spin_count, each run a child contend with the
tunable set), next to glibc's default mutex, at 4 threads and a 1 us hold,
with the futex calls each spin count leaves; (d) the five reader-writer
locks against the share of reads, 4 threads, 1 us hold and idle, one
acquisition in 16 timed, with glibc's mutex as the reference, so that a
writer's longest wait under a steady read load shows; and, drawn against
percentile (`contend plot --percentiles`), (e) the five mutexes' waits at 4
threads and a 1 us hold, one acquisition in 16 timed, and (f) the five
reader-writer locks' reads and writes at 99% reads, every acquisition
timed. Each is one contend sweep: its
table goes to docs/results/NAME.md (--export-markdown, which opens with
the sweep's command, contend's build and the machine; this script's
command and commit come first) and its figure, drawn by `contend plot`, to
docs/figures/NAME.png.

e.g.   scripts/experiments/lock-2026-figures.py [--only glibc-spin] [--runs 5]
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# (name, the contend lock sweep, what `contend plot` is asked for).
FIGURES = [
    ("lock-wait", ["lock", "--lock", "futex,pthread,ticket,mcs,adaptive", "--threads", "1,2,4,8",
                   "--hold", "1us", "--columns", "default,latency"], []),
    ("lock-wait-percentiles", ["lock", "--lock", "futex,pthread,ticket,mcs,adaptive", "--threads", "4",
                               "--hold", "1us", "--latency-every", "16", "--columns", "default,latency"],
     ["--percentiles"]),
    ("futex-hash", ["lock", "--lock", "futex,pthread", "--spin", "1", "--threads", "64", "--locks", "16",
                    "--futex-hash", "2,16,128,1024", "--hold", "sleep:20us", "--columns", "default,cpu"], []),
    ("glibc-spin", ["lock", "--lock", "pthread-adaptive,pthread", "--glibc-spin", "0,10,100,1000,10000,32767",
                    "--threads", "4", "--hold", "1us", "--idle", "1us", "--columns", "default,lock"], []),
    ("rwlock", ["lock", "--lock", "futex-rw,pthread-rw,pthread-rw-writer,std-rw,parking_lot-rw,pthread",
                "--threads", "4", "--read", "0%,50%,90%,99%", "--hold", "1us", "--idle", "1us",
                "--latency-every", "16", "--columns", "default,rw"], []),
    ("rwlock-waits", ["lock", "--lock", "futex-rw,pthread-rw,pthread-rw-writer,std-rw,parking_lot-rw",
                      "--threads", "4", "--read", "99%", "--hold", "1us", "--idle", "1us",
                      "--latency-every", "1", "--columns", "default,rw,latency"], ["--percentiles"]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", default=os.path.join(ROOT, "target", "release", "contend"))
    parser.add_argument("--duration", default="500ms")
    parser.add_argument("--runs", default="5")
    parser.add_argument("--only", choices=[name for name, _, _ in FIGURES], help="make this one alone")
    args = parser.parse_args()
    print(machine.header())
    with tempfile.TemporaryDirectory() as tmp:
        for name, sweep, plot in FIGURES:
            if args.only and name != args.only:
                continue
            export = os.path.join(tmp, name + ".json")
            table = os.path.join(ROOT, "docs", "results", name + ".md")
            command = [args.contend, *sweep, "--duration", args.duration, "--runs", args.runs,
                       "--no-progress", "--export-json", export, "--export-markdown", table]
            print("$ contend " + " ".join(command[1:]), flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            # The page opens with this script's provenance, then contend's
            # own (the sweep's command, build and machine), then the table.
            with open(table) as f:
                body = f.read()
            with open(table, "w") as f:
                f.write(machine.header() + "\n\n" + body)
            png = os.path.join(ROOT, "docs", "figures", name + ".png")
            subprocess.run([args.contend, "plot", *plot, export, "-o", png], check=True)
            print(f"  -> {os.path.relpath(table, ROOT)}, {os.path.relpath(png, ROOT)}", flush=True)


if __name__ == "__main__":
    main()
