#!/usr/bin/env python3
"""Whether root and an unprivileged user read the same rate from the same
`contend lock` point (issue 58, item 5): the same binary, run in rounds
(each round runs every variant once, in a random order), paired by round
with root through `contend compare` (scripts/lib/paired.py).

The variants change one thing each:
  root            contend as root, as the shell started it
  user            the same process tree, environment and cgroup, only the
                  user changed (setpriv --reuid/--regid to nobody)
  root+session    root in a new session (setsid): with the kernel's
                  autogroup scheduling a new session is a new scheduling
                  group, which is what `su`/`runuser -l`/a login give an
                  unprivileged run
  user+session    both changes
  root, defaults  as root, with contend's own defaults for the extras (a
                  futex-counting run, which only root may make, and the
                  steal bound)
  user, defaults  the same, as nobody
The first four have the measurement's extras off (no futex-counting run,
no steal bound), so that what differs is who runs it; the last two show
what the extras change.

e.g.   scripts/experiments/root-vs-user.py --rounds 16 --markdown docs/results/root-vs-user.md
Needs root (it drops to nobody itself) and util-linux's setpriv.
"""

import argparse
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)
from lockpoint import lock_point  # noqa: E402  (scripts/lib/lockpoint.py)
from paired import paired  # noqa: E402  (scripts/lib/paired.py)

HERE = os.path.dirname(os.path.abspath(__file__))
NOBODY = 65534
VARIANTS = {
    "root": [],
    "user": ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"],
    "root+session": ["setsid", "--wait"],
    "user+session": ["setsid", "--wait", "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                     "--"],
    "root, defaults": [],
    "user, defaults": ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"],
}


def autogroup():
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contend", default=os.path.join(HERE, "..", "..", "target", "release", "contend"))
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--point", default="--lock seed --threads 4 --hold 1us --spin 10",
                        help="the contend lock point (default: the seed's R=10 point)")
    parser.add_argument("--duration", default="1s")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", help="also write the table here")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("root-vs-user: run as root (it drops to nobody for the unprivileged variants)")
    if shutil.which("setpriv") is None or shutil.which("setsid") is None:
        sys.exit("root-vs-user: needs setpriv and setsid (util-linux)")
    random.seed(args.seed)
    # A copy of the binary anyone can run, in a directory nobody can reach.
    work = tempfile.mkdtemp(prefix="root-vs-user-")
    os.chmod(work, 0o755)
    binary = os.path.join(work, "contend")
    shutil.copy2(args.contend, binary)
    os.chmod(binary, 0o755)
    ledger = os.path.join(work, "ledger")
    os.mkdir(ledger)
    os.chown(ledger, NOBODY, NOBODY)
    env = dict(os.environ, XDG_RUNTIME_DIR=ledger)
    point = [*args.point.split(), "--duration", args.duration, "--runs", "1"]
    rounds = []
    for n in range(args.rounds):
        order = list(VARIANTS)
        random.shuffle(order)
        row = {}
        for v in order:
            row[v] = lock_point(binary, point, env=env, prefix=VARIANTS[v],
                                extras_off="defaults" not in v)["stats"]["mean"]
        rounds.append(row)
        print(f"round {n + 1}: " + ", ".join(f"{v} {row[v]:,.0f}" for v in VARIANTS), file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    judged = paired(args.contend, rounds, "root")
    lines = [machine.header(), "",
             f"`contend lock {args.point} --duration {args.duration} --runs 1`, {args.rounds} rounds, "
             f"variants in a random order per round; kernel.sched_autogroup_enabled = {autogroup()}.", "",
             "| variant | cs/s, mean | / root | 95% interval | verdict |", "|---|---|---|---|---|"]
    mean = {v: sum(r[v] for r in rounds) / len(rounds) for v in VARIANTS}
    lines.append(f"| root | {mean['root']:,.0f} | 1 | | |")
    for v in list(VARIANTS)[1:]:
        j = judged[v]
        ci = f"{j['ci95'][0]:.4f}..{j['ci95'][1]:.4f}" if j["ci95"] else "-"
        lines.append(f"| {v} | {mean[v]:,.0f} | {j['ratio']:.4f} | {ci} | {j['verdict']} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
