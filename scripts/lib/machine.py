"""The line the benchmark scripts print first: when, on what machine and
at which commit their numbers were measured, and by what command, so a
number copied into the README carries its provenance (and
scripts/check/results-index.py can index the pages)."""

import contextlib
import os
import platform
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def commit():
    """The checkout's commit, short, with `-dirty` when the tree has
    uncommitted changes (the numbers then come from code no commit has)."""
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def command():
    """The command that ran this script, as typed from the repository's
    root."""
    script = os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)
    return shlex.join([script, *sys.argv[1:]])


def cpu_model():
    """The CPU's model name with its family and model numbers (one name,
    "AMD EPYC", covers CPUs whose costs differ: the numbers tell them
    apart)."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    model = fields.get("model name", "unknown CPU")
    if "cpu family" in fields and "model" in fields:
        model += f", family {fields['cpu family']} model {fields['model']}"
    return model


def header():
    """`# date, N CPUs (model), Linux release, commit C: `COMMAND``."""
    model = cpu_model()
    return (f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs ({model}), Linux {platform.release()}, "
            f"commit {commit()}: `{command()}`")


class Steal:
    """The host's steal while this counted: the share of all CPU time
    (every CPU, /proc/stat's first line) that the hypervisor gave to
    others while this guest had work. A ratio measured while steal came
    and went compares executions that ran on different machines, in
    effect; the pages print it beside what they measured.

        steal = Steal()
        with steal.counting():
            ...            # may count several stretches
        steal.shown()      # "3.1%"
    """

    def __init__(self):
        self.steal = 0
        self.total = 0
        self.known = True

    @staticmethod
    def _read():
        try:
            with open("/proc/stat") as f:
                fields = [int(x) for x in f.readline().split()[1:9]]
        except (OSError, ValueError):
            return None
        # user nice system idle iowait irq softirq steal (guest time is
        # already inside user and nice); kernels before 2.6.11 have no steal.
        return (sum(fields), fields[7]) if len(fields) == 8 else None

    @contextlib.contextmanager
    def counting(self):
        start = self._read()
        try:
            yield self
        finally:
            end = self._read()
            if start and end:
                self.total += end[0] - start[0]
                self.steal += end[1] - start[1]
            else:
                self.known = False

    def share(self):
        """Steal over all CPU time counted, 0..1; None where /proc/stat
        did not say or nothing was counted."""
        return self.steal / self.total if self.known and self.total > 0 else None

    def shown(self):
        """The share as a page prints it: `3.1%`, or `unknown`."""
        s = self.share()
        return "unknown" if s is None else f"{s * 100:.1f}%"
