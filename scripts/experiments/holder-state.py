#!/usr/bin/env python3
"""Whose fault the wait was: the futex view's holder split (what the thread
that ended each wait, for a lock the releasing holder, was doing while the
waiter slept) on programs whose truth is known and on two real servers.

- tests/programs/holder_state.c, built here: `sleep` (the holder sleeps
  5 ms in nanosleep inside its section), `fsync` (it writes and syncs a
  file there, eight times, and prints those calls' CPU and wall time,
  so the truth is cpu/wall running), `chain` (the holder of
  outer_lock waits for inner_lock, whose holder sleeps), `preempt` (the
  holder shares one CPU with two busy threads; the program prints its
  holds' CPU and wall time, so the truth is cpu/wall running);
- tests/programs/parking.c: waits that are parking, not contention (the
  pthread profile's `parked`), beside the split of the same words;
- redis with io threads under redis-benchmark (`contend run --profile`);
- mariadbd under sysbench oltp_read_write (`contend attach`, as
  scripts/experiments/futex-view-real.py starts and loads it).

Each under `contend run --profile --runs 1` (the futex-counting execution
has the view) or `contend attach`. On the two servers, what following
them costs: the benchmark's rate plain, under `contend attach
--no-holder-state` (the view alone) and under `contend attach` (the view
and the holders' states), interleaved in shuffled rounds, each over
plain with its 95% interval (contend compare's, scripts/lib/paired.py);
and the same of the machine's CPU time per operation (server, benchmark
and contend alike; the host's steal left out). Writes docs/results/holder-state.md
(or --markdown FILE). Needs root (the tracepoints); a server that is not
installed is left out, and the page says so.

e.g.   scripts/experiments/holder-state.py
"""

import argparse
import importlib.util
import json
import os
import random
import re
import signal
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402
from emit import emit  # noqa: E402
from paired import paired  # noqa: E402

CONTEND = os.path.join(ROOT, "target", "release", "contend")
PROGRAMS = os.path.join(ROOT, "tests", "programs")


