#!/bin/sh
# make demo: bpfmeta in one minute, on Debian 12 as root.
#
# Loads a BPF program that carries bpf_metadata_* variables (cmd/internal/demo,
# which embeds the compiled program), records 3 seconds of the whole system
# with the system's perf (Debian 12: perf 6.1, which writes no metadata),
# adds the metadata with bpfmeta inject while the program is still loaded,
# and prints it with bpfmeta show. With a perf >= 6.17 at hand
# (BPFMETA_MODERN_PERF, or what scripts/modern-perf.sh installed) it also
# shows that perf reading the records. Needs nothing but the system perf:
# it installs Debian's linux-perf if there is none.
#
# DEMO_DIR: where the recordings go (default: a new directory in /tmp).
set -eu
cd "$(dirname "$0")/.."
BPFMETA=bin/bpfmeta
LOADER=bin/bpfmeta-demo-load
[ "$(id -u)" = 0 ] || { echo "make demo: run as root (it loads a BPF program and records the whole system)" >&2; exit 1; }
if ! command -v perf >/dev/null 2>&1; then
	echo "== installing Debian's perf (linux-perf)"
	apt-get install -y -qq --no-install-recommends linux-perf >/dev/null
fi
OUT=${DEMO_DIR:-$(mktemp -d /tmp/bpfmeta-demo.XXXXXX)}
mkdir -p "$OUT"
LOADER_PID=
cleanup() {
	# the loader unloads the program when it is told to stop
	[ -z "$LOADER_PID" ] || { kill "$LOADER_PID" 2>/dev/null; wait "$LOADER_PID" 2>/dev/null || true; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== loading the demo BPF program (cmd/internal/demo/bpf/demo.bpf.c)"
"$LOADER" </dev/null >"$OUT/loaded.txt" &
LOADER_PID=$!
until grep -q '^ready$' "$OUT/loaded.txt" 2>/dev/null; do
	kill -0 "$LOADER_PID" 2>/dev/null || { echo "make demo: the demo program could not be loaded" >&2; exit 1; }
	sleep 0.1
done
grep -v '^ready$' "$OUT/loaded.txt"

echo "== perf record -a -o $OUT/perf.data -- sleep 3   ($(perf version))"
perf record -q -a -o "$OUT/perf.data" -- sleep 3

echo "== bpfmeta inject -i $OUT/perf.data -o $OUT/perf.meta.data"
"$BPFMETA" inject -f -i "$OUT/perf.data" -o "$OUT/perf.meta.data"

echo "== bpfmeta show -i $OUT/perf.meta.data   (the demo program's records)"
"$BPFMETA" show -i "$OUT/perf.meta.data" | awk '/^bpf_prog_/ {p = /_bpfmeta_demo/} p'

if MODERN=$(scripts/modern-perf.sh --check >/dev/null 2>&1 && scripts/modern-perf.sh); then
	echo "== $("$MODERN" version) reads them too: perf script --show-bpf-events"
	"$MODERN" script -i "$OUT/perf.meta.data" --show-bpf-events 2>/dev/null |
		grep -A4 'PERF_RECORD_BPF_METADATA prog .*_bpfmeta_demo' || true
fi
echo "== done: perf >= 6.17 shows them with: perf script -i $OUT/perf.meta.data --show-bpf-events"
echo "   (an older perf stops at them: bpfmeta strip -i $OUT/perf.meta.data -o $OUT/perf.stripped.data)"
