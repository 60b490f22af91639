#!/usr/bin/env python3
"""`contend run --what-if` and `--lock` against real changes made in source.

The programs in scripts/experiments/what-if-validation/ (not the tests'
programs) each have the real change under test behind a compile-time
flag. For each program the script

1. asks `contend run --what-if NAME[,NAME]` (virtual speedup) for the
   mutexes the changes touch, with the unchanged build;
2. times the unchanged build and every changed build directly, with no
   contend, interleaved in rounds (a shuffled order per round), and gives
   each change's ratio to the unchanged build in the same round
   (geometric mean, t interval on the log scale);
3. says whether the real ratio lies inside the prediction's interval, and
   for programs with two mutexes, whether the ranking is right (the
   change that really gains more is ranked first), judged only where
   contend tells the two apart and the real changes differ, paired by
   round (otherwise one side claims no order: "not judged", and why).

Then, for spin2.c (two threads, short holds), each source-compiled lock
(tas, ttas with pause, glibc's pthread_spin_lock) against glibc's mutex, timed directly, beside
`contend run --lock` swapping the same lock in, and beside the same swap
timed directly in the same rounds (the interposer preloaded): the swap's
cost over the compiled-in lock, paired by round, and beside it the cost of
a bare interposer of the same lock (bare_interposer.c: the call any
interposer pays, nothing else); and `contend run --recommend`'s verdict.

Writes docs/results/what-if-validation.md (or --markdown FILE).
Needs cc.   e.g.   scripts/experiments/what-if-validation.py --runs 10
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "scripts", "experiments", "what-if-validation")
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import interposer  # noqa: E402
import machine  # noqa: E402

CONTEND = os.path.join(ROOT, "target", "release", "contend")
# The host's steal over everything the page measures (each part keeps its own too).
STEAL = machine.Steal()
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
       11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 24: 2.064, 29: 2.045, 39: 2.023}

# program: [(the mutex's variable, change label, its flags, "half" or "none")]
PROGRAMS = {
    "stats_phase": [("stats_lock", "stats section halved", "-DSTATS_PCT=50", "half"),
                    ("phase_lock", "phase section halved", "-DPHASE_PCT=50", "half")],
    "global": [("global_lock", "section halved", "-DGLOBAL_PCT=50", "half"),
               ("global_lock", "section's work removed", "-DGLOBAL_PCT=0", "none")],
    "prodcons": [("queue_lock", "copy under the lock halved", "-DCOPY_PCT=50", "half")],
    "striped": [("hot_stripe_lock", "hot stripe's section halved", "-DHOT_PCT=50", "half"),
                ("table_lock", "table section halved", "-DTABLE_PCT=50", "half")],
    "rwmutex": [("config_lock", "every section halved", "-DRW_PCT=50", "half")],
    "chain": [("outer_lock", "outer section's own work halved", "-DOUTER_PCT=50", "half"),
              ("inner_lock", "inner section halved", "-DINNER_PCT=50", "half")],
}
# Where the loader puts a position-independent executable when address
# randomization is off, as contend runs a program whose mutexes it names
# by address (--aslr auto).
PIE_BASE = 0x555555554000
SPIN_LOCKS = [("tas", "1"), ("ttas", "2"), ("pthread-spin", "3")]


def t95(df):
    return T95.get(df) or T95[max(k for k in T95 if k <= df)]


def geometric(ratios):
    """Geometric mean with its t interval on the log scale."""
    logs = [math.log(r) for r in ratios]
    m = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(m), None
    half = t95(len(logs) - 1) * statistics.stdev(logs) / len(logs) ** 0.5
    return math.exp(m), (math.exp(m - half), math.exp(m + half))


def shown(value, ci):
    return f"{value:.3f}" + (f" ({ci[0]:.3f}..{ci[1]:.3f})" if ci else "")


def build(tmp, name, flags):
    out = os.path.join(tmp, name + flags.replace("-D", "_").replace("=", "").replace(" ", ""))
    if not os.path.exists(out):
        subprocess.run(["cc", "-O2", "-pthread", *flags.split(), os.path.join(SRC, name + ".c"), "-o", out],
                       check=True)
    return out


def wall(what, cpu=None):
    """Wall time of one execution of a binary, or of (binary, extra
    environment); its user and system CPU time appended to `cpu`."""
    path, env = what if isinstance(what, tuple) else (what, {})
    t = time.perf_counter()
    p = subprocess.Popen([path], stdout=subprocess.DEVNULL, env={**os.environ, **env})
    _, status, usage = os.wait4(p.pid, 0)
    took = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{path} failed: {status}")
    if cpu is not None:
        cpu.append((usage.ru_utime, usage.ru_stime))
    return took


def real_times(binaries, runs, cpu=None):
    """{label: per-round wall time}, interleaved in shuffled rounds (and
    in `cpu`, if given, {label: per-round (user, system) s})."""
    times = {k: [] for k in binaries}
    if cpu is not None:
        cpu.update({k: [] for k in binaries})
    for _ in range(runs):
        order = list(binaries)
        random.shuffle(order)
        for k in order:
            times[k].append(wall(binaries[k], None if cpu is None else cpu[k]))
    return times


def paired(times, a, b):
    """Per round, a's time over b's."""
    return [x / y for x, y in zip(times[a], times[b])]


def real_ratios(binaries, runs, cpu=None):
    """{label: per-round ratio to 'base'}, interleaved in shuffled rounds."""
    times = real_times(binaries, runs, cpu)
    return {k: paired(times, k, "base") for k in binaries if k != "base"}


def saved(cpu, label):
    """The user and system time a change saved: medians of the per-round
    differences from the unchanged build, s."""
    pairs = list(zip(cpu["base"], cpu[label]))
    return (statistics.median(b[0] - c[0] for b, c in pairs), statistics.median(b[1] - c[1] for b, c in pairs))


def contend(args, tmp):
    out = os.path.join(tmp, "run.json")
    cmd = [CONTEND, "run", "--quiet", "--no-progress", "--export-json", out, *args]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    with open(out) as f:
        return json.load(f)


def predictions(doc):
    """{address: sped mutex} from a what-if export."""
    return {m["address"]: m for m in (doc.get("speedup") or {}).get("mutexes", [])}


def address(binary, variable):
    """The mutex variable's address in the program as contend runs it."""
    out = subprocess.run(["nm", binary], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == variable:
            return PIE_BASE + int(f[0], 16)
    raise SystemExit(f"{binary}: no symbol {variable}")


def validate(tmp, name, changes, runs, lines, tally):
    base = build(tmp, name, "")
    names = sorted({c[0] for c in changes})
    at = {n: address(base, n) for n in names}
    predicting, timing = machine.Steal(), machine.Steal()
    with predicting.counting(), STEAL.counting():
        doc = contend(["--runs", str(runs), "--what-if", ",".join(hex(at[n]) for n in names), "--", base], tmp)
    sped = predictions(doc)
    binaries = {"base": base}
    binaries.update({label: build(tmp, name, flags) for _, label, flags, _ in changes})
    cpu = {}
    with timing.counting(), STEAL.counting():
        real = real_ratios(binaries, runs, cpu)
    lines += [f"### {name}.c", "",
              "| mutex | change | predicted | bounded by CPU | widened by kernel time | real (no contend) "
              "| real: user, system s saved | inside? |",
              "|---|---|---|---|---|---|---|---|"]
    gains = []
    for mutex, label, flags, which in changes:
        value, ci = geometric(real[label])
        m = sped.get(at[mutex])
        est = m and m.get(which)
        if not est:
            why = (m or {}).get("cannot_tell") or "no prediction"
            lines.append(f"| {mutex} | {label} (`{flags}`) | cannot tell: {why} | - | - | {shown(value, ci)} | "
                         f"{'%.3f, %.3f' % saved(cpu, label)} | - |")
            tally["cannot"] += 1
            continue
        lo, hi = est["ci95"] or (est["value"], est["value"])
        inside = lo <= value <= hi
        tally["inside" if inside else "outside"] += 1
        tally["bad"] += not (0 < est["value"] < math.inf)
        # The CPU's floor applies to the half-as-long prediction's rounds.
        bound = f"{m.get('cpu_bound_rounds', 0)} of {m.get('rounds', 0)} rounds" if which == "half" else "-"
        kernel = (f"{m.get('kernel_rounds', 0)} of {m.get('rounds', 0)} rounds "
                  f"({m.get('sleep_share', 0) * 100:.0f}% of the sleeps)") if which == "half" else "-"
        lines.append(f"| {mutex} | {label} (`{flags}`) | {shown(est['value'], est['ci95'])} | {bound} | {kernel} | "
                     f"{shown(value, ci)} | {'%.3f, %.3f' % saved(cpu, label)} | {'yes' if inside else 'no'} |")
        if which == "half":
            gains.append((mutex, est["value"], value, real[label]))
    lines.append("")
    if len(gains) == 2:
        lines += [ranking(gains, doc, tally), ""]
    lines += [f"Host steal (/proc/stat): {predicting.shown()} of the CPU time while contend predicted, "
              f"{timing.shown()} while the real changes were timed.", ""]
    cost = (doc.get("speedup") or {}).get("accounts_cost")
    if cost:
        lines += [f"The accounts (no speedup) cost this program x{shown(cost['value'], cost['ci95'])} "
                  "of its time under glibc's mutex.", ""]


def ranking(gains, doc, tally):
    """The ranking's line. It is judged only where both sides decide an
    order: contend tells the two apart (by its own intervals), and the real
    changes differ (their ratio to each other, paired by round, has a 95%
    interval that leaves out 1). Where contend cannot tell them apart it
    claims no order, which is neither right nor backwards; where the real
    changes do not differ, there is no order to match."""
    (a, pa, ra, rounds_a), (b, pb, rb, rounds_b) = gains
    predicted_first = a if pa < pb else b
    real_first = a if ra < rb else b
    apart = [m.get("apart_from_next") for m in (doc.get("speedup") or {}).get("mutexes", [])]
    told = bool(apart and apart[0])
    # The two real changes were timed in the same rounds: their ratio,
    # paired by round, decides whether they differ.
    _, ci = geometric([x / y for x, y in zip(rounds_a, rounds_b)])
    real_apart = bool(ci) and not ci[0] <= 1 <= ci[1]
    if not told:
        tally["rank_tied"] += 1
        verdict = ("not judged: contend cannot tell them apart, "
                   f"{'though the real changes differ' if real_apart else 'nor can the real changes'}")
    elif not real_apart:
        tally["rank_unsettled"] += 1
        verdict = "not judged: the real changes cannot be told apart"
    elif predicted_first == real_first:
        tally["rank_right"] += 1
        verdict = "right; contend tells them apart"
    else:
        tally["rank_wrong"] += 1
        verdict = "backwards; contend tells them apart"
    return f"Ranking: contend puts **{predicted_first}** first, the real changes **{real_first}** ({verdict})."


class SwapTimes:
    """spin2.c's direct timings: glibc's mutex, each lock compiled in, and
    each lock swapped in by contend's interposer (preloaded, as `contend
    run --lock` runs it), interleaved in shuffled rounds, taken in blocks
    spread over the whole script, between the programs. One execution of
    spin2 moves by up to 2x from the next (0.20 to 0.47 s, the same
    binary, in consecutive rounds), and in one block of 30 rounds at the script's
    end the swap's cost for ttas read from -6.9% to +10.6% in five runs
    within an hour (2026-12-04), with intervals that left each other out:
    a block sees one state of the host. Spread, the rounds sample its
    states as the programs' do.
    """

    def __init__(self, tmp):
        self.tmp = tmp
        self.base = build(tmp, "spin2", "")
        # The interposer contend preloads, next to the binary (as
        # scripts/experiments/interposer-cost.py finds it).
        so = interposer.sibling(CONTEND)
        self.binaries = {"base": self.base}
        self.binaries.update({lock: build(tmp, "spin2", f"-DLOCK={n}") for lock, n in SPIN_LOCKS})
        self.binaries.update({"swapped " + lock: (self.base, {"LD_PRELOAD": so, "CONTEND_RUN_LOCK": lock})
                              for lock, _ in SPIN_LOCKS})
        # glibc's mutex through the interposer: contend run's baseline.
        self.binaries["interposed"] = (self.base, {"LD_PRELOAD": so, "CONTEND_RUN_LOCK": "pthread"})
        self.binaries.update({"bare " + lock: (self.base, {"LD_PRELOAD": build(tmp, "bare_interposer",
                                                                               f"-shared -fPIC -DLOCK={n}")})
                              for lock, n in SPIN_LOCKS})
        self.times = {k: [] for k in self.binaries}
        self.blocks = 0
        self.steal = machine.Steal()

    def block(self, rounds):
        with self.steal.counting(), STEAL.counting():
            got = real_times(self.binaries, rounds)
        for k, v in got.items():
            self.times[k] += v
        self.blocks += 1


def swaps(timed, runs, lines):
    times, base, tmp = timed.times, timed.base, timed.tmp
    rounds = len(times["base"])
    swapping, recommending = machine.Steal(), machine.Steal()
    with swapping.counting(), STEAL.counting():
        doc = contend(["--runs", str(runs), "--lock", ",".join(l for l, _ in SPIN_LOCKS), "--", base], tmp)
    swapped = {v["lock"]: v for v in doc.get("vs_glibc", []) if v.get("ratio")}
    lines += ["## A swap against the same lock compiled in (spin2.c: two threads, short holds)", "",
              "Two measures of the swap. `contend run --lock` gives its ratio to glibc's mutex from its own "
              "rounds, compared with the compiled-in lock's ratio timed in other rounds: two estimates apart, "
              "so host noise between them counts as a difference. The paired measure times the swapped lock "
              "(contend's interposer preloaded, as `contend run --lock` runs it) in the same rounds as the "
              f"compiled-in lock and glibc's mutex, {rounds} rounds"
              + (f" in {timed.blocks} blocks spread over the script's run" if timed.blocks > 1 else "")
              + ", and gives their ratio per round: the swap's own cost, with its interval. A bare interposer "
              "of the same lock (bare_interposer.c: the two functions and the lock, no type check, count or "
              "mode; safe only for spin2.c) runs in the same rounds: its cost over the compiled-in lock is the "
              "call any interposer pays, and contend's over it is what contend's interposer adds. Not so for "
              "pthread-spin: compiled in, it is a call into glibc's pthread_spin_lock too, so its bare column "
              "compares one call with another, glibc's assembly with the same steps compiled from C.", "",
              "| lock | compiled into the source, vs glibc | swapped in by contend run, vs glibc | difference "
              "| swapped, same rounds, vs glibc | swapped over compiled in, paired by round "
              "| bare interposer over compiled in | swapped over bare interposer |",
              "|---|---|---|---|---|---|---|---|"]
    for lock, _ in SPIN_LOCKS:
        value, ci = geometric(paired(times, lock, "base"))
        vs = swapped.get(lock, {})
        ratio = vs.get("ratio")
        diff = f"{(ratio / value - 1) * 100:+.1f}%" if ratio else "-"
        sw = shown(ratio, vs.get("ci95")) if ratio else "no ratio"
        same = shown(*geometric(paired(times, "swapped " + lock, "base")))
        over, over_ci = geometric(paired(times, "swapped " + lock, lock))
        floor, floor_ci = geometric(paired(times, "bare " + lock, lock))
        beyond, beyond_ci = geometric(paired(times, "swapped " + lock, "bare " + lock))
        lines.append(f"| {lock} | {shown(value, ci)} | {sw} | {diff} | {same} | "
                     f"{(over - 1) * 100:+.1f}% ({shown(over, over_ci)}) | "
                     f"{(floor - 1) * 100:+.1f}% ({shown(floor, floor_ci)}) | "
                     f"{(beyond - 1) * 100:+.1f}% ({shown(beyond, beyond_ci)}) |")
    through = geometric(paired(times, "interposed", "base"))
    lines += ["", "`contend run` times glibc's mutex through its interposer too (the interposer preloaded, passing "
              "each call on to glibc), so that both sides of its ratio pay the entry into it; in the same rounds "
              f"that baseline took {shown(*through)} of glibc's time with no interposer. So `contend run --lock`'s "
              "ratio is the swapped lock's time over that: where the lock compiled in would be inline (tas, "
              "ttas), the call the swap pays and the entry the baseline pays roughly offset each other; where it would "
              "be a call anyway (pthread_spin_lock), the ratio flatters the swap by the baseline's entry."]
    lines += ["", f"Host steal (/proc/stat): {swapping.shown()} of the CPU time while `contend run --lock` ran, "
              f"{timed.steal.shown()} while the paired rounds ran.", ""]
    with recommending.counting(), STEAL.counting():
        doc = contend(["--runs", str(runs), "--recommend", "--lock", "pthread,tas,ttas,pthread-spin,adaptive", "--",
                       base], tmp)
    rec = doc.get("recommendation") or {}
    verdicts = [f"{m['waits_at']}: {m.get('best') or 'keep glibc'}"
                + (f" (as good: {', '.join(m['tied'])})" if m.get("tied") else "") for m in rec.get("mutexes", [])]
    lines += [f"`contend run --recommend` on spin2.c: {'; '.join(verdicts) or 'no verdict'} (host steal "
              f"{recommending.shown()} while it ran).", ""]


def main():
    global CONTEND
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10, help="rounds for contend and for the direct timing")
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "results", "what-if-validation.md"))
    ap.add_argument("--only", help="one program (a name in PROGRAMS, or spin2)")
    ap.add_argument("--contend", default=CONTEND, help="the contend binary (default: this checkout's target/release/contend)")
    a = ap.parse_args()
    CONTEND = a.contend
    tally = {"inside": 0, "outside": 0, "cannot": 0, "bad": 0, "rank_right": 0, "rank_wrong": 0,
             "rank_tied": 0, "rank_unsettled": 0}
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        spin2 = SwapTimes(tmp) if a.only in (None, "spin2") else None
        for name, changes in PROGRAMS.items():
            if a.only in (None, name):
                print(f"{name} ...", file=sys.stderr)
                validate(tmp, name, changes, a.runs, lines, tally)
                if spin2:
                    spin2.block(a.runs)
        if spin2:
            print("spin2 ...", file=sys.stderr)
            # At least six times the rounds in all (the swap's own cost
            # is a few percent), the last block here.
            spin2.block(max(a.runs, 6 * a.runs - len(spin2.times["base"])))
            swaps(spin2, a.runs, lines)
    done = tally["inside"] + tally["outside"]
    head = ["# `contend run --what-if` and swaps against real changes", "", machine.header(), "",
            f"Generated by `scripts/experiments/what-if-validation.py --runs {a.runs}` (the programs are in "
            "scripts/experiments/what-if-validation/; each real change is a compile-time flag, timed with no "
            "contend, interleaved with the unchanged build). Predictions: `contend run --what-if` by virtual "
            "speedup, geometric mean over the rounds with its 95% interval.", "",
            f"**{tally['inside']} of {done} real changes inside their prediction's interval**; "
            f"{tally['cannot']} said \"cannot tell\"; predictions outside (0, ∞): {tally['bad']}; rankings "
            f"right {tally['rank_right']}, backwards {tally['rank_wrong']}, not judged {tally['rank_tied']} "
            f"(contend cannot tell the two apart) and {tally['rank_unsettled']} (the real changes cannot be told apart).", "",
            f"Host steal over the measured parts (/proc/stat: the share of CPU time the hypervisor gave to "
            f"others): {STEAL.shown()}. Where it comes in bursts, a ratio whose two sides ran at different times "
            "(a prediction and its real change, `contend run --lock` and the compiled-in lock) compares two "
            "machines; each section says how much there was while each side ran. Steal counts only the time "
            "this guest's CPUs were taken from it: a neighbour busy on the same physical core slows the guest "
            "without any, so a low figure does not make a quiet hour.", ""]
    with open(a.markdown, "w") as f:
        f.write("\n".join(head + lines))
    print("\n".join(head + lines))


if __name__ == "__main__":
    main()
