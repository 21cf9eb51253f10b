#!/bin/sh
# dist-version.sh: the version of a make dist build, which bpfmeta
# --version prints and its .deb and .rpm carry: git describe in a form both
# dpkg and rpm order rightly (no '-', which each reads as the start of the
# package's own revision).
#   v1.2.3                     -> 1.2.3
#   v1.2.3-rc1                 -> 1.2.3~rc1       (before 1.2.3)
#   v1.2.3-5-gabcdef0          -> 1.2.3+5.gabcdef0 (after 1.2.3)
#   v1.2.3-5-gabcdef0-dirty    -> 1.2.3+5.gabcdef0.dirty
#   no tag yet: abcdef0        -> 0+0.gabcdef0
set -eu
cd "$(dirname "$0")/.."
d=$(git describe --tags --match 'v[0-9]*' --dirty --always --abbrev=12)
case $d in
v[0-9]*) ;;
*) d="v0-0-g$d" ;;
esac
printf '%s\n' "$d" | sed -E \
	-e 's/^v//' \
	-e 's/-dirty$/+dirty/' \
	-e 's/-([0-9]+)-(g[0-9a-f]+)(\+dirty)?$/+\1.\2\3/' \
	-e 's/\+([^+]*)\+dirty$/+\1.dirty/' \
	-e 's/-/~/g'
