#!/usr/bin/env python3
"""The contended lock matrix: `adaptive` against the library locks.

Measures locks x threads {1, 2, 4, 16, 256} x hold {0, 100ns, 1us, 10us}
(idle 0) with one `contend lock` in interleaved rounds: each round runs
all 100 points once, in a fresh random order, so a burst of the host's
steal lands on every lock alike and the runs of one round can be paired.
Then `contend compare EXPORT --baseline adaptive --json` gives each peer
against adaptive, round by round, with its 95% interval; this script only
picks, at every (threads, hold) point, the best peer (highest mean) and
turns its ratio around. It prints:

- each lock's mean cs/s;
- adaptive / best of pthread, pthread-adaptive, std and parking_lot, with
  the paired 95% interval, and a verdict: faster, SLOWER (the whole
  interval below 1), or indistinguishable;
- Jain's fairness index of adaptive and of that best peer (median runs);
- at holds above 0, lock utilization (cs/s x hold) of adaptive and pthread;
- the geometric mean of the 20 ratios.

It also prints each lock's uncontended cost (threads 1, hold 0), in ns per
lock+unlock through the worker loop (which costs about 4 ns by itself).

The default 300 ms window and 3 rounds keep a sweep near 3 min. Jain's
index at 256 threads depends on the window (adaptive rotates threads
through the active set in quanta, and a thread's share follows how many
it got).

Usage: scripts/experiments/lock-matrix.py [--out FILE] [--duration 300ms] [--runs 3]
       scripts/experiments/lock-matrix.py --from FILE      (only print, from an export)
A benchmark, not a test: it asserts nothing and always exits 0 once the
sweep ran.
"""

import argparse
import json
import math
import os
import subprocess
import sys

LOCKS = ["adaptive", "pthread", "pthread-adaptive", "std", "parking_lot"]
PEERS = LOCKS[1:]
THREADS = [1, 2, 4, 16, 256]
HOLDS = ["0", "100ns", "1us", "10us"]
HOLD_NS = {"0": 0, "100ns": 100, "1us": 1000, "10us": 10000}
HERE = os.path.dirname(os.path.abspath(__file__))
CONTEND = os.path.join(HERE, "..", "..", "target", "release", "contend")


def hold_label(work):
    ns = work["ns"]
    for label, value in HOLD_NS.items():
        if value == ns:
            return label
    return f"{ns}ns"


def measure(args):
    if not os.access(CONTEND, os.X_OK):
        sys.exit("lock-matrix: build first: cargo build --release")
    cmd = [CONTEND, "lock", "--lock", ",".join(LOCKS), "--threads", ",".join(map(str, THREADS)),
           "--hold", ",".join(HOLDS), "--idle", "0", "--duration", args.duration,
           "--warmup", args.warmup, "--runs", str(args.runs), "--count-futex", "off",
           "--no-progress", "--export-json", args.out]
    shown = cmd[1:-1] + [os.path.relpath(args.out)]
    print("$ " + " ".join(["contend"] + shown), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def paired_against_adaptive(source):
    """{(threads, hold label, peer): (peer/adaptive, [lo, hi] or None)}."""
    out = subprocess.run([CONTEND, "compare", source, "--baseline", "adaptive", "--json"],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return {(row["key"]["workers"], hold_label(row["key"]["hold"]), row["key"]["lock"]):
            (row["ratio"], row["ci95"]) for row in json.loads(out)["points"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "..", "..", "target", "lock-matrix.json"))
    parser.add_argument("--from", dest="source", help="print from this export instead of measuring")
    parser.add_argument("--duration", default="300ms")
    parser.add_argument("--warmup", default="100ms")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.source is None:
        measure(args)
        args.source = args.out
    with open(args.source) as f:
        doc = json.load(f)
    paired = paired_against_adaptive(args.source)

    cells = {}
    for p in doc["points"]:
        pt = p["point"]
        key = (pt["workers"], hold_label(pt["hold"]))
        cells.setdefault(key, {})[pt["lock"]] = {
            "mean": p["stats"]["mean"],
            "jain": p["sample"]["fairness"]["jain"],
        }

    print("uncontended lock+unlock through the worker loop (threads 1, hold 0), ns")
    base = cells.get((1, "0"), {})
    print("  " + "  ".join(f"{lock} {1e9 / base[lock]['mean']:.1f}" for lock in LOCKS if lock in base))
    print()
    present = [lock for lock in LOCKS if any(lock in c for c in cells.values())]
    head = f"{'thr':>4} {'hold':>6} " + " ".join(f"{lock[:12]:>12}" for lock in present)
    head += f" {'best peer':>16} {'adpt/best':>9} {'95% interval':>13} {'Jain a':>6} {'Jain p':>6}"
    head += f" {'util a':>6} {'util pt':>7}  verdict"
    print(head)
    logs, verdicts = [], {"faster": 0, "indistinguishable": 0, "SLOWER": 0}
    unfair = 0
    for threads in THREADS:
        for hold in HOLDS:
            c = cells.get((threads, hold))
            if not c or "adaptive" not in c:
                continue
            best_mean, best = max((c[p]["mean"], p) for p in PEERS if p in c)
            a = c["adaptive"]
            ratio, ci = paired.get((threads, hold, best), (float("nan"), None))
            # peer/adaptive turned around: adaptive/peer, interval inverted.
            r = 1 / ratio
            lo, hi = (1 / ci[1], 1 / ci[0]) if ci else (None, None)
            logs.append(math.log(r))
            if lo is None:
                speed = "untestable"
            elif hi < 1.0:
                speed = "SLOWER"
            elif lo > 1.0:
                speed = "faster"
            else:
                speed = "indistinguishable"
            verdicts[speed] = verdicts.get(speed, 0) + 1
            jain_ok = a["jain"] >= c[best]["jain"] - 0.05
            unfair += not jain_ok
            util = lambda lock: f"{c[lock]['mean'] * HOLD_NS[hold] / 1e9:.2f}" if HOLD_NS[hold] and lock in c else "-"
            row = f"{threads:>4} {hold:>6} " + " ".join(f"{c[l]['mean'] / 1e3:>11.0f}K" for l in present if l in c)
            interval = "-" if lo is None else f"{lo:.3f}..{hi:.3f}"
            row += f" {best:>16} {r:>9.3f} {interval:>13} {a['jain']:>6.3f}"
            row += f" {c[best]['jain']:>6.3f} {util('adaptive'):>6} {util('pthread'):>7}  "
            row += speed + ("" if jain_ok else " UNFAIR")
            print(row)
    print()
    print("adaptive against the best peer, paired by round: "
          + ", ".join(f"{n} {v}" for v, n in verdicts.items()) + f" of {len(logs)} points; "
          + f"geometric mean of the ratios {math.exp(sum(logs) / len(logs)):.3f}; "
          + f"Jain more than 0.05 below the best peer's at {unfair}")


if __name__ == "__main__":
    main()
