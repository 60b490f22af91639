#!/bin/sh
# Placement at 4 threads with 2 s windows: the builds placement.py left
# with the repository's flags (U: /tmp/contend-placement/bin, from
# `placement.py --build-only`) and with every function and loop aligned
# (A: a copy of the same directory after `placement.py --rustflags
# "-C llvm-args=-align-all-functions=6 -C llvm-args=-align-loops=64"`,
# at /tmp/placement-aligned-bin), each change against its own unchanged
# build, at hold 0 and (the first change) hold 1 us.
cd "$(dirname "$0")/../.."
AB=scripts/experiments/ab-binaries.py
one() { # kind dir change hold
  echo "== $1 change $3 hold $4"
  python3 $AB $2/contend-0 $2/contend-$3 --pairs 16 --threads 4 --hold $4 --duration 2s --warmup 200ms | grep "B/A"
}
for i in 1 2 3; do
  one U /tmp/contend-placement/bin $i 0
  one A /tmp/placement-aligned-bin $i 0
done
one U /tmp/contend-placement/bin 1 1us
one A /tmp/placement-aligned-bin 1 1us
echo finished
