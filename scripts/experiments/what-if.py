#!/usr/bin/env python3
"""`contend run --what-if`'s predictions against what really happens.

1. tests/programs/hold_param.c (one mutex held HOLD ns by four threads on
   two CPUs, the work bounded) at 20 µs: contend's slope predicts the
   program's wall time with shorter holds (15, 10 and 5 µs); the script
   runs the program at those lengths directly, interleaved with 20 µs in
   rounds, and prints predicted against actual, each with its 95%
   interval.
2. A real program (pigz -p 4 on a 36 MB text made here, seeded), where no
   shorter critical section can be run: the what-if runs three delays;
   the script fits the slope on the two largest alone, round by round,
   and predicts the smallest, which was measured: a held-out length, in
   the direction the prediction extrapolates.

Writes docs/results/what-if.md (or --markdown FILE). Needs cc and pigz.

e.g.   scripts/experiments/what-if.py --runs 8
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402
import inputs  # noqa: E402  (scripts/lib/inputs.py)

CONTEND = os.path.join(ROOT, "target", "release", "contend")
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
       11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 24: 2.064, 29: 2.045}


def t95(df):
    return T95.get(df) or T95[max(k for k in T95 if k <= df)]


def interval(values):
    """Mean and Student's t 95% interval."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, None
    half = t95(n - 1) * statistics.stdev(values) / n ** 0.5
    return mean, (mean - half, mean + half)


def shown(e):
    mean, ci = e
    return f"{mean:.3f}" + (f" ({ci[0]:.3f}..{ci[1]:.3f})" if ci else "")


def overlap(a, b):
    return a[1] is None or b[1] is None or (a[1][0] <= b[1][1] and b[1][0] <= a[1][1])


