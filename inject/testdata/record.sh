#!/bin/bash
# record.sh: the real recordings behind package inject's golden tests.
#
#   inject/testdata/record.sh [OUTDIR]     by hand, as root (OUTDIR: this directory)
#   go test ./inject -run Golden -update   as root: runs this script, then rewrites *.golden
#                                          (BPFMETA_KEEP_RECORDINGS=1: only the goldens)
#
# For every case it loads this repository's fixtures (testdata/bpf/meta.bpf.o and
# nometa.bpf.o, with `bpftool prog loadall` into pin directories on a private bpffs,
# so that nothing is left in /sys/fs/bpf), records, and writes
#
#   OUTDIR/<case>.data           the recording
#   OUTDIR/<case>.snapshot.json  `bpfmeta snapshot -o`, taken while the case's programs
#                                were loaded, cut down to the programs this case loaded
#                                (the machine is shared: other sessions' programs, which
#                                come and go, would make the goldens depend on them)
#
# Cases are <perf>_<mode>_<timing>_<progs>:
#   perf    stock   /usr/bin/perf (6.1: writes no BPF_METADATA)
#           modern  a perf >= 6.17 (scripts/modern-perf.sh; 7.2: writes BPF_METADATA itself)
#   mode    file (-o F) | pipe (-o - > F) | zstd (-z -o F) | pipe-zstd (-z -o - > F)
#   timing  before      loaded (and snapshot taken) before perf starts: perf
#                       synthesizes their KSYMBOL/BPF_EVENT at the start
#           during      the workload loads them, takes the snapshot and keeps them
#                       loaded: the kernel emits their KSYMBOL/BPF_EVENT
#           loadunload  the workload loads them, takes the snapshot, then unloads
#                       them (unregister KSYMBOLs, BPF_EVENT PROG_UNLOAD)
#   progs   withmeta    meta.bpf.o (3 programs, 6 functions, with bpf_metadata_*)
#                       and nometa.bpf.o
#           nometa      nometa.bpf.o only: no metadata anywhere
# The matrix: withmeta for both perfs, all modes and timings (24 cases); nometa for
# stock perf, all modes, before and during (8 cases). nometa for modern perf adds
# nothing (every modern output must equal its input, and withmeta loads nometa.bpf.o
# too), nor does nometa loadunload (during has the same load records).
#
# Every recording is `perf record -N -B -F 999 [-z] -o ... -- sh -c WORKLOAD`: task
# scope (only the workload's processes are sampled and only their loads are seen,
# so the files are a few KB; perf still synthesizes every program loaded on the
# machine when it starts, other sessions' too), no build-id cache (-N), no
# build-id pass (-B: perf 6.1 aborts in it when it meets perf 7.2's libraries).
# While other perf sessions on the machine listen for BPF events, the kernel pads
# the KSYMBOL and BPF_EVENT records it emits (perf_event_ksymbol_output() and
# perf_event_bpf_output() add every listener's sample_id size to one shared
# header): the goldens show it as "+N bytes"; inject/padding_test.go has it too.
#
# Env: BPFMETA (the bpfmeta binary; default: built from this repository into a
# temporary directory), PERF_STOCK, BPFMETA_MODERN_PERF, CASES (a space-separated list of
# case names to record instead of all). Needs root, bpftool, python3 (to cut the
# snapshots down) and, unless BPFMETA is set, go.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SELF=$HERE/$(basename "$0")
REPO=$(cd "$HERE/../.." && pwd)
FIXTURES=$REPO/testdata/bpf

