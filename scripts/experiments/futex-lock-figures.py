#!/usr/bin/env python3
"""The FUTEX_LOCK study's two figures, regenerated: lock/unlock pairs per
second with no spinning, one adaptive spinner and many spinners, next to
pthread as the reference, period 1000 ns, (a) against the duty cycle with
256 threads and (b) against the thread count at a 50% duty cycle. Each
figure is one `contend lock` sweep (a mixed sweep: pthread has no
--spinners) exported to JSON, drawn with `contend plot` as a PNG under
docs/figures/. The exports go to a temporary directory: they are big (per-
worker counts of 256 threads) and the PNG is what the docs show.

e.g.   scripts/experiments/futex-lock-figures.py [--contend target/release/contend] [--duration 500ms]
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

FIGURES = [
    ("futex-lock-duty", ["--threads", "256", "--period", "1000ns",
                         "--duty", "10%,20%,30%,40%,50%,60%,70%,80%,90%"]),
    ("futex-lock-threads", ["--threads", "2,4,8,16,64,256", "--period", "1000ns", "--duty", "50%"]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", default=os.path.join(ROOT, "target", "release", "contend"))
    parser.add_argument("--duration", default="500ms")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    args = parser.parse_args()
    print(machine.header())
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, sweep in FIGURES:
            export = os.path.join(tmp, name + ".json")
            command = [args.contend, "lock", "--lock", "adaptive,pthread", "--spinners", "none,one,many",
                       *sweep, "--duration", args.duration, "--count-futex", "off", "--no-progress",
                       "--export-json", export]
            print("$ contend " + " ".join(command[1:]), flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            png = os.path.join(args.out, name + ".png")
            subprocess.run([args.contend, "plot", export, "-o", png], check=True)
            print(f"  -> {os.path.relpath(png, ROOT)}", flush=True)


if __name__ == "__main__":
    main()
