package main

// Reading recordings with perf: the records perf script -D prints, without
// the offsets (which a conversion legitimately changes), for comparing
// what two perf runs read.

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// scriptRecord is one record as perf script -D prints it: the
// "OFFSET@FILE [SIZE]: event: TYPE" line without OFFSET@FILE, and the lines
// after it (raw bytes, the decoded line without its offset, details).
type scriptRecord struct {
	typ   int
	lines []string
}

type scriptRun struct {
	perf    string
	records []scriptRecord
	stderr  string
	err     error // exit status, or the first fatal message
}

var (
	scriptEventLine = regexp.MustCompile(`^(?:0x[0-9a-f]+|0)@\S* (\[0x[0-9a-f]+\]: event: (\d+))$`)
	// "[CPU] [TIME] OFFSET [SIZE]: PERF_RECORD_..."
	scriptDecodedOffset = regexp.MustCompile(`^((?:\d+ )*)0x[0-9a-f]+( \[0x[0-9a-f]+\]: )`)
	// The lines of the dump of a record: raw bytes and AUX data ("."),
	// details ("...", " ..."), the decoded line, CoreSight packets ("Idx:"),
	// blank lines. The normal perf script output between the dumps (the
	// sample line and its callchain) is not part of the record: it names
	// the event as perf names its evsel, which in pipe mode does not come
	// from HEADER_EVENT_DESC.
	scriptDump = regexp.MustCompile(`^(\.|\s?\.\.\.|Idx:|$|(?:\d+ )*0x[0-9a-f]+ \[0x[0-9a-f]+\]: )`)
	// What regen.sh (testdata/corpus) takes as perf not reading a file to the end.
	scriptFatal = regexp.MustCompile(`(?m)failed to process|processing failed|bad event header size|incompatible file format|Couldn't decompress|failed to read event|^Error:|^ERROR:`)
)

// perfScript runs perf script -D on path, or on stdin (through a real pipe)
// for path "-".
func perfScript(t testing.TB, perf, path string, stdin []byte) scriptRun {
	t.Helper()
	cmd := exec.Command(perf, "script", "-D", "-i", path)
	if path == "-" {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	run := scriptRun{perf: perf, stderr: stderr.String()}
	err := cmd.Run()
	run.stderr = stderr.String()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%s: %v", perf, err)
		}
		run.err = fmt.Errorf("%s script -D -i %s: %v: %s", perf, path, err, lastLine(run.stderr))
	} else if m := scriptFatal.FindString(run.stderr); m != "" {
		run.err = fmt.Errorf("%s script -D -i %s: %q in: %s", perf, path, m, firstMatchLine(run.stderr, m))
	}
	var cur *scriptRecord
	for _, l := range strings.Split(stdout.String(), "\n") {
		if g := scriptEventLine.FindStringSubmatch(l); g != nil {
			typ, _ := strconv.Atoi(g[2])
			run.records = append(run.records, scriptRecord{typ: typ, lines: []string{g[1]}})
			cur = &run.records[len(run.records)-1]
			continue
		}
		if cur == nil || !scriptDump.MatchString(l) {
			continue
		}
		cur.lines = append(cur.lines, normalizeScriptLine(l))
	}
	return run
}

// perf script aligns the event name to the longest name it knows, and
// copies the vDSO to a file of a random name.
var scriptVDSO = regexp.MustCompile(`perf-vdso\.so-[A-Za-z0-9]{6}`)

// normalizeScriptLine drops from a line what a conversion may change without
// changing the record: the record's offset and the column alignment.
func normalizeScriptLine(l string) string {
	if strings.HasPrefix(l, ".") {
		return l // raw bytes
	}
	l = scriptDecodedOffset.ReplaceAllString(l, "${1}OFFSET${2}")
	l = scriptVDSO.ReplaceAllString(l, "perf-vdso.so-XXXXXX")
	return strings.Join(strings.Fields(l), " ")
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return ls[len(ls)-1]
}

func firstMatchLine(s, m string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, m) {
			return l
		}
	}
	return ""
}

// prelude are the types of the records a pipe stream carries instead of a
// file's header sections (HEADER_ATTR, HEADER_EVENT_TYPE,
// HEADER_TRACING_DATA, HEADER_BUILD_ID, HEADER_FEATURE).
var prelude = []int{64, 65, 66, 67, 80}

// perfQuirk is a way perf reads a converted recording differently from its
// input although the records are the same; drop removes the lines that
// differ, on both sides.
type perfQuirk struct {
	why  string
	drop *regexp.Regexp
}

// apply removes the lines q.drop matches from every record.
func (r scriptRun) apply(q *perfQuirk) scriptRun {
	if q == nil {
		return r
	}
	out := r
	out.records = nil
	for _, rec := range r.records {
		var ls []string
		for _, l := range rec.lines {
			if !q.drop.MatchString(l) {
				ls = append(ls, l)
			}
		}
		out.records = append(out.records, scriptRecord{rec.typ, ls})
	}
	return out
}

// without returns the run's records without those of the given types.
func (r scriptRun) without(types []int) scriptRun {
	out := r
	out.records = nil
	for _, rec := range r.records {
		if !slices.Contains(types, rec.typ) {
			out.records = append(out.records, rec)
		}
	}
	return out
}

// compareScript fails the test unless perf read got (which it must have
// read to the end) with the records of want, in the same order, and says
// whether it did.
func compareScript(t testing.TB, what string, want, got scriptRun) bool {
	t.Helper()
	if got.err != nil {
		t.Errorf("%s: perf does not read it: %v", what, got.err)
		return false
	}
	if len(got.records) == 0 {
		t.Errorf("%s: perf read no records", what)
		return false
	}
	for i := 0; i < max(len(want.records), len(got.records)); i++ {
		switch {
		case i >= len(want.records):
			t.Errorf("%s: %d more records than expected, the first: %s", what, len(got.records)-i, strings.Join(got.records[i].lines, "\n"))
		case i >= len(got.records):
			t.Errorf("%s: %d records missing, the first: %s", what, len(want.records)-i, strings.Join(want.records[i].lines, "\n"))
		case !slices.Equal(want.records[i].lines, got.records[i].lines):
			t.Errorf("%s: record %d of %d differs: %s", what, i, len(want.records), lineDiff(want.records[i].lines, got.records[i].lines))
		default:
			continue
		}
		return false
	}
	return true
}

// lineDiff shows the first line where two records differ, with the line
// that says which record it is.
func lineDiff(want, got []string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	at := func(ls []string) string {
		if i >= len(ls) {
			return "(end)"
		}
		return ls[i]
	}
	return fmt.Sprintf("%s\n  line %d:\n  want: %s\n  got:  %s", want[0], i, at(want), at(got))
}
