#!/usr/bin/env python3
"""What `contend run`'s interposer adds to an uncontended lock/unlock.

One thread locks and unlocks glibc's mutex with no hold and no idle
(`contend lock --lock pthread --threads 1 --hold 0 --idle 0`): the loop
calls pthread_mutex_lock and pthread_mutex_unlock through the PLT, as any
C program does. Each round runs every variant once, in a random order:

  direct        no preload: glibc's mutex as every program gets it
  interposed    the interposer preloaded, --lock pthread: its entry points
                decide that the mutex is glibc's and call glibc
  profiled      the same with --profile: a try-lock, a table lookup and two
                clock reads per acquisition
  swapped       the interposer with --lock adaptive: contend's adaptive
                lock packed into the pthread_mutex_t, with its per-thread
                node cache
  own adaptive  contend's own adaptive lock (`--lock adaptive`), inlined
                into contend lock's loop
  own adaptive, called
                the same lock behind an indirect call (`--lock
                adaptive-called`): what a program's call to a swapped lock
                costs in itself. The swapped lock is paired with it (like
                with like), and it with the inlined one (the call alone)

With --other-interposer SO (another build's libcontend_interpose.so, to
judge a change to the interposer), three more variants run in the same
rounds: "interposed (other)", "profiled (other)" and "swapped (other)",
each paired with this build's variant of the same name.

With --threads N --hold WORK the same variants run contended (N threads
on one mutex): what the profile's contended path (its stack walk) costs.

ns per cycle is 1e9 / (cs/s). Each variant is paired by round with
`direct` (`swapped` with `own adaptive, called`, and that with `own
adaptive`) by `contend compare --baseline`
(scripts/lib/paired.py): the ratio of the rates with its 95% interval,
shown as the ns each variant adds at the baseline's median (the interval
mapped through the same ratio). Prints a Markdown table; --markdown FILE
also writes it.

e.g.   scripts/experiments/interposer-cost.py --rounds 12 --markdown docs/results/interposer-cost.md
"""

import argparse
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import interposer  # noqa: E402  (scripts/lib/interposer.py)
import machine  # noqa: E402  (scripts/lib/machine.py)
from emit import emit  # noqa: E402  (scripts/lib/emit.py)
from lockpoint import lock_point  # noqa: E402  (scripts/lib/lockpoint.py)
from paired import paired  # noqa: E402  (scripts/lib/paired.py: the statistics are contend compare's)


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def variants(contend, so, other=None):
    pre = {"LD_PRELOAD": so}
    v = {
        "direct": (["--lock", "pthread"], {}),
        "interposed": (["--lock", "pthread"], {**pre, "CONTEND_RUN_LOCK": "pthread"}),
        "profiled": (["--lock", "pthread"], {**pre, "CONTEND_RUN_LOCK": "pthread", "CONTEND_RUN_PROFILE": "1"}),
        "swapped": (["--lock", "pthread"], {**pre, "CONTEND_RUN_LOCK": "adaptive"}),
        "own adaptive": (["--lock", "adaptive"], {}),
        "own adaptive, called": (["--lock", "adaptive-called"], {}),
    }
    if other:
        v["interposed (other)"] = (["--lock", "pthread"], {"LD_PRELOAD": other, "CONTEND_RUN_LOCK": "pthread"})
        v["profiled (other)"] = (["--lock", "pthread"],
                                 {"LD_PRELOAD": other, "CONTEND_RUN_LOCK": "pthread", "CONTEND_RUN_PROFILE": "1"})
        v["swapped (other)"] = (["--lock", "pthread"], {"LD_PRELOAD": other, "CONTEND_RUN_LOCK": "adaptive"})
    return v


def ns_per_cycle(contend, args, env, duration, threads="1", hold="0"):
    full = {**os.environ, **env}
    full.pop("CONTEND_RUN_DIR", None)
    point = lock_point(contend, [*args, "--threads", threads, "--hold", hold, "--idle", "0",
                                 "--duration", duration, "--runs", "1"], env=full)
    return 1e9 / point["stats"]["mean"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--duration", default="500ms")
    ap.add_argument("--contend", default=os.path.join(ROOT, "target", "release", "contend"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--other-interposer", help="another build's interposer, run in the same rounds")
    ap.add_argument("--threads", default="1", help="threads on the one mutex (default 1: uncontended)")
    ap.add_argument("--hold", default="0", help="hold per acquisition, contend lock's --hold (default 0)")
    a = ap.parse_args()
    so = interposer.sibling(a.contend)
    vs = variants(a.contend, so, a.other_interposer)
    rng = random.Random(a.seed)
    ns = {k: [] for k in vs}
    for r in range(a.rounds):
        order = list(vs)
        rng.shuffle(order)
        for k in order:
            args, env = vs[k]
            ns[k].append(ns_per_cycle(a.contend, args, env, a.duration, a.threads, a.hold))
        print(f"round {r + 1}/{a.rounds}", file=sys.stderr)
    where = machine.header().lstrip("# ")
    # (variant, baseline) pairs, in the table's order: the swapped lock
    # against contend's own, inlined (the whole gap) and called (like with
    # like), and the call alone.
    pairs = [("interposed", "direct"), ("profiled", "direct"), ("swapped", "own adaptive"),
             ("swapped", "own adaptive, called"), ("own adaptive, called", "own adaptive"),
             ("interposed (other)", "interposed"), ("profiled (other)", "profiled"), ("swapped (other)", "swapped")]
    pairs = [(v, b) for v, b in pairs if v in vs]
    # Rates (cycles per second) by round, judged against each baseline by
    # contend compare; a variant slower than its baseline has a ratio below 1.
    rounds = [{k: 1e9 / ns[k][r] for k in vs} for r in range(a.rounds)]
    judged = {b: paired(a.contend, rounds, b) for b in sorted({b for _, b in pairs})}
    if a.threads == "1" and a.hold == "0":
        what, flags = "Uncontended lock + unlock, one thread", ""
    else:
        what = f"Lock + unlock by {a.threads} threads on one mutex, hold {a.hold}"
        flags = f" --threads {a.threads} --hold {a.hold}"
    lines = [
        f"{what} ({a.rounds} rounds of {a.duration}, variants in a random "
        f"order each round; {where}). Generated by `scripts/experiments/interposer-cost.py "
        f"--rounds {a.rounds}{flags}{' --other-interposer ' + a.other_interposer if a.other_interposer else ''}`. "
        f"Added ns: the baseline's median times (1/ratio - 1), the ratio and its 95% interval from "
        f"`contend compare --baseline` over the rounds.",
        "",
        "| variant | ns per lock+unlock (median) | added vs | added ns (95% interval) |",
        "|---|---|---|---|",
    ]
    for k in vs:
        if not any(v == k for v, _ in pairs):
            lines.append(f"| {k} | {statistics.median(ns[k]):.2f} | | |")
    for k, b_name in pairs:
        med = statistics.median(ns[k])
        j = judged[b_name][k]
        b = statistics.median(ns[b_name])
        added = lambda ratio: b * (1.0 / ratio - 1.0)  # noqa: E731
        ci_s = f"{added(j['ratio']):+.2f}"
        if j["ci95"]:
            lo, hi = j["ci95"]
            ci_s += f" ({added(hi):+.2f}..{added(lo):+.2f})"
        lines.append(f"| {k} | {med:.2f} | {b_name} | {ci_s} |")
    emit(lines, a.markdown)


if __name__ == "__main__":
    main()