def sibling(name):
    """Another experiment script of this folder, as a module."""
    path = os.path.join(ROOT, "scripts", "experiments", name)
    spec = importlib.util.spec_from_file_location(name.replace("-", "_").removesuffix(".py"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def profiled(cmd, tmp):
    """`contend run --profile --runs 1 -- CMD`: the counting execution's
    sample, and the program's stdout."""
    out = os.path.join(tmp, "run.json")
    r = subprocess.run([CONTEND, "run", "--profile", "--runs", "1", "--top", "30", "--no-progress", "--export-json", out, "--"]
                       + cmd, capture_output=True, text=True, check=True)
    with open(out) as f:
        doc = json.load(f)
    samples = [s for p in doc["points"] for s in p["runs"] if s.get("futex_view")]
    return samples[0], r.stdout


def pct(ns, total):
    return f"{100 * ns / total:.0f}%" if total else "-"


def rows(sample, top, mutexes=None):
    """The split of the view's `top` words, one table row each."""
    view = sample["futex_view"]
    if view.get("no_split"):
        return [f"(holders not followed: {view['no_split']})"]
    parked = {m["address"]: m for m in (mutexes or [])}
    lines = ["| word | waits | blocked ms | running | preempted | asleep in | waiting on (chain) | waking | "
             "not known | parked (pthread profile) |", "|---|---|---|---|---|---|---|---|---|---|"]
    # The top words, and below them any the pthread profile calls parking.
    shown = view["words"][:top] + [w for w in view["words"][top:] if w["pthread_mutex"] and
                                   parked.get(w["address"], {}).get("parked_waits")]
    for w in shown:
        h = w.get("holder")
        # Shares of the time the switches were followed (the sampling rule).
        total = w["blocked_ns"] - (h or {}).get("unsampled_ns", 0)
        blocked = w["blocked_ns"] / 1e6
        if h is None:
            lines.append(f"| `{w['name']}` | {w['waits']} | {blocked:.3f} | no split | | | | | | |")
            continue
        asleep = [b for b in h["blocked_in"] if b.get("futex_word") is None]
        chain = [b for b in h["blocked_in"] if b.get("futex_word") is not None]
        said = lambda bs: ", ".join(f"{b['cause'].removeprefix('futex ')} {pct(b['ns'], total)}"  # noqa: E731
                                    for b in bs) or "-"
        m = parked.get(w["address"]) if w["pthread_mutex"] else None
        park = f"{m['parked_waits']} of {m['contended']}" if m else "-"
        name = w["name"] if "(" in w["name"] or "+" in w["name"] else f"{w['name']} {w['address']:#x}"
        lines.append(f"| `{name}` | {w['waits']} | {blocked:.3f} | {pct(h['running_ns'], total)} | "
                     f"{pct(h['preempted_ns'], total)} | {said(asleep)} | {said(chain)} | "
                     f"{pct(h['waking_ns'], total)} | {pct(h['unknown_ns'], total)} | {park} |")
    sampling = view.get("holder_sampling")
    if sampling:
        lines += ["", f"The holders' switches were followed {sampling['followed_pct']}% of the time "
                  f"({sampling['switches_per_s']:,.0f} switch records a second while followed; a window opens "
                  f"each {sampling['cycle_ms']} ms and closes once it has read its share of "
                  f"{sampling['budget_per_s']:,.0f} a second): "
                  "the shares are of the waits' time inside the windows."]
    return lines


def test_programs(tmp, top):
    exe = os.path.join(tmp, "holder_state")
    subprocess.run(["cc", "-O1", "-g", "-pthread", "-o", exe, os.path.join(PROGRAMS, "holder_state.c")], check=True)
    parking = os.path.join(tmp, "parking")
    subprocess.run(["cc", "-O1", "-g", "-pthread", "-no-pie", "-fno-optimize-sibling-calls", "-o", parking, os.path.join(PROGRAMS, "parking.c")],
                   check=True)
    truths = {
        "sleep": "the holder of nap_lock is asleep in nanosleep for all of each wait",
        "fsync": "the holder of nap_lock writes and syncs a file for all of each wait: running for the share "
                 "of those calls it measured itself (their CPU time over their wall time), off its CPU the rest, "
                 "in fsync (or preempted)",
        "chain": "outer_lock's holder waits for inner_lock, whose holder is asleep in nanosleep",
        "preempt": "busy_lock's holder is running for the share of its holds it measured itself, "
                   "preempted the rest",
    }
    # Whose running share the program measured, and of what: of the
    # holder's running and preempted time (preempt), or of all its own
    # time, blocked too (fsync).
    measured = {"preempt": ("busy_lock", ["preempted_ns"]), "fsync": ("nap_lock", ["preempted_ns", "blocked_ns"])}
    out = []
    for mode, truth in truths.items():
        cmd = [exe, mode] + ([tmp] if mode == "fsync" else [])
        stolen = steal_s()
        sample, stdout = profiled(cmd, tmp)
        stolen = steal_s() - stolen
        out += [f"### holder_state.c {mode}", "", f"Truth, by construction: {truth}."]
        if mode in measured:
            symbol, rest = measured[mode]
            w = next(w for w in sample["futex_view"]["words"] if w["name"].startswith(symbol))
            line = next((ln for ln in stdout.splitlines() if ln.startswith(f"pid={w['pid']} ")), "")
            wall, cpu = (int(v) for v in re.findall(r"_ns=(\d+)", line)) if line else (0, 1)
            h = w["holder"]
            own = h["running_ns"] + sum(h[k] for k in rest)
            truth_ran = cpu / max(1, wall)
            sampled = w["blocked_ns"] - h.get("unsampled_ns", 0)
            out.append(f"The program measured its holder running {truth_ran:.3f} of its "
                       f"{'holds' if mode == 'preempt' else 'writes and syncs'}; the split reads "
                       f"{h['running_ns'] / max(1, own):.3f} of the holder's "
                       f"{'running and preempted' if mode == 'preempt' else 'own (running, preempted, blocked)'} "
                       f"time (off by {abs(h['running_ns'] - truth_ran * own) / max(1, sampled):.1%} of the wait; "
                       "the test allows 10%" + (", and more running where the host stole CPU time" if mode == "fsync"
                                                else "") + f"). The host stole {stolen * 1e3:.0f} ms of CPU time "
                       "meanwhile (/proc/stat, every CPU, over the whole `contend run`), which the program's CPU "
                       "clock leaves out and the split's running holds.")
        out += [""] + rows(sample, top) + [""]
    sample, _ = profiled([parking], tmp)
    out += ["### parking.c", "", "Truth, by construction: the gate's and the queue's waits are parking (every "
            "waiter lets go at once, or goes straight into a condition wait), work_lock's are contention (20 µs "
            "of work held).", ""] + rows(sample, top, sample.get("mutexes")) + [""]
    return out


def redis(tmp, top, rounds):
    if not all(shutil.which(t) for t in ["redis-server", "redis-cli", "redis-benchmark"]):
        return ["### redis", "", "Left out: redis-server, redis-cli or redis-benchmark is not installed.", ""]
    load = sibling("parking-redis.py")
    script = os.path.join(tmp, "redis.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n" + load.LOAD)
    os.chmod(script, 0o755)
    sample, _ = profiled([script], tmp)
    port = load.PORT + 1
    server = subprocess.Popen(["redis-server", "--port", str(port), "--io-threads", str(load.IO_THREADS),
                               "--io-threads-do-reads", "yes", "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL)
    try:
        real = sibling("futex-view-real.py")
        real.until("redis", lambda: subprocess.run(["redis-cli", "-p", str(port), "ping"],
                                                   capture_output=True).returncode == 0)

        def rps():
            r = subprocess.run(["redis-benchmark", "-p", str(port), "-n", str(load.REQUESTS), "-c", "50", "-t",
                                "set", "-q", "--threads", "2"], capture_output=True, text=True, check=True)
            return float(re.findall(r"([\d.]+) requests per second", r.stdout)[-1]), load.REQUESTS
        paid = cost(server.pid, rps, rounds, tmp)
    finally:
        server.terminate()
        server.wait()
    return ([f"### redis-server --io-threads {load.IO_THREADS} under redis-benchmark -n {load.REQUESTS} -c 50 "
             "(`contend run --profile`)", ""] + rows(sample, top, sample.get("mutexes")) + [""] + paid + [""])


VARIANTS = {"plain": None, "view": ["--no-holder-state"], "split": []}


def steal_s():
    """The host's steal so far, every CPU, s (/proc/stat)."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")


def busy_s():
    """The machine's CPU time so far, s: every CPU's user, system and
    interrupt time, not idle, I/O wait or the host's steal."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def cost(pid, rate, rounds, tmp):
    """What following process `pid` costs the rate `rate()` measures
    (which returns the rate and the operations it counted): lines saying
    each variant over plain (as a slowdown: plain's rate over the
    variant's), with its interval; and the same of the machine's CPU time
    per operation, the server's, the benchmark's and contend's alike,
    which leaves out the host's steal (a 2-CPU guest's throughput moves
    with it by up to a tenth from one 5 s run to the next)."""
    rounds_seen, per_cpu = [], []
    for _ in range(rounds):
        order = list(VARIANTS)
        random.shuffle(order)
        got, ops_per_cpu_s = {}, {}
        for v in order:
            attach = None
            if VARIANTS[v] is not None:
                attach = subprocess.Popen([CONTEND, "attach", str(pid), "--top", "1", "--export-json",
                                           os.path.join(tmp, "cost.json")] + VARIANTS[v],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                while "following process" not in (attach.stderr.readline() or "following process"):
                    pass
            b0 = busy_s()
            got[v], ops = rate()
            ops_per_cpu_s[v] = ops / max(1e-9, busy_s() - b0)
            if attach:
                attach.send_signal(signal.SIGINT)
                attach.communicate()
        rounds_seen.append(got)
        per_cpu.append(ops_per_cpu_s)
    said = []
    for v, what in [("view", "the view alone (`--no-holder-state`)"), ("split", "the view and the holders' states")]:
        parts = []
        for seen, of in [(rounds_seen, "its time per operation"),
                         (per_cpu, "the machine's CPU time per operation (steal left out)")]:
            vs = paired(CONTEND, seen, "plain")[v]
            lo, hi = vs["ci95"] or (vs["ratio"], vs["ratio"])
            parts.append(f"x{1 / vs['ratio']:.3f} ({1 / hi:.3f}..{1 / lo:.3f}) of {of}")
        said.append(f"- {what}: " + "; ".join(parts))
    return [f"Following it costs ({rounds} interleaved rounds; above 1: more):"] + said


def mariadb(tmp, top, rounds):
    real = sibling("futex-view-real.py")
    if not all(shutil.which(t) for t in ["mariadbd", "mariadb-install-db", "sysbench"]):
        return ["### mariadb", "", "Left out: mariadbd, mariadb-install-db or sysbench is not installed.", ""]
    with real.mariadb_server(tmp) as (server, client, sock):
        bench = real.sysbench(sock, "oltp_read_write", "sbtest", 4, 20000)
        def tps():
            r = subprocess.run(bench + ["--threads=8", "--time=5", "run"], capture_output=True, text=True,
                               check=True)
            done = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", r.stdout)
            return float(done.group(2)), int(done.group(1))
        load = subprocess.Popen(bench + ["--threads=8", "--time=0", "--events=0", "run"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = os.path.join(tmp, "mariadb.json")
        real.attach(server.pid, "5s", out, top)
        load.terminate()
        load.wait()
        view, _ = real.view_of(out)
        paid = cost(server.pid, tps, rounds, tmp)
        still = server.poll() is None and subprocess.run(client + ["-e", "select 1"]).returncode == 0
    return (["### mariadbd (InnoDB) under sysbench oltp_read_write --threads=8, followed by `contend attach` "
             "for 5 s", "", f"Still answering after: {'yes' if still else 'NO'}.", ""]
            + rows({"futex_view": view}, top) + [""] + paid + [""])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the servers' cost")
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "results", "holder-state.md"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("holder-state.py: needs root (the tracepoints)")
    with tempfile.TemporaryDirectory() as tmp:
        body = test_programs(tmp, a.top) + ["## Real programs", ""] + redis(tmp, a.top, a.rounds)
        body += mariadb(tmp, a.top, a.rounds)
    lines = ["# Whose fault the wait was: the holder's state", "", machine.header(), "",
             "Generated by `scripts/experiments/holder-state.py`. Per futex word (the futex view of `contend run "
             "--profile`'s counting execution, or of `contend attach`), its waiters' blocked time split by what "
             "the thread whose wake ended each wait (for a lock, the releasing holder) was doing up to that wake: "
             "running, preempted, asleep in a syscall, waiting on another futex word (a chain), then waking the "
             "waiter (the hand-off); not known where no waker was seen (timeouts, a thread's exit). Shares of "
             "the word's blocked time; docs/experiments/run.md defines them.", "", "## Programs whose truth is "
             "known", ""] + body
    emit(lines, a.markdown)


if __name__ == "__main__":
    main()
