"""Inputs the experiment scripts make for real programs, seeded, so that
every run and every script compresses the same bytes."""

import random


def words(path):
    """A 36 MB text of words from a small vocabulary (6 million of them,
    seed 7): compressible the way prose is, and the same every time."""
    rng = random.Random(7)
    vocabulary = ["lock", "futex", "wake", "spin", "queue", "owner", "waiter", "handoff", "convoy", "barrier"]
    with open(path, "w") as f:
        f.write(" ".join(rng.choice(vocabulary) for _ in range(6_000_000)))
