#!/bin/sh
# A mariadbd that keeps its symbol table and line tables, built from the
# source Debian ships for this release, for the futex view's pages.
#
# Why: Debian's mariadbd carries no .symtab, and InnoDB's functions and
# globals are hidden (not in .dynsym), so a futex word of InnoDB reads
# `mariadbd+0x... (no symbol)` and its waiters' frames read offsets. The
# debug archive (deb.debian.org/debian-debug, the -dbgsym packages) is not
# reachable from every host (it answers 400 from the one the pages were
# made on), while the source archive is. Built RelWithDebInfo with -g1
# (line tables and function names, not types, which the symbolizer does
# not read) and without the engines and plugins the pages never load. The binary differs from Debian's in its build flags, not its
# source, so its locks are the same locks.
#
# Usage: scripts/experiments/mariadbd-with-symbols.sh [DIR]
#   DIR (default /var/tmp/contend-mariadbd): where the source is unpacked
#   and built; prints the mariadbd's path (what futex-view-real.py
#   --mariadbd takes; the error messages its build made are in share/
#   beside it, --lc-messages-dir). A second call reuses what the first
#   built.
# Needs: curl, xz, cmake, bison, g++, libssl-dev, libncurses-dev,
# zlib1g-dev, libpcre2-dev, libfmt-dev, liburing-dev, libaio-dev (apt-get
# install them; the script says which is missing). The build took about
# 15 minutes on the 2-CPU EPYC guest of 2026-12-03 (13 with nothing else
# running, the download included, on 2026-12-04).
set -eu

dir=${1:-/var/tmp/contend-mariadbd}
mirror=http://deb.debian.org/debian
mkdir -p "$dir"
cd "$dir"

for tool in curl xz cmake bison g++; do
    command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }
done
for pkg in libssl-dev libncurses-dev zlib1g-dev libpcre2-dev libfmt-dev liburing-dev libaio-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || { echo "needs $pkg (apt-get install $pkg)" >&2; exit 2; }
done

# The release's source entry: its version, directory and the orig
# tarball's name and md5, from the archive's own index.
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
# awk reads to the end: leaving early would close the pipe on curl.
curl -fsS "$mirror/dists/$codename/main/source/Sources.xz" | xz -d |
    awk 'done{next} /^Package: mariadb$/{p=1} p&&/^$/{done=1} p&&!done' > source.entry
version=$(awk '/^Version:/{print $2}' source.entry)
directory=$(awk '/^Directory:/{print $2}' source.entry)
set -- $(awk '/^Files:/{f=1;next} f&&/^ /&&/orig\.tar\.gz$/{print $1, $3; exit}' source.entry)
md5=$1 tarball=$2
[ -n "$tarball" ] || { echo "no orig tarball in $codename's mariadb entry" >&2; exit 1; }
upstream=${version#*:}
upstream=${upstream%%-*}
echo "mariadb $version ($codename's source), $tarball" >&2

if ! echo "$md5  $tarball" | md5sum -c --status 2>/dev/null; then
    curl -fsS -o "$tarball" "$mirror/$directory/$tarball"
    echo "$md5  $tarball" | md5sum -c --status || { echo "$tarball: md5 differs from the archive's" >&2; exit 1; }
fi
[ -d "mariadb-$upstream" ] || tar xzf "$tarball" --no-same-owner

mkdir -p build
cd build
if [ ! -f CMakeCache.txt ]; then
    flags="-O2 -g1 -DNDEBUG"
    no=""
    for plugin in ROCKSDB MROONGA SPIDER CONNECT COLUMNSTORE S3 OQGRAPH SPHINX TOKUDB AUTH_PAM AUTH_GSSAPI \
        HASHICORP_KEY_MANAGEMENT PROVIDER_BZIP2 PROVIDER_LZ4 PROVIDER_LZO PROVIDER_SNAPPY PROVIDER_LZMA; do
        no="$no -DPLUGIN_$plugin=NO"
    done
    # shellcheck disable=SC2086 # $no is a list of options
    cmake "../mariadb-$upstream" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" $no \
        -DWITH_UNIT_TESTS=OFF -DWITH_EMBEDDED_SERVER=OFF -DWITH_WSREP=OFF -DWITH_MARIABACKUP=OFF \
        -DWITH_SSL=system -DWITH_PCRE=system -DWITH_ZLIB=system -DWITH_LIBFMT=system -DWITH_SYSTEMD=no \
        >cmake.log 2>&1 || { echo "cmake failed: $dir/build/cmake.log" >&2; exit 1; }
fi
make -j"$(nproc)" mariadbd >make.log 2>&1 || { echo "make failed: $dir/build/make.log" >&2; exit 1; }
echo "$dir/build/sql/mariadbd"
