"""The interposer a script preloads by hand, beside a contend binary.

contend embeds its own copy of the interposer (build.rs builds it into
OUT_DIR), so `cargo build --release` leaves target/release/
libcontend_interpose.so as old as the last build of that crate alone. A
script that preloads the sibling file would then time another build
than the contend it names (it happened on 2026-12-04: a validation page
timed an interposer two commits old). So the sibling is rebuilt when it
is this tree's, and refused when it is older than the binary.
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
    if not os.path.isfile(so):
        sys.exit(f"{so} is missing: cargo build --release -p contend-interpose")
    if os.path.getmtime(so) < os.path.getmtime(contend):
        sys.exit(f"{so} is older than {contend}: it may be another build's interposer "
                 "(cargo build --release -p contend-interpose with that binary's target dir)")
    return so
