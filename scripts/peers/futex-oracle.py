#!/usr/bin/env python3
"""The futex view of `contend run --profile` checked against an independent
count of the same execution: bpftrace on the futex syscall tracepoints,
per process and futex word.

A benchmark script, not a test: it needs root and bpftrace. For each
program it runs `contend run --profile --runs 1 --count-futex inline
--top 20 -- PROGRAM` under bpftrace (`-c`), which counts, for the
program's processes (by comm), on futex(2) and futex_waitv(2):

  waits      calls that may sleep (FUTEX_WAIT, LOCK_PI, WAIT_BITSET,
             WAIT_REQUEUE_PI, LOCK_PI2) per (pid, uaddr)
  woken      of those, the ones that returned 0; EAGAIN the ones that
             returned -EAGAIN
  blocked    their time from entry to return, but for those that returned
             EAGAIN (they did not sleep), by bpftrace's nsecs at its own
             probes
  wakes      calls that wake the word (WAKE, WAKE_BITSET, UNLOCK_PI; the
             requeues and WAKE_OP on both words)
  elsewhere  futex_waitv calls (a wait on each of their words, read from
             the caller's array with bpftrace's own user-memory read, up
             to 16 words) that returned another word's index

and compares them with the view's row of each word the view shows (the
profiled execution's pid: only that execution has the view). Counts must
be equal; blocked time is stamped by two different probes of the same
events, so the page gives the largest relative difference.

Without arguments it checks the page's programs and writes
docs/results/futex-oracle.md: the tests' raw_futex.c (a lock on futex(2)),
cond_queue.c (pthread mutex and condition variables) and waitv.c (a
waiter on two words through futex_waitv), the tests' std_mutex.rs
(Rust's std::sync::Mutex), and sysbench threads.

e.g.  scripts/peers/futex-oracle.py
      scripts/peers/futex-oracle.py -- pigz -p 4 -k -f words.txt
"""

import argparse
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402

_spec = importlib.util.spec_from_file_location("profile_oracle", os.path.join(ROOT, "scripts", "peers",
                                                                              "profile-oracle.py"))
profile_oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(profile_oracle)


def program(comm):
    f = f'/comm == "{comm}"/'
    return f"""
tracepoint:syscalls:sys_enter_futex {f} {{
    $op = args->op & 0x7f;
    if ($op == 0 || $op == 6 || $op == 9 || $op == 11 || $op == 13) {{
        @waits[pid, (uint64)args->uaddr] = count(); @since[tid] = nsecs; @on[tid] = (uint64)args->uaddr;
    }}
    if ($op == 1 || $op == 10 || $op == 7) {{ @wakes[pid, (uint64)args->uaddr] = count(); }}
    if ($op == 3 || $op == 4 || $op == 5 || $op == 12) {{
        @wakes[pid, (uint64)args->uaddr] = count(); @wakes[pid, (uint64)args->uaddr2] = count();
    }}
}}
tracepoint:syscalls:sys_exit_futex /@since[tid]/ {{
    if (args->ret != -11) {{ @blocked[pid, @on[tid]] = sum(nsecs - @since[tid]); }}
    if (args->ret == 0) {{ @woken[pid, @on[tid]] = count(); }}
    if (args->ret == -11) {{ @eagain[pid, @on[tid]] = count(); }}
    delete(@since[tid]); delete(@on[tid]);
}}
tracepoint:syscalls:sys_enter_futex_waitv {f} {{
    $n = (uint64)args->nr_futexes;
    $s = @seq[tid]; @seq[tid] = $s + 1;
    $i = (uint64)0;
    unroll(16) {{
        if ($i < $n) {{
            $w = *(uint64 *)uptr((uint64)args->waiters + 24 * $i + 8);
            @waits[pid, $w] = count(); @vw[pid, tid, $s, $i] = $w;
        }}
        $i++;
    }}
    @vs[tid] = $s; @vsince[tid] = nsecs;
}}
tracepoint:syscalls:sys_exit_futex_waitv /@vsince[tid]/ {{
    $took = nsecs - @vsince[tid];
    @vtook[pid, tid, @vs[tid]] = $took; @vret[pid, tid, @vs[tid]] = args->ret;
    delete(@vsince[tid]);
}}
END {{ clear(@since); clear(@on); clear(@vsince); clear(@vs); clear(@seq); }}
"""


def waitv_calls(out, maps):
    """Adds the futex_waitv calls, which the exit probe keeps per call
    (so that it does the least work before contend's own exit sample is
    stamped), to the per-word maps: each call's time blocked on each of
    its words (not EAGAIN's), and how it ended on each."""
    per = lambda name, n: {tuple(int(x) for x in m.group(1).split(", ")): int(m.group(2))
                           for m in re.finditer(rf"^@{name}\[((?:-?\d+, ){{{n - 1}}}-?\d+)\]: (-?\d+)$", out, re.M)}
    words, took, ret = per("vw", 4), per("vtook", 3), per("vret", 3)
    calls = {}
    for (pid, tid, s, i), w in words.items():
        calls.setdefault((pid, tid, s), {})[i] = w
    for call, ws in calls.items():
        if call not in ret:
            continue
        pid, r = call[0], ret[call]
        for i, w in ws.items():
            key = (pid, w)
            bump = lambda name, n=1: maps.setdefault(name, {}).__setitem__(key, maps[name].get(key, 0) + n)
            if r != -11:
                bump("blocked", took[call])
            if r == -11:
                bump("eagain")
            elif r >= 0:
                bump("woken" if r == i else "elsewhere")


