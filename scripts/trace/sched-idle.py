#!/usr/bin/env python3
"""Where the CPUs idle during a lock run, and how long woken workers wait.

Traces a command system-wide with `perf record` (tracepoints
sched:sched_switch and sched:sched_waking; root, and perf, needed) and
reports, over the span in which the workers (threads named `contend-w*`)
ran:

- how much of the CPUs' time was idle, in how many idle periods, how
  long those lasted, and how many began with a worker going to sleep;
- how the workers left the CPU: to sleep (state S), or still runnable
  (state R: preempted, or a sched_yield);
- how long a woken worker took from its wake-up to running, and, of the
  wakes that took over 100 µs, how many had been sent to a CPU that was
  idle at the time (on a virtual machine, bringing back a halted vCPU
  is the hypervisor's business), and how many of the others waited
  behind a busy CPU while another CPU was idle for some of that time.

Usage: scripts/trace/sched-idle.py [--out FILE] -- COMMAND...
e.g.   scripts/trace/sched-idle.py -- target/release/contend lock \\
           --lock adaptive --threads 16 --hold 0 --runs 1 --duration 1s
A diagnostic, not a test: it asserts nothing about the numbers. The span
includes the warm-up and the threads' start and stop.
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import perftrace  # noqa: E402  (scripts/lib/perftrace.py)

EVENTS = "sched:sched_switch,sched:sched_waking"
WORKER = "contend-w"
LINE = re.compile(r"\s*\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)")
SWITCH = re.compile(r"prev_comm=(\S+) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(\S+) next_pid=(\d+)")
WAKING = re.compile(r"comm=(\S+) pid=(\d+) .*target_cpu=(\d+)")
SLOW_WAKE_S = 100e-6


def events(perf_data):
    """Yields (cpu, seconds, event, fields) in time order."""
    for line in perftrace.script_lines(perf_data, "cpu,time,event,trace"):
        m = LINE.match(line)
        if m:
            yield int(m[1]), float(m[2]), m[3], m[4]


def spread(values, scale):
    """Median, 90th percentile and maximum, scaled, as text."""
    s = sorted(values)
    at = lambda q: s[min(len(s) - 1, int(len(s) * q))] * scale
    return f"median {at(0.5):.0f}, p90 {at(0.9):.0f}, max {s[-1] * scale:.0f}"


def analyse(evs):
    span = [t for _, t, ev, f in evs if ev == "sched_switch" and WORKER in f]
    if not span:
        return None
    start, end = span[0], span[-1]
    cpus = sorted({cpu for cpu, *_ in evs})
    idle_since = {}  # cpu -> (time it went idle, whether a worker slept)
    idle_periods = []  # (seconds, began with a worker's sleep)
    left = {"S": 0, "R": 0}
    woken = {}  # pid -> [time, target cpu, target idle then, another CPU idled meanwhile]
    waits = []  # (seconds, target idle at the wake, another CPU idled meanwhile)
    # The CPUs' idle state is followed from the first event; only the part
    # of each idle period inside the span counts.
    for cpu, t, ev, fields in evs:
        if t > end:
            break
        inside = t >= start
        if ev == "sched_waking":
            m = WAKING.search(fields)
            if inside and m and m[1].startswith(WORKER):
                target = int(m[3])
                other_idle = any(c != target for c in idle_since)
                woken[m[2]] = [t, target, target in idle_since, other_idle]
            continue
        m = SWITCH.search(fields)
        if not m:
            continue
        prev, _, state, nxt, next_pid = m.groups()
        if inside and prev.startswith(WORKER) and state[:1] in left:
            left[state[:1]] += 1
        if nxt.startswith("swapper"):
            idle_since[cpu] = (t, prev.startswith(WORKER) and state.startswith("S"))
            for w in woken.values():
                w[3] = w[3] or w[1] != cpu
        elif cpu in idle_since:
            since, slept = idle_since.pop(cpu)
            if inside:
                idle_periods.append((t - max(since, start), slept))
        if next_pid in woken:
            at, _, idle, other_idle = woken.pop(next_pid)
            waits.append((t - at, idle, other_idle))
    idle_periods += [(end - max(since, start), slept) for since, slept in idle_since.values()]
    return end - start, cpus, idle_periods, left, waits


def main():
    out, command = perftrace.traced_command(__doc__, "sched-idle")
    perftrace.record("sched-idle", out, EVENTS, command, system_wide=True)
    result = analyse(list(events(out)))
    if result is None:
        sys.exit(f"sched-idle: no thread named {WORKER}* ran (is it a contend run?)")
    span, cpus, idle_periods, left, waits = result
    idle = sum(d for d, _ in idle_periods)
    print(f"span {span:.3f} s on {len(cpus)} CPUs: idle {100 * idle / (span * len(cpus)):.1f}% of the CPU time")
    if idle_periods:
        slept = sum(1 for _, s in idle_periods if s)
        print(f"  {len(idle_periods)} idle periods, µs: {spread([d for d, _ in idle_periods], 1e6)};"
              f" {slept} began when a worker slept")
    print(f"workers left the CPU: to sleep {left['S']}, still runnable (preempted or yielded) {left['R']}")
    if waits:
        slow = [(idle, other) for d, idle, other in waits if d > SLOW_WAKE_S]
        to_idle = sum(1 for idle, _ in slow if idle)
        beside_idle = sum(1 for idle, other in slow if not idle and other)
        print(f"wake-up to running, µs ({len(waits)} wakes): {spread([w[0] for w in waits], 1e6)}")
        print(f"  over 100 µs: {len(slow)} ({100 * len(slow) / len(waits):.0f}%); of those, sent to a CPU"
              f" idle at the wake: {to_idle}; to a busy one while another CPU idled: {beside_idle}")


if __name__ == "__main__":
    main()
