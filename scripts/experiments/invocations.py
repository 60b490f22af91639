#!/usr/bin/env python3
"""Do `contend compare`'s verdicts hold across invocations? Each trial
makes 3K separate invocations of `contend lock` in a random order:
K at hold 1.00 us (side A), K more at hold 1.00 us (side A'), and K at
hold 1.05 us (side B, its exports' hold then written as 1.00 us: the
same command made 5% longer inside, as a patch would), one point each
(futex lock, 2 threads). Then:

- A/A across invocations: `contend compare A1..AK -- A'1..A'K` must read
  "no significant change" (goal: >= 95% of trials);
- A/B across invocations: `contend compare A1..AK -- B1..BK` must read
  "slower" (goal: >= 80% of trials);
- and, for contrast, one export per side (`compare A1 A'1`), the way
  compare judged before the invocation was its unit: how often two
  identical commands differ beyond their runs' spread.

It also prints the spread between invocations and how many invocations
per side compare says resolve 5% at that spread.

Usage: scripts/experiments/invocations.py [--trials 20] [--per-side 5]
         [--runs 5] [--duration 200ms] [--warmup 50ms] [--markdown FILE]
A benchmark, not a test: it prints the rates and asserts nothing.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)
from emit import emit  # noqa: E402  (scripts/lib/emit.py)


def invocation(args, hold, path):
    subprocess.run([args.contend, "lock", "--lock", "futex", "--threads", "2", "--hold", hold,
                    "--runs", str(args.runs), "--duration", args.duration, "--warmup", args.warmup,
                    "--count-futex", "off", "--no-progress", "--export-json", path],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def disguise(path):
    """Writes a 1.05 us export's hold as 1 us: the same command as side A,
    made 5% slower inside, as a patch that lengthens a critical section
    would (compare matches points by what was asked for)."""
    with open(path) as f:
        doc = json.load(f)
    for p in doc["points"]:
        p["point"]["hold"]["ns"] = 1000
    with open(path, "w") as f:
        json.dump(doc, f)


def compare(args, old, new):
    """compare's JSON report; exit 1 (a regression) is an answer too."""
    # Flags before the files: everything after `--` is a NEW export.
    cmd = [args.contend, "compare", "--json"] + old + (["--"] + new if len(old) > 1 or len(new) > 1 else new)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed with {out.returncode}")
    return json.loads(out.stdout)["points"][0]


def trial(args, rng, d):
    plan = [("a", i, "1us") for i in range(args.per_side)] + \
           [("a2", i, "1us") for i in range(args.per_side)] + \
           [("b", i, "1.05us") for i in range(args.per_side)]
    rng.shuffle(plan)
    paths = {"a": [], "a2": [], "b": []}
    for side, i, hold in plan:
        path = os.path.join(d, f"{side}{i}.json")
        invocation(args, hold, path)
        if side == "b":
            disguise(path)
        paths[side].append(path)
    return (compare(args, paths["a"], paths["a2"]), compare(args, paths["a"], paths["b"]),
            compare(args, paths["a"][:1], paths["a2"][:1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--per-side", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--duration", default="200ms")
    ap.add_argument("--warmup", default="50ms")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markdown", help="also write the summary to this file")
    ap.add_argument("--contend", default=os.path.join(HERE, "..", "..", "target", "release", "contend"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    aa, ab, single = [], [], []
    with tempfile.TemporaryDirectory() as d:
        for t in range(args.trials):
            rows = trial(args, rng, d)
            aa.append(rows[0])
            ab.append(rows[1])
            single.append(rows[2])
            print(f"trial {t + 1}: A/A {rows[0]['ratio']:.3f} {rows[0]['verdict']}, "
                  f"A/B {rows[1]['ratio']:.3f} {rows[1]['verdict']}, "
                  f"one each {rows[2]['ratio']:.3f} {rows[2]['verdict']}", file=sys.stderr)
    wall = time.monotonic() - started
    n = args.trials
    quiet = sum(r["verdict"] == "no_change" for r in aa)
    found = sum(r["verdict"] == "slower" for r in ab)
    differs = sum(r["verdict"] != "no_change" for r in single)
    spreads = sorted(r["spread_pct"] for r in aa + ab if r["spread_pct"] is not None)
    needed = sorted(r["invocations_to_resolve"] for r in aa + ab if r["invocations_to_resolve"])
    ab_ratio = statistics.median(r["ratio"] for r in ab)
    k = args.per_side
    lines = [
        machine.header(),
        f"# scripts/experiments/invocations.py --trials {n} --per-side {k} --runs {args.runs} "
        f"--duration {args.duration} --warmup {args.warmup} --seed {args.seed}",
        f"# each trial: {3 * k} invocations of `contend lock --lock futex --threads 2` in a random order "
        f"({k} at hold 1.00 us, {k} more at 1.00 us, {k} at 1.05 us), {args.runs} runs each; "
        f"{wall / 60:.1f} min in all",
        "",
        "| check | goal | result |",
        "|---|---|---|",
        f"| A/A, {k} invocations per side: \"no significant change\" | >= 95% | {quiet}/{n} ({100 * quiet / n:.0f}%) |",
        f"| A/B (hold 1.05 vs 1.00 us, cs/s ratio {ab_ratio:.3f}), {k} per side: \"slower\" | >= 80% | "
        f"{found}/{n} ({100 * found / n:.0f}%) |",
        f"| A/A, one export per side: runs differ beyond their spread | (the problem) | "
        f"{differs}/{n} ({100 * differs / n:.0f}%) |",
        "",
        f"Spread between invocations (compare's spread%, pooled over both sides): median "
        f"{spreads[len(spreads) // 2]:.2f}%, range {spreads[0]:.2f}..{spreads[-1]:.2f}%. "
        f"Invocations per side compare says resolve a 5% difference at that spread: median "
        f"{needed[len(needed) // 2]}, range {needed[0]}..{needed[-1]}.",
    ]
    emit(lines, args.markdown)


if __name__ == "__main__":
    main()