# Subcommands the workloads run (sh -c "'$SELF' _load ..."), so that loading,
# snapshotting and unloading happen inside the recorded task.
case ${1:-} in
_load) # _load PINDIR STATE PROGS: load the fixtures of PROGS, write their ids to STATE.ids
	pin=$2
	objs=nometa
	[ "$4" = withmeta ] && objs="meta nometa"
	for o in $objs; do
		bpftool prog loadall "$FIXTURES/$o.bpf.o" "$pin/$o"
	done
	for p in "$pin"/*/*; do
		bpftool -j prog show pinned "$p"
		echo
	done >"$3.ids"
	exit 0
	;;
_snap) # _snap STATE: snapshot of the loaded programs
	exec "$BPFMETA" snapshot -o "$2.snapshot.json"
	;;
_unload) # _unload PINDIR
	rm -rf "$2"
	exit 0
	;;
esac

OUT=${1:-$HERE}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PERF_STOCK=${PERF_STOCK:-/usr/bin/perf}
PERF_MODERN=$("$REPO/scripts/modern-perf.sh") || exit 1

[ "$(id -u)" = 0 ] || { echo "record.sh: run as root (loads BPF programs, records with perf)" >&2; exit 1; }
for t in bpftool python3 "$PERF_STOCK"; do
	command -v "$t" >/dev/null || { echo "record.sh: $t not found" >&2; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bpfmeta-record.XXXXXX")
BPFFS=$WORK/bpffs
mkdir "$BPFFS"
mount -t bpf bpf "$BPFFS"
cleanup() {
	# Unmounting the private bpffs drops every pin left in it: the programs go.
	umount "$BPFFS" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "${BPFMETA:-}" ]; then
	GO=$(command -v go || echo /usr/local/go/bin/go)
	(cd "$REPO" && "$GO" build -o "$WORK/bpfmeta" ./cmd/bpfmeta)
	BPFMETA=$WORK/bpfmeta
fi
export BPFMETA

# cut_snapshot SNAPSHOT IDS OUT: keep only the programs whose ids are in IDS
# (bpftool -j prog show output, one object a line).
cut_snapshot() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
snap, ids, out = sys.argv[1:]
keep = {json.loads(l)["id"] for l in open(ids) if l.strip()}
s = json.load(open(snap))
s["programs"] = [p for p in s["programs"] if p["id"] in keep]
missing = keep - {p["id"] for p in s["programs"]}
if missing:
    sys.exit("record.sh: programs %s missing from the snapshot" % sorted(missing))
with open(out, "w") as f:
    json.dump(s, f, indent=2)
    f.write("\n")
EOF
}

all_cases() {
	for perf in stock modern; do
		for mode in file pipe zstd pipe-zstd; do
			for timing in before during loadunload; do
				echo "${perf}_${mode}_${timing}_withmeta"
			done
		done
	done
	for mode in file pipe zstd pipe-zstd; do
		for timing in before during; do
			echo "stock_${mode}_${timing}_nometa"
		done
	done
}

record_case() { # record_case NAME
	local name=$1 perf mode timing progs P pin st log f
	IFS=_ read -r perf mode timing progs <<<"$name"
	case $perf in stock) P=$PERF_STOCK ;; modern) P=$PERF_MODERN ;; *) echo "record.sh: bad case $name" >&2; return 1 ;; esac
	pin=$BPFFS/$name # bpffs holds only pins
	st=$WORK/$name
	log=$st.log
	f=$OUT/$name.data
	mkdir -p "$pin"
	rm -f "$st".* "$f" "$f.old" "$OUT/$name.snapshot.json"

	local args=(record -N -B -F 999)
	case $mode in zstd | pipe-zstd) args+=(-z) ;; esac
	case $mode in pipe | pipe-zstd) args+=(-o -) ;; *) args+=(-o "$f") ;; esac
	local load="'$SELF' _load '$pin' '$st' $progs" snap="'$SELF' _snap '$st'" unload="'$SELF' _unload '$pin'"
	local w
	case $timing in
	before)
		sh -c "$load && $snap"
		w="sleep 0.3"
		;;
	during) w="$load && $snap && sleep 0.2" ;;
	loadunload) w="$load && $snap && sleep 0.1 && $unload && sleep 0.1" ;;
	*) echo "record.sh: bad case $name" >&2; return 1 ;;
	esac
	w="$w && touch '$st.ok'"
	case $mode in
	pipe | pipe-zstd) "$P" "${args[@]}" -- sh -c "$w" >"$f" 2>"$log" || true ;;
	*) "$P" "${args[@]}" -- sh -c "$w" >"$log" 2>&1 || true ;;
	esac
	rm -rf "$pin" "$f.old"
	if [ ! -e "$st.ok" ] || [ ! -s "$f" ]; then
		echo "record.sh: $name: the recording or its workload failed:" >&2
		cat "$log" >&2
		return 1
	fi
	chmod 0644 "$f"
	cut_snapshot "$st.snapshot.json" "$st.ids" "$OUT/$name.snapshot.json"
	printf '%-40s %7d B  snapshot of %s\n' "$name.data" "$(stat -c %s "$f")" \
		"$(python3 -c 'import json,sys; print(" ".join(str(p["id"]) for p in json.load(open(sys.argv[1]))["programs"]))' "$OUT/$name.snapshot.json")"
}

for name in ${CASES:-$(all_cases)}; do
	record_case "$name"
done
