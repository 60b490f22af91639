#!/usr/bin/env python3
"""Does counting disturb what contend measures? Runs the same points as
root with the defaults (futex counts from a separate counting run), as root
with --count-futex inline (counted inside the measured runs), and as an
unprivileged user (no counting possible), interleaved in random order per
round, and prints each variant against the unprivileged one: the geometric
mean of the rounds' ratios with its 95% interval (Student's t over the log
ratios). Goal for the default: >= 0.97.

Points: the seed lock at 4 threads, hold 1 us, spin 10 (cs/s; higher is
better) and a same-CPU mutex hand-off wake-up (median round trip in us;
the ratio printed is unprivileged/variant, so that for both points a ratio
below 1 means "the variant measured worse").

Usage: scripts/experiments/observer-effect.py [--rounds 5] [--seconds 2] [--contend PATH]
Needs root and setpriv. A benchmark, not a test: it asserts nothing.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)
from paired import paired  # noqa: E402  (scripts/lib/paired.py: the statistics are contend compare's)

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--"]


def measured(doc):
    """The measured runs' metric of the export's only point."""
    point = doc["points"][0]
    runs = [r for r in point["runs"] if r.get("status", "measured") == "measured"]
    if doc["family"] == "lock":
        return sum(r["cs_per_s"] for r in runs) / len(runs)
    return sum(r["round_trip"]["summary"]["p50_ns"] for r in runs) / len(runs) / 1000.0


def run(args, variant, cmd):
    # /tmp, not a private temp dir: the unprivileged variant must be able
    # to write the export.
    fd, path = tempfile.mkstemp(suffix=".json", dir="/tmp")
    os.close(fd)
    os.chmod(path, 0o666)
    prefix = NOBODY if variant == "unprivileged" else []
    extra = ["--count-futex", "inline"] if variant == "inline" else []
    try:
        subprocess.run(prefix + [args.contend] + cmd + extra + ["--runs", "1", "--no-progress",
                                                                 "--export-json", path],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"})
        with open(path) as f:
            return measured(json.load(f))
    finally:
        os.unlink(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--contend", default=os.path.join(HERE, "..", "..", "target", "release", "contend"))
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("observer-effect.py: run as root (the default variant counts futex calls only as root)")
    points = {
        "lock seed x4 hold 1us spin 10 (cs/s)": (
            ["lock", "--lock", "seed", "--threads", "4", "--hold", "1us", "--spin", "10",
             "--duration", f"{args.seconds}s"], True),
        "wakeup mutex-handoff same CPU (p50 us)": (
            ["wakeup", "-P", "mutex-handoff", "--affinity", "same", "--interval", "0",
             "--duration", f"{args.seconds}s"], False),
    }
    variants = ["default", "inline", "unprivileged"]
    print(machine.header())
    print(f"# {args.rounds} rounds, variants in random order per round; {args.seconds}s windows")
    for name, (cmd, higher_better) in points.items():
        values = {v: [] for v in variants}
        for _ in range(args.rounds):
            order = variants[:]
            random.shuffle(order)
            for v in order:
                values[v].append(run(args, v, cmd))
        print(f"\n{name}")
        for v in variants:
            vals = ", ".join(f"{x:.4g}" for x in values[v])
            print(f"  {v:13s} {vals}")
        # As rates (a latency by its reciprocal), judged by contend compare.
        rate = (lambda x: x) if higher_better else (lambda x: 1.0 / x)
        rounds = [{v: rate(values[v][i]) for v in variants} for i in range(args.rounds)]
        judged = paired(args.contend, rounds, "unprivileged")
        for v in ["default", "inline"]:
            j = judged[v]
            ci = f"95% interval {j['ci95'][0]:.3f} .. {j['ci95'][1]:.3f}" if j["ci95"] else "no interval"
            print(f"  {v} / unprivileged: {j['ratio']:.3f}  ({ci})")


if __name__ == "__main__":
    main()
