#!/usr/bin/env python3
"""`contend run --profile` on four real programs of different kinds, as a
user would bring them: a compressor (zstd -T4), a key-value server under a
load generator (memcached with memcslap), a video encoder (x264) and a
database (RocksDB's db_bench). Writes docs/results/profiled-programs.md
(or --markdown FILE): per program, the command, the profile's top mutexes,
the holders that caused the waits, its rwlocks and spinlocks, what the
profile cost it, and a reading generated from those numbers by the rules
in `reading()` (so the words change when the numbers do).

Needs the programs (Debian: zstd, memcached, libmemcached-tools, x264,
rocksdb-tools) and root for the kernel waits. Inputs are made here,
seeded: a 36 MB text for zstd, 100 frames of 640x360 synthetic video
(moving gradients, so the encoder has motion to search) for x264.

e.g.   scripts/experiments/profile-real-programs.py --runs 3
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402
import inputs  # noqa: E402  (scripts/lib/inputs.py)

CONTEND = os.path.join(ROOT, "target", "release", "contend")
PORT = 21987


def video(path, w=640, h=360, frames=100):
    """Raw I420 frames: gradients that move a few pixels a frame."""
    with open(path, "wb") as f:
        for t in range(frames):
            y = bytes(((x + 3 * t) ^ (row + 2 * t)) & 0xFF for row in range(h) for x in range(w))
            uv = bytes(((x + t) * 2) & 0xFF for _ in range(h // 2) for x in range(w // 2))
            f.write(y + uv + uv)


def programs(tmp):
    words, yuv = os.path.join(tmp, "words.txt"), os.path.join(tmp, "in.yuv")
    inputs.words(words)
    video(yuv)
    server = (f"memcached -u root -t 4 -l 127.0.0.1 -p {PORT} & pid=$!; "
              f"until memcstat --servers=127.0.0.1:{PORT} >/dev/null 2>&1; do sleep 0.05; done; "
              f"memcslap --servers=127.0.0.1:{PORT} --concurrency=8 --execute-number=40000 --test=set; "
              f"memcslap --servers=127.0.0.1:{PORT} --concurrency=8 --execute-number=40000 --test=get; "
              "kill $pid; wait $pid")
    return [
        ("zstd -T4", "a compressor: four worker threads and a job queue",
         ["zstd", "-T4", "-3", "-f", "-q", "-o", os.path.join(tmp, "words.zst"), words]),
        ("memcached under memcslap", "a key-value server (4 threads) and its load generator (8 threads), "
         "one command: both are profiled, each mutex named by process",
         ["sh", "-c", server]),
        ("x264", "a video encoder: frame threads and a lookahead thread",
         ["x264", "--threads", "4", "--preset", "faster", "--input-res", "640x360", "--fps", "25", "--quiet",
          "-o", os.path.join(tmp, "out.264"), yuv]),
        ("db_bench", "a database (RocksDB): four writer then four reader threads",
         ["db_bench", "--benchmarks=fillrandom,readrandom", "--num=100000", "--threads=4",
          f"--db={os.path.join(tmp, 'db')}"]),
    ]


def run(program, runs, tmp):
    export = os.path.join(tmp, "run.json")
    cmd = ["run", "--profile", "--runs", str(runs), "--top", "5", "--no-progress", "--export-json", export,
           "--", *program]
    out = subprocess.run([CONTEND, *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"contend {shlex.join(cmd)} failed:\n{out.stderr[-3000:]}")
    doc = json.load(open(export))
    shown = [a for a in cmd if a not in ("--no-progress", "--export-json", export)]
    return "contend " + shlex.join(shown).replace(tmp, "$TMP"), doc


def profile_run(point):
    """The run whose profile contend's tables show: the futex-counting
    run if it was profiled (it has the kernel waits), else the median."""
    for r in point["runs"]:
        if r["status"] == "counting" and r["mutexes"]:
            return r
    return point["sample"]


def label(m, several):
    return f"{m['pid']}:{m['address']:#x}" if several else f"{m['address']:#x}"


def held_at(h):
    f = h["frames"]
    return f[h["wrappers"]] if f else "(other sites)"


def reading(run, wall_s, cost):
    """What the numbers say, by rules: where the wait is, whose critical
    section caused it, how the threads slept, and what to look at."""
    ms = [m for m in run["mutexes"] if m["address"] != 0]
    total = sum(m["wait_ns"] for m in ms)
    threads_time = wall_s * 1e9
    out = []
    if not ms:
        return ["It took no pthread mutex through the interposer."]
    if total == 0:
        out.append("No acquisition had to wait: its mutexes are not where its time goes.")
    else:
        top = max(ms, key=lambda m: m["wait_ns"])
        share = top["wait_ns"] / total
        out.append(f"The waits total {total / 1e6:.1f} ms against a wall time of {wall_s:.2f} s; "
                   f"{share:.0%} of them are on the mutex that waits at `{top['waits_at']}`"
                   f" ({top['contended']} of its {top['acquisitions']} acquisitions had to wait, "
                   f"p99 {top['p99_wait_ns'] / 1e3:.0f} µs).")
        small = total < 0.01 * threads_time
        if small:
            out.append("That is under 1% of one thread's time over the run: a better lock or a shorter "
                       "critical section would buy little; the time is elsewhere.")
        hs = sorted(top["holders"], key=lambda h: -h["caused_wait_ns"])
        if hs and hs[0]["frames"] and top["wait_ns"] and not small:
            h = hs[0]
            mean_hold = h["held_ns"] / max(h["releases"], 1)
            what = ("that critical section is the one to shorten or split" if mean_hold >= 1000 else
                    "those holds are short, so the waits are hand-offs and scheduling (a preempted or "
                    "sleeping waiter to wake), not the critical section: fewer threads on the mutex, or a "
                    "lock that spins before it sleeps, is what to try")
            out.append(f"The holder that caused most of it releases at `{held_at(h)}`: "
                       f"{h['caused_wait_ns'] / top['wait_ns']:.0%} of that mutex's wait, over "
                       f"{h['releases']} releases to waiters holding it {mean_hold / 1e3:.2f} µs each on "
                       f"average: {what}.")
    kernel = sum(m.get("kernel_waits") or 0 for m in ms)
    conds = sum(m.get("cond_waits", 0) for m in ms)
    had = sum(m["contended"] for m in ms)
    if run.get("kernel_waits") is not None:
        if kernel > had and conds:
            cm = max(ms, key=lambda m: (m.get("kernel_waits") or 0) - m["contended"])
            out.append(f"Threads slept in the kernel {kernel} times on these mutexes but had to wait only {had} "
                       f"times at a lock call: the difference is the re-acquisition at the end of condition "
                       f"waits ({conds} of them), most on `{cm['waits_at']}` ({cm.get('kernel_waits')} kernel waits, "
                       f"{cm['contended']} had to wait). A woken waiter finds the mutex held by its waker: "
                       "signal after unlocking, or wake one waiter instead of all.")
        elif had > 2 * max(kernel, 1):
            out.append(f"{had} acquisitions had to wait but threads slept in the kernel only {kernel} times: "
                       "most waits end by glibc's retry or spin without sleeping, so the holds are short.")
    rw = [r for r in run.get("rwlocks", []) if r["read"]["wait_ns"] + r["write"]["wait_ns"] > 0]
    if rw:
        r = max(rw, key=lambda r: r["read"]["wait_ns"] + r["write"]["wait_ns"])
        out.append(f"Its most waited-on {r['kind']} (first locked at `{r['site']}`): readers waited "
                   f"{r['read']['wait_ns'] / 1e6:.1f} ms, writers {r['write']['wait_ns'] / 1e6:.1f} ms.")
    if run.get("symbol_hints"):
        out.append("Some names are module offsets: the hint below the tables says which debug package, "
                   "or which build flag, gives names.")
    if cost:
        lo, hi = cost["ci95"] or (float("nan"), float("nan"))
        out.append(f"The profile cost it {cost['ratio']:.2f}x its wall time (95% interval {lo:.2f}..{hi:.2f}).")
    return out


def section(name, kind, shown, doc):
    point = doc["points"][0]
    run = profile_run(point)
    ms = [m for m in run["mutexes"] if m["address"] != 0]
    several = len({m["pid"] for m in ms}) > 1
    lines = [f"## {name}", "", f"{kind}.", "", f"    {shown}", ""]
    which = "the futex-counting run" if run is not point["sample"] else "the median run"
    kw = run.get("kernel_waits")
    lines.append(f"Profile of {which}: {len(ms)} mutexes in {run['processes']} process(es), "
                 f"{sum(m['acquisitions'] for m in ms)} acquisitions"
                 + (f", {kw['on_mutexes']} kernel waits on them ({kw['all']} in all)" if kw else "") + ".")
    lines += ["", "| mutex | waits at | acquired | had to wait | kernel waits | cond waits | wait ms | p99 wait µs "
              "| mean hold µs |", "|---|---|---|---|---|---|---|---|---|"]
    for m in sorted(ms, key=lambda m: -m["wait_ns"])[:5]:
        k = m.get("kernel_waits")
        lines.append(f"| {label(m, several)} | {m['waits_at']} | {m['acquisitions']} | {m['contended']} | "
                     f"{'-' if k is None else k} | {m.get('cond_waits', 0)} | {m['wait_ns'] / 1e6:.3f} | "
                     f"{m['p99_wait_ns'] / 1e3:.1f} | {m['mean_hold_ns'] / 1e3:.2f} |")
    holders = sorted(((m, h) for m in ms for h in m["holders"] if h["frames"]),
                     key=lambda mh: -mh[1]["caused_wait_ns"])[:3]
    if holders:
        lines += ["", "| mutex | held at | releases to waiters | held ms | wait caused ms |", "|---|---|---|---|---|"]
        for m, h in holders:
            lines.append(f"| {label(m, several)} | {held_at(h)} | {h['releases']} | {h['held_ns'] / 1e6:.3f} | "
                         f"{h['caused_wait_ns'] / 1e6:.3f} |")
    rw = run.get("rwlocks", [])[:3]
    if rw:
        lines += ["", "| rwlock or spinlock | kind | first locked at | read acq | read wait ms | write acq | "
                  "write wait ms |", "|---|---|---|---|---|---|---|"]
        for r in rw:
            lines.append(f"| {r['pid']}:{r['address']:#x} | {r['kind']} | {r['site']} | {r['read']['acquisitions']} | "
                         f"{r['read']['wait_ns'] / 1e6:.3f} | {r['write']['acquisitions']} | "
                         f"{r['write']['wait_ns'] / 1e6:.3f} |")
    hints = run.get("symbol_hints", [])
    if hints:
        lines += ["", *[f"Hint: {h}" for h in hints]]
    lines += ["", "**What it says.** " + " ".join(reading(run, point["stats"]["mean"], doc.get("profile_cost"))), ""]
    return lines


def main():
    global CONTEND
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "results", "profiled-programs.md"))
    ap.add_argument("--contend", default=CONTEND, help="the contend binary (default: this checkout's target/release/contend)")
    a = ap.parse_args()
    CONTEND = a.contend
    missing = [p for p in ("zstd", "memcached", "memcslap", "memcstat", "x264", "db_bench") if not shutil.which(p)]
    if missing:
        sys.exit(f"profile-real-programs.py: missing {', '.join(missing)} (apt-get install zstd memcached "
                 "libmemcached-tools x264 rocksdb-tools)")
    lines = ["# `contend run --profile` on four real programs", "",
             f"{machine.header().lstrip('# ')}. Generated by `scripts/experiments/profile-real-programs.py "
             f"--runs {a.runs}`; rerun it to regenerate this page. Each program ran profiled {a.runs} times and "
             "unprofiled as many, interleaved, plus one futex-counting run each (`contend run --profile`'s "
             "default plan); the tables are the futex-counting run's profile, the only one with kernel "
             "waits. The readings are written by the script from these numbers.", ""]
    with tempfile.TemporaryDirectory(prefix="contend-profiled-") as tmp:
        for name, kind, program in programs(tmp):
            print(f"{name} ...", file=sys.stderr)
            shown, doc = run(program, a.runs, tmp)
            lines += section(name, kind, shown, doc)
    with open(a.markdown, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {a.markdown}", file=sys.stderr)


if __name__ == "__main__":
    main()
