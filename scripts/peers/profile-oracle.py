#!/usr/bin/env python3
"""`contend run --profile` checked against an independent count of the same
run: bpftrace uprobes on glibc's mutex functions and the futex tracepoint,
per mutex address.

A benchmark script, not a test: it needs root, bpftrace and a kernel with
uprobes. It runs `contend run --profile --runs 1 -- PROGRAM` under
bpftrace (`-c`), counting, for the program's processes (by comm):

  acquisitions   glibc's pthread_mutex_trylock returning 0, pthread_mutex_lock
                 and pthread_mutex_timedlock/clocklock returning 0, and
                 pthread_cond_wait/timedwait/clockwait calls (the mutex is
                 re-taken inside glibc at their end, which contend counts as
                 an acquisition; the uprobe sees the call)
  lock calls     glibc's pthread_mutex_lock/timedlock/clocklock calls: the
                 profile tries first and calls the blocking lock only when
                 the try failed, so these are its contended acquisitions
  FUTEX_WAIT     futex(FUTEX_WAIT or FUTEX_WAIT_BITSET) syscalls on the
                 mutex's address (glibc's lock word is the mutex's first
                 int): the times glibc blocked in the kernel on it

and prints them beside the profile's acquisitions, contended counts ("had
to wait") and kernel waits for the top mutexes (by the profile's wait).
Exact agreement is expected for all three (the profile's kernel waits
come from the same tracepoint, sampled by contend itself, and also count
FUTEX_LOCK_PI, which a PI mutex uses and this script does not). FUTEX_WAIT
counts are what "contended" (a failed try) overstates: not every failed
try sleeps; and what it misses: the re-acquisition inside glibc's
condition wait.

Robust, PI and PP mutexes are never tried first by the profile, so for
them lock calls count every acquisition, not the contended ones; the
table marks their kind.

e.g.  scripts/peers/profile-oracle.py -- pigz -p 4 -k -f words.txt
      scripts/peers/profile-oracle.py --markdown docs/results/profile-oracle.md -- sysbench threads --time=1 run
"""

import argparse
import json
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

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


def program(comm):
    f = f'/comm == "{comm}"/'
    u = f"uprobe:{LIBC}"
    r = f"uretprobe:{LIBC}"
    # Keyed by process too: contend runs the program more than once (the
    # profiled execution, and glibc's mutex unprofiled beside it for the
    # profile's cost); only the profiled execution's pid is compared.
    return f"""
{u}:pthread_mutex_trylock {f} {{ @try[tid] = arg0; }}
{r}:pthread_mutex_trylock /@try[tid]/ {{ if (retval == 0) {{ @acq[pid, @try[tid]] = count(); }} delete(@try[tid]); }}
{u}:pthread_mutex_lock {f} {{ @lock[pid, arg0] = count(); @acq[pid, arg0] = count(); }}
{u}:pthread_mutex_timedlock {f} {{ @lock[pid, arg0] = count(); @timed[tid] = arg0; }}
{r}:pthread_mutex_timedlock /@timed[tid]/ {{ if (retval == 0) {{ @acq[pid, @timed[tid]] = count(); }} delete(@timed[tid]); }}
{u}:pthread_mutex_clocklock {f} {{ @lock[pid, arg0] = count(); @timed[tid] = arg0; }}
{r}:pthread_mutex_clocklock /@timed[tid]/ {{ if (retval == 0) {{ @acq[pid, @timed[tid]] = count(); }} delete(@timed[tid]); }}
{u}:pthread_cond_wait {f} {{ @acq[pid, arg1] = count(); }}
{u}:pthread_cond_timedwait {f} {{ @acq[pid, arg1] = count(); }}
{u}:pthread_cond_clockwait {f} {{ @acq[pid, arg1] = count(); }}
tracepoint:syscalls:sys_enter_futex {f} {{
    $op = args->op & 0x7f;
    if ($op == 0 || $op == 9) {{ @futex_wait[pid, args->uaddr] = count(); }}
}}
END {{ clear(@try); clear(@timed); }}
"""


def parse_maps(text):
    """{map: {(pid, address): count}}"""
    maps = {}
    for line in text.splitlines():
        m = re.match(r"@(\w+)\[(\d+), ([^\],]+)\]: (\d+)", line)
        if m:
            maps.setdefault(m.group(1), {})[(int(m.group(2)), int(m.group(3), 0))] = int(m.group(4))
    return maps


