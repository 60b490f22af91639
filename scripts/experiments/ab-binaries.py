#!/usr/bin/env python3
"""Two contend binaries, side by side: is one build faster than another?

For each thread count, runs `contend lock` with each binary in pairs, the
order inside each pair drawn at random, and reports the geometric mean of
B/A with a Student's t 95% interval on the log ratios, then each build's
medians of Jain's index, CPU idle and the lock's sleeps a second. Used to find and
confirm the clock read that 989fa07 put in the measured loop (06f73ed).

e.g.   scripts/experiments/ab-binaries.py /tmp/contend-old target/release/contend
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)

# Student's t, 97.5th percentile, by degrees of freedom (1..30).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]


def measure(binary, args):
    """(cs/s, Jain's index, CPU idle %, lock sleeps per second) of one run."""
    out = subprocess.run([binary, "lock", *args, "--runs", "1", "--count-futex", "off",
                          "--max-steal", "off", "--no-progress", "--export-json", "-"],
                         capture_output=True, text=True, check=True).stdout
    point = json.loads(out)["points"][0]
    sample = point["sample"]
    sleeps = (sample["lock_counters"] or {"waits": 0})["waits"] / sample["window_s"]
    return point["stats"]["mean"], sample["fairness"]["jain"], sample["cpu"]["idle_pct"], sleeps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="the reference binary")
    parser.add_argument("b", help="the binary judged against it")
    parser.add_argument("--pairs", type=int, default=12, help="at least 2")
    parser.add_argument("--threads", default="1,4")
    parser.add_argument("--lock", default="futex")
    parser.add_argument("--hold", default="0")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    random.seed(args.seed)
    print(machine.header())
    for threads in args.threads.split(","):
        point = ["--lock", args.lock, "--threads", threads, "--hold", args.hold,
                 "--duration", "300ms", "--warmup", "100ms"]
        logs, runs = [], {args.a: [], args.b: []}
        for _ in range(args.pairs):
            order = [args.a, args.b]
            random.shuffle(order)
            r = {binary: measure(binary, point) for binary in order}
            for binary, values in r.items():
                runs[binary].append(values)
            logs.append(math.log(r[args.b][0] / r[args.a][0]))
        m = statistics.mean(logs)
        se = statistics.stdev(logs) / math.sqrt(len(logs))
        df = len(logs) - 1
        t = T975[df - 1] if df <= len(T975) else 1.96
        print(f"{args.lock} threads {threads} hold {args.hold}: B/A {math.exp(m):.3f}, "
              f"95% CI {math.exp(m - t * se):.3f}..{math.exp(m + t * se):.3f} ({args.pairs} pairs)")
        for name, binary in (("A", args.a), ("B", args.b)):
            med = [statistics.median(v[i] for v in runs[binary]) for i in range(4)]
            print(f"  {name} medians: {med[0] / 1e6:.1f}M cs/s, Jain {med[1]:.3f}, "
                  f"CPU idle {med[2]:.1f}%, lock sleeps {med[3]:.0f}/s")


if __name__ == "__main__":
    main()
