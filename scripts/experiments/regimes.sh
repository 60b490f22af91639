#!/bin/sh
# Is a point's spread between invocations a regime each process lands in?
# Runs one contend binary N times at one point, several runs per
# invocation, and prints each invocation's mean, spread and runs (cs/s, M).
# Usage: scripts/experiments/regimes.sh [BINARY] [INVOCATIONS] -- extra lock flags
# e.g.   scripts/experiments/regimes.sh target/release/contend 6 --threads 4 --hold 0
BIN=${1:-target/release/contend}; N=${2:-6}; shift 2 2>/dev/null
[ $# -gt 0 ] || set -- --threads 4 --hold 0
i=0
while [ $i -lt "$N" ]; do
  i=$((i + 1))
  "$BIN" lock --lock futex "$@" --runs 8 --duration 300ms --warmup 100ms --count-futex off \
      --max-steal off --no-progress --export-json - 2>/dev/null | python3 -c '
import json, statistics as st, sys
d = json.load(sys.stdin)
r = [x["cs_per_s"] for x in d["points"][0]["runs"] if x["status"] == "measured"]
print(f"mean {st.mean(r) / 1e6:.2f}M  sd {100 * st.stdev(r) / st.mean(r):.1f}%  runs",
      " ".join(f"{x / 1e6:.2f}" for x in r))'
done
