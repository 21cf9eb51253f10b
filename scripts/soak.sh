#!/bin/bash
# make soak: record the way busy production hosts do, for minutes, while BPF
# programs are loaded and unloaded all along, and check every bpfmeta
# command against perf's own reading of the same files. Not part of make
# test or CI: it takes minutes and loads the machine.
#
# For each mode, stock perf 6.1 and then perf 7.2 record system-wide, half
# the mode's time each (perf record -N -B -a -F SOAK_FREQ ... MODE), while a
# loader loads testdata/bpf/meta.bpf.o every SOAK_LOAD_MS, runs each of its
# three programs SOAK_RUNS times (bpftool prog run: so that they have
# samples) and unloads it again SOAK_ALIVE loads later, SOAK_BUSY busy
# loops keep the CPUs sampling, and bpfmeta watch keeps a snapshot of every
# program loaded. The modes:
#
#   zg         -z -g              (COMPRESSED records, call chains)
#   threads    --threads -g       (a directory: data, data.N)
#   overwrite  --overwrite --switch-output=signal, signalled twice: the
#              flight recorder perf daemon runs (three files, each
#              synthesized at its tail), with the journal service beside
#              it (bpfmeta watch --journal DIR, DIR root's and 0700, from
#              before the recordings until after them)
#   pipe       -g -o -            (a pipe stream)
#   realtime   -k CLOCK_REALTIME  (another clock)
#   monoraw    -k CLOCK_MONOTONIC_RAW
#
# Then, for every file either perf wrote (F):
#
#   dump       bpfmeta dump --stats F counts the records of each type as
#              perf 7.2's perf report --stats F does (SAMPLEs among them)
#   inject     bpfmeta inject --perf-names --snapshot (watch's) F: perf 7.2
#              counts the
#              same records in the output, plus the BPF_METADATA inject says
#              it added (none to perf 7.2's own files: it wrote them)
#   show       bpfmeta show lists as many records as perf 7.2 counts
#   strip      bpfmeta strip of the output gives back a perf 6.1 file byte
#              for byte, and perf 7.2's without its BPF_METADATA
#   convert    bpfmeta convert of the output to a pipe (a file, from a
#              pipe) has the same records for perf 7.2, but for those a
#              file keeps in its header
#   samples    bpfmeta show --json's samples of each function of the
#              output (each set of loads a record counts once, summed by
#              the function's name after bpf_prog_TAG_: show counts a
#              function under the kernel's tag and perf's alike) are what
#              perf 7.2's perf report --stdio --no-children -g none -F
#              overhead,sample,sym of the output counts in the bpf_prog_
#              symbols of the name (summed over their lines): every
#              function show has a record of, and the loader's functions
#              perf counts samples in (issue 47 §2)
#   samp6.1    the same against perf 6.1's perf report of its own file
#   isamples   bpfmeta inject -v from a snapshot of no program (every
#              program listed, with its samples) of the file (perf 7.2's
#              stripped of its records, which would list none): the sum
#              of its programs' samples, and of the loader's (by tag), are
#              perf 7.2 report's sums of every bpf_prog_TAG[_NAME] symbol
#              and of the loader's functions (inject counts by program,
#              perf by symbol: bpfprogt_sub_add is in two programs); no
#              more than perf's where inject says "N samples or more"
#   journal    overwrite only: bpfmeta inject --journal DIR --strict
#              --require (the loader's three programs) of the file, the
#              loader's programs unloaded by then, succeeds (no program
#              with samples without metadata) and its output's bpfmeta
#              show --stable is that of inject --snapshot's (issue 46)
#   metadata   per mode: the BPF_METADATA records of the loader's programs
#              in perf 6.1's files injected are those perf 7.2 wrote in its
#              own, the same bytes, and one for each function of every
#              load (the two record one after the other, so not the same
#              loads; perf 7.2's side-band thread misses programs unloaded
#              before it reads them, which is said, not counted)
#
# A file perf 7.2 cannot read (the kernel pads a KSYMBOL or BPF_EVENT
# record while several sessions listen, bpfmeta watch's among them, and
# perf stops there) is checked against bpfmeta dump --stats instead, and
# counted; a samples check perf report cannot read for is said and counted
# the same way. A file for which a check differs is kept, with what
# bpfmeta made of it and both readings (and the watch snapshot, and for
# journal the journal), under SOAK_KEEP/MODE-PERF/. Prints one line per
# check and a summary; exits 1 if any check differed, 2 if something could
# not run.
#
# Environment: SOAK_SECONDS (240: seconds of recording in all, shared by the
# modes, at least 10 each), SOAK_MODES (all of the above), SOAK_FREQ (4000),
# SOAK_LOAD_MS (300), SOAK_ALIVE (3), SOAK_RUNS (1000000: 0 runs none),
# SOAK_BUSY (1), SOAK_KEEP
# (/var/tmp/bpfmeta-soak), BPFMETA (bin/bpfmeta), PERF (/usr/bin/perf),
# BPFMETA_MODERN_PERF (a perf >= 6.17: scripts/modern-perf.sh). Needs root.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
SECS=${SOAK_SECONDS:-240}
MODES=(${SOAK_MODES:-zg threads overwrite pipe realtime monoraw})
FREQ=${SOAK_FREQ:-4000}
LOAD_MS=${SOAK_LOAD_MS:-300}
ALIVE=${SOAK_ALIVE:-3}
BUSY=${SOAK_BUSY:-1}
RUNS=${SOAK_RUNS:-1000000}
KEEP=${SOAK_KEEP:-/var/tmp/bpfmeta-soak}
BPFMETA=$(realpath "${BPFMETA:-bin/bpfmeta}")
PERF=${PERF:-/usr/bin/perf}
FIXTURE=$REPO/testdata/bpf/meta.bpf.o

