#!/usr/bin/env python3
"""The figures under docs/figures/, regenerated: the FUTEX_LOCK study's two
(cs/s, critical sections per second, with no spinning, one adaptive spinner and
many spinners, next to pthread as the reference, period 1000 ns, (a)
against the duty cycle with 256 threads and (b) against the thread count
at a 50% duty cycle; each a mixed sweep, since pthread has no --spinners)
and a wake-up latency figure (round trip against percentile for four
primitives, the two sides on different CPUs). Each is one contend sweep
exported to JSON and drawn with `contend plot` as a PNG. The exports go to
a temporary directory: they are big (per-worker counts of 256 threads,
full histograms) and the PNG is what the docs show.

e.g.   scripts/experiments/futex-lock-figures.py [--only wakeup-percentiles] [--duration 500ms]
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

LOCKS = ["lock", "--lock", "adaptive,pthread", "--spinners", "none,one,many"]
FIGURES = [
    ("futex-lock-duty", LOCKS + ["--threads", "256", "--period", "1000ns",
                                 "--duty", "10%,20%,30%,40%,50%,60%,70%,80%,90%"]),
    ("futex-lock-threads", LOCKS + ["--threads", "2,4,8,16,64,256", "--period", "1000ns", "--duty", "50%"]),
    ("wakeup-percentiles", ["wakeup", "--primitive", "futex,sysv-sem,pipe,mutex-handoff", "--affinity", "cross",
                            "--iterations", "5000", "--interval", "100us"]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", default=os.path.join(ROOT, "target", "release", "contend"))
    parser.add_argument("--duration", default="500ms")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    parser.add_argument("--only", choices=[name for name, _ in FIGURES], help="make this figure alone")
    args = parser.parse_args()
    print(machine.header())
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, sweep in FIGURES:
            if args.only and name != args.only:
                continue
            export = os.path.join(tmp, name + ".json")
            length = ["--duration", args.duration] if sweep[0] == "lock" else []
            command = [args.contend, *sweep, *length, "--count-futex", "off", "--no-progress",
                       "--export-json", export]
            print("$ contend " + " ".join(command[1:]), flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            png = os.path.join(args.out, name + ".png")
            subprocess.run([args.contend, "plot", export, "-o", png], check=True)
            print(f"  -> {os.path.relpath(png, ROOT)}", flush=True)


if __name__ == "__main__":
    main()
