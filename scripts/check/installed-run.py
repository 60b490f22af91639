#!/usr/bin/env python3
"""Checks the export of an installed contend's `contend run --profile`
(scripts/test.sh): the interposer it used is the copy it carries, written
outside the build tree; it was loaded into the program; and the profile
named at least one mutex with contended acquisitions.

Usage: scripts/check/installed-run.py RUN.json
"""

import json
import sys


def main():
    (path,) = sys.argv[1:]
    with open(path) as f:
        doc = json.load(f)
    interposer = doc["spec"]["interposer"]
    problems = []
    if "/target/" in interposer or "libcontend_interpose-" not in interposer:
        problems.append(f"the interposer used is {interposer}, not the copy the binary carries")
    profiled = [p["sample"] for p in doc["points"] if p["sample"].get("mutexes")]
    if not profiled:
        problems.append("no point has a profile of mutexes")
    for sample in profiled:
        if sample["loaded"] < 1:
            problems.append("the interposer was not loaded into the program")
        if not any(m["acquisitions"] > 0 and m["contended"] > 0 for m in sample["mutexes"]):
            problems.append("no mutex was seen contended")
    if problems:
        sys.exit("installed run: " + "; ".join(problems))
    mutexes = max(len(s["mutexes"]) for s in profiled)
    print(f"installed run: {interposer}, loaded, {mutexes} mutex(es) profiled")


if __name__ == "__main__":
    main()
