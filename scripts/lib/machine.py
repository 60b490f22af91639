"""The line the benchmark scripts print first: when, on what machine and
at which commit their numbers were measured, and by what command, so a
number copied into the README carries its provenance (and
scripts/check/results-index.py can index the pages)."""

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