def contend(args, tmp):
    export = os.path.join(tmp, "whatif.json")
    cmd = ["run", *args[:args.index("--")], "--no-progress", "--count-futex", "off", "--export-json", export,
           *args[args.index("--"):]]
    out = subprocess.run([CONTEND, *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"contend {shlex.join(cmd)} failed:\n{out.stderr[-3000:]}")
    shown_cmd = [a for a in cmd if a not in ("--no-progress", "--export-json", export)]
    return "contend " + shlex.join(shown_cmd).replace(tmp, "$TMP"), json.load(open(export))


def rounds(doc):
    """Per round: ({asked delay ns or 0: metric}, {asked: measured delay
    per critical section, ns})."""
    out = {}
    for p in doc["points"]:
        delay = p["point"].get("delay")
        d = int(delay.split("@")[1]) if delay else 0
        for r in p["runs"]:
            if r["status"] != "measured":
                continue
            v = r["metric"] if r.get("metric") is not None else r["wall_s"]
            values, added = out.setdefault(r["round"], ({}, {}))
            values[d] = v
            dl = r.get("delayed")
            added[d] = dl["ns"] / dl["count"] if dl and dl["count"] else d
    return [v for v in out.values() if 0 in v[0]]


def slope(pairs):
    """Least squares through (0, 1) of [(d, ratio)]."""
    return sum(d * (r - 1) for d, r in pairs) / sum(d * d for d, _ in pairs)


def wall(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def synthetic(tmp, runs):
    exe = os.path.join(tmp, "hold_param")
    subprocess.run(["cc", "-O1", "-g", "-no-pie", "-pthread", "-o", exe,
                    os.path.join(ROOT, "tests", "programs", "hold_param.c")], check=True)
    printed = subprocess.run([exe, "1000"], capture_output=True, text=True, check=True).stdout
    mutex = next(w.split("=")[1] for w in printed.split() if w.startswith("mutex="))
    base = 20000
    cmd, doc = contend(["--what-if", mutex, "--runs", str(runs), "--", exe, str(base)], tmp)
    w = doc["what_if"]
    # The slope contend's predictions use, round by round, on the delays
    # the interposer measured.
    slopes = [slope([(added[d], v[d] / v[0]) for d in v if d]) for v, added in rounds(doc)]
    rows = []
    for length in (15000, 10000, 5000):
        s = base - length
        predicted = interval([1 - b * s for b in slopes])
        actual = interval([wall([exe, str(length)]) / wall([exe, str(base)]) for _ in range(runs)])
        rows.append((length, predicted, actual))
    return cmd.replace(exe, "hold_param"), w, rows


def real(tmp, runs):
    text = os.path.join(tmp, "words.txt")
    inputs.words(text)
    program = ["pigz", "-p", "4", "-k", "-f", text]
    # The most waited-on mutex, from one profiled execution.
    _, prof = contend(["--profile", "--runs", "1", "--", *program], tmp)
    top = max((m for m in prof["points"][0]["sample"]["mutexes"] if m["address"]), key=lambda m: m["wait_ns"])
    cmd, doc = contend(["--what-if", hex(top["address"]), "--runs", str(runs), "--", *program], tmp)
    per_round = rounds(doc)
    delays = sorted(d for d in per_round[0][0] if d)
    held_out, fit = delays[0], delays[1:]
    predicted = interval([1 + slope([(added[d], v[d] / v[0]) for d in fit]) * added[held_out]
                          for v, added in per_round])
    actual = interval([v[held_out] / v[0] for v, _ in per_round])
    return cmd, doc["what_if"], top, held_out, fit, predicted, actual


def main():
    global CONTEND
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=8, help="rounds (default 8)")
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "results", "what-if.md"))
    ap.add_argument("--contend", default=CONTEND, help="the contend binary (default: this checkout's target/release/contend)")
    a = ap.parse_args()
    CONTEND = a.contend
    with tempfile.TemporaryDirectory() as tmp:
        cmd, w, rows = synthetic(tmp, a.runs)
        rcmd, rw, top, held_out, fit, predicted, actual = real(tmp, a.runs)
    out = [f"<!-- generated by scripts/experiments/what-if.py --runs {a.runs}; rerun it rather than edit -->",
           "# `contend run --what-if`: predicted against actual", "", machine.header(), ""]
    out += ["## A program whose critical section can be shortened", "",
            "`tests/programs/hold_param.c`: one mutex held for HOLD ns of busy waiting by four threads "
            "on two CPUs, 2,000 rounds each. The what-if ran at 20 µs:", "", f"    {cmd}", "",
            f"Slope {w['slope_per_ns']['value'] * 1e5:+.2f}% of wall time per µs of delay; critical-path "
            f"share {w['critical_path_share']['value']:.2f}; first-delay and last-step slopes "
            + ("agree within their intervals." if w['linear'] else
               "differ beyond their intervals (contend warns; the predictions use the slope over every delay).")
            + "", "",
            "Predicted from that slope, and measured by running the program at the shorter length, "
            f"interleaved with 20 µs in {a.runs} rounds (ratios to 20 µs, 95% intervals):", "",
            "| hold | predicted | actual | intervals overlap |", "|---:|---:|---:|:---|"]
    for length, p, act in rows:
        out.append(f"| {length / 1000:g} µs | {shown(p)} | {shown(act)} | {'yes' if overlap(p, act) else 'no'} |")
    agree = sum(overlap(p, act) for _, p, act in rows)
    if agree == len(rows):
        why = ("The line holds here because the mutex serializes the program at every length (critical-path "
               "share near 1); the further below the measured length, the longer the extrapolation and the "
               "wider the interval.")
    else:
        why = ("Where they do not, the program's time per µs of hold changes below the measured length (the "
               "hand-offs between threads cost less when holds are short), which no delay above it can show: "
               "that is where the prediction breaks, and the further below, the more.")
    out += ["", f"{agree} of {len(rows)} lengths agree within their intervals. {why}", ""]
    out += ["## A real program: a held-out length", "",
            f"pigz -p 4 on a 36 MB text, its most waited-on mutex (`{top['waits_at']}`, "
            f"{top['acquisitions']} acquisitions, mean hold {top['mean_hold_ns'] / 1000:.2f} µs in the profile):",
            "", f"    {rcmd}", "",
            f"Slope {rw['slope_per_ns']['value'] * 1e5:+.3f}% per µs"
            + (f", critical-path share {rw['critical_path_share']['value']:.2f}"
               f" ({rw['critical_path_share']['ci95'][0]:.2f}..{rw['critical_path_share']['ci95'][1]:.2f})"
               if rw.get("critical_path_share") and rw["critical_path_share"].get("ci95") else "")
            + f"; what-if's predictions: half as long {shown((rw['half']['value'], rw['half']['ci95']))}, "
            f"none {shown((rw['none']['value'], rw['none']['ci95']))}.", "",
            f"Fitted on the delays {', '.join(f'{d} ns' for d in fit)} alone and predicting {held_out} ns, which "
            "was run in the same rounds:", "",
            "| delay | predicted | actual | intervals overlap |", "|---:|---:|---:|:---|",
            f"| {held_out} ns | {shown(predicted)} | {shown(actual)} | {'yes' if overlap(predicted, actual) else 'no'} |",
            ""]
    with open(a.markdown, "w") as f:
        f.write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
