#!/usr/bin/env python3
"""`contend run --recommend` and `--what-if` on real programs, as a user
would bring them: pigz (a compressor: a job queue and per-job locks),
sysbench mutex (threads hammering one mutex), sysbench threads (threads
that yield while holding a mutex; its rate) and RocksDB's db_bench.

Per program: the lock recommended for each of its two most waited-on
mutexes (tried alone, paired with glibc's mutex by round) and what the
winners give together; then the what-if for its most waited-on mutex:
what shortening that mutex's critical sections would buy. Writes
docs/results/recommend.md (or --markdown FILE); the readings are
generated from the numbers.

Needs pigz, sysbench and rocksdb-tools (db_bench). Inputs are made here,
seeded (a 36 MB text for pigz).

e.g.   scripts/experiments/recommend-real-programs.py --runs 5
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402
import inputs  # noqa: E402  (scripts/lib/inputs.py)

CONTEND = os.path.join(ROOT, "target", "release", "contend")
LOCKS = "adaptive,mcs,ticket,tas,parking_lot"


def programs(tmp):
    text = os.path.join(tmp, "words.txt")
    inputs.words(text)
    return [
        ("pigz -p 4", [], ["pigz", "-p", "4", "-k", "-f", text]),
        ("sysbench mutex, 4 threads on one mutex", [],
         ["sysbench", "mutex", "--threads=4", "--mutex-num=1", "--mutex-locks=200000", "--mutex-loops=100", "run"]),
        ("sysbench threads, 4 threads yielding under 1 mutex (rate: events in 2 s)",
         ["--metric", r"total number of events: *([0-9]+)"],
         ["sysbench", "threads", "--threads=4", "--thread-locks=1", "--time=2", "run"]),
        ("db_bench fillrandom,readrandom, 4 threads", [],
         ["db_bench", "--benchmarks=fillrandom,readrandom", "--num=100000", "--threads=4",
          f"--db={os.path.join(tmp, 'db')}"]),
    ]


def contend(args, program, tmp, may_fail=False):
    """The command as shown, and the export (with may_fail, None and the
    error's last line when contend refused)."""
    export = os.path.join(tmp, "out.json")
    cmd = ["run", *args, "--count-futex", "off", "--no-progress", "--export-json", export, "--", *program]
    out = subprocess.run([CONTEND, *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    shown = [a for a in cmd if a not in ("--no-progress", "--export-json", export)]
    shown = "contend " + shlex.join(shown).replace(tmp, "$TMP")
    if out.returncode != 0:
        if may_fail:
            return shown, None, out.stderr.strip().splitlines()[-1]
        sys.exit(f"contend {shlex.join(cmd)} failed:\n{out.stderr[-3000:]}")
    return shown, json.load(open(export))


def ci(vs):
    c = vs.get("ci95") if vs else None
    return f"{c[0]:.3f}..{c[1]:.3f}" if c else "-"


def recommendation_rows(rec):
    rows = ["| mutex | waits at | of wait | " + " | ".join(t["lock"] for t in rec["mutexes"][0]["tried"])
            + " | verdict |",
            "|---|---|---:|" + "---:|" * len(rec["mutexes"][0]["tried"]) + "---|"]
    for m in rec["mutexes"]:
        cells = []
        for t in m["tried"]:
            v = t.get("vs")
            cells.append(f"{v['ratio']:.3f} ({ci(v)})" if v else
                         f"failed: {t['failed']}" if t.get("failed") else "not used")
        moved = all(t.get("vs") is None and not t.get("failed") for t in m["tried"])
        verdict = f"use {m['best']}" if m["best"] else ("unknown: not at its profiled address unprofiled" if moved
                                                        else "keep glibc")
        rows.append(f"| {m['address']:#x} | `{m['waits_at']}` | {m['wait_share']:.0%} | " + " | ".join(cells)
                    + f" | {verdict} |")
    return rows


def reading(rec, w, rate):
    out = []
    better = "higher rate" if rate else "faster"
    winners = [m for m in rec["mutexes"] if m["best"]]
    if not rec["mutexes"]:
        return ["No mutex a lock can replace was waited on: nothing to recommend."]
    moved = [m for m in rec["mutexes"] if all(t.get("vs") is None and not t.get("failed") for t in m["tried"])]
    if moved:
        out.append(f"{len(moved)} of its mutexes (`{moved[0]['waits_at']}`) were not at their profiled address in "
                   "the unprofiled executions, so no lock reached them and nothing is known of them: choosing a "
                   "mutex by address fails where its allocation moves between executions.")
    if not winners:
        out.append(f"No lock made the program {better} beyond its interval on any of its most waited-on "
                   "mutexes" + (" that could be reached" if moved else "") + ": keep glibc's mutex.")
    for m in winners:
        t = next(t for t in m["tried"] if t["lock"] == m["best"])
        out.append(f"`{m['waits_at']}` ({m['wait_share']:.0%} of the wait): {m['best']} alone gives "
                   f"{t['vs']['ratio']:.3f} ({ci(t['vs'])}).")
    c = rec.get("combination")
    if c and c.get("vs"):
        out.append(f"The winners together (`{c['point']}`): {c['vs']['ratio']:.3f} ({ci(c['vs'])}).")
    if w:
        share = w.get("critical_path_share")
        half = w["half"]
        text = (f"What-if on `{w['waits_at']}` (mean hold {w['mean_hold_ns'] / 1000:.2f} µs, "
                f"{w['acquisitions']} acquisitions): critical sections half as long would give "
                f"{half['value']:.3f} ({ci(half)})")
        if share and share.get("ci95"):
            text += (f"; critical-path share {share['value']:.2f} ({share['ci95'][0]:.2f}..{share['ci95'][1]:.2f})"
                     + (": most of its holds lie on the program's critical path" if share["value"] > 0.5 else
                        ": most of its holds overlap other work, so shortening them buys less than their length"))
        if not w["linear"]:
            text += "; the slopes over the first delay and the last step differ, so contend warns that the line may not hold this far"
        out.append(text + ".")
    return out


def main():
    global CONTEND
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="rounds per phase (default 5)")
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "results", "recommend.md"))
    ap.add_argument("--contend", default=CONTEND, help="the contend binary (default: this checkout's target/release/contend)")
    a = ap.parse_args()
    CONTEND = a.contend
    out = [f"<!-- generated by scripts/experiments/recommend-real-programs.py --runs {a.runs}; rerun it "
           "rather than edit -->",
           "# `contend run --recommend` and `--what-if` on real programs", "", machine.header(), "",
           f"Each program: `--recommend --lock {LOCKS} --mutexes 2 --runs {a.runs}` (each lock on each of the "
           "two most waited-on mutexes alone, the others glibc's; ratios to glibc's mutex paired by round, "
           "below 1 faster for wall time, above 1 better for a rate; 95% intervals; a lock whose first "
           "execution took over 10 times the profiled one is stopped, not measured), then `--what-if` on the "
           "most waited-on mutex.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        for title, extra, program in programs(tmp):
            rate = bool(extra)
            rcmd, rdoc, *_ = contend(["--recommend", "--lock", LOCKS, "--mutexes", "2", "--runs", str(a.runs), *extra],
                                 program, tmp)
            rec = rdoc["recommendation"]
            out += [f"## {title}", "", f"    {rcmd}", ""]
            w = None
            if rec["mutexes"]:
                out += recommendation_rows(rec) + [""]
                top = rec["mutexes"][0]
                # By name: an address from another invocation's profile may
                # have moved.
                wcmd, wdoc, *why = contend(["--what-if", top["waits_at"], "--runs", str(a.runs), *extra], program,
                                           tmp, may_fail=True)
                out += [f"    {wcmd}", ""]
                if wdoc is None:
                    out += [f"The what-if refused: `{why[0]}`", ""]
                else:
                    w = wdoc.get("what_if")
                half_w = (f"median interval half-width ±{rec['median_half_width_pct']:.1f}%"
                          if rec.get("median_half_width_pct") is not None else "no intervals")
                out += [f"Cost: one profiled execution of {rec['profile_wall_s']:.2f} s and {rec['executions']} "
                        f"planned executions; precision: {half_w}.", ""]
            out += ["**Reading.** " + " ".join(reading(rec, w, rate)), ""]
            print("\n".join(out[-12:]), flush=True)
    with open(a.markdown, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
