#!/usr/bin/env python3
"""How much the wake cost contend measures at start-up moves between invocations.

Runs a 10 ms `contend lock --lock adaptive` N times (each a fresh process,
so each measures the wake cost anew) and prints every `wake_cost_ns`, then
the minimum, median and maximum and the spread (max/min). `adaptive`'s
turn, patience and quantum are multiples of it, so this spread is theirs.

Usage: scripts/experiments/wake-cost-spread.py [--runs 12] [--contend PATH]
A benchmark, not a test: it asserts nothing.
"""

import argparse
import json
import os
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--contend", default=os.path.join(HERE, "..", "..", "target", "release", "contend"))
    args = parser.parse_args()
    costs = []
    for _ in range(args.runs):
        out = subprocess.run([args.contend, "lock", "--lock", "adaptive", "--threads", "1", "--duration", "10ms",
                              "--warmup", "0", "--runs", "1", "--count-futex", "off", "--no-progress",
                              "--export-json", "-"], check=True, capture_output=True, text=True).stdout
        env = json.loads(out)["environment"]
        costs.append(env["wake_cost_ns"])
        detail = env.get("wake_cost_detail")
        extra = f"  quartiles {detail['p25_ns']}..{detail['p75_ns']} ns, cpus {detail['cpus']}" if detail else ""
        print(f"wake_cost_ns {env['wake_cost_ns']}{extra}", flush=True)
    print(f"min {min(costs)} ns, median {statistics.median(costs):.0f} ns, max {max(costs)} ns, "
          f"max/min {max(costs) / min(costs):.3f} over {len(costs)} invocations")


if __name__ == "__main__":
    main()
