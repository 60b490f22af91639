"""One `contend lock` invocation for a script that judges its result: run
with the measurement's own extras off (no futex-counting run, no steal
bound, no progress bar), so that what the script compares is the rate
alone, and its one point of the JSON export returned."""

import json
import subprocess


def lock_point(contend, args, env=None, prefix=(), extras_off=True):
    """Runs `contend lock ARGS` and returns its export's only point (with
    `point`, `stats`, `sample` and `runs`). `env`, if given, is the whole
    environment of the run; `prefix`, a command contend runs under (setpriv,
    setsid, taskset); `extras_off=False` keeps contend's own defaults for
    futex counting and the steal bound."""
    extras = ["--count-futex", "off", "--max-steal", "off"] if extras_off else []
    out = subprocess.run([*prefix, contend, "lock", *args, *extras,
                          "--no-progress", "--export-json", "-"],
                         capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out)["points"][0]
