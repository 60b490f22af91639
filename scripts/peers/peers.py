#!/usr/bin/env python3
"""contend next to the tools it learned from: each installed peer runs, then
the equivalent contend command, and both numbers are printed with their
ratio (contend / peer), measured one after the other on the same machine.

Peers (skipped with a note when not installed; Debian packages in brackets):
- perf bench futex lock-pi [linux-perf]: threads take a PI futex with
  FUTEX_LOCK_PI, sleep 1 us inside (usleep), unlock; thread i pinned to
  CPU i mod N.  contend: --lock pi --hold sleep:1us --affinity spread.
- stress-ng --flock [stress-ng]: processes flock/unlock one file.
  contend: --procs N --lock flock --hold 0.
- stress-ng --sem [stress-ng]: a worker's threads sem_wait/sem_post one
  POSIX semaphore.  contend: --lock posix-sem --hold 0.
- stress-ng --futex [stress-ng]: a waker process and a waiter process per
  worker; the waiter waits with a tiny timeout. contend: wakeup -P futex
  --procs --interval 0, counting two wakes per round trip.
- sysbench mutex [sysbench]: threads lock/unlock one pthread mutex
  (--mutex-num=1, --mutex-loops=0). contend: --lock pthread --hold 0.
- rt-tests svsematest / ptsematest [rt-tests]: one-way wake-up latency;
  see scripts/peers/wakeup-oracle.py, which this script runs with few rounds.

Usage: scripts/peers/peers.py [--seconds 3] [--contend PATH]
A benchmark, not a test: it asserts nothing about the numbers.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)


def sh(cmd):
    """Runs cmd, returns stdout+stderr (peers print metrics on either)."""
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stdout[-300:]}")
    return done.stdout


def contend_json(args, cmd):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        sh([args.contend] + cmd + ["--runs", "1", "--no-progress", "--export-json", f.name])
        return json.load(open(f.name))


def contend_lock_rate(args, extra):
    d = contend_json(args, ["lock", "--duration", f"{args.seconds}s", "--warmup", "250ms"] + extra)
    return d["points"][0]["stats"]["mean"]


def stress_ng_ops(stressor, workers, seconds):
    out = sh(["stress-ng", f"--{stressor}", str(workers), "-t", str(seconds), "--metrics-brief"])
    # metrc: [pid] <stressor> <bogo ops> <real s> <usr s> <sys s> <ops/s real> ...
    m = re.search(rf"metrc:.*\]\s+{stressor}\s+(\d+)\s+([\d.]+)", out)
    if not m:
        raise RuntimeError(f"no {stressor} metrics in: {out[-300:]}")
    return int(m.group(1)) / float(m.group(2))


def perf_lock_pi_total(threads, seconds):
    """perf bench futex lock-pi's lock/unlock pairs per second, all threads."""
    out = sh(["perf", "bench", "futex", "lock-pi", "-t", str(threads), "-r", str(seconds), "-s"])
    m = re.search(r"Averaged (\d+) operations/sec", out)
    if not m:
        raise RuntimeError(f"no rate in perf's output: {out[-300:]}")
    # perf prints the mean per thread: the total is `threads` times it.
    return threads * int(m.group(1))


def perf_lock_pi(args):
    peer = perf_lock_pi_total(4, args.seconds)
    ours = contend_lock_rate(args, ["--lock", "pi", "--threads", "4", "--hold", "sleep:1us", "--idle", "0",
                                    "--affinity", "spread"])
    return ("perf bench futex lock-pi -t 4", peer,
            "contend lock --lock pi --threads 4 --hold sleep:1us --affinity spread",
            ours, "lock/unlock per s",
            "one number per thread: no fairness beyond that, no CPU split, no check that the lock excluded")


