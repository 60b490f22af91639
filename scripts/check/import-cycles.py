#!/usr/bin/env python3
"""Import circles in contend's Rust crates, at two levels.

Rooms: the top-level folders of a crate's src/ (src/engine, src/model,
...), with src/family/F counting as a room of its own; a room may use
another only if that one does not use it back, directly or around a
circle. Files: every .rs file is a node; an edge is a path the file
names with `crate::`, `super::` or `self::` (in a `use` or inline),
resolved to the longest existing module file. A file that uses an item
of its parent module (a `super::` path) and a parent that uses its child
are both edges, so a child reaching back into its mod.rs is a circle
too, as lib.rs <-> cond.rs was. `mod x;` declarations are not edges and
the `#[cfg(test)]` module at a file's end is left out (tests may reach
anywhere).

It reads the source text, not the compiler's name resolution: a path
through a re-export counts as an edge to the file that re-exports. That
is the stricter reading (a circle through a re-export is still a
circle for a reader of the code).

Usage: scripts/check/import-cycles.py [CRATE_DIR ...]
(default: the contend crate, crates/locks, crates/interpose). Prints each
circle found and exits 1, or prints one line per crate and exits 0.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};", re.S)
TEST_MOD = re.compile(r"^#\[cfg\(test\)\]\s*\n\s*(pub\s+)?mod\s+\w+\s*\{", re.M)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def modules(src):
    """{module path tuple: file} for every .rs file under src."""
    found = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            found[tuple(parts)] = rel
    return found


def code_of(text):
    m = TEST_MOD.search(text)
    if m:
        text = text[: m.start()]
    return STRING.sub('""', COMMENT.sub("", text))


def paths_in(code):
    """Every crate/super/self path, with `use a::{b, c::d}` groups expanded
    one level (enough to see which modules a group names)."""
    out = [m.group(1) for m in PATH.finditer(code)]
    for m in USE_GROUP.finditer(code):
        for item in re.split(r",", m.group(2)):
            item = item.strip().split(" as ")[0].strip()
            name = re.match(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*", item)
            if name:
                out.append(m.group(1) + "::" + name.group(0))
    return out


def resolve(path, here, mods):
    """The module file a path names, or None (a path into a dependency)."""
    parts = path.split("::")
    if parts[0] == "crate":
        base = ()
    else:
        base = here
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
        parts = ["_"] + parts
    full = base + tuple(parts[1:])
    for n in range(len(full), -1, -1):
        if full[:n] in mods:
            return full[:n]
    return None


def graph(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for mod, rel in mods.items():
        # A file that is not mod.rs is a module whose `super` is its folder;
        # mod.rs/lib.rs is the folder's module itself.
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            code = code_of(f.read())
        for p in paths_in(code):
            target = resolve(p, mod, mods)
            if target is not None and target != mod:
                edges[mod].add(target)
    return mods, edges


def sccs(nodes, edges):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def room(mod):
    if not mod:
        return ("(root)",)
    if mod[0] == "family" and len(mod) > 1:
        return mod[:2]
    return mod[:1]


def check(crate_dir):
    src = os.path.join(crate_dir, "src")
    mods, edges = graph(src)
    name = os.path.relpath(crate_dir, ROOT)
    circles = []
    for comp in sccs(mods, edges):
        circles.append("files: " + " <-> ".join(mods[m] for m in comp))
        # Show one edge chain for each member, to say why.
        for m in comp:
            for t in sorted(edges[m] & set(comp)):
                circles.append(f"    {mods[m]} -> {mods[t]}")
    # Rooms: the crate root (lib.rs, main.rs, the one-file modules at the
    # top) is the table of contents and may name every room; it is not a
    # room.
    room_edges = {}
    for m, ts in edges.items():
        if len(m) == 0:
            continue
        for t in ts:
            if len(t) == 0:
                continue
            a, b = room(m), room(t)
            if a != b:
                room_edges.setdefault(a, set()).add(b)
    rooms = set(room_edges) | {b for bs in room_edges.values() for b in bs}
    for comp in sccs(rooms, room_edges):
        circles.append("rooms: " + " <-> ".join("/".join(r) for r in comp))
        for a in comp:
            for b in sorted(room_edges.get(a, set()) & set(comp)):
                why = sorted(
                    f"{mods[m]} -> {mods[t]}"
                    for m, ts in edges.items()
                    if m and room(m) == a
                    for t in ts
                    if t and room(t) == b
                )
                circles.append(f"    {'/'.join(a)} -> {'/'.join(b)}: " + "; ".join(why[:4]))
    if circles:
        print(f"{name}: import circles:")
        for c in circles:
            print("  " + c)
        return False
    n_edges = sum(len(t) for t in edges.values())
    print(f"{name}: no import circle ({len(mods)} files, {n_edges} edges, {len(rooms)} rooms)")
    return True


def main():
    dirs = sys.argv[1:] or [ROOT, os.path.join(ROOT, "crates/locks"), os.path.join(ROOT, "crates/interpose")]
    ok = all([check(os.path.abspath(d)) for d in dirs])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
