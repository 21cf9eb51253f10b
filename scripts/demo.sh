#!/bin/sh
# bpfmeta in one minute: load a BPF program that carries bpf_metadata_*
# variables (testdata/bpf/meta.bpf.o, shipped compiled), record 3 seconds
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
echo "== loading testdata/bpf/meta.bpf.o (pinned at $PIN)"
bpftool prog loadall testdata/bpf/meta.bpf.o "$PIN"
bpftool prog show pinned "$PIN/$(ls "$PIN" | head -1)"
echo "== perf record -a -o $OUT/perf.data -- sleep 3   ($(perf version))"
perf record -q -a -o "$OUT/perf.data" -- sleep 3
echo "== bpfmeta inject -i $OUT/perf.data -o $OUT/perf.meta.data"
"$BPFMETA" inject -f -i "$OUT/perf.data" -o "$OUT/perf.meta.data"
echo "== bpfmeta show -i $OUT/perf.meta.data   (the demo's programs)"
"$BPFMETA" show -i "$OUT/perf.meta.data" | awk '/^bpf_prog_/ {p = /_bpfprogt_/} p'
echo "== done: perf >= 6.16 shows the same with: perf script -i $OUT/perf.meta.data --show-bpf-events"