def check(contend, prog, comm, tmp):
    """The view's words beside bpftrace's counts: (rows, summary)."""
    export = os.path.join(tmp, "run.json")
    cmd = [contend, "run", "--profile", "--runs", "1", "--count-futex", "inline", "--top", "20",
           "--no-progress", "--output", "null", "--export-json", export, "--", *prog]
    doc, maps, out = profile_oracle.traced(program(comm), cmd, export, "futex-oracle.py", output=True)
    waitv_calls(out, maps)
    views = [s["futex_view"] for p in doc["points"] for s in p["runs"] if s.get("futex_view")]
    if len(views) != 1:
        sys.exit(f"futex-oracle.py: {len(views)} executions had a futex view, expected 1")
    view = views[0]
    rows, exact, worst = [], {"waits": 0, "woken": 0, "eagain": 0, "wake_calls": 0, "ended_elsewhere": 0}, 0.0
    for w in view["words"]:
        key = (w["pid"], w["address"])
        theirs = {"waits": maps.get("waits", {}).get(key, 0), "woken": maps.get("woken", {}).get(key, 0),
                  "eagain": maps.get("eagain", {}).get(key, 0), "wake_calls": maps.get("wakes", {}).get(key, 0),
                  "ended_elsewhere": maps.get("elsewhere", {}).get(key, 0)}
        for k in exact:
            exact[k] += w[k] == theirs[k]
        blocked = maps.get("blocked", {}).get(key, 0)
        diff = abs(w["blocked_ns"] - blocked) / max(blocked, 1)
        worst = max(worst, diff)
        rows.append((w, theirs, blocked, diff))
    return rows, exact, worst, view


def page_programs(tmp):
    src = os.path.join(ROOT, "tests", "programs")
    out = []
    for name in ["raw_futex", "cond_queue", "waitv"]:
        exe = os.path.join(tmp, name)
        subprocess.run(["cc", "-g", "-O1", "-no-pie", "-pthread", "-o", exe, os.path.join(src, name + ".c")],
                       check=True)
        out.append(([exe], name))
    exe = os.path.join(tmp, "std_mutex")
    subprocess.run(["rustc", "-O", "-g", "--edition", "2021", "-o", exe, os.path.join(src, "std_mutex.rs")],
                   check=True)
    out.append(([exe], "std_mutex"))
    if shutil.which("sysbench"):
        out.append((["sysbench", "threads", "--threads=4", "--time=1", "run"], "sysbench"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contend", default=os.path.join(ROOT, "target", "release", "contend"))
    ap.add_argument("--comm", help="the program's process name (default: its file name, 15 characters)")
    ap.add_argument("--markdown", help="write the page here (default, without a program: "
                                       "docs/results/futex-oracle.md)")
    ap.add_argument("program", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    prog = a.program[1:] if a.program[:1] == ["--"] else a.program
    if os.geteuid() != 0 or not shutil.which("bpftrace"):
        sys.exit("futex-oracle.py: needs root and bpftrace (apt-get install bpftrace)")
    command = "scripts/peers/futex-oracle.py" + (" -- " + shlex.join(prog) if prog else "")
    lines = ["# The futex view against bpftrace", "", machine.header(), "",
             f"Generated by `{command}`: `contend run --profile --runs 1 --count-futex inline --top 20` under "
             "bpftrace, whose futex(2) tracepoint probes count the same execution per (pid, word). Counts must "
             "be equal; blocked time is stamped at two different probes of the same calls: bpftrace's program runs "
             "first at each tracepoint, and contend's sample is stamped after it, so the view's time of a call "
             "grows by whatever bpftrace's exit program takes beyond its entry program (its exit program does "
             "more map work). The view alone has no such second probe.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        programs = [(prog, a.comm or os.path.basename(prog[0]))] if prog else page_programs(tmp)
        for p, name in programs:
            comm = (a.comm or os.path.basename(p[0]))[:15]
            rows, exact, worst, view = check(a.contend, p, comm, tmp)
            n = len(rows)
            slept = sum(w["waits"] - w["eagain"] for w, _, _, _ in rows)
            extra = sum(w["blocked_ns"] - b for w, _, b, _ in rows) / max(slept, 1)
            lines += [f"## `{' '.join(os.path.basename(x) if i == 0 else x for i, x in enumerate(p))}`", "",
                      f"{view['calls']} futex calls, {view['words_seen']} words; the {n} words shown: waits "
                      f"equal for {exact['waits']}, woken for {exact['woken']}, EAGAIN for {exact['eagain']}, "
                      f"wakes for {exact['wake_calls']}, ended on another word (futex_waitv) for "
                      f"{exact['ended_elsewhere']}; blocked time differs by {100 * worst:.3f}% at most, "
                      f"{extra:+.0f} ns per wait that slept on average (view minus bpftrace); "
                      f"samples lost: {view['lost']}.", "",
                      "| word | held in | waits (view / bpftrace) | woken | EAGAIN | other word | wakes | blocked ms "
                      "(view / bpftrace) |", "|---|---|---|---|---|---|---|---|"]
            for w, t, blocked, diff in rows[:10]:
                lines.append(f"| {w['address']:#x} | {w['name']} | {w['waits']} / {t['waits']} | {w['woken']} / "
                             f"{t['woken']} | {w['eagain']} / {t['eagain']} | {w['ended_elsewhere']} / "
                             f"{t['ended_elsewhere']} | {w['wake_calls']} / "
                             f"{t['wake_calls']} | {w['blocked_ns'] / 1e6:.3f} / {blocked / 1e6:.3f} |")
            lines.append("")
    text = "\n".join(lines)
    print(text)
    out = a.markdown or (None if prog else os.path.join(ROOT, "docs", "results", "futex-oracle.md"))
    if out:
        with open(out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
