#!/bin/sh
# Regenerate kinds.bpf.o and kinds.golden from the real perf.
#
# Rebuilds kinds.bpf.o from kinds.bpf.c (clang -O2 -g -target bpf), loads it
# with `bpftool prog loadall` under /sys/fs/bpf/btfkinds_<pid> (mounting bpffs
# if needed), runs `perf-modern record -o TMP -- true` so that perf 7.2
# synthesizes the BPF_METADATA record of the already-loaded program, unloads
# it, and writes each entry of that record (key TAB Go-quoted value) to
# kinds.golden. The work is done by TestGolden's -update mode (btf/golden_test.go).
#
# Needs: root, clang, libbpf-dev, bpftool and ../../../shared/tools/perf-modern
# (setup-modern-perf.sh). Run from anywhere: testdata/btf/regen.sh
set -eu
cd "$(dirname "$0")/../.."
exec go test ./btf -run '^TestGolden$' -count=1 -update "$@"
