#!/bin/sh
# bpfmeta in one minute: load a BPF program that carries bpf_metadata_*
# variables (testdata/bpf/demo.bpf.o, shipped compiled), record 3 seconds
# with the system's perf (Debian 12: perf 6.1, which writes no metadata),
# add the metadata with bpfmeta inject, and show it. Needs root.
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh >/dev/null
BPFMETA=${BPFMETA:-bin/bpfmeta}
OUT=${DEMO_DIR:-/tmp/bpfmeta-demo}
PIN=/sys/fs/bpf/bpfmeta-demo-$$
mkdir -p "$OUT"
trap 'rm -rf "$PIN"' EXIT INT TERM
echo "== loading testdata/bpf/demo.bpf.o (pinned at $PIN)"
bpftool prog loadall testdata/bpf/demo.bpf.o "$PIN"
bpftool prog show pinned "$PIN/$(ls "$PIN" | head -1)"
echo "== perf record -a -o $OUT/perf.data -- sleep 3   ($(perf version))"
perf record -q -a -o "$OUT/perf.data" -- sleep 3
echo "== bpfmeta inject -i $OUT/perf.data -o $OUT/perf.meta.data"
"$BPFMETA" inject -f -i "$OUT/perf.data" -o "$OUT/perf.meta.data"
echo "== bpfmeta show -i $OUT/perf.meta.data   (the demo's programs)"
"$BPFMETA" show -i "$OUT/perf.meta.data" | awk '/^bpf_prog_/ {p = /_bpfmeta_demo/} p'
MODERN=${PERF_MODERN:-../shared/tools/perf-modern}
if "$MODERN" version >/dev/null 2>&1; then
	echo "== $("$MODERN" version) reads them too: perf script --show-bpf-events"
	"$MODERN" script -i "$OUT/perf.meta.data" --show-bpf-events 2>/dev/null |
		grep -A4 'PERF_RECORD_BPF_METADATA prog .*_bpfmeta_demo' || true
fi
echo "== done: any perf >= 6.16 shows them with: perf script -i $OUT/perf.meta.data --show-bpf-events"
