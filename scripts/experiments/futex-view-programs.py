#!/usr/bin/env python3
"""The futex view (`contend run --profile`) on programs whose locks never
call pthread_mutex_lock, so the pthread profile cannot see them: what the
view shows for each, and what it cannot.

- Rust's std::sync::Mutex (tests/programs/std_mutex.rs): a futex lock of
  std's own, on the static that holds it;
- parking_lot's Mutex (futex-view-programs/parking_lot_mutex): a thread
  that must wait parks on a word in its own per-thread data;
- GLib's GMutex (futex-view-programs/gmutex.c): GLib's own futex lock;
- a statically linked C program with a raw futex lock
  (tests/programs/raw_futex.c, -static): no LD_PRELOAD reaches it;
- Go's sync.Mutex (futex-view-programs/gomutex.go): goroutines park in
  the Go scheduler, not on futexes.

Each is built here from its source, then run once under
`contend run --profile --runs 1`; the page shows the futex view's top
words, where they were waited on and woken (the sampled user stacks),
and the pthread profile's count beside it. Running servers followed by
`contend attach` are on futex-view-real.md (its own script).

Writes docs/results/futex-view.md (or --markdown FILE). Needs root (the
tracepoints) and, per program, its toolchain: rustc and cargo (Rust), a C
compiler with glibc's static libraries, libglib2.0-dev and pkg-config
(GLib), golang-go (Go); a program whose toolchain is missing is left out,
and the page says so.

e.g.   scripts/experiments/futex-view-programs.py
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402
from emit import emit  # noqa: E402
from futex_page import stacks, table, view_of  # noqa: E402
from futex_programs import build_gmutex, build_go, build_parking_lot, build_static, build_std  # noqa: E402

CONTEND = os.path.join(ROOT, "target", "release", "contend")


# (section, needs, build, what the program is, what the view can and
# cannot show of it: the mechanism, which the table under it bears out).
PROGRAMS = [
    ("Rust std::sync::Mutex", ["rustc"], build_std,
     "tests/programs/std_mutex.rs: four threads add to a global `static LEDGER: Mutex<u64>`, with 200 "
     "multiply-adds inside; built with `rustc -O -g`.",
     "std's Mutex is a futex word of its own (0 free, 1 held, 2 held with waiters): its waiters sleep on the "
     "static itself, so the word is named by its symbol, and its stacks give the line that locks it and "
     "the line where the guard drops (the waker, for a lock the releasing holder). The pthread profile sees "
     "nothing of it. Look at the waiters' line: that is the critical section to shorten."),
    ("parking_lot::Mutex", ["cargo"], build_parking_lot,
     "scripts/experiments/futex-view-programs/parking_lot_mutex: the same ledger as a `parking_lot::Mutex`, "
     "built by cargo in release with debug information.",
     "parking_lot never sleeps on the lock's byte: a thread that must wait parks on a futex word in its own "
     "per-thread data (parking_lot_core's ThreadData, found through a table keyed by the lock's address), "
     "and the unlocker wakes that thread's word. So there is one word per parked thread, in that thread's "
     "memory (`anonymous memory`: a thread's stack and TLS), each woken by whoever unlocked, and no word is "
     "the lock; the lock is found by the waiters' and wakers' stacks, which all lead to the same lines of "
     "the program (the view's sites over every word, below the stacks, give it as one line over many words). parking_lot spins (with sched_yield) before it parks, so it parks far less often than "
     "std's Mutex on the same work: few futex calls, and time spent spinning that the view does not count."),
    ("GLib GMutex", ["cc", "pkg-config"], build_gmutex,
     "scripts/experiments/futex-view-programs/gmutex.c: four GThreads add to a global ledger under a global "
     "`static GMutex`; built with `cc -g -O1` against libglib-2.0.",
     "On Linux GMutex is GLib's own futex lock (its slow path calls futex(2) itself): the word is the "
     "GMutex, named by its symbol. Its waiters' site is the program's function that locks it (GLib's own "
     "frames are skipped). Many of its waits return EAGAIN: GLib's unlock wakes a waiter whenever the word "
     "says there may be one, and a waiter that arrives as the word changes returns at once."),
    ("a static C program", ["cc"], build_static,
     "tests/programs/raw_futex.c built with `cc -static`: four threads take a raw futex lock on a global "
     "word (Drepper's mutex #2).",
     "No LD_PRELOAD reaches a static program, so the pthread profile is empty; the futex view needs none. "
     "The word is named by its symbol in the program's own symbol table, and its stacks by the program's "
     "DWARF."),
    ("Go sync.Mutex", ["go"], build_go,
     "scripts/experiments/futex-view-programs/gomutex.go: eight goroutines add to a global ledger under a "
     "`sync.Mutex`; built with `go build` (Go 1.19 from Debian).",
     "A goroutine waiting for a sync.Mutex is parked by the Go scheduler on the runtime's own semaphore, "
     "not on a futex, and the OS thread runs another goroutine: no futex word is the mutex, and the view "
     "cannot show it (Go's own `go tool pprof` mutex profile can). What the view shows is the runtime's "
     "futexes: the notes on which idle OS threads (Ms) sleep when the scheduler has nothing for them "
     "(`runtime.notesleep`), such as `runtime.m0`'s, woken by the thread that hands them work "
     "(`runtime.notewakeup`). Their holder split is the scheduler's, not a lock's."),
]


def pthread_mutexes(out):
    """How many pthread mutexes the profile saw locked, in the profiled
    point's counting execution."""
    with open(out) as f:
        doc = json.load(f)
    runs = [s for p in doc["points"] for s in p["runs"] if s.get("futex_view")]
    return sum(1 for m in runs[0]["mutexes"] if m.get("acquisitions", 0) > 0) if runs else 0


