#!/bin/sh
# modern-perf.sh: make a perf >= 6.17 (one that writes and reads
# PERF_RECORD_BPF_METADATA) available next to the system's perf, for the
# oracle tests, `make golden` and `make bench`. Debian 12 ships perf 6.1.
#
#   scripts/modern-perf.sh           install if missing, print the command's path
#   scripts/modern-perf.sh --check   only say whether it is there (exit 0 or 1)
#
# The one setting is BPFMETA_MODERN_PERF: the command to run as the modern
# perf. It defaults to /opt/bpfmeta-perf/perf, a wrapper this script writes
# around Debian sid's linux-perf, installed by debootstrap into
# /opt/bpfmeta-perf/root (about 200 MB, a minute the first time; nothing
# outside that directory changes). Point BPFMETA_MODERN_PERF at any other
# perf >= 6.17 (a distribution's, a self-built one) and nothing is installed.
#
# The wrapper runs sid's perf with sid's own ld.so and libraries but on the
# host's file system: /proc, /sys, the BPF file system and the host's binaries
# are the host's, and `perf record -- CMD` starts CMD with the host's
# libraries (ld.so --library-path is not inherited). Since perf 6.18, perf
# writes BPF_METADATA only when built with libbpf >= 1.7 (and since 6.17 only
# with libbpf's emit_strings): the check below also insists on the
# "libbpf-strings: [ on" of `perf version --build-options`, so that a perf
# that cannot write the record is not taken for one that can.
#
# The root also gets sid's libbpf-dev (libbpf >= 1.7, the libbpf perf is
# built with): package btf's differential test builds its libbpf oracle
# against it, run by the root's ld.so as the perf is.
#
# Needs root (debootstrap) and Debian's archive, only when installing.
# Idempotent: quick when the perf is already there.
set -eu

DEFAULT=/opt/bpfmeta-perf/perf
PERF=${BPFMETA_MODERN_PERF:-$DEFAULT}
ROOT=${DEFAULT%/perf}/root

say() { echo "modern-perf.sh: $*" >&2; }

# version_ok CMD: CMD runs, is perf >= 6.17 (BPF_METADATA went into 6.17)
# and was built with HAVE_LIBBPF_STRINGS_SUPPORT, without which it writes none.
version_ok() {
	"$1" version --build-options 2>/dev/null | grep -q 'libbpf-strings: \[ on' || return 1
	v=$("$1" version 2>/dev/null | awk '{print $3}') || return 1
	[ -n "$v" ] || return 1
	maj=${v%%.*}
	rest=${v#*.}
	min=${rest%%.*}
	case $maj$min in *[!0-9]*) return 1 ;; esac
	[ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "$min" -ge 17 ]; }
}

# libbpf_ok: the default root has sid's libbpf-dev (see above).
libbpf_ok() {
	[ "$PERF" != "$DEFAULT" ] || { [ -f "$ROOT/usr/include/bpf/btf.h" ] && [ -e "$ROOT/usr/lib/x86_64-linux-gnu/libbpf.so.1" ]; }
}

if version_ok "$PERF" && libbpf_ok; then
	[ "${1:-}" = --check ] || echo "$PERF"
	exit 0
fi
if [ "${1:-}" = --check ]; then
	say "$PERF is not a perf >= 6.17 with libbpf-dev beside it (run scripts/modern-perf.sh to install them)"
	exit 1
fi
if [ "$PERF" != "$DEFAULT" ]; then
	say "BPFMETA_MODERN_PERF=$PERF does not run as perf >= 6.17; unset it to install one at $DEFAULT"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	say "installing a modern perf into ${ROOT%/root} needs root"
	exit 1
fi

# The archive the host uses (deb822 sources, as Debian 12 has them).
MIRROR=${DEBIAN_MIRROR:-$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
export DEBIAN_FRONTEND=noninteractive
# The archive reachable here can lag the clock: sid's Release file then
# counts as expired. Signatures are still checked.
NOEXPIRE="-o Acquire::Check-Valid-Until=false"

if ! command -v debootstrap >/dev/null 2>&1; then
	say "installing debootstrap"
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
if [ -d "$ROOT/debootstrap" ]; then
	say "removing an unfinished debootstrap in $ROOT"
	rm -rf "$ROOT"
fi
if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
	say "debootstrap sid into $ROOT ($MIRROR)"
	mkdir -p "${ROOT%/root}"
	debootstrap --variant=minbase sid "$ROOT" "$MIRROR" >/dev/null
fi
say "installing sid's linux-perf in $ROOT"
chroot "$ROOT" apt-get $NOEXPIRE update -qq
chroot "$ROOT" apt-get install -y -qq --no-install-recommends linux-perf libbpf-dev >/dev/null

# The process is named perf (not ld-linux-x86-64) when ld.so runs through a
# link of that name: perf's own COMM records and samples then say "perf".
mkdir -p "$ROOT/usr/lib/bpfmeta"
ln -sf ../x86_64-linux-gnu/ld-linux-x86-64.so.2 "$ROOT/usr/lib/bpfmeta/perf"
cat >"$DEFAULT.tmp" <<EOF
#!/bin/sh
# Debian sid's perf from $ROOT, on the host's file system (scripts/modern-perf.sh).
PERF_EXEC_PATH=\${PERF_EXEC_PATH:-$ROOT/usr/lib/perf-core}
export PERF_EXEC_PATH
exec $ROOT/usr/lib/bpfmeta/perf --argv0 perf --library-path $ROOT/usr/lib/x86_64-linux-gnu $ROOT/usr/bin/perf "\$@"
EOF
chmod 755 "$DEFAULT.tmp"
mv "$DEFAULT.tmp" "$DEFAULT"
if ! version_ok "$DEFAULT"; then
	say "$DEFAULT was installed but does not run as perf >= 6.17: $("$DEFAULT" version 2>&1 || true)"
	exit 1
fi
say "$("$DEFAULT" version) at $DEFAULT"
echo "$DEFAULT"