die() { echo "soak: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (perf record -a, loading BPF programs)"
[ -x "$BPFMETA" ] || die "no $BPFMETA (make build)"
command -v bpftool >/dev/null || die "no bpftool (make deps)"
"$PERF" version >/dev/null 2>&1 || die "no perf at $PERF"
PERF_MODERN=$(scripts/modern-perf.sh 2>/dev/null) || die "no perf >= 6.17 (make deps)"
PER=$((SECS / ${#MODES[@]}))
[ "$PER" -ge 10 ] || PER=10

W=$(mktemp -d /tmp/bpfmeta-soak.XXXXXX) || die "mktemp"
BPFFS=$W/bpffs
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount "$BPFFS" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 2' INT TERM
mkdir "$BPFFS" && mount -t bpf bpf "$BPFFS" || die "cannot mount a BPF file system on $BPFFS"
PACKET=$W/packet # bpftool prog run's input: an Ethernet frame of zeros
head -c 64 /dev/zero >"$PACKET"

KEEP_ALSO=()
CHECKS=0 DIFFS=0 SKIPS=0 RECORDINGS=0 SAMPLES=0 INJECTED=0 LOADER_SAMPLES=0
declare -A KEPT

# stats FILE [PERF]: the record counts perf report --stats gives, one
# "TYPE N" line per type, sorted (the aggregated ones of the whole input).
stats() {
	"${2:-$PERF_MODERN}" report --stats -i "$1" 2>/dev/null |
		awk '/^Aggregated stats:/ {a = 1; next} a && !/events:/ {exit} a && $1 != "TOTAL" {print $1, $3}' | sort
}

# dumpstats FILE: the same counts from bpfmeta dump --stats.
dumpstats() {
	"$BPFMETA" dump --stats -i "$1" 2>/dev/null |
		awk '/^Aggregated stats:/ {a = 1; next} a && !/events:/ {exit} a && $1 != "TOTAL" {print $1, $3}' | sort
}

# count STATS TYPE: TYPE's count in STATS (0 if none).
count() { awk -v t="$2" '$1 == t {print $2; f = 1} END {if (!f) print 0}' <<<"$1"; }

# without STATS TYPE...: STATS without those types.
without() {
	local s=$1
	shift
	for t in "$@"; do s=$(awk -v t="$t" '$1 != t' <<<"$s"); done
	printf '%s\n' "$s"
}

# withcount STATS TYPE N: STATS with TYPE's count N (absent if 0).
withcount() {
	{ without "$1" "$2"; [ "$3" -gt 0 ] && echo "$2 $3"; } | sed '/^$/d' | sort
}

# check MODE PERFNAME FILE NAME OK DETAIL: counts a check, and keeps the
# files of one that differs.
check() {
	local mode=$1 who=$2 f=$3 name=$4 ok=$5 detail=$6
	CHECKS=$((CHECKS + 1))
	if [ "$ok" = 1 ]; then
		printf 'ok    %-9s %-8s %-8s %s\n' "$mode" "$who" "$name" "$(basename "$f")"
		return
	fi
	DIFFS=$((DIFFS + 1))
	local k=$KEEP/$mode-$who
	mkdir -p "$k"
	cp -a "$f" "$f".* "${KEEP_ALSO[@]}" "$k"/ 2>/dev/null
	[ -n "${SNAP:-}" ] && cp -a "$SNAP" "$k"/ 2>/dev/null
	KEPT[$k]=1
	printf 'DIFF  %-9s %-8s %-8s %s: %s (kept in %s)\n' "$mode" "$who" "$name" "$(basename "$f")" "$detail" "$k"
}

# same A B: 1 if the two stats agree, else 0 and the difference in DIFF.
same() {
	if [ "$1" = "$2" ]; then
		echo 1
	else
		echo 0
	fi
}
difference() { diff <(printf '%s\n' "$1") <(printf '%s\n' "$2") | grep '^[<>]' | tr '\n' ' ' | cut -c1-300; }

# loader: loads the fixture every LOAD_MS, runs each of its three
# programs RUNS times in the kernel (bpftool prog run: BPF_PROG_TEST_RUN,
# so that they have samples), and unloads each ALIVE loads later.
loader() {
	local i=0 p
	while :; do
		bpftool prog loadall "$FIXTURE" "$BPFFS/l$i" 2>/dev/null
		if [ "$RUNS" -gt 0 ]; then
			for p in "$BPFFS/l$i"/*; do
				bpftool prog run pinned "$p" data_in "$PACKET" repeat "$RUNS" >/dev/null 2>&1
			done
		fi
		[ "$i" -ge "$ALIVE" ] && rm -rf "$BPFFS/l$((i - ALIVE))"
		i=$((i + 1))
		sleep "$(awk -v m="$LOAD_MS" 'BEGIN {print m / 1000}')"
	done
}

# metadata FILES...: each distinct BPF_METADATA record of the loader's
# programs in FILES (meta.bpf.o's functions, with its metadata: tests may
# load it with other values meanwhile), name and entries, with how many
# times it is there.
metadata() {
	for f in "$@"; do "$BPFMETA" dump -i "$f" 2>/dev/null; done |
		awk '/BPF_METADATA prog/ {if (r != "") print r; r = ($NF ~ /_bpfprogt_(multi_function_main|sub_add|sub_mul|second|single_function)$/) ? $NF : ""; next}
			/^ +entry / && r != "" {sub(/^ +entry [0-9]+: +/, ""); r = r "|" $0; next}
			/^[^ ]/ {if (r != "") print r; r = ""}
			END {if (r != "") print r}' | grep -F '|version = "3.14159"|' | sort | uniq -c
}

# HEX16 matches a tag; BPFSYM the KSYMBOL name of a BPF function,
# bpf_prog_TAG[_NAME] (not the kernel's bpf_prog_add and such). (mawk has
# no {16}.)
HEX16=$(printf '[0-9a-f]%.0s' {1..16})
BPFSYM="^bpf_prog_${HEX16}(_|\$)"

# byfunction: "NAME N" lines summed by the function's name after its tag
# (NAME itself for bpf_prog_TAG): show counts the samples of a function
# loaded during the recording under the tag of the kernel's KSYMBOL and of
# perf's (perf record names a program's main function after the tag of its
# code, the kernel after the program's: matched "function"), so a name is
# the finest both count.
byfunction() {
	awk -v h="^bpf_prog_$HEX16" '{f = $1; if (f ~ h "_") sub(h "_", "", f); n[f] += $2} END {for (f in n) print f, n[f]}' | sort
}

# reportsyms PERF FILE: "FUNCTION N" for every BPF function perf report
# counts samples in, N summed over its lines (the loads of one function
# are one line or several, and the tags of one function's name;
# byfunction); fails if perf cannot read FILE.
reportsyms() {
	local out
	out=$("$1" report -i "$2" --stdio --no-children -g none -F overhead,sample,sym 2>/dev/null) || return 1
	awk -v re="$BPFSYM" '$3 == "[k]" && $4 ~ re {print $4, $2}' <<<"$out" | byfunction
}

# showsyms FILE: "FUNCTION N" for every function show --json counts
# samples of: a record's samples are those of all its functions (several
# loads of one), and the records of one name at the end share theirs, so
# each set of functions is counted once (byfunction).
showsyms() {
	"$BPFMETA" show --json -i "$1" 2>/dev/null |
		jq -r '.records[] | select(.ksymbol != null) | [.ksymbol.name, .ksymbol.addr, ([.others[].addr] | join(",")), (.more_others // 0), .samples] | @tsv' |
		sort -u | awk -F'\t' '{print $1, $5}' | byfunction
}

# symsdiffer SHOW PERF: the functions whose counts differ ("FUNCTION show
# N perf M"): every one show has a record of, and the loader's that perf
# counts samples in; nothing if they agree. Those show has no record of
# (the machine's programs without metadata) are inject's check.
symsdiffer() {
	awk 'NR == FNR {s[$1] = $2; next} {p[$1] = $2}
		END {
			for (n in s) if (s[n] != p[n] + 0) print n, "show", s[n], "perf", p[n] + 0
			for (n in p) if (!(n in s) && n ~ /^bpfprogt_/ && p[n] > 0) print n, "show", "none", "perf", p[n]
		}' <(printf '%s\n' "$1" | sed '/^$/d') <(printf '%s\n' "$2" | sed '/^$/d') | sort
}

# symsum SYMS [RE]: the samples of SYMS ("FUNCTION N" lines), of the
# functions RE matches.
symsum() { awk -v re="${2:-.}" '$1 ~ re {n += $2} END {print n + 0}' <<<"$1"; }

# injectsamples FILE: the samples inject -v counts in each program of
# FILE, from a snapshot of no program (so that every program is listed,
# its metadata missing): "all N loader M", the loader's programs those of
# its tags (LOADER_TAGS), and " at least" after them if inject says of a
# program "N samples or more" (those of its round read before its load
# are not counted: inject reads the recording once).
injectsamples() {
	"$BPFMETA" inject -f -v --snapshot "$EMPTY" -i "$1" -o /dev/null 2>&1 |
		sed -E -n 's/.*program [0-9]+ \(tag ([0-9a-f]+).*, ([0-9]+) samples?( or more)?[:)].*/\2 \1 \3/p' |
		awk -v re="$LOADER_TAGS" '{n += $1; if ($2 ~ re) l += $1; if (NF > 2) more = " at least"}
			END {print "all", n + 0, "loader", l + 0 more}'
}

# checkjournal MODE PERFNAME FILE OUT: inject --journal of FILE (the
# journal service's, beside the flight recorder; the loader's programs
# long unloaded) adds the records inject --snapshot (OUT) did, and no
# program with samples gets none (--strict), the loader's none either
# (--require).
checkjournal() {
	local mode=$1 who=$2 f=$3 out=$4 j=$3.jinj log a b ok=1 why=""
	if ! log=$("$BPFMETA" inject -f --perf-names --strict --journal "$JOURNAL" \
		--require bpfprogt_multi_function_main --require bpfprogt_second --require bpfprogt_single_function \
		-i "$f" -o "$j" 2>&1); then
		ok=0 why="inject --journal failed: $(tail -2 <<<"$log" | tr '\n' ' ')"
	else
		a=$("$BPFMETA" show --stable -i "$out" 2>&1)
		b=$("$BPFMETA" show --stable -i "$j" 2>&1)
		[ "$a" = "$b" ] || ok=0 why="show --stable of inject --journal's output and of inject --snapshot's differ: $(difference "$a" "$b")"
	fi
	KEEP_ALSO=("$JOURNAL")
	check "$mode" "$who" "$f" journal "$ok" "$why"
	KEEP_ALSO=()
	rm -rf "$j"
}

# checksamples MODE PERFNAME FILE OUT: show's samples of each function of
# OUT (FILE injected) against perf report's of the same symbol: perf
# 7.2's of OUT, and perf 6.1's of its own FILE; inject's of each program
# against perf report's of their functions.
checksamples() {
	local mode=$1 who=$2 f=$3 out=$4 shown p p7="" d
	shown=$(showsyms "$out")
	if p=$(reportsyms "$PERF_MODERN" "$out"); then
		p7=$p
		d=$(symsdiffer "$shown" "$p")
		check "$mode" "$who" "$f" samples "$([ -z "$d" ] && echo 1 || echo 0)" \
			"show's samples per function and perf 7.2 report's differ: $(tr '\n' ' ' <<<"$d" | cut -c1-400)"
		LOADER_SAMPLES=$((LOADER_SAMPLES + $(symsum "$p" '^bpfprogt_')))
	else
		SKIPS=$((SKIPS + 1))
		printf 'skip  %-9s %-8s %-8s %s: perf 7.2 report reads none of it\n' "$mode" "$who" samples "$(basename "$out")"
	fi
	local src=$f
	if [ "$who" = perf6.1 ]; then
		if p=$(reportsyms "$PERF" "$f"); then
			d=$(symsdiffer "$shown" "$p")
			check "$mode" "$who" "$f" samp6.1 "$([ -z "$d" ] && echo 1 || echo 0)" \
				"show's samples per function and perf 6.1 report's of its own file differ: $(tr '\n' ' ' <<<"$d" | cut -c1-400)"
		else
			SKIPS=$((SKIPS + 1))
			printf 'skip  %-9s %-8s %-8s %s: perf 6.1 report reads none of it\n' "$mode" "$who" samp6.1 "$(basename "$f")"
		fi
	else
		# perf 7.2's records are there already: inject lists no program
		# of them as missing
		src=$f.strip
	fi
	# inject counts by program, perf report by symbol: a subprogram of
	# two programs (bpfprogt_sub_add) is one name; compared, the sums
	[ -n "$p7" ] && p=$p7
	[ -n "$p" ] && [ -e "$src" ] || return 0
	local want got
	want="all $(symsum "$p") loader $(symsum "$p" '^bpfprogt_')"
	got=$(injectsamples "$src")
	local ok
	ok=$(same "$got" "$want")
	if [ "$ok" = 0 ] && [ "${got% at least}" != "$got" ]; then
		# a lower bound: no more than perf's
		ok=$(awk '{exit !($2 <= $6 && $4 <= $8)}' <<<"${got% at least} $want" && echo 1 || echo 0)
	fi
	check "$mode" "$who" "$f" isamples "$ok" "inject -v counts $got samples in BPF programs, perf report $want"
}

# checkfile MODE PERFNAME FILE: the per-file checks.
checkfile() {
	local mode=$1 who=$2 f=$3 out=$3.inj
	RECORDINGS=$((RECORDINGS + 1))
	local in ds
	in=$(stats "$f")
	ds=$(dumpstats "$f")
	READ=stats
	if [ -z "$in" ]; then
		# perf stops at a KSYMBOL or BPF_EVENT the kernel padded ("no
		# evsel found", "Can't parse sample"): it adds the id_header_size
		# of every session listening (bpfmeta watch's, another perf's) to
		# the one record it shares between them. The other checks read
		# with bpfmeta dump --stats instead.
		SKIPS=$((SKIPS + 1))
		printf 'skip  %-9s %-8s %-8s %s: perf 7.2 reads none of it: %s\n' "$mode" "$who" dump "$(basename "$f")" \
			"$("$PERF_MODERN" report --stats -i "$f" 2>&1 | grep -m1 -i 'error\|failed\|parse')"
		in=$ds
		READ=dumpstats
	else
		check "$mode" "$who" "$f" dump "$(same "$ds" "$in")" "$(difference "$in" "$ds")"
	fi
	SAMPLES=$((SAMPLES + $(count "$in" SAMPLE)))

	local log added
	if ! log=$("$BPFMETA" inject -f --perf-names --snapshot "$SNAP" -i "$f" -o "$out" 2>&1); then
		check "$mode" "$who" "$f" inject 0 "inject failed: $(tail -1 <<<"$log")"
		return
	fi
	added=$(sed -n 's/.* \([0-9]\+\) BPF_METADATA records\{0,1\} added.*/\1/p' <<<"$log" | head -1)
	added=${added:-0}
	INJECTED=$((INJECTED + added))
	local o want
	o=$($READ "$out")
	want=$(withcount "$in" BPF_METADATA $(($(count "$in" BPF_METADATA) + added)))
	local ok
	ok=$(same "$o" "$want")
	# perf 7.2 wrote its own file's records: inject adds none, but to the
	# files of an --overwrite --switch-output session before its last (perf
	# 7.2 writes the records of the whole session in its last file; inject
	# makes each file stand alone)
	[ "$who" = perf7.2 ] && [ "$mode" != overwrite ] && [ "$added" != 0 ] && ok=0
	check "$mode" "$who" "$f" inject "$ok" "added $added; $(difference "$want" "$o")"

	local shown
	shown=$("$BPFMETA" show -i "$out" 2>/dev/null | grep -c '^[^ ]')
	check "$mode" "$who" "$f" show "$(same "$shown" "$(count "$o" BPF_METADATA)")" "show lists $shown records, perf counts $(count "$o" BPF_METADATA)"

	if "$BPFMETA" strip -f -q -i "$out" -o "$f.strip" 2>/dev/null; then
		if [ "$who" = perf6.1 ]; then
			if diff -rq "$f" "$f.strip" >/dev/null; then ok=1; else ok=0; fi
			check "$mode" "$who" "$f" strip "$ok" "not the input byte for byte"
		else
			local s
			s=$($READ "$f.strip")
			check "$mode" "$who" "$f" strip "$(same "$s" "$(without "$in" BPF_METADATA)")" "$(difference "$(without "$in" BPF_METADATA)" "$s")"
		fi
	else
		check "$mode" "$who" "$f" strip 0 "strip failed"
	fi

	checksamples "$mode" "$who" "$f" "$out"
	[ "$mode" = overwrite ] && checkjournal "$mode" "$who" "$f" "$out"
	rm -rf "$f.strip"

	# convert: to a pipe (perf 7.2 reads no pipe stream with compressed
	# records, its own neither: "HEADER_COMPRESSED not set"; that one
	# back to a file then); the records a file keeps in its header, and
	# the header records of a pipe, aside
	local c=$f.conv cs header
	header=(ATTR FEATURE EVENT_UPDATE TRACING_DATA BUILD_ID ID_INDEX THREAD_MAP CPU_MAP STAT_CONFIG TIME_CONV FINISHED_ROUND COMPRESSED COMPRESSED2)
	if "$BPFMETA" convert -q -i "$out" -o - >"$c" 2>/dev/null; then
		cs=$($READ "$c")
		if [ -z "$cs" ] && [ "$(count "$o" COMPRESSED)$(count "$o" COMPRESSED2)" != 00 ]; then
			"$BPFMETA" convert -f -q -i "$c" -o "$c.file" 2>/dev/null && cs=$($READ "$c.file")
		fi
		check "$mode" "$who" "$f" convert "$(same "$(without "$cs" "${header[@]}")" "$(without "$o" "${header[@]}")")" "$(difference "$(without "$o" "${header[@]}")" "$(without "$cs" "${header[@]}")")"
	else
		check "$mode" "$who" "$f" convert 0 "convert failed"
	fi
	rm -rf "$c" "$c.file"
}

# perfrecord MODE WHO PERF DIR ARGS...: PERF records for PER/2 seconds
# into DIR/WHO.data while the loader loads and unloads programs.
perfrecord() {
	local mode=$1 who=$2 p=$3 d=$4
	shift 4
	local args=("$@") perf i
	if [ "$mode" = pipe ]; then
		"$p" record "${args[@]}" -o - >"$d/$who.data" 2>"$d/$who.log" &
	else
		"$p" record "${args[@]}" -o "$d/$who.data" >"$d/$who.log" 2>&1 &
	fi
	perf=$!
	PIDS+=("$perf")
	sleep 1
	loader &
	local load=$!
	PIDS+=("$load")
	local busy=()
	for ((i = 0; i < BUSY; i++)); do
		nice -n 19 sh -c 'while :; do :; done' &
		busy+=($!)
		PIDS+=($!)
	done
	local half=$((PER / 2))
	if [ "$mode" = overwrite ]; then
		for i in 1 2; do
			sleep $((half / 3))
			kill -USR2 "$perf"
		done
		sleep $((half - 2 * (half / 3)))
	else
		sleep "$half"
	fi
	kill "$load" "${busy[@]}" 2>/dev/null
	wait "$load" "${busy[@]}" 2>/dev/null
	sleep 0.5
	kill -INT "$perf"
	wait "$perf"
}

# record MODE: perf 6.1 and then perf 7.2 record in MODE, PER/2 seconds
# each (one at a time: while two perf sessions listen, the kernel pads the
# KSYMBOL and BPF_EVENT records it shares between them, and neither perf
# reads such a record inside a COMPRESSED one); then the checks.
record() {
	local mode=$1 args=(-N -B -a -F "$FREQ")
	case $mode in
	zg) args+=(-z -g) ;;
	threads) args+=(--threads -g) ;;
	overwrite) args+=(--overwrite --switch-output=signal) ;;
	pipe) args+=(-g) ;;
	realtime) args+=(-k CLOCK_REALTIME) ;;
	monoraw) args+=(-k CLOCK_MONOTONIC_RAW) ;;
	*) die "unknown mode $mode" ;;
	esac
	local d=$W/$mode
	mkdir -p "$d"
	SNAP=$d/watch.snap
	# the flight recorder's journal service, from before the recording
	# until after it: the directory root's, 0700, as the service's
	local journal=""
	if [ "$mode" = overwrite ]; then
		JOURNAL=$d/journal
		mkdir -m 0700 "$JOURNAL" || die "mkdir $JOURNAL"
		"$BPFMETA" watch -q --journal "$JOURNAL" &
		journal=$!
		PIDS+=("$journal")
	fi
	"$BPFMETA" watch -q -f -o "$SNAP" -- sh -c "while [ ! -e '$d/stop' ]; do sleep 0.1; done" &
	local watch=$!
	PIDS+=("$watch")
	sleep 1
	perfrecord "$mode" perf6.1 "$PERF" "$d" "${args[@]}"
	rm -rf "$BPFFS"/l*
	perfrecord "$mode" perf7.2 "$PERF_MODERN" "$d" "${args[@]}"
	touch "$d/stop"
	wait "$watch"
	if [ -n "$journal" ]; then
		kill -TERM "$journal"
		wait "$journal" || die "$mode: bpfmeta watch --journal failed"
	fi
	# a snapshot of no program, of the same boot: inject lists every
	# program with its samples (injectsamples)
	EMPTY=$d/empty.snap
	LOADER_TAGS="^($(jq -r 'select(.program.name // "" | startswith("bpfprogt_")) | .program.tag' "$SNAP" | sort -u | paste -sd'|'))\$"
	{ head -1 "$SNAP"; head -1 "$SNAP" | jq -c '{end: {programs: 0, taken_until: .taken, missed: 0}}'; } >"$EMPTY"
	local who f
	for who in perf6.1 perf7.2; do
		local files=("$d/$who.data")
		[ "$mode" = overwrite ] && files=("$d/$who".data.[0-9]*)
		for f in "${files[@]}"; do
			[ -e "$f" ] || die "$mode: $who wrote no $f: $(tail -3 "$d/$who.log")"
			checkfile "$mode" "$who" "$f"
		done
	done
	# the loader's records: perf 6.1's files injected against perf 7.2's
	# own, recorded one after the other (so not of the same loads): the
	# same records, in the same proportions (each load of the fixture has
	# one record for each function of its three programs, two of which
	# share a subprogram: 1:2:1:1:1)
	local s m
	if [ "$mode" = overwrite ]; then
		s=$(metadata "$d"/perf6.1.data.[0-9]*.inj)
		m=$(metadata "$d"/perf7.2.data.[0-9]*)
	else
		s=$(metadata "$d/perf6.1.data.inj")
		m=$(metadata "$d/perf7.2.data")
	fi
	local ns nm
	ns=$(awk '{n += $1} END {print n + 0}' <<<"$s")
	nm=$(awk '{n += $1} END {print n + 0}' <<<"$m")
	# A flight recorder's ring buffers keep the last seconds only: perf
	# 7.2's side-band thread saw every load of the session, inject knows
	# those in the window the files hold (the kernel's records, and the
	# snapshot's loads within the window's times), and a load of the
	# fixture's three programs at the window's start can be cut in two.
	# There, only the records themselves are compared.
	local ok=1 why=""
	if [ "$(distinct "$s")" != "$(distinct "$m")" ]; then
		ok=0 why="not the same records: $(difference "$(distinct "$m")" "$(distinct "$s")")"
	elif [ "$mode" != overwrite ] && ! complete "$s"; then
		ok=0 why="some loads have not one record per function: $(proportions "$s" | awk '{print $1, $2}' | tr '\n' ' ')"
	fi
	KEEP_ALSO=("$d"/perf7.2.data*)
	check "$mode" "6.1v7.2" "$d/perf6.1.data" metadata "$ok" "perf 7.2 wrote $nm records of the loader's programs, inject $ns; $why"
	KEEP_ALSO=()
	complete "$m" || echo "      $mode: perf 7.2's own records miss some of the loader's functions: $(proportions "$m" | awk '{print $1, $2}' | tr '\n' ' ')"
	echo "      $mode: the loader's BPF_METADATA records: perf 7.2 wrote $nm, inject $ns"
	rm -rf "$BPFFS"/l*
	rm -rf "$d"
}

