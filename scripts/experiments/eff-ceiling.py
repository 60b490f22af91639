#!/usr/bin/env python3
"""How much lock utilization (eff%) a busy hold leaves to win on this host.

eff% is cs/s x the nominal hold (`contend lock`'s column): 100 would be a
lock held back to back, every nanosecond, by exactly the hold asked for.
At a 1 us hold a single thread already loses some of it to the hold's
own overshoot and the clock reads around it, and a second busy vCPU may
slow the first. So before a lock is asked for an eff% at N threads, this
measures, in rounds, each in a fresh random order:

- `alone`: adaptive, one thread (no contention at all);
- `beside`: the same, with a second process spinning on the other CPU
  (`contend lock --lock noop --threads 1`), what the owner of a lock
  whose waiter spins has around it;
- adaptive at `--threads`, and the spin locks `tas`, `ttas` and
  `backoff` at the same point: with no queue and no turn, the releasing
  thread nearly always re-takes them (Jain and the p99 wait show it), so
  they hand over about as rarely as a lock can; what they reach is what
  hand-overs leave to win.

Each measurement is one invocation of `--runs R` (the issue's "mean of
three invocations" is three rounds). Prints each variant's mean eff% over
the rounds with its range, and every variant's throughput against
adaptive at `--threads` (contend compare's paired ratio and interval).

e.g.   scripts/experiments/eff-ceiling.py --rounds 6
"""

import argparse
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)
from lockpoint import lock_point  # noqa: E402  (scripts/lib/lockpoint.py)
from paired import paired  # noqa: E402  (scripts/lib/paired.py: the statistics are contend compare's)

SPIN_LOCKS = ("tas", "ttas", "backoff")


def measure(contend, lock, threads, args):
    """(cs/s mean over the invocation's runs, Jain's index of its median
    run, the hold in ns as contend read `--hold`)."""
    point = lock_point(contend, ["--lock", lock, "--threads", str(threads), "--hold", args.hold,
                                 "--runs", str(args.runs), "--duration", args.duration])
    return point["stats"]["mean"], point["sample"]["fairness"]["jain"], point["point"]["hold"]["ns"]


def beside(contend, args):
    """`measure` of adaptive at one thread while a no-op loop spins in a
    process of its own (killed afterwards, whatever happens)."""
    spinner = subprocess.Popen([contend, "lock", "--lock", "noop", "--threads", "1", "--hold", "0",
                                "--duration", "1h", "--runs", "1", "--count-futex", "off", "--max-steal",
                                "off", "--no-progress", "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return measure(contend, "adaptive", 1, args)
    finally:
        spinner.kill()
        spinner.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", default="target/release/contend")
    parser.add_argument("--threads", type=int, default=2, help="the contended point")
    parser.add_argument("--hold", default="1us", help="a busy hold")
    parser.add_argument("--rounds", type=int, default=6, help="at least 2")
    parser.add_argument("--runs", type=int, default=3, help="runs per invocation")
    parser.add_argument("--duration", default="1s", help="each run's window")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.rounds < 2 or args.threads < 2:
        parser.error("--rounds and --threads must be at least 2")
    random.seed(args.seed)
    print(machine.header())
    n = args.threads
    variants = {"alone": lambda: measure(args.contend, "adaptive", 1, args),
                "beside": lambda: beside(args.contend, args),
                f"adaptive x{n}": lambda: measure(args.contend, "adaptive", n, args)}
    for lock in SPIN_LOCKS:
        variants[f"{lock} x{n}"] = lambda lock=lock: measure(args.contend, lock, n, args)
    rounds, jain = [], {name: [] for name in variants}
    for i in range(args.rounds):
        order = list(variants)
        random.shuffle(order)
        r = {}
        for name in order:
            r[name], j, hold_ns = variants[name]()
            jain[name].append(j)
        rounds.append(r)
        print(f"round {i + 1}: " + ", ".join(f"{name} {r[name] * hold_ns / 1e7:.1f}" for name in variants),
              flush=True)
    base = f"adaptive x{n}"
    ratios = paired(args.contend, rounds, base)
    print(f"\nhold {args.hold}, {args.rounds} rounds of one invocation each (--runs {args.runs}, "
          f"{args.duration} windows); eff% = cs/s x {hold_ns} ns")
    print(f"{'variant':<14} {'eff% mean':>9} {'range':>12} {'Jain':>6}  against {base}")
    for name in variants:
        effs = [r[name] * hold_ns / 1e7 for r in rounds]
        mean = sum(effs) / len(effs)
        against = "-"
        if name != base:
            p = ratios[name]
            ci = f"{p['ci95'][0]:.3f}..{p['ci95'][1]:.3f}" if p["ci95"] else "no interval"
            against = f"{p['ratio']:.3f} ({ci})"
        print(f"{name:<14} {mean:9.1f} {min(effs):5.1f}..{max(effs):<5.1f} {min(jain[name]):6.3f}  {against}")


if __name__ == "__main__":
    main()
