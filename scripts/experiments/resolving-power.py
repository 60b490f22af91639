#!/usr/bin/env python3
"""How small a difference can contend resolve on this machine? Two checks
of the interleaved order and the round-paired compare, each repeated over
independent trials:

- A/A: the same point measured as two replicas (--replicate 2); the paired
  compare must call them "indistinguishable" (goal: >= 95% of trials).
- A/B: a known difference, hold 1.00 us against 1.03 us at 2 threads
  (seed lock, spin 100); the compare must call 1.03 us "slower" (goal:
  >= 90% of trials).

Each trial is one `contend lock` with interleaved rounds (--runs rounds of
a --duration window after a --warmup) and `contend compare FILE
--baseline ...`. Futex counting is off: only cs/s is compared.

Usage: scripts/experiments/resolving-power.py [--trials 20] [--runs 40]
         [--duration 200ms] [--warmup 50ms] [--contend PATH]
A benchmark, not a test: it prints the hit rates and asserts nothing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)


def trial(args, extra, baseline):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.json")
        subprocess.run([args.contend, "lock", "--lock", "seed", "--threads", "2", "--spin", "100",
                        "--runs", str(args.runs), "--duration", args.duration, "--warmup", args.warmup,
                        "--count-futex", "off", "--no-progress", "--export-json", path] + extra,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = subprocess.run([args.contend, "compare", path, "--baseline", baseline, "--json"],
                             check=True, stdout=subprocess.PIPE, text=True).stdout
        with open(path) as f:
            doc = json.load(f)
    row = json.loads(out)["points"][0]
    windows = sum(r["window_s"] for p in doc["points"] for r in p["runs"])
    return row, windows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--duration", default="200ms")
    parser.add_argument("--warmup", default="50ms")
    parser.add_argument("--contend", default=os.path.join(HERE, "..", "..", "target", "release", "contend"))
    args = parser.parse_args()
    checks = [
        ("A/A  hold 1us x2 replicas", ["--hold", "1us", "--replicate", "2"], "replica=1", "no_change"),
        ("A/B  hold 1.03us vs 1us", ["--hold", "1us,1.03us"], "hold=1us", "slower"),
    ]
    print(machine.header())
    print(f"# {args.trials} trials each; a trial: {args.runs} interleaved rounds of "
          f"{args.duration} windows after {args.warmup} warm-up, 2 points, seed lock x2 threads")
    for name, extra, baseline, expected in checks:
        hits, ratios, walls, measured = 0, [], [], []
        for _ in range(args.trials):
            started = time.monotonic()
            row, windows = trial(args, extra, baseline)
            walls.append(time.monotonic() - started)
            measured.append(windows)
            hits += row["verdict"] == expected
            lo, hi = row["ci95"] if row["ci95"] else (float("nan"), float("nan"))
            ratios.append((row["ratio"], lo, hi))
        widths = sorted((hi - lo) / 2 for _, lo, hi in ratios)
        print(f"\n{name}: expected {expected.replace('no_change', 'indistinguishable')} "
              f"in {hits}/{args.trials} trials ({100 * hits / args.trials:.0f}%)")
        print("  ratios: " + " ".join(f"{r:.3f}" for r, _, _ in ratios))
        print(f"  interval half-width: median {widths[len(widths) // 2]:.4f}, max {widths[-1]:.4f}")
        print(f"  per trial: {max(measured):.1f} s measured at most, "
              f"{sum(walls) / len(walls):.1f} s wall on average")


if __name__ == "__main__":
    main()
