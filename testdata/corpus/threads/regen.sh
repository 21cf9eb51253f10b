#!/bin/bash
# regen.sh: regenerate testdata/corpus/threads/<name>.counts for every directory
# recording <name> (perf record --threads) in this directory: the records perf itself
# dumps, by type, in the format of ../regen.sh (which documents it): a "perf" line, then
# "type N count M" lines (`perf script -D`, records inside compressed ones included),
# then "outer 81/83 count M" (the COMPRESSED/COMPRESSED2 records, from perf's own
# `report --stats`, which reads directories).
#
#   testdata/corpus/threads/regen.sh   (go test ./reader -run DirPerfCounts -update runs it)
#   env: BPFMETA_MODERN_PERF (a perf >= 6.17; default: what scripts/modern-perf.sh installs)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
PERF=$("$REPO/scripts/modern-perf.sh")
VER=$("$PERF" version | awk '{print $3}')
EVRX='^(0x[0-9a-f]+|0)@[^ ]+ \[0x[0-9a-f]+\]: event: [0-9]+$'
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0
for path in "$HERE"/*.data; do
	[ -d "$path" ] || continue
	name=$(basename "$path")
	out=$HERE/$name.counts
	set +e
	(cd "$HERE" && "$PERF" script -D -i "$name" >"$TMP/out" 2>"$TMP/err")
	rc=$?
	set -e
	if [ $rc != 0 ]; then
		echo "regen.sh: $name: perf $VER script -D: exit $rc: $(tail -n1 "$TMP/err")" >&2
		exit 1
	fi
	stats=$(cd "$HERE" && "$PERF" report --stats -i "$name" 2>/dev/null)
	{
		echo "perf $VER rc=$rc"
		{ grep -aE "$EVRX" "$TMP/out" | grep -av '@(null) ' || true; } | awk '{print $NF}' | sort -n | uniq -c | awk '{print "type " $2 " count " $1}'
		for t in 81:COMPRESSED 83:COMPRESSED2; do
			c=$(echo "$stats" | awk -v n="${t#*:}" '/Aggregated stats/{a=1} a && $1==n {print $3; exit}')
			echo "outer ${t%%:*} count ${c:-0}"
		done
	} >"$out.tmp"
	mv "$out.tmp" "$out"
	n=$((n + 1))
done
echo "regen.sh: wrote $n .counts files into $HERE (perf $VER)"
