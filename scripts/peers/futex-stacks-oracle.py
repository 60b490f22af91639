#!/usr/bin/env python3
"""The futex view's user stacks checked against an independent unwinder:
`perf record --call-graph dwarf` on the same tracepoint.

contend copies each sampled futex call's user stack (PERF_SAMPLE_STACK_USER)
and unwinds it itself, with framehop over .eh_frame, then names the frames
with its own symbolizer (addr2line over DWARF, else the symbol tables).
perf copies the same bytes but unwinds them with elfutils' libdw and names
them with its own code. If contend's unwinding or naming were wrong, its
stacks would not be found among perf's.

For each program, built here from its source: one execution under
`perf record -e syscalls:sys_enter_futex --call-graph dwarf,8192` (every
futex call's stack), and one under `contend run --profile --runs 1`. Each
stack contend lists (per word: the waiters' where they slept, the wakers'
where they woke someone) is cut to its site and the next two callers,
each frame a function and, where DWARF has it, file:line; it is *found*
when perf has a stack of the same side (a wait: FUTEX_WAIT, WAIT_BITSET;
a wake: WAKE, WAKE_BITSET) with the same three frames in a row. perf
names an inlined function's frame by each inlined level in turn; the
innermost is compared, as contend names a frame by it. Rust's symbol
hashes (`::h0123...`) are dropped.

The two executions differ (contend samples sleeping waits and waking
wakes under its budget; perf every call), so the check is that contend's
stacks exist, not that the counts agree: the futex counts are
futex-oracle.py's.

Writes docs/results/futex-stacks-oracle.md (or --markdown FILE). Needs
root, perf (linux-perf), a C compiler with glibc's static libraries, and
rustc; GLib's program needs libglib2.0-dev and pkg-config.

e.g.  scripts/peers/futex-stacks-oracle.py
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import machine  # noqa: E402
from emit import emit  # noqa: E402
from futex_page import view_of, word_name  # noqa: E402
from futex_programs import build_gmutex, build_raw, build_static, build_std  # noqa: E402

CONTEND = os.path.join(ROOT, "target", "release", "contend")
# The frames compared: the site and two callers.
FRAMES = 3
WAITS, WAKES = {0, 9}, {1, 10}


def programs(tmp):
    """(name, path) of each program whose toolchain is here."""
    out = [("raw_futex.c", build_raw(tmp)), ("raw_futex.c, static", build_static(tmp))]
    if shutil.which("rustc"):
        out.append(("std_mutex.rs", build_std(tmp)))
    if shutil.which("pkg-config") and subprocess.run(["pkg-config", "--exists", "glib-2.0"]).returncode == 0:
        out.append(("gmutex.c (GLib)", build_gmutex(tmp)))
    return out


def function(name):
    """A function's name without Rust's hash."""
    return re.sub(r"::h[0-9a-f]{16}$", "", name.strip())


def perf_stacks(program, tmp):
    """perf's stacks of the program's futex calls: {"wait"/"wake":
    Counter(stack)}, a stack a tuple of physical frames, each a tuple of
    its inlined levels, innermost first, each (function, line or None)."""
    data = os.path.join(tmp, "perf.data")
    subprocess.run(["perf", "record", "-q", "-m", "64M", "-o", data, "-e", "syscalls:sys_enter_futex",
                    "--call-graph", "dwarf,8192", "--", program], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    text = subprocess.run(["perf", "script", "-i", data, "-F", "trace,ip,sym,srcline"], check=True,
                          capture_output=True, text=True).stdout
    sides = {"wait": collections.Counter(), "wake": collections.Counter()}
    for block in text.split("\n\n"):
        lines = block.strip("\n").split("\n")
        op = re.search(r"op: (0x[0-9a-f]+)", lines[0]) if lines else None
        if not op:
            continue
        cmd = int(op.group(1), 16) & 0x7f
        side = "wait" if cmd in WAITS else "wake" if cmd in WAKES else None
        if side is None:
            continue
        frames, last_ip, i = [], None, 1
        while i < len(lines):
            m = re.match(r"\s+([0-9a-f]+) (.*)$", lines[i])
            i += 1
            if not m:
                continue
            ip, sym = m.group(1), function(m.group(2))
            line = None
            if i < len(lines) and not re.match(r"\s+[0-9a-f]+ ", lines[i]):
                at = re.match(r"\s*\S+:(\d+)", lines[i])
                line = int(at.group(1)) if at and int(at.group(1)) > 0 else None
                i += 1
            level = (None if sym == "[unknown]" else sym, line)
            if ip == last_ip:
                frames[-1].append(level)  # an outer inlined level of the same frame
            else:
                frames.append([level])
            last_ip = ip
        sides[side][tuple(tuple(f) for f in frames)] += 1
    return sides


def contend_frame(text):
    """contend's `function (file:line)` as (function, line); a frame
    named by its symbol has no line, one named by its module's offset
    (`module+0x...`) no function either."""
    m = re.match(r"^(.*) \(([^()]+):(\d+)\)$", text)
    if m:
        return function(m.group(1)), int(m.group(3))
    if re.match(r"^\S+\+0x[0-9a-f]+$", text):
        return None, None
    return function(re.sub(r" \([^()]*\)$", "", text)), None



def contend_stacks(program, tmp):
    """contend's listed stacks: [(word, side, calls, frames from the site,
    FRAMES of them)]."""
    out = os.path.join(tmp, "contend.json")
    subprocess.run([CONTEND, "run", "--profile", "--runs", "1", "--no-progress", "--export-json", out, "--",
                    program], check=True, capture_output=True)
    view, _ = view_of(out)
    listed = []
    for w in view["words"]:
        for side, key in (("wait", "waiter_stacks"), ("wake", "waker_stacks")):
            for s in w.get(key, []):
                at = s["site"] if s.get("site") is not None else 0
                frames = tuple(contend_frame(f) for f in s["frames"][at:at + FRAMES])
                listed.append((word_name(w), side, s["calls"], frames))
    return view, listed


def same(frame, levels):
    """contend's frame is one of perf's physical frame's inlined levels
    (contend names a frame by the level that is the program's own): the
    same function, and the same line where both have one (file names are
    compared no further: perf and addr2line may name a header's line by
    the file that includes it). A frame neither names (stripped code) is
    the same as another such."""
    f, line = frame
    return any(f == g and (line is None or m is None or line == m) for g, m in levels)


def found(frames, perf_side):
    """How many of perf's stacks of the side hold `frames` in a row."""
    n = 0
    for stack, count in perf_side.items():
        if any(all(same(f, g) for f, g in zip(frames, stack[i:i + len(frames)]))
               for i in range(len(stack) - len(frames) + 1)):
            n += count
    return n


def unwound(perf_side):
    """Of perf's stacks, how many went past their first frame."""
    return sum(c for stack, c in perf_side.items() if len(stack) > 1)


def show(frames):
    return " ← ".join((f or "(no name)") + (f" (line {line})" if line else "") for f, line in frames)



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "results", "futex-stacks-oracle.md"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (the tracepoints)")
    if not shutil.which("perf"):
        sys.exit("needs perf (apt-get install linux-perf)")
    lines = ["# The futex view's stacks against perf's unwinder", "", machine.header(), "",
             "Generated by `scripts/peers/futex-stacks-oracle.py`. Each stack that `contend run --profile` lists "
             "for a futex word (its waiters' where they slept, its wakers' where they woke one), cut to its site "
             "and two callers, looked for among the stacks `perf record -e syscalls:sys_enter_futex "
             "--call-graph dwarf,8192` took of every futex call of another execution of the same program, on the "
             "same side (waits, wakes): perf unwinds with elfutils' libdw and names frames itself, contend with "
             "framehop and its own symbolizer. *perf's share*: of perf's stacks of that side, the ones holding "
             "the same frames in a row.", "",
             "| program | word | side | contend's stack (site, then callers) | contend's calls | found in perf | "
             "perf's share |", "|---|---|---|---|---|---|---|"]
    totals, unwinders, unchecked, controls = [0, 0], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, program in programs(tmp):
            perf = perf_stacks(program, tmp)
            view, listed = contend_stacks(program, tmp)
            all_perf = sum(sum(side.values()) for side in perf.values())
            past = sum(unwound(side) for side in perf.values())
            how = view["stacks"]
            unwinders.append(f"| {name} | {all_perf} | {past} | {how['read']} | {how['unwound']} |")
            # Where perf's unwinder stops at the first frame, there is
            # nothing to find contend's stacks in.
            if past < all_perf / 2:
                unchecked.append(name)
                continue
            for word, side, calls, frames in listed:
                n = found(frames, perf[side])
                totals[0] += 1
                totals[1] += n > 0
                lines.append(f"| {name} | `{word}` | {side} | `{show(frames)}` | {calls} | "
                             f"{'yes' if n else '**no**'} | {n}/{sum(perf[side].values())} |")
            # The check's teeth: the first stack with its site one line
            # off, and on the other side, must not be found.
            if listed and listed[0][3][0][1]:
                _, side, _, frames = listed[0]
                moved = ((frames[0][0], frames[0][1] + 1),) + frames[1:]
                other = "wake" if side == "wait" else "wait"
                controls.append(f"{name}: `{show(moved)}` found {found(moved, perf[side])} times; "
                                f"`{show(frames)}` among the {other}s {found(frames, perf[other])} times")
            print(f"{name}: {len(listed)} stacks listed", file=sys.stderr)
    lines += ["", f"**{totals[1]} of {totals[0]} stacks contend listed were found among perf's.**", "",
              "How far each unwinder got: perf's stacks of the futex calls it kept (perf drops samples when "
              "its buffer fills: it kept a fraction of the calls), and those that went past their first frame; contend's sampled stacks (under its budget, of sleeping waits and waking wakes) and "
              "those unwound to a frame in a module.", "",
              "| program | perf's stacks | past the first frame | contend's stacks read | unwound |",
              "|---|---|---|---|---|"] + unwinders + [""]
    lines += ["Controls (each must read 0): the first stack of each program with its site's line moved by one, "
              "and the same stack looked for on the other side.", ""] + [f"- {c}" for c in controls] + [""]
    if unchecked:
        lines += [f"Not checked, as perf unwound fewer than half of its stacks past the first frame: "
                  f"{', '.join(unchecked)}.", ""]
    emit(lines, a.markdown)


if __name__ == "__main__":
    main()
