"""Paired comparisons of rates measured in rounds, judged by contend itself
(`contend compare EXPORT --baseline NAME --json`: the geometric mean of each
round's ratio, with Student's t 95% interval on the log ratios), so the
scripts carry no statistics of their own and agree with what contend prints.

The rounds go to compare as a small lock export: one point per variant
(its name in the `lock` field) and one measured run per round, the rate in
`cs_per_s`. A time or latency is passed as its reciprocal, so that every
ratio reads "variant over baseline, above 1: faster".
"""

import json
import os
import subprocess
import tempfile


def paired(contend, rounds, baseline):
    """`rounds`: one dict per round, {variant: rate}. Returns, for every
    variant but `baseline`, {"ratio": r, "ci95": (lo, hi) or None,
    "verdict": "faster" | "slower" | "no_change" | ..., "pairs": n}."""
    variants = list(rounds[0])
    doc = {
        "schema_version": 3,
        "family": "lock",
        "spec": {"repeat": {"order": "interleaved"}},
        "points": [
            {
                "point": {"lock": v},
                "runs": [{"round": i, "status": "measured", "cs_per_s": r[v]} for i, r in enumerate(rounds)],
            }
            for v in variants
        ],
    }
    fd, path = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f)
        out = subprocess.run([contend, "compare", path, "--baseline", baseline, "--json"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    result = {}
    for p in json.loads(out)["points"]:
        ci = p.get("ci95")
        result[p["key"]["lock"]] = {"ratio": p["ratio"], "ci95": tuple(ci) if ci else None,
                                   "verdict": p["verdict"], "pairs": p["pairs"]}
    return result
