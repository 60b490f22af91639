#!/usr/bin/env python3
"""Is a measured loop's rate a property of the lock, or of where the
linker put the code? Builds contend from this checkout four times in a
scratch clone: as it is, and with each of three code changes that have
nothing to do with locks (each adds a little code on a cold path that is
linked in), then runs scripts/experiments/ab-binaries.py for each change
against the unchanged build (hold 0, 1 and 4 threads by default). A
build whose numbers depend on placement shows ratios away from 1 with
intervals that exclude it; the goal is every ratio within 2%.

--rustflags builds all four with other code-generation flags (e.g.
"-C llvm-args=-align-loops=64"), to try a remedy; by default the
repository's own flags (.cargo/config.toml) are used.

Usage: scripts/experiments/placement.py [--rustflags FLAGS] [--pairs 12]
         [--threads 1,4] [--hold 0] [--lock futex] [--duration 300ms]
         [--markdown FILE]
A benchmark, not a test: it prints the ratios and asserts nothing. The
builds take a few minutes; nothing else should run meanwhile.
"""

import argparse
import bisect
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import machine  # noqa: E402  (scripts/lib/machine.py)
from emit import emit  # noqa: E402  (scripts/lib/emit.py)

# Three changes unrelated to the measured loop, each on a cold path that
# the binary links (an unused function would be dropped by the linker).
CHANGES = {
    "list: a function added to src/list.rs": (
        "src/list.rs",
        None,
        None,
        ("\n#[inline(never)]\n#[doc(hidden)]\npub fn placement_note() -> String {\n"
         "    (1..=7).map(|i| format!(\"{i}:{}\", i * i)).collect::<Vec<_>>().join(\",\")\n}\n"),
    ),
    "compare: a longer heading in the compare table": (
        "src/exports/compare/table.rs",
        "; 5% level\\n{shared}\"",
        "; 5% level (two-sided)\\n{shared}\"",
        None,
    ),
    "env: one more environment probe": (
        "src/measure/env.rs",
        None,
        None,
        ("\n#[inline(never)]\n#[doc(hidden)]\npub fn placement_probe() -> Option<u64> {\n"
         "    std::fs::read_to_string(\"/proc/sys/kernel/pid_max\").ok()?.trim().parse().ok()\n}\n"),
    ),
}


TITLE = "Code placement and the measured loop"
INTRO = (
    "Written by `scripts/experiments/placement.py` (its command line is in the output). It builds "
    "contend four times from one commit, unchanged and with each of three changes that touch no "
    "lock code, checks that the measured section (src/measure/section.rs) has the same layout in "
    "all four, and runs `scripts/experiments/ab-binaries.py` for each change against the unchanged "
    "build: separate invocations in random pairs, futex lock, hold 0, the ratio B/A of cs/s with a "
    "95% interval. The goal (issue 36): every ratio within 2%. What it shows and what remains: "
    "[methodology](../methodology.md), Code placement; the measurements that led here: "
    "[placement-history.md](placement-history.md)."
)


