#!/bin/sh
# deps.sh: install what `make test` needs on Debian 12, as root, if missing.
# Idempotent, and quick when everything is there.
#
# Debian's packages: linux-perf (perf 6.1, the perf most recordings come from),
# bpftool (loads the BPF fixtures as libbpf does), clang and libbpf-dev (build
# the BPF fixtures), gcc and libc6-dev (the libbpf oracle of package btf, and
# go test -race), zstd, time, jq (a README example), make, man-db and
# bash-completion, zsh and fish (make install's man page and completion,
# tested in each shell as a user gets them), lintian and systemd (make
# dist-check, in CI after make test), procps (pgrep, which a CLI test finds its own process with; not
# in a minimal Debian). Then a perf >= 6.17, the oracle: scripts/modern-perf.sh.
set -eu
cd "$(dirname "$0")/.."
need=
have() { command -v "$1" >/dev/null 2>&1; }
have perf || need="$need linux-perf"
have bpftool || need="$need bpftool"
have clang || need="$need clang llvm"
[ -f /usr/include/bpf/bpf_helpers.h ] || need="$need libbpf-dev"
have gcc || need="$need gcc"
[ -f /usr/include/stdio.h ] || need="$need libc6-dev"
have zstd || need="$need zstd"
[ -x /usr/bin/time ] || need="$need time"
have jq || need="$need jq"
have make || need="$need make"
have man || need="$need man-db"
[ -f /usr/share/bash-completion/bash_completion ] || need="$need bash-completion"
have pgrep || need="$need procps"
have zsh || need="$need zsh"
have fish || need="$need fish"
have lintian || need="$need lintian"
have systemd-analyze || need="$need systemd"
if [ -n "$need" ]; then
	[ "$(id -u)" = 0 ] || { echo "deps.sh: missing$need; install them as root (apt-get install$need)" >&2; exit 1; }
	echo "deps.sh: installing$need" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
scripts/modern-perf.sh >/dev/null
