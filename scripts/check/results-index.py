#!/usr/bin/env python3
"""Writes docs/results/README.md, the index of the results pages: per page
its title, the script that made it, the command, the commit, the date,
and whether it is current or superseded. Each is read from the page
itself (the header scripts/lib/machine.py writes, or the lines a page
written before it carries), so the index cannot drift from the pages;
only which pages are superseded, and by what, is said here.

    scripts/check/results-index.py           # rewrite the index
    scripts/check/results-index.py --check   # exit 1 if a page is missing or unexplained (scripts/test.sh)
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "docs", "results")
INDEX = os.path.join(RESULTS, "README.md")

# Pages kept for the record, and what replaced them.
SUPERSEDED = {
    "placement-history.md": "[placement.md](placement.md): the measurements before the page-aligned "
                            "measured section",
    "what-if.md": "[what-if-validation.md](what-if-validation.md): `--what-if` by the delay method, "
                  "before the virtual speedup",
}

SCRIPT = re.compile(r"(scripts/(?:experiments|peers)/[\w./-]+\.(?:py|sh))")
DATE = re.compile(r"\b(20\d\d-\d\d-\d\d)\b")
COMMIT = re.compile(r"(?:\bcommit |\(git |build of |at )([0-9a-f]{7,40}(?:-dirty)?)\b")
# A command in backticks: a script's, or a contend invocation.
COMMAND = re.compile(r"`((?:scripts/|contend )[^`]+)`")


def title(lines, name):
    for line in lines:
        if line.startswith("# ") and not DATE.match(line[2:]):
            return line[2:].strip()
    return name


def writer(name):
    """The script that writes page `name`, for a page that does not say:
    the one of the same name, else the one script that names the page or
    its stem in quotes (lock-2026-figures.py's `("lock-wait", ...)`)."""
    stem = name[:-3]
    for d in ("experiments", "peers"):
        for ext in (".py", ".sh"):
            if os.path.isfile(os.path.join(ROOT, "scripts", d, stem + ext)):
                return f"scripts/{d}/{stem}{ext}"
    found = []
    for d in ("experiments", "peers"):
        folder = os.path.join(ROOT, "scripts", d)
        for f in sorted(os.listdir(folder)):
            path = os.path.join(folder, f)
            if not os.path.isfile(path) or not f.endswith((".py", ".sh")):
                continue
            with open(path) as fh:
                text = fh.read()
            if f"results/{name}" in text or f'"{stem}"' in text:
                found.append(f"scripts/{d}/{f}")
    return found[0] if len(found) == 1 else None


def read(name):
    with open(os.path.join(RESULTS, name)) as f:
        text = f.read()
    head = "\n".join(text.splitlines()[:25])
    script = SCRIPT.search(text)
    # The script's command before a contend command it quotes.
    commands = COMMAND.findall(head)
    command = next((c for c in commands if c.startswith("scripts/")), commands[0] if commands else None)
    date = DATE.search(head)
    commit = COMMIT.search(head)
    return {
        "page": name,
        "title": title(text.splitlines(), name),
        "script": script.group(1) if script else writer(name),
        "command": command,
        "date": date.group(1) if date else None,
        "commit": commit.group(1) if commit else None,
    }


def cell(text):
    return text.replace("|", "\\|") if text else "not said"


def index():
    pages = sorted(n for n in os.listdir(RESULTS) if n.endswith(".md") and n != "README.md")
    lines = ["# Results pages", "",
             "Every page in this folder, as `scripts/check/results-index.py` reads it from the page (do not "
             "edit this file: rerun that script). Each page came from the script and command named, on the "
             "date and commit its header says; \"not said\" marks what a page written before the scripts "
             "recorded it does not carry. To regenerate a page, rerun its command on the host the page "
             "names, and compare within one run (docs/methodology.md).", "",
             "| page | what | script | command | commit | date | status |", "|---|---|---|---|---|---|---|"]
    missing = []
    for name in pages:
        p = read(name)
        if not p["script"]:
            missing.append(name)
        status = f"superseded by {SUPERSEDED[name]}" if name in SUPERSEDED else "current"
        command = f"`{p['command']}`" if p["command"] else "not said"
        script = f"[{p['script']}](../../{p['script']})" if p["script"] else "not said"
        lines.append(f"| [{name}]({name}) | {cell(p['title'])} | {script} | {command} | {cell(p['commit'])} | "
                     f"{cell(p['date'])} | {status} |")
    unknown = sorted(set(SUPERSEDED) - set(pages))
    return "\n".join(lines) + "\n", missing, unknown


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if a page is missing from the index or the index lists a page that is gone, "
                         "or a page's script cannot be found")
    a = ap.parse_args()
    text, missing, unknown = index()
    problems = [f"{n}: names no script that made it" for n in missing]
    problems += [f"{n}: superseded, but there is no such page" for n in unknown]
    if a.check:
        # Every page listed (the dates and commits are the pages' own, so
        # the rest is as the pages say whenever the index was written).
        with open(INDEX) as f:
            listed = set(re.findall(r"^\| \[([\w.-]+\.md)\]", f.read(), re.M))
        pages = set(re.findall(r"^\| \[([\w.-]+\.md)\]", text, re.M))
        for n in sorted(pages - listed):
            problems.append(f"{n} is not in docs/results/README.md: rerun scripts/check/results-index.py")
        for n in sorted(listed - pages):
            problems.append(f"docs/results/README.md lists {n}, which is gone: rerun scripts/check/results-index.py")
        for p in problems:
            print(f"results-index: {p}", file=sys.stderr)
        sys.exit(1 if problems else 0)
    with open(INDEX, "w") as f:
        f.write(text)
    for p in problems:
        print(f"results-index: {p}", file=sys.stderr)
    print(f"{INDEX}: {text.count(chr(10)) - 7} pages")


if __name__ == "__main__":
    main()
