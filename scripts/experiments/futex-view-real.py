#!/usr/bin/env python3
"""`contend attach` on real servers already running under load: which
futex words their threads sleep on, named by the data symbol that holds
them or by their memory, and whether the server runs on unchanged after.

Each server is started here, loaded by its own benchmark, and followed
for --duration while the load runs; then the server is asked a question
(mariadb: a query, memcached: a `stats` request) to show it still
answers, and shut down.

- mariadb (InnoDB's locks are its own futex-based srw_lock and
  srw_mutex since 10.6, which the pthread profile cannot see) under two
  loads, one after the other on the same server: sysbench
  oltp_read_write, 8 threads on 4 tables of 20,000 rows (data in
  memory: its sleeps are mostly timers and thread pool waits), then
  oltp_update_non_index, 16 threads on one table of 100 rows (every
  update commits and dirties one of a few pages: page latches, the log's
  group commit);
- memcached -t 4 under memcaslap (libmemcached-tools), 8 connections.

Writes docs/results/futex-view-real.md (or --markdown FILE). Needs root
(the tracepoints), mariadb-server, memcached, libmemcached-tools and
sysbench; a server that is not installed is left out, and the page says
so.

e.g.   scripts/experiments/futex-view-real.py --duration 5s --top 12 \
         --mariadbd $(scripts/experiments/mariadbd-with-symbols.sh)
"""

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402
from futex_page import sites, stacks, table, view_of  # noqa: E402
from emit import emit  # noqa: E402

CONTEND = os.path.join(ROOT, "target", "release", "contend")
MEMCACHED_PORT = 21989


def until(what, done, limit=60):
    t = time.time()
    while not done():
        if time.time() - t > limit:
            sys.exit(f"{what}: not ready after {limit} s")
        time.sleep(0.1)


def attach(pid, duration, out, top):
    """`contend attach PID --duration D --export-json OUT`: its table."""
    cmd = [CONTEND, "attach", str(pid), "--duration", duration, "--top", str(top), "--export-json", out]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return r.stderr


def mariadbd_command(path):
    """The server's command up to its data options: Debian's `mariadbd`,
    or `path` (a build of its own, e.g. scripts/experiments/
    mariadbd-with-symbols.sh's) with the error messages its build made
    (sql/share beside sql/mariadbd), which the installed ones may not
    match. --no-defaults must come first."""
    if not path:
        return ["mariadbd", "--no-defaults"]
    share = os.path.join(os.path.dirname(os.path.abspath(path)), "share")
    has_own = os.path.exists(os.path.join(share, "english", "errmsg.sys"))
    return [path, "--no-defaults", *([f"--lc-messages-dir={share}"] if has_own else [])]


# The mariadb loads: (what the page calls it, sysbench's test, its
# threads, its database, tables, rows per table). The hot one is small on
# purpose: 100 rows fill one or two pages, so 16 writers meet on the same
# page latches and commit through the same log.
MARIADB_LOADS = [("read/write, in memory", "oltp_read_write", 8, "sbtest", 4, 20000),
                 ("hot rows, commit per update", "oltp_update_non_index", 16, "hot", 1, 100)]


def sysbench(sock, test, db, tables, rows):
    """sysbench's command for `test` on `db` but its last words."""
    return ["sysbench", test, f"--mysql-socket={sock}", "--mysql-user=root", f"--mysql-db={db}",
            f"--tables={tables}", f"--table-size={rows}", "--db-driver=mysql"]


@contextlib.contextmanager
def mariadb_server(tmp, mariadbd=None):
    """A mariadbd of its own in `tmp` (Debian's, or the build at
    `mariadbd`), with every load's tables prepared: (the server, the
    client's command, the socket). Shut down at the end."""
    data, sock = os.path.join(tmp, "data"), os.path.join(tmp, "mysql.sock")
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=root",
                    "--auth-root-authentication-method=normal"], check=True, capture_output=True)
    server = subprocess.Popen([*mariadbd_command(mariadbd), f"--datadir={data}", f"--socket={sock}",
                               "--skip-networking", "--user=root", "--innodb-buffer-pool-size=256M",
                               f"--log-error={os.path.join(tmp, 'error.log')}"])
    client = ["mariadb", "--no-defaults", f"--socket={sock}", "-uroot"]
    try:
        until("mariadbd", lambda: subprocess.run(client + ["-e", "select 1"], capture_output=True).returncode == 0)
        for _, test, _, db, tables, rows in MARIADB_LOADS:
            subprocess.run(client + ["-e", f"create database if not exists {db}"], check=True)
            subprocess.run(sysbench(sock, test, db, tables, rows) + ["prepare"], check=True, capture_output=True)
        yield server, client, sock
    finally:
        subprocess.run(client + ["shutdown"], capture_output=True)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