def stress_flock(args):
    peer = stress_ng_ops("flock", 4, args.seconds)
    ours = contend_lock_rate(args, ["--lock", "flock", "--procs", "4", "--hold", "0", "--idle", "0"])
    return ("stress-ng --flock 4", peer, "contend lock --lock flock --procs 4 --hold 0", ours,
            "lock/unlock per s",
            "no contention at all: strace shows each stress-ng worker locking its own file, and its children "
            "sharing one open file description, so no flock ever waits (it also counts deliberate EBADF calls); "
            "contend's workers open one description each on one file, so every lock excludes")


def stress_sem(args):
    peer = stress_ng_ops("sem", 1, args.seconds)
    ours = contend_lock_rate(args, ["--lock", "posix-sem", "--threads", "4", "--hold", "0", "--idle", "0"])
    return ("stress-ng --sem 1 (4 threads)", peer, "contend lock --lock posix-sem --threads 4 --hold 0",
            ours, "wait/post per s",
            "its own bogo-op unit, built for 'rapid context switching' (its manual): the gap says the "
            "units differ, not the semaphores; no hold time, fairness or latency")


def stress_futex(args):
    peer = stress_ng_ops("futex", 1, args.seconds)
    d = contend_json(args, ["wakeup", "-P", "futex", "--proc-pairs", "1", "--interval", "0",
                            "--duration", f"{args.seconds}s"])
    ours = 2 * d["points"][0]["sample"]["round_trips_per_s"]
    return ("stress-ng --futex 1", peer, "contend wakeup -P futex --proc-pairs 1 --interval 0 (2 wakes per round trip)",
            ours, "wakes per s",
            "its waiter polls with a tiny timeout, so wakes often find nobody asleep: a syscall rate, not a "
            "wake-up latency")


def sysbench_mutex(args):
    locks = 2_000_000
    out = sh(["sysbench", "mutex", "--threads=4", "--mutex-num=1", "--mutex-loops=0",
              f"--mutex-locks={locks}", "run"])
    total = float(re.search(r"total time:\s+([\d.]+)s", out).group(1))
    peer = 4 * locks / total
    ours = contend_lock_rate(args, ["--lock", "pthread", "--threads", "4", "--hold", "0", "--idle", "0"])
    return ("sysbench mutex --threads=4 --mutex-num=1 --mutex-loops=0", peer,
            "contend lock --lock pthread --threads 4 --hold 0", ours, "lock/unlock per s",
            "whole-run time including thread start-up, no warm-up, no window; one mutex count")


PEERS = [
    ("perf", perf_lock_pi),
    ("stress-ng", stress_flock),
    ("stress-ng", stress_sem),
    ("stress-ng", stress_futex),
    ("sysbench", sysbench_mutex),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3, help="length of each run (default 3)")
    parser.add_argument("--contend", default=os.path.join(HERE, "..", "..", "target", "release", "contend"))
    args = parser.parse_args()
    if not os.access(args.contend, os.X_OK):
        sys.exit(f"peers: {args.contend} not built (cargo build --release)")

    print(machine.header())
    print(f"{'peer':58} {'peer':>10} {'contend':>10} {'ratio':>6}  unit")
    notes = []
    for program, measure in PEERS:
        if shutil.which(program) is None:
            print(f"{program}: not installed, skipped")
            continue
        try:
            peer_cmd, peer, ours_cmd, ours, unit, cannot = measure(args)
        except (RuntimeError, AttributeError) as e:
            print(f"{program}: failed: {e}")
            continue
        print(f"{peer_cmd:58} {peer:>10.0f} {ours:>10.0f} {ours / peer:>6.2f}  {unit}")
        notes.append(f"- {peer_cmd} vs {ours_cmd}: the peer gives {cannot}.")
    print()
    print("\n".join(notes))
    oracle = os.path.join(HERE, "wakeup-oracle.py")
    if shutil.which("svsematest") and os.geteuid() == 0:
        print()
        sys.stdout.flush()
        subprocess.run([sys.executable, oracle, "--loops", "1000", "--contend", args.contend], check=False)


if __name__ == "__main__":
    main()
