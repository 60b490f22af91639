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
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)
from lockpoint import lock_point  # noqa: E402  (scripts/lib/lockpoint.py)
from paired import paired  # noqa: E402  (scripts/lib/paired.py: the statistics are contend compare's)



def measure(binary, args):
    """(cs/s, Jain's index, CPU idle %, lock sleeps per second) of one run."""
    point = lock_point(binary, [*args, "--runs", "1"])
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
    parser.add_argument("--idle", default="0", help="work outside the lock per cycle")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--duration", default="300ms", help="each run's window")
    parser.add_argument("--warmup", default="100ms", help="before each window")
    args = parser.parse_args()
    random.seed(args.seed)
    print(machine.header())
    for threads in args.threads.split(","):
        point = ["--lock", args.lock, "--threads", threads, "--hold", args.hold, "--idle", args.idle,
                 "--duration", args.duration, "--warmup", args.warmup]
        rounds, runs = [], {args.a: [], args.b: []}
        for _ in range(args.pairs):
            order = [args.a, args.b]
            random.shuffle(order)
            r = {binary: measure(binary, point) for binary in order}
            for binary, values in r.items():
                runs[binary].append(values)
            rounds.append({"A": r[args.a][0], "B": r[args.b][0]})
        b = paired(args.b, rounds, "A")["B"]
        ci = f"95% CI {b['ci95'][0]:.3f}..{b['ci95'][1]:.3f}" if b["ci95"] else "no interval"
        print(f"{args.lock} threads {threads} hold {args.hold} idle {args.idle}: B/A {b['ratio']:.3f}, {ci} ({args.pairs} pairs)")
        for name, binary in (("A", args.a), ("B", args.b)):
            med = [statistics.median(v[i] for v in runs[binary]) for i in range(4)]
            print(f"  {name} medians: {med[0] / 1e6:.1f}M cs/s, Jain {med[1]:.3f}, "
                  f"CPU idle {med[2]:.1f}%, lock sleeps {med[3]:.0f}/s")


if __name__ == "__main__":
    main()