def run(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def build(clone, env, out):
    run(["cargo", "build", "--release", "--quiet", "-p", "contend"], cwd=clone, env=env)
    shutil.copy(os.path.join(clone, "target", "release", "contend"), out)


def apply(clone, change):
    path, old, new, appended = change
    full = os.path.join(clone, path)
    with open(full) as f:
        text = f.read()
    if old is not None:
        if old not in text:
            sys.exit(f"{path}: the change no longer applies (no {old!r}); update CHANGES")
        text = text.replace(old, new, 1)
    if appended:
        text += appended
    with open(full, "w") as f:
        f.write(text)
    # An appended function must be linked, or the linker drops it: main
    # calls it when an environment variable no run sets is set.
    if appended:
        name = re.search(r"pub fn (\w+)", appended).group(1)
        main = os.path.join(clone, "src", "main.rs")
        with open(main) as f:
            m = f.read()
        module = path[len("src/"):-len(".rs")].replace("/", "::")
        hook = f"    if std::env::var_os(\"CONTEND_PLACEMENT\").is_some() {{ eprintln!(\"{{:?}}\", contend::{module}::{name}()); }}\n"
        m = m.replace("fn main() -> ExitCode {\n", "fn main() -> ExitCode {\n" + hook, 1)
        with open(main, "w") as f:
            f.write(m)


def output(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def measured_section(binary):
    """The measured section's (start, end) addresses, or None when the
    binary has none (a build before src/measure/section.rs)."""
    m = re.search(r"\] contend_measured\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)",
                  output("readelf", "-SW", binary))
    return (int(m[1], 16), int(m[1], 16) + int(m[2], 16)) if m else None


def functions(binary):
    """Every function's (address, size, demangled name without its hash), sorted."""
    found = []
    for line in output("nm", "-S", "-C", "--defined-only", binary).splitlines():
        f = line.split(None, 3)
        if len(f) == 4 and f[2] in "tTwW":
            found.append((int(f[0], 16), int(f[1], 16), re.sub(r"::h[0-9a-f]{16}$", "", f[3])))
    return sorted(found)


def measured_layout(binary):
    """The measured section's page offset and its functions' (offset, size)
    pairs, or None when the binary has no such section."""
    section = measured_section(binary)
    if section is None:
        return None
    lo, hi = section
    inside = {(address - lo, size) for address, size, _ in functions(binary) if lo <= address < hi}
    return lo % 4096, sorted(inside)


def calls_out(binary):
    """The functions outside the measured section that its code calls
    (directly, or through a GOT slot the linker filled with an address in
    this binary), leaving out unwinding, drops, panics and formatting: the
    code whose placement can still move with unrelated changes. Calls into
    libc go through slots filled at load time and are not listed."""
    section = measured_section(binary)
    if section is None:
        return []
    lo, hi = section
    slots = {}
    for line in output("readelf", "-rW", binary).splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] == "R_X86_64_RELATIVE":
            slots[int(f[0], 16)] = int(f[3], 16)
    known = functions(binary)
    starts = [f[0] for f in known]
    names = set()
    for line in output("objdump", "-d", "--no-show-raw-insn", "-j", "contend_measured", binary).splitlines():
        direct = re.search(r"\s(?:call|jmp)\s+([0-9a-f]+) <", line)
        via_slot = re.search(r"\s(?:call|jmp)\s+\*0x[0-9a-f]+\(%rip\)\s+# ([0-9a-f]+)", line)
        target = int(direct[1], 16) if direct else slots.get(int(via_slot[1], 16)) if via_slot else None
        if target is None or lo <= target < hi:
            continue
        i = bisect.bisect_right(starts, target) - 1
        if i >= 0 and target < known[i][0] + known[i][1]:
            names.add(known[i][2])
    skip = ("drop_in_place", "panic", "fmt", "unwrap_failed", "Unwind")
    return sorted(n for n in names if not any(s in n for s in skip))


def layout_lines(binaries):
    """One line per build: where its measured code is, against the unchanged build's."""
    layouts = [(name, measured_layout(path)) for name, path in binaries]
    base = layouts[0][1]
    if base is None:
        return ["measured code: no contend_measured section (a build before src/measure/section.rs)"]
    lines = [f"measured code: page offset {base[0]}, {len(base[1])} functions (unchanged build)"]
    for name, layout in layouts[1:]:
        same = "the same offsets and sizes" if layout == base else "DIFFERENT offsets or sizes"
        lines.append(f"  {name.split(':')[0]}: {same}")
    out = calls_out(binaries[0][1])
    if out:
        lines.append(f"calls that leave the measured section ({len(out)} functions, which can still move):")
        lines += [f"  {n}" for n in out]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rustflags", help="code-generation flags for all four builds")
    ap.add_argument("--pairs", type=int, default=12)
    ap.add_argument("--threads", default="1,4")
    ap.add_argument("--hold", default="0")
    ap.add_argument("--lock", default="futex")
    ap.add_argument("--duration", default="300ms", help="each run's window (ab-binaries.py)")
    ap.add_argument("--scratch", default="/tmp/contend-placement")
    ap.add_argument("--markdown", help="also write the results to this file")
    ap.add_argument("--build-only", action="store_true", help="build the four binaries, measure nothing")
    ap.add_argument("--reuse", action="store_true", help="measure the binaries the last build left")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.rustflags is not None:
        env["RUSTFLAGS"] = args.rustflags
    clone = os.path.join(args.scratch, "src")
    bins = os.path.join(args.scratch, "bin")
    os.makedirs(bins, exist_ok=True)
    if not os.path.isdir(clone):
        run(["git", "clone", "-q", ROOT, clone])
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    # With --reuse, the commit the binaries came from: the scratch clone is
    # left checked out at it after a build.
    built = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()
    run(["git", "fetch", "-q", ROOT, head], cwd=clone)
    binaries = []
    for i, (name, change) in enumerate([("unchanged", None)] + list(CHANGES.items())):
        out = os.path.join(bins, f"contend-{i}")
        binaries.append((name, out))
        if args.reuse:
            continue
        run(["git", "checkout", "-q", "-f", head], cwd=clone)
        if change:
            apply(clone, change)
        build(clone, env, out)
    run(["git", "checkout", "-q", "-f", head], cwd=clone)
    if args.build_only:
        print("\n".join(path for _, path in binaries))
        print("\n".join(layout_lines(binaries)))
        return
    lines = [machine.header(),
             f"# scripts/experiments/placement.py --pairs {args.pairs} --threads {args.threads} "
             f"--hold {args.hold} --lock {args.lock} --duration {args.duration}"
             + (f" --rustflags '{args.rustflags}'" if args.rustflags is not None else "")
             + (f" (binaries built from {built[:7]}, reused)" if args.reuse else f" (commit {head[:7]})"), ""]
    lines += layout_lines(binaries) + [""]
    base = binaries[0][1]
    for name, path in binaries[1:]:
        out = subprocess.run([sys.executable, os.path.join(HERE, "ab-binaries.py"), base, path,
                              "--pairs", str(args.pairs), "--threads", args.threads,
                              "--hold", args.hold, "--lock", args.lock, "--duration", args.duration],
                             check=True, capture_output=True, text=True).stdout
        lines.append(f"{name}:")
        lines += ["  " + l for l in out.splitlines() if " B/A " in l]
    emit(lines, args.markdown, TITLE, INTRO)


if __name__ == "__main__":
    main()
