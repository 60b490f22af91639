#!/usr/bin/env python3
"""Who a FUTEX_WAKE wakes, and how long the woken thread takes to run.

Traces a command with `perf record` (tracepoints syscalls:sys_enter_futex,
syscalls:sys_exit_futex and sched:sched_wakeup; root, and perf, needed)
and, for the futex word most waited on, reports for each wake that
reached a waiter:

- the woken thread's place in the kernel's queue, by when the waiters
  entered FUTEX_WAIT (0 = the longest waiting): the kernel wakes waiters
  of equal priority first in, first out;
- how long it took from the wake-up to the thread leaving the syscall
  (it must get a CPU first);
- how many threads were woken but not yet back at that moment: the
  threads that compete, in the scheduler's order, for whatever the wakes
  announced.

Usage: scripts/trace/futex-order.py [--out FILE] -- COMMAND...
e.g.   scripts/trace/futex-order.py -- target/release/contend lock \\
           --lock adaptive --threads 256 --hold 0 --runs 1 --duration 300ms
A diagnostic, not a test: it asserts nothing about the numbers.
"""

import collections
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import perftrace  # noqa: E402  (scripts/lib/perftrace.py)

EVENTS = "syscalls:sys_enter_futex,syscalls:sys_exit_futex,sched:sched_wakeup"
FUTEX_CMD = 0x7f  # op without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME
WAIT, WAKE = 0, 1
LINE = re.compile(r"\s*(\d+)\s+([\d.]+):\s+(\S+):\s+(.*)")


def events(perf_data):
    """Yields (tid, seconds, event, fields) in time order."""
    for line in perftrace.script_lines(perf_data, "tid,time,event,trace"):
        m = LINE.match(line)
        if m:
            yield int(m[1]), float(m[2]), m[3].rstrip(":"), m[4]


def futex_call(fields):
    m = re.search(r"uaddr: (0x[0-9a-f]+), op: (0x[0-9a-f]+)", fields)
    return m[1], int(m[2], 16) & FUTEX_CMD


def percentiles(values, scale=1.0):
    s = sorted(values)
    return " ".join(f"p{q}={s[min(len(s) - 1, len(s) * q // 100)] * scale:.0f}" for q in (10, 50, 90, 99))


def analyse(evs):
    waits = collections.Counter()
    for tid, t, ev, f in evs:
        if ev == "syscalls:sys_enter_futex":
            addr, cmd = futex_call(f)
            waits[addr] += cmd == WAIT
    if not waits:
        sys.exit("futex-order: the command made no futex calls")
    word = waits.most_common(1)[0][0]
    queue = []        # waiters of `word`, in the order they entered FUTEX_WAIT
    woken_at = {}     # tid -> when a wake on `word` dequeued it
    in_call = {}      # tid -> (addr, cmd) of the futex call it is in
    ranks, pool, back = [], [], []
    for tid, t, ev, f in evs:
        if ev == "syscalls:sys_enter_futex":
            in_call[tid] = futex_call(f)
            if in_call[tid] == (word, WAIT):
                queue.append(tid)
        elif ev == "syscalls:sys_exit_futex":
            if in_call.pop(tid, None) == (word, WAIT):
                if tid in queue:
                    queue.remove(tid)  # returned without a wake: EAGAIN, signal
                if tid in woken_at:
                    back.append(t - woken_at.pop(tid))
        elif ev == "sched:sched_wakeup":
            woken = int(re.search(r"pid=(\d+)", f)[1])
            if in_call.get(tid) == (word, WAKE) and woken in queue:
                ranks.append(queue.index(woken))
                pool.append(len(woken_at))
                queue.remove(woken)
                woken_at[woken] = t
    return word, waits[word], ranks, pool, back


def main():
    out, command = perftrace.traced_command(__doc__, "futex-order")
    perftrace.record("futex-order", out, EVENTS, command)
    evs = list(events(out))
    word, nwaits, ranks, pool, back = analyse(evs)
    print(f"futex word {word}: {nwaits} FUTEX_WAIT calls, {len(ranks)} wakes that reached a waiter")
    if not ranks:
        return
    first = sum(1 for r in ranks if r == 0)
    print(f"  woken thread was the longest waiting: {first} of {len(ranks)} ({100 * first / len(ranks):.0f}%);"
          f" place in the queue {percentiles(ranks)}")
    if back:
        print(f"  wake-up to leaving FUTEX_WAIT, µs: {percentiles(back, 1e6)}")
    print(f"  threads woken but not yet back, at each wake: {percentiles(pool)}")


if __name__ == "__main__":
    main()