# complete COUNTS: metadata's COUNTS are those of whole loads of the
# fixture: one record per function of each of its three programs, the
# subprogram two of them share twice (1:2:1:1:1).
complete() {
	proportions "$1" | awk '{n++; w = ($2 ~ /_sub_add$|_sub_add\|/) ? 2 : 1; if ($1 != w) bad = 1} END {exit (bad || n != 5)}'
}

# distinct COUNTS: the distinct records of metadata's COUNTS.
distinct() { awk '{$1 = ""; print}' <<<"$1"; }

# proportions COUNTS: the distinct records of metadata's COUNTS, each with
# its count divided by the greatest common divisor of them all.
proportions() {
	awk 'function gcd(a, b) { while (b) { t = b; b = a % b; a = t } return a }
		{ c[NR] = $1; $1 = ""; r[NR] = $0; g = gcd(g, c[NR]) }
		END { for (i = 1; i <= NR; i++) print c[i] / g, r[i] }' <<<"$1"
}

echo "soak: ${#MODES[@]} modes, ${PER} s each, -F $FREQ, a load every $LOAD_MS ms; perf 6.1 $PERF, perf 7.2 $PERF_MODERN"
start=$(date +%s)
for mode in "${MODES[@]}"; do
	record "$mode"
done
echo "soak: $RECORDINGS recordings ($SAMPLES samples, $LOADER_SAMPLES in the loader's programs), $INJECTED BPF_METADATA records injected, $CHECKS checks, $DIFFS differ, $SKIPS files perf could not read; $(($(date +%s) - start)) s"
if [ "$DIFFS" -gt 0 ]; then
	echo "soak: the files that differ are kept in: ${!KEPT[*]}"
	exit 1
fi