def traced(script, cmd, export, who, output=False):
    """Runs `cmd` (a contend run writing `export`) under the bpftrace
    `script`: the export and bpftrace's maps ({map: {(pid, key): n}}),
    and with `output` bpftrace's output too (for maps of other keys)."""
    # bpftrace's maps hold 4096 keys by default and drop the rest
    # silently: sysbench's mutex test alone has 4096 mutexes.
    env = {**os.environ, "BPFTRACE_MAP_KEYS_MAX": str(1 << 20)}
    # The program's own output is mixed into bpftrace's, and may be
    # binary (a compressor's): read as text, undecodable bytes replaced
    # (only the map lines are parsed).
    bt = subprocess.run(["bpftrace", "-e", script, "-c", shlex.join(cmd)],
                        capture_output=True, text=True, errors="replace", env=env)
    if bt.returncode != 0 or not os.path.exists(export):
        sys.exit(f"{who}: bpftrace or contend failed:\n{bt.stderr[-3000:]}")
    with open(export) as f:
        doc = json.load(f)
    return (doc, parse_maps(bt.stdout), bt.stdout) if output else (doc, parse_maps(bt.stdout))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--contend", default=os.path.join(ROOT, "target", "release", "contend"))
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--comm", help="the program's process name (default: its file name, 15 characters)")
    ap.add_argument("--markdown", help="append the table to this file")
    ap.add_argument("program", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    prog = a.program[1:] if a.program[:1] == ["--"] else a.program
    if not prog:
        ap.error("give the program after --")
    if os.geteuid() != 0 or not shutil.which("bpftrace"):
        sys.exit("profile-oracle.py: needs root and bpftrace (apt-get install bpftrace)")
    comm = a.comm or os.path.basename(prog[0])[:15]
    with tempfile.TemporaryDirectory() as tmp:
        export = os.path.join(tmp, "run.json")
        # --count-futex inline: the kernel waits in the profiled run itself
        # (by default only the extra counting run has them).
        cmd = [a.contend, "run", "--profile", "--runs", "1", "--count-futex", "inline", "--no-progress",
               "--export-json", export, "--", *prog]
        doc, maps = traced(program(comm), cmd, export, "profile-oracle.py")
    acq, lock, fw = maps.get("acq", {}), maps.get("lock", {}), maps.get("futex_wait", {})
    sample = doc["points"][0]["sample"]
    mutexes = [m for m in sample["mutexes"] if m["address"] != 0]
    pids = {m["pid"] for m in mutexes}
    rows, exact_acq, exact_cont, exact_kernel = [], 0, 0, 0
    for m in mutexes:
        key = (m["pid"], m["address"])
        ok_a = acq.get(key, 0) == m["acquisitions"]
        ok_c = lock.get(key, 0) == m["contended"]
        exact_acq += ok_a
        exact_cont += ok_c
        exact_kernel += m.get("kernel_waits") == fw.get(key, 0)
        rows.append((m, acq.get(key, 0), lock.get(key, 0), fw.get(key, 0)))
    total_p = sum(m["acquisitions"] for m in mutexes)
    total_o = sum(acq.get((m["pid"], m["address"]), 0) for m in mutexes)
    lines = [
        f"### `{' '.join(prog)}`",
        "",
        f"{machine.header().lstrip('# ')}. Generated by `scripts/peers/profile-oracle.py -- {' '.join(prog)}`"
        f" ({len(pids)} process(es)).",
        "",
        f"Mutexes: {len(mutexes)}; acquisitions exact for {exact_acq}, contended exact for {exact_cont}, "
        f"kernel waits exact for {exact_kernel}. "
        f"Acquisitions over all mutexes: profile {total_p}, uprobes {total_o}.",
        "",
        "| mutex | waits at | acquired (profile) | acquired (uprobes) | had to wait (profile) "
        "| lock calls (uprobes) | kernel waits (profile) | FUTEX_WAIT (bpftrace) | cond waits | kind |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m, oa, ol, ofw in sorted(rows, key=lambda r: -r[0]["wait_ns"])[: a.top]:
        kw = m.get("kernel_waits")
        lines.append(f"| {m['address']:#x} | {m['waits_at']} | {m['acquisitions']} | {oa} | {m['contended']} "
                     f"| {ol} | {'-' if kw is None else kw} | {ofw} | {m.get('cond_waits', 0)} | {m['kind']} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