def mariadb(tmp, a):
    """Each load in turn on one server, followed by `contend attach`: a
    result per load (see SERVERS)."""
    results = []
    build = f" (`{a.mariadbd}`, a build with its symbol table)" if a.mariadbd else ""
    with mariadb_server(tmp, a.mariadbd) as (server, client, sock):
        for label, test, threads, db, tables, rows in MARIADB_LOADS:
            bench = sysbench(sock, test, db, tables, rows)
            load = subprocess.Popen(bench + [f"--threads={threads}", "--time=0", "--events=0", "run"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(2)
            out = os.path.join(tmp, f"mariadb-{db}.json")
            printed = attach(server.pid, a.duration, out, a.top)
            load.terminate()
            load.wait()
            answer = subprocess.run(client + ["-N", "-e", f"select count(*) from {db}.sbtest1"],
                                    capture_output=True, text=True)
            still = server.poll() is None and answer.returncode == 0
            view, spec = view_of(out)
            cmd = (f"mariadbd{build} (InnoDB, buffer pool 256 MiB) under `sysbench {test} --threads={threads} "
                   f"--tables={tables} --table-size={rows}`")
            results.append((f"mariadb: {label}", (cmd, view, spec, still, printed)))
    return results


def memcached(tmp, a):
    duration, top = a.duration, a.top
    server = subprocess.Popen(["memcached", "-t", "4", "-p", str(MEMCACHED_PORT), "-U", "0", "-u", "root",
                               "-l", "127.0.0.1"])

    def stats():
        try:
            with socket.create_connection(("127.0.0.1", MEMCACHED_PORT), timeout=2) as s:
                s.sendall(b"stats\r\nquit\r\n")
                return b"STAT pid" in s.recv(65536)
        except OSError:
            return False
    try:
        until("memcached", stats)
        load = subprocess.Popen(["memcaslap", "-s", f"127.0.0.1:{MEMCACHED_PORT}", "-c", "8", "-T", "2",
                                 "-t", "600s"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)
        out = os.path.join(tmp, "memcached.json")
        printed = attach(server.pid, duration, out, top)
        load.terminate()
        load.wait()
        still = server.poll() is None and stats()
        view, spec = view_of(out)
        return [("memcached", ("memcached -t 4 under `memcaslap -c 8 -T 2`", view, spec, still, printed))]
    finally:
        server.terminate()
        server.wait()


# Each server: (its name, the tools it needs, a function of (tmp, args)
# returning [(a section's title, (the command, the view, the spec, whether
# it still answered, what attach printed))], a section per load).
SERVERS = [("mariadb", ["mariadbd", "mariadb-install-db", "sysbench"], mariadb),
           ("memcached", ["memcached", "memcaslap"], memcached)]


def section(name, result, top):
    cmd, view, spec, still, _ = result
    followed = spec.get("attached_for_ns", 0) / 1e9
    lines = [f"## {name}", "", f"{cmd}, followed by `contend attach` for {followed:.2f} s: {view['calls']} futex "
             f"calls, {view['words_seen']} words slept on or woken, {view['lost']} samples lost. "
             f"**Still answering after the attach: {'yes' if still else 'NO'}.**", ""]
    lines += table(view, top)
    lines += [""] + stacks(view, top)
    lines += sites(view)
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", default="5s", help="how long contend attach follows each server")
    ap.add_argument("--top", type=int, default=8, help="futex words shown per server")
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "results", "futex-view-real.md"))
    ap.add_argument("--mariadbd", help="a mariadbd of its own to run instead of Debian's (one with a symbol "
                    "table: scripts/experiments/mariadbd-with-symbols.sh prints its path)")
    a = ap.parse_args()
    if a.mariadbd and not os.access(a.mariadbd, os.X_OK):
        sys.exit(f"{a.mariadbd}: not an executable")
    if os.geteuid() != 0:
        sys.exit("needs root (contend attach opens syscall tracepoints)")
    command = (f"scripts/experiments/futex-view-real.py --duration {a.duration}"
               f"{f' --top {a.top}' if a.top != 8 else ''}{' --mariadbd ' + a.mariadbd if a.mariadbd else ''}")
    lines = ["# The futex view of running servers: `contend attach`", "", machine.header(), "",
             f"Generated by `{command}`. Each server is started by the script, loaded by its benchmark, and "
             "followed by `contend attach PID` while the load runs (no restart, no LD_PRELOAD); then it is "
             "asked a question to show it still answers. A word is named by the data symbol of the module "
             "that holds it (`symbol+offset (module)`), else by its memory (heap, a thread's stack, "
             "anonymous memory); the longest-blocked first. *woken by*: the threads whose wake came last "
             "before a waiter returned woken (for a lock, the releasing holder). Under each table, where the "
             "words were waited on and woken: the waiters' and wakers' user stacks, sampled under the "
             "view's budget and unwound from .eh_frame. Debian's binaries carry no "
             "symbol table (`.symtab`), and Debian's debug archive (the -dbgsym packages) is not reachable from "
             "the host that made this page, so a static word reads `module+offset (no symbol)`: its offset in the "
             "module, which `gdb` with the debug package names." + (
                 " The mariadbd here is not Debian's binary but the same source built with its symbol table "
                 "(scripts/experiments/mariadbd-with-symbols.sh), so its words and frames are named."
                 if a.mariadbd else ""), ""]
    for name, tools, run in SERVERS:
        missing = [t for t in tools if not shutil.which(t)]
        if missing:
            lines += [f"## {name}", "", f"Not run: {', '.join(missing)} not installed.", ""]
            continue
        with tempfile.TemporaryDirectory() as tmp:
            results = run(tmp, a)
        for title, result in results:
            print(result[4], file=sys.stderr)
            lines += section(title, result, a.top)
    emit(lines, a.markdown)


if __name__ == "__main__":
    main()
