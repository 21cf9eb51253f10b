#!/bin/bash
# regen.sh: regenerate testdata/corpus/<name>.counts for every recording <name> in
# this directory (<name> or <name>.zst, see README.md)
#
#   testdata/corpus/regen.sh       (go test ./reader -run CorpusPerfCounts -update runs it)
#   env: BPFMETA_MODERN_PERF (a perf >= 6.17; default: what scripts/modern-perf.sh installs)
#        PERF_STOCK          (default: the system's perf, 6.1 on Debian 12)
# Needs bash, python3, zstd, grep, awk, sort. Writes only into this directory.
#
# HOW THE COUNTS ARE DERIVED
# 1. Which perf. `PERF_MODERN script -D -i NAME` runs first (cwd = corpus dir). If it exits 0
#    and prints none of the fatal messages below, it "read the file to the end" and its
#    counts are used. Otherwise the same is tried with PERF_STOCK. Otherwise "perf none".
#    Fatal messages: failed to process | processing failed | bad event header size |
#    incompatible file format | Couldn't decompress | failed to read event | ^Error: |
#    ^ERROR: (7.2: "ERROR: at offset X: T event size N is not 8-byte aligned, aborting")
#    Not fatal (perf itself treats them as the end or a skip, exit 0):
#    "unexpected end of event stream" (pipe: the last header announces more bytes than
#    the stream has left; perf's pipe reader does `goto done`), "Unsupported header type N"
#    (7.2 skips types >= its HEADER_MAX, e.g. simpleperf's 32775, without dumping them),
#    "EVENT_TYPE (65) event size 24 too small (min 80), skipping" (7.2 drops such records
#    without dumping or counting them; 6.1 dumps them).
# 2. Which lines. A record counts once per line matching
#        ^(0x<hex>|0)@<path> \[0x<hex>\]: event: <N>$
#    i.e. dump_event()'s first line ("<offset>@<file or pipe> [<size>]: event: <type>").
#    * Records inside COMPRESSED(81)/COMPRESSED2(83) are dumped one by one, each with the
#      OFFSET OF ITS OUTER RECORD (several lines share one offset). The outer record
#      itself is NEVER dumped (perf dumps it only if its handler fails), so 81 and 83
#      never appear as "type" lines.
#    * Lines whose path is "(null)" are records perf SYNTHESIZES while reading (e.g. the
#      HEADER_ATTR(64) cs-etm/arm-spe decoding creates); they are not in the file. They
#      are listed as "synth" lines, not "type" lines. (report -D prints one more of them
#      than script -D for cs-etm files; otherwise report -D and script -D print the same
#      event lines for every corpus file with both perfs.)
#    * Kernel-type records are dumped when delivered (after perf's reordering), user types
#      (>= 64) when read: a failing run therefore under-reports records queued before
#      the failure. That is why only a run that reached the end is used.
#    * `report --stats` counts the same records PLUS one per outer COMPRESSED/COMPRESSED2
#      record (TOTAL = dumped + outer), never the "(null)" ones. In pipe mode it is not
#      usable: with COMPRESSED records both perfs fail ("Compressed events found but
#      HEADER_COMPRESSED not set"), with HEADER_TRACING_DATA both stop right after it
#      ("unexpected end of event stream", exit 0). So --stats is only a cross-check here.
# 3. Outer COMPRESSED/COMPRESSED2 records are counted by the small independent walker
#    below (top-level records, perf's framing: +auxtrace.size after 71, +tracing_data.size
#    after 66 when header.size <= 16 (perf writes 12 or 16; simpleperf's 66 has the data
#    inside header.size); the pre-upstream Google pipe variant, whose first record is
#    type 69 with a size that is not a multiple of 8, has no trailing payloads at all).
#    Where the chosen perf's `report --stats` works (file mode), its "COMPRESSED events" /
#    "COMPRESSED2 events" must equal the walker's count, else this script fails.
#
# FILE FORMAT (one item per line, in this order; nothing else):
#   perf <version> rc=<exit status>     perf whose counts follow; or "perf none"
#   error <version> rc=<rc> <line>       a perf that was tried and did not read to the end,
#                                        with its first fatal message (or last stderr line)
#   note <n>x <message>                  non-fatal messages of the chosen perf about skipped
#                                        records or the stream end (sorted, counted)
#   type <N> count <M>                   records dumped, by type number, ascending
#   synth <N> count <M>                  "(null)" records perf synthesized itself
#   outer 81 count <M>                   top-level COMPRESSED records (walker), always present
#   outer 83 count <M>                   top-level COMPRESSED2 records (walker), always present
#   note outer walk stopped: <why>       only if the walker could not frame the whole data
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PERF_MODERN=$("$REPO/scripts/modern-perf.sh")
PERF_STOCK=${PERF_STOCK:-$(command -v perf)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# perf reads every recording by its plain name, in one directory
CORPUS=$TMP/corpus
mkdir "$CORPUS"
for f in "$HERE"/*.data "$HERE"/*.data.zst; do
	case $f in
	*.zst) zstd -q -d "$f" -o "$CORPUS/$(basename "$f" .zst)" ;;
	*) ln -s "$f" "$CORPUS/" ;;
	esac
done

ver() { "$1" version | awk '{print $3}'; }
VMOD=$(ver "$PERF_MODERN")
VSTK=$(ver "$PERF_STOCK")
FATAL="failed to process|processing failed|bad event header size|incompatible file format|Couldn't decompress|failed to read event|^Error:|^ERROR:"
NOTE="Unsupported header type|skipping|unexpected end of event stream|Failed to process|Invalid HEADER|aborting"
EVRX='^(0x[0-9a-f]+|0)@[^ ]+ \[0x[0-9a-f]+\]: event: [0-9]+$'

walker() { # FILE -> "outer 81 count N", "outer 83 count N" [, "note outer walk stopped: ..."]
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
m = d[:8]
if m == b'PERFILE2': e = '<'
elif m == b'2ELIFREP': e = '>'
elif m == b'PERFFILE':  # v1: byte order from attr_size (perf's try_all_file_abis)
    a, = struct.unpack_from('<Q', d, 16)
    e = '<' if a in (80, 88, 96, 112, 120, 128, 136, 144, 152) else '>'
else: sys.exit('bad magic')
hsize, = struct.unpack_from(e + 'Q', d, 8)
if hsize == 16:
    start, end = 16, len(d)
else:
    start, dsize = struct.unpack_from(e + 'QQ', d, 40)
    end = start + dsize
google = False
if hsize == 16 and len(d) >= 24:
    t, _, s = struct.unpack_from(e + 'IHH', d, 16)
    google = t == 69 and s % 8 != 0
off, n, stop = start, {81: 0, 83: 0}, None
while off < end:
    if off + 8 > end: stop = f'{end - off} bytes left at {off:#x}, less than a header'; break
    t, misc, size = struct.unpack_from(e + 'IHH', d, off)
    if size < 8: stop = f'size {size} < 8 at {off:#x} type {t}'; break
    if off + size > end: stop = f'record at {off:#x} type {t} size {size} runs past the end {end:#x}'; break
    extra = 0
    if not google and t == 71: extra, = struct.unpack_from(e + 'Q', d, off + 8)
    if not google and t == 66 and size <= 16: extra, = struct.unpack_from(e + 'I', d, off + 8)
    if t in n: n[t] += 1
    off += size + extra
for t in (81, 83): print(f'outer {t} count {n[t]}')
if stop: print(f'note outer walk stopped: {stop}')
PY
}

run() { # PERF NAME PREFIX -> PREFIX.{out,err,rc}
	set +e
	(cd "$CORPUS" && "$1" script -D -i "$2" >"$3.out" 2>"$3.err")
	echo $? >"$3.rc"
	set -e
}

readable() { # PREFIX -> 0 if rc 0 and no fatal message
	[ "$(cat "$1.rc")" = 0 ] && ! grep -aqE "$FATAL" "$1.err" "$1.out"
}

errline() { # PREFIX -> first fatal line, else last non-empty stderr line
	local l
	l=$(grep -ahE "$FATAL" "$1.err" "$1.out" | head -n1 || true)
	[ -n "$l" ] || l=$(grep -a . "$1.err" | tail -n1 || true)
	echo "$l"
}

stats_outer() { # PERF NAME -> "81 N" / "83 N" from report --stats, if it works
	local o
	o=$(cd "$CORPUS" && "$1" report --stats -i "$2" 2>/dev/null) || return 0
	echo "$o" | awk '/Aggregated stats/{a=1} a && $1=="COMPRESSED" {print "81", $3} a && $1=="COMPRESSED2" {print "83", $3}'
	echo "$o" | grep -q 'TOTAL events' && echo "ok"
	return 0
}

n=0
for path in "$CORPUS"/*.data; do
	name=$(basename "$path")
	out=$HERE/$name.counts
	chosen=""
	{
		run "$PERF_MODERN" "$name" "$TMP/m"
		if readable "$TMP/m"; then
			chosen=$TMP/m; cperf=$PERF_MODERN
			echo "perf $VMOD rc=$(cat "$TMP/m.rc")"
		else
			run "$PERF_STOCK" "$name" "$TMP/s"
			if readable "$TMP/s"; then
				chosen=$TMP/s; cperf=$PERF_STOCK
				echo "perf $VSTK rc=$(cat "$TMP/s.rc")"
				echo "error $VMOD rc=$(cat "$TMP/m.rc") $(errline "$TMP/m")"
			else
				echo "perf none"
				echo "error $VMOD rc=$(cat "$TMP/m.rc") $(errline "$TMP/m")"
				echo "error $VSTK rc=$(cat "$TMP/s.rc") $(errline "$TMP/s")"
			fi
		fi
		if [ -n "$chosen" ]; then
			{ grep -ahE "$NOTE" "$chosen.err" || true; } | sort | uniq -c | awk '{c=$1; sub(/^ *[0-9]+ /, ""); print "note " c "x " $0}'
			{ grep -aE "$EVRX" "$chosen.out" | grep -av '@(null) ' || true; } | awk '{print $NF}' | sort -n | uniq -c | awk '{print "type " $2 " count " $1}'
			{ grep -aE "$EVRX" "$chosen.out" | grep -a '@(null) ' || true; } | awk '{print $NF}' | sort -n | uniq -c | awk '{print "synth " $2 " count " $1}'
		fi
		walker "$path" | tee "$TMP/w"
	} >"$out.tmp"
	# cross-check the walker's outer counts against perf's own --stats where that works
	if [ -n "$chosen" ]; then
		s=$(stats_outer "$cperf" "$name")
		if echo "$s" | grep -q '^ok$'; then
			for t in 81 83; do
				w=$(awk -v t=$t '$1=="outer" && $2==t {print $4}' "$TMP/w")
				p=$(echo "$s" | awk -v t=$t '$1==t {print $2}')
				if [ "${p:-0}" != "$w" ]; then
					echo "regen.sh: $name: walker counts $w outer type $t records, perf report --stats ${p:-0}" >&2
					exit 1
				fi
			done
		fi
	fi
	mv "$out.tmp" "$out"
	n=$((n + 1))
done
echo "regen.sh: wrote $n .counts files into $HERE (modern $VMOD, stock $VSTK)"
