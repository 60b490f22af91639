"""The interposer a script preloads by hand, beside a contend binary.

contend embeds its own copy of the interposer (build.rs builds it into
OUT_DIR), so `cargo build --release` leaves target/release/
libcontend_interpose.so as old as the last build of that crate alone. A
script that preloads the sibling file would then time another build
than the contend it names (it happened on 2026-12-04: a validation page
timed an interposer two commits old). So the sibling is rebuilt from
this tree's source when the binary is this tree's (cargo leaves it alone
when it is current). For another binary the file beside it is used as
it is, and named on stderr: file times cannot tell (cargo rebuilds the
binary without touching an up-to-date library).
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sibling(contend):
    """Path of the libcontend_interpose.so beside `contend`, current."""
    contend = os.path.abspath(contend)
    so = os.path.join(os.path.dirname(contend), "libcontend_interpose.so")
    if contend == os.path.join(ROOT, "target", "release", "contend"):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "contend-interpose"], cwd=ROOT, check=True)
    else:
        print(f"preloading {so} as it is: rebuild it with that binary's tree if it may be stale",
              file=sys.stderr)
    if not os.path.isfile(so):
        sys.exit(f"{so} is missing: cargo build --release -p contend-interpose")
    return so
