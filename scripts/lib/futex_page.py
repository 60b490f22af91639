"""The futex view's words on a results page, as the pages that show it
(futex-view.md, futex-view-real.md) print them: a table of the top words
and, under it, where they were waited on and woken, from the sampled
user stacks. Reads the `futex_view` object of a contend JSON export."""

import json


def view_of(out):
    """The futex view of export `out` (a `run --profile` or an `attach`):
    (the view, the spec). A run has it in its profiled point's counting
    execution."""
    with open(out) as f:
        doc = json.load(f)
    views = [s["futex_view"] for p in doc["points"] for s in p["runs"] if s.get("futex_view")]
    if not views:
        raise SystemExit(f"{out}: no futex view in the export")
    return views[0], doc["spec"]


def word_name(w):
    """A word's name, told apart by its address when it is named by its
    memory alone (`heap`, `anonymous memory`)."""
    return w["name"] if "+" in w["name"] or "(" in w["name"] else f"{w['name']} {w['address']:#x}"


def table(view, top):
    """The top words as a markdown table."""
    lines = ["| word | waits | blocked ms | longest ms | woken | EAGAIN | timeouts | wake calls | woke | "
             "woken by (thread: waits ended) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for w in view["words"][:top]:
        wakers = ", ".join(f"{k['comm']}/{k['tid']}: {k['waits_ended']}" for k in w.get("wakers", [])[:3])
        lines.append(
            f"| `{word_name(w)}` | {w['waits']} | {w['blocked_ns'] / 1e6:.3f} | {w['max_blocked_ns'] / 1e6:.3f} | "
            f"{w['woken']} | {w['eagain']} | {w['timeouts']} | {w['wake_calls']} | {w['woke']} | "
            f"{wakers or '-'} |")
    return lines


def chain(stack, frames=4):
    """A stack from its site out (the program's own frame; the innermost
    where it has none), `frames` frames."""
    at = stack["site"] if stack.get("site") is not None else 0
    return " ← ".join(f"`{f}`" for f in stack["frames"][at:at + frames])


def chains(side, frames, most=8):
    """A word's stacks of one side as chains of `frames` frames, or as
    many more (up to `most`) as tell apart two that would read the same
    (a Go program's runtime frames)."""
    while True:
        out = [chain(s, frames) for s in side]
        if len(set(out)) == len(out) or frames >= most:
            return out
        frames += 1


def stacks(view, top, frames=4):
    """Where the top words were waited on and woken, from the sampled
    user stacks: a list, each line a word's waiter or waker stack."""
    how = view.get("stacks")
    if not how:
        return [f"No stacks: {view.get('no_stacks') or 'not sampled'}.", ""]
    lines = [f"Where, from the user stacks of {how['read']} futex calls (at most {how['budget_per_s']} a "
             f"second; {how['unwound']} unwound; off {how['off_ns'] / 1e9:.2f} s, the budget spent; "
             f"{how['lost']} dropped, the buffer full), each from its site (the first frame that is not the "
             "C library's or the lock's own code) out:", ""]
    for w in view["words"][:top]:
        waiters, wakers = w.get("waiter_stacks", [])[:2], w.get("waker_stacks", [])[:1]
        for s, c in zip(waiters, chains(waiters, frames)):
            lines.append(f"- `{word_name(w)}` waited at ({s['calls']} sampled, {s['blocked_ns'] / 1e6:.1f} ms): {c}")
        for s, c in zip(wakers, chains(wakers, frames)):
            lines.append(f"- `{word_name(w)}` woken from ({s['calls']} sampled): {c}")
    return lines + [""]


def sites(view):
    """Over every word of the program (not only the table's): where the
    sampled waits slept, the longest first, as a markdown table; a lock
    that parks each waiter on a word of its own, or a latch in every
    page of a pool, is many words and one site."""
    if not view.get("sites"):
        return []
    lines = ["Waited at, over every word (the sampled waits):", "",
             "| site | words | sampled waits | blocked ms |", "|---|---|---|---|"]
    for s in view["sites"]:
        lines.append(f"| `{s['site']}` | {s['words']} | {s['waits']} | {s['blocked_ns'] / 1e6:.1f} |")
    return lines + [""]
