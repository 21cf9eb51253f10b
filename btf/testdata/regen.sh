#!/bin/sh
# Regenerate kinds.bpf.o and kinds.golden from the real perf.
#
# Rebuilds kinds.bpf.o from kinds.bpf.c (clang -O2 -g -target bpf), loads it
# with `bpftool prog loadall` into a private bpffs, runs `perf record -o TMP --
# true` with a perf >= 6.17 so that it synthesizes the BPF_METADATA record of
# the already-loaded program, unloads it, and writes each entry of that record
# (key TAB Go-quoted value) to kinds.golden. The work is done by TestGolden's
# -update mode (btf/golden_test.go).
#
# Needs: root, clang, libbpf-dev, bpftool and a perf >= 6.17 (scripts/modern-perf.sh,
# or BPFMETA_MODERN_PERF). Run from anywhere: btf/testdata/regen.sh
set -eu
cd "$(dirname "$0")/../.."
"$PWD/scripts/modern-perf.sh" >/dev/null
exec go test ./btf -run '^TestGolden$' -count=1 -update "$@"
