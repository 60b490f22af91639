#!/usr/bin/env python3
"""What timing acquisitions costs `contend lock`: the same binary with
`--latency-every off` and with each other setting asked for, run in
rounds (each round runs every variant once, in a random order), paired by
round with `off` through `contend compare --baseline`
(scripts/lib/paired.py). A ratio below 1 is the cost in cs/s.

The bound issue 38 set: at most 2% at hold 1us and 4 threads, for the
default (`auto`). The other points say what it costs where it is dearest
(hold 0, where one timed acquisition is a larger share of a cycle).

Prints a Markdown table; --markdown FILE also writes it.

e.g.   scripts/experiments/latency-cost.py --rounds 20 --markdown docs/results/latency-cost.md
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)
from lockpoint import lock_point  # noqa: E402  (scripts/lib/lockpoint.py)
from paired import paired  # noqa: E402  (scripts/lib/paired.py)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BINARY = os.path.join(HERE, "..", "..", "target", "release", "contend")


def measure(binary, point, every):
    """(cs/s, spacing the run used) of one run."""
    p = lock_point(binary, [*point, "--latency-every", every, "--runs", "1"])
    return p["stats"]["mean"], p["point"]["latency_every"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", "--binary", dest="binary", default=DEFAULT_BINARY,
                        help="the contend binary (--binary: its older name)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--points", default="4:1us,1:1us,4:0,1:0",
                        help="THREADS:HOLD,... (default: %(default)s)")
    parser.add_argument("--every", default="auto,1", help="settings judged against off")
    parser.add_argument("--lock", default="futex")
    parser.add_argument("--spin", help="the lock's spin budget (--spin), e.g. the seed's R; a comma "
                                       "list gives a row per budget (the seed table: 1,10,100,1000,10000,100000)")
    parser.add_argument("--duration", default="300ms")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", help="also write the table here")
    args = parser.parse_args()
    random.seed(args.seed)
    variants = ["off", *args.every.split(",")]
    lines = [machine.header(), "",
             f"`scripts/experiments/latency-cost.py --rounds {args.rounds} --points {args.points} "
             f"--every {args.every} --lock {args.lock} --duration {args.duration}"
             + (f" --spin {args.spin}" if args.spin else "") + "`", "",
             "| spin | threads | hold | latency-every | spacing | cs/s with it / off | 95% interval | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    cases = [(spin, spec) for spin in (args.spin.split(",") if args.spin else [None])
             for spec in args.points.split(",")]
    for spin, spec in cases:
        threads, hold = spec.split(":")
        point = ["--lock", args.lock, "--threads", threads, "--hold", hold, "--duration", args.duration,
                 "--warmup", "100ms", *(["--spin", spin] if spin else [])]
        rounds, spacing = [], {}
        for _ in range(args.rounds):
            order = variants[:]
            random.shuffle(order)
            r = {}
            for v in order:
                r[v], spacing[v] = measure(args.binary, point, v)
            rounds.append(r)
        judged = paired(args.binary, rounds, "off")
        for v in variants[1:]:
            j = judged[v]
            ci = f"{j['ci95'][0]:.4f}..{j['ci95'][1]:.4f}" if j["ci95"] else "-"
            lines.append(f"| {spin or '-'} | {threads} | {hold} | {v} | 1 in {spacing[v]} | {j['ratio']:.4f} | {ci} "
                         f"| {j['verdict']} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    print()
    print(text)


if __name__ == "__main__":
    main()
