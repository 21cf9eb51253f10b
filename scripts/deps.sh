#!/bin/sh
# Install what bpfmeta's tests, demo and benchmark use, if it is missing
# (Debian 12, as root): clang/llvm/libbpf-dev (to rebuild the BPF fixtures),
# bpftool (to load them as libbpf does), perf 6.1 (Debian's linux-perf) and
# perf >= 6.16 (the oracle: ../shared/tools/setup-modern-perf.sh, run through
# ../shared/tools/perf-modern). Idempotent and quick when all is there.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${SHARED:-$HERE/../../shared}
need=
command -v clang >/dev/null 2>&1 || need="$need clang llvm"
[ -f /usr/include/bpf/bpf_helpers.h ] || need="$need libbpf-dev"
command -v bpftool >/dev/null 2>&1 || need="$need bpftool"
[ -x /usr/bin/perf ] || need="$need linux-perf"
[ -x /usr/bin/time ] || need="$need time"
command -v debootstrap >/dev/null 2>&1 || need="$need debootstrap"
if [ -n "$need" ]; then
	echo "deps.sh: installing$need" >&2
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need
fi
if ! "$SHARED/tools/perf-modern" version >/dev/null 2>&1; then
	echo "deps.sh: installing a modern perf (setup-modern-perf.sh)" >&2
	"$SHARED/tools/setup-modern-perf.sh"
fi
grep -q ' /sys/fs/bpf bpf ' /proc/mounts || mount -t bpf bpffs /sys/fs/bpf