def section(title, program, what, note, tmp, top):
    out = os.path.join(tmp, "out.json")
    cmd = [CONTEND, "run", "--profile", "--runs", "1", "--no-progress", "--export-json", out, "--", program]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return [f"## {title}", "", f"`contend run` failed ({r.returncode}): {r.stderr.strip()[-400:]}", ""]
    view, _ = view_of(out)
    seen = pthread_mutexes(out)
    lines = [f"## {title}", "", what, "",
             f"`contend run --profile --runs 1 -- {os.path.basename(program)}`: {view['calls']} futex calls, "
             f"{view['words_seen']} words slept on or woken, {view['lost']} samples lost. The pthread profile "
             f"saw {seen} pthread mutex{'' if seen == 1 else 'es'} locked.", ""]
    lines += table(view, top)
    lines += [""] + stacks(view, top, frames=3)
    if view.get("sites"):
        lines += ["Over every word of the program, where the sampled waits slept longest:", ""]
        lines += [f"- `{s['site']}`: {s['words']} word{'' if s['words'] == 1 else 's'}, {s['waits']} sampled "
                  f"waits, {s['blocked_ns'] / 1e6:.1f} ms" for s in view["sites"]]
        lines += [""]
    lines += [f"What it shows: {note}", ""]
    print(r.stderr, file=sys.stderr)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=5, help="futex words shown per program")
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "results", "futex-view.md"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (contend run --profile opens syscall tracepoints)")
    command = "scripts/experiments/futex-view-programs.py"
    lines = ["# The futex view of locks that are not glibc's", "", machine.header(), "",
             f"Generated by `{command}`. Each program is built from its source by the script and run once "
             "under `contend run --profile`; its locks never call pthread_mutex_lock, so only the futex view "
             "sees them. A word is named by the data symbol that holds it (`symbol (module)`), else by its "
             "memory; the longest-blocked first. *woken by*: the threads whose wake came last before a "
             "waiter returned woken (for a lock, the releasing holder). Under each table, where the words "
             "were waited on and woken: the waiters' and wakers' user stacks, sampled under the view's budget "
             "and unwound from .eh_frame, each from its site (the program's own code) out. Every program has "
             "words in `anonymous memory` waited on once from `main`: its main thread joining a thread (glibc's "
             "pthread_join sleeps on the thread's id in its descriptor, at the top of the thread's stack), not a "
             "lock. Running servers "
             "(mariadb's InnoDB, memcached) followed by `contend attach` are on "
             "[futex-view-real.md](futex-view-real.md).", ""]
    for title, tools, build, what, note in PROGRAMS:
        missing = [t for t in tools if not shutil.which(t)]
        if missing:
            lines += [f"## {title}", "", f"Not run: {', '.join(missing)} not installed.", ""]
            continue
        with tempfile.TemporaryDirectory() as tmp:
            try:
                program = build(tmp)
            except subprocess.CalledProcessError as e:
                lines += [f"## {title}", "", f"Not run: its build failed ({e}).", ""]
                continue
            lines += section(title, program, what, note, tmp, a.top)
    emit(lines, a.markdown)


if __name__ == "__main__":
    main()
