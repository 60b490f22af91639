#!/usr/bin/env python3
"""The contended lock matrix: `adaptive` against the library locks.

Measures locks x threads {1, 2, 4, 16, 256} x hold {0, 100ns, 1us, 10us}
(idle 0, 3 runs) with `contend lock`, keeps the runs as one JSON export,
and prints for every (threads, hold) point:

- each lock's mean cs/s;
- adaptive's ratio to the best of pthread, pthread-adaptive, std and
  parking_lot, with the ratio's 95% interval (delta method), all measured
  side by side in the same sweep;
- Jain's fairness index of adaptive and of that best peer;
- at holds above 0, lock utilization (cs/s x hold) of adaptive and pthread.

It also prints each lock's uncontended cost (threads 1, hold 0), in ns per
lock+unlock through the worker loop (which costs about 4 ns by itself).

Interleaved, because the host's steal comes in bursts: one sweep with
`--runs 3` runs lock-major, so a lock's points run some 25 s away from
its peers' and a burst of 40% steal lands on one lock only (it made a
4-thread, 10 us point read 0.70x in one sweep and 1.0x in an A/B run a
minute later). Here each `contend lock` call measures the five locks at
one (threads, hold) point back to back, once, and the whole round is
repeated `--runs` times; the runs of a point are then merged, and its
`stats` and `sample` recomputed over all of them, so the export reads as
one `contend lock --runs N` export would (`contend compare` takes it).

The default 300 ms window keeps a sweep near 2.5 min. Jain's index at
256 threads depends on the window (adaptive rotates threads through the
active set in quanta, and a thread's share follows how many it got):
`--duration 2s`, contend's own default window, takes about 11 min.

Usage: scripts/lock-matrix.py [--out FILE] [--duration 300ms] [--runs 3]
       scripts/lock-matrix.py --from FILE      (only print, from an export)
A benchmark, not a test: it asserts nothing and always exits 0 once the
sweep ran.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

LOCKS = ["adaptive", "pthread", "pthread-adaptive", "std", "parking_lot"]
PEERS = LOCKS[1:]
THREADS = [1, 2, 4, 16, 256]
HOLDS = ["0", "100ns", "1us", "10us"]
HOLD_NS = {"0": 0, "100ns": 100, "1us": 1000, "10us": 10000}

# Student's t, two-sided 95%, by degrees of freedom (Welch's df is rounded
# down, so the interval errs on the wide side).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def t95(df):
    df = max(1, int(df))
    keys = [k for k in sorted(T95) if k <= df]
    return T95[keys[-1]] if df <= 30 else 1.96


def mean_sd(values):
    n = len(values)
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return m, sd, n


def ratio_ci(a_runs, b_runs):
    """a/b and the half-width of its 95% interval (delta method, Welch df)."""
    (ma, sa, na), (mb, sb, nb) = mean_sd(a_runs), mean_sd(b_runs)
    r = ma / mb
    va, vb = (sa / ma) ** 2 / na, (sb / mb) ** 2 / nb
    if na < 2 or nb < 2 or va + vb == 0:
        return r, None
    ea, eb = (sa ** 2 / na), (sb ** 2 / nb)
    df = (ea + eb) ** 2 / (ea ** 2 / (na - 1) + eb ** 2 / (nb - 1)) if ea + eb > 0 else na + nb - 2
    return r, t95(df) * r * math.sqrt(va + vb)


def summarize(point):
    """Recomputes a merged point's `stats` and `sample` over all its runs,
    as `contend` computes them (src/measure/stats.rs): without this they
    would still describe the first round's run alone. Outliers are judged
    from 5 runs up there; a merged point of fewer keeps none. The 95%
    interval uses the t table above: contend's quantile to 3 decimals up
    to 11 runs, and a wider one past that (df rounded down)."""
    values = [r["cs_per_s"] for r in point["runs"]]
    m, sd, n = mean_sd(values)
    median = statistics.median(values)
    ci = t95(n - 1) * sd / math.sqrt(n) if n > 1 else None
    outliers = []
    if n >= 5:
        mad = statistics.median(abs(v - median) for v in values)
        if mad > 0:
            outliers = [i for i, v in enumerate(values) if 0.6745 * abs(v - median) / mad > 3.5]
    point["stats"] = {"n": n, "mean": m, "stdev": sd, "ci95": ci,
                      "ci95_pct": 100 * ci / m if ci is not None and m else None,
                      "min": min(values), "median": median, "max": max(values),
                      "outliers": outliers}
    # The run closest to the median, as `contend` picks the one its
    # tables take their detail columns from.
    point["sample"] = min(point["runs"], key=lambda r: abs(r["cs_per_s"] - median))


def hold_label(work):
    ns = work["ns"]
    for label, value in HOLD_NS.items():
        if value == ns:
            return label
    return f"{ns}ns"


def run(args, here):
    contend = os.path.join(here, "..", "target", "release", "contend")
    if not os.access(contend, os.X_OK):
        sys.exit("lock-matrix: build first: cargo build --release")
    merged, points = None, {}
    part = args.out + ".part"
    for round_ in range(args.runs):
        for threads in THREADS:
            for hold in HOLDS:
                cmd = [contend, "lock", "--lock", ",".join(LOCKS), "--threads", str(threads),
                       "--hold", hold, "--idle", "0", "--duration", args.duration,
                       "--warmup", args.warmup, "--runs", "1", "--no-progress",
                       "--export-json", part]
                if round_ == 0 and threads == THREADS[0] and hold == HOLDS[0]:
                    print("$ (x%d rounds, each point) " % args.runs + " ".join(cmd[1:]), file=sys.stderr)
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                with open(part) as f:
                    doc = json.load(f)
                merged = merged or doc
                for p in doc["points"]:
                    key = (p["point"]["lock"], threads, hold)
                    if key in points:
                        points[key]["runs"].extend(p["runs"])
                    else:
                        points[key] = p
    os.remove(part)
    merged["points"] = list(points.values())
    for p in merged["points"]:
        summarize(p)
    merged["lock_matrix"] = {"rounds": args.runs, "order": "interleaved: locks back to back per point"}
    with open(args.out, "w") as f:
        json.dump(merged, f)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(here, "..", "target", "lock-matrix.json"))
    parser.add_argument("--from", dest="source", help="print from this export instead of measuring")
    parser.add_argument("--duration", default="300ms")
    parser.add_argument("--warmup", default="100ms")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.source is None:
        run(args, here)
        args.source = args.out
    with open(args.source) as f:
        doc = json.load(f)

    cells = {}
    for p in doc["points"]:
        pt = p["point"]
        key = (pt["workers"], hold_label(pt["hold"]))
        runs = sorted(p["runs"], key=lambda r: r["cs_per_s"])
        cells.setdefault(key, {})[pt["lock"]] = {
            "runs": [r["cs_per_s"] for r in runs],
            "mean": sum(r["cs_per_s"] for r in runs) / len(runs),
            # The median run's, as the table of `contend lock` reports it.
            "jain": runs[len(runs) // 2]["fairness"]["jain"],
        }

    print("uncontended lock+unlock through the worker loop (threads 1, hold 0), ns")
    base = cells.get((1, "0"), {})
    print("  " + "  ".join(f"{lock} {1e9 / base[lock]['mean']:.1f}" for lock in LOCKS if lock in base))
    print()
    present = [lock for lock in LOCKS if any(lock in c for c in cells.values())]
    head = f"{'thr':>4} {'hold':>6} " + " ".join(f"{lock[:12]:>12}" for lock in present)
    head += f" {'best peer':>16} {'adpt/best':>9} {'±95%':>6} {'Jain a':>6} {'Jain p':>6} {'util a':>6} {'util pt':>7}  verdict"
    print(head)
    below = 0
    for threads in THREADS:
        for hold in HOLDS:
            c = cells.get((threads, hold))
            if not c or "adaptive" not in c:
                continue
            peers = [(c[p]["mean"], p) for p in PEERS if p in c]
            best_mean, best = max(peers)
            a = c["adaptive"]
            r, h = ratio_ci(a["runs"], c[best]["runs"])
            jain_ok = a["jain"] >= c[best]["jain"] - 0.05
            ok = r >= 1.0 and jain_ok
            below += not ok
            if r >= 1.0:
                speed = ""
            elif h is not None and r + h >= 1.0:
                speed = "slower (within noise)"
            else:
                speed = "SLOWER"
            verdict = "ok" if ok else " ".join(w for w in [speed, "" if jain_ok else "UNFAIR"] if w)
            util = lambda lock: f"{c[lock]['mean'] * HOLD_NS[hold] / 1e9:.2f}" if HOLD_NS[hold] and lock in c else "-"
            row = f"{threads:>4} {hold:>6} " + " ".join(f"{c[l]['mean'] / 1e3:>11.0f}K" for l in present if l in c)
            ci = "-" if h is None else f"{h:.3f}"
            row += f" {best:>16} {r:>9.3f} {ci:>6} {a['jain']:>6.3f}"
            row += f" {c[best]['jain']:>6.3f} {util('adaptive'):>6} {util('pthread'):>7}  "
            row += verdict
            print(row)
    print()
    print(f"adaptive at or above the best peer with Jain within 0.05: {len(cells) - below} of {len(cells)} points")


if __name__ == "__main__":
    main()
