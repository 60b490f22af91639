"""What the tracing diagnostics (futex-order.py, sched-idle.py) share:
their command line, the checks that perf can trace, `perf record` of the
command, and the lines of `perf script`."""

import argparse
import os
import shutil
import subprocess
import sys


def traced_command(doc, name):
    """Parses `[--out FILE] -- COMMAND...`; returns (perf data file, command)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", default=f"/tmp/{name}.data", help="perf data file")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to trace after --")
    return args.out, command


def record(name, out, events, command, system_wide=False):
    """Runs the command under `perf record` of the tracepoints `events`."""
    if shutil.which("perf") is None:
        sys.exit(f"{name}: perf is not installed (Debian: linux-perf)")
    if os.geteuid() != 0:
        sys.exit(f"{name}: tracepoints need root")
    wide = ["-a"] if system_wide else []
    subprocess.run(["perf", "record", "-q", *wide, "-o", out, "-e", events, "--"] + command, check=True)


def script_lines(perf_data, fields):
    """The lines of `perf script` with the given fields."""
    return subprocess.run(["perf", "script", "-i", perf_data, "-F", fields],
                          check=True, capture_output=True, text=True).stdout.splitlines()
