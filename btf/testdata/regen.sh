#!/bin/sh
# Regenerate the fixtures (kinds.bpf.o; enums.clang14.bpf.o and
# enums.clang19.bpf.o, the same source built by clang 14 and 19) and their
# golden files from the real perf.
#
# Rebuilds each object from its source with its clang (-O2 -g -target bpf), loads it
# with `bpftool prog loadall` into a private bpffs, runs `perf record -o TMP --
# true` with a perf >= 6.17 so that it synthesizes the BPF_METADATA record of
# the already-loaded program, unloads it, and writes each entry of that record
# (key TAB Go-quoted value) to kinds.golden. The work is done by TestGolden's
# -update mode (btf/golden_test.go).
#
# Needs: root, clang-14 and clang-19 (Debian 12 packages), libbpf-dev, bpftool and a perf >= 6.17 (scripts/modern-perf.sh,
# or BPFMETA_MODERN_PERF). Run from anywhere: btf/testdata/regen.sh
set -eu
cd "$(dirname "$0")/../.."
"$PWD/scripts/modern-perf.sh" >/dev/null
exec go test ./btf -run '^TestGolden$' -count=1 -update "$@"
