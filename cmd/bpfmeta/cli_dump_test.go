package main

// dump --stats counts records as perf report --stats does.

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// corpusCounts is what testdata/corpus/NAME.counts says perf counted in a
// corpus file (testdata/corpus/regen.sh documents how).
type corpusCounts struct {
	perf    string                      // "perf 7.2.13 rc=0", "perf 6.1.192 rc=0", "perf none"
	types   map[perfdata.RecordType]int // script -D event lines, by type
	outer   map[perfdata.RecordType]int // top-level COMPRESSED/COMPRESSED2
	skipped map[perfdata.RecordType]int // records perf 7.2 reads but neither dumps nor counts
}

var (
	countsType    = regexp.MustCompile(`^type (\d+) count (\d+)$`)
	countsOuter   = regexp.MustCompile(`^outer (\d+) count (\d+)$`)
	countsSkipped = []*regexp.Regexp{
		// types >= perf 7.2's HEADER_MAX (simpleperf's)
		regexp.MustCompile(`^note (\d+)x Unsupported header type (\d+),`),
		// HEADER_EVENT_TYPE records shorter than 7.2 accepts
		regexp.MustCompile(`^note (\d+)x .*[A-Z_]+ \((\d+)\) event size \d+ too small`),
	}
)

func readCorpusCounts(t *testing.T, name string) corpusCounts {
	t.Helper()
	path := filepath.Join(testkit.CorpusDir(), name+".counts")
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (testdata/corpus/regen.sh makes it)", err)
	}
	defer f.Close()
	c := corpusCounts{types: map[perfdata.RecordType]int{}, outer: map[perfdata.RecordType]int{}, skipped: map[perfdata.RecordType]int{}}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if g := countsType.FindStringSubmatch(l); g != nil {
			c.types[perfdata.RecordType(atoi(g[1]))] = atoi(g[2])
		} else if g := countsOuter.FindStringSubmatch(l); g != nil {
			c.outer[perfdata.RecordType(atoi(g[1]))] = atoi(g[2])
		} else if strings.HasPrefix(l, "perf ") {
			c.perf = l
		}
		for _, re := range countsSkipped {
			if g := re.FindStringSubmatch(l); g != nil {
				c.skipped[perfdata.RecordType(atoi(g[2]))] += atoi(g[1])
			}
		}
	}
	if err := sc.Err(); err != nil || c.perf == "" {
		t.Fatalf("%s: %v, perf line %q", path, err, c.perf)
	}
	return c
}

// statsBlock is the "Aggregated stats:" block of a report --stats output:
// its lines, and the count of each name.
type statsBlock struct {
	lines  []string
	counts map[string]int
}

var statsLine = regexp.MustCompile(`^\s*(\S+) events:\s+(\d+)`)

func parseStats(out string) (statsBlock, bool) {
	// perf adds " (excludes AUX area (e.g. instruction trace) decoded /
	// synthesized events)" when it decodes AUX data, which dump does not.
	_, block, ok := strings.Cut(out, "\nAggregated stats:")
	if !ok {
		return statsBlock{}, false
	}
	_, block, _ = strings.Cut(block, "\n")
	b := statsBlock{counts: map[string]int{}}
	for _, l := range strings.Split(block, "\n") {
		g := statsLine.FindStringSubmatch(l)
		if g == nil || strings.HasSuffix(l, " stats:") {
			break // the per-event blocks, or the end
		}
		b.lines = append(b.lines, l)
		b.counts[g[1]], _ = strconv.Atoi(g[2])
	}
	return b, true
}

// TestDumpStats: dump --stats of every corpus file perf 7.2 reads is
// perf-modern report --stats's "Aggregated stats", line for line, except for
// the records perf 7.2 skips (counted by dump); where perf 7.2's report
// --stats cannot read a pipe stream (compressed records: "Compressed
// events found but HEADER_COMPRESSED not set"; HEADER_TRACING_DATA: it
// stops after it), the numbers are its script -D counts plus the outer
// compressed records, which is what report --stats counts in a file.
func TestDumpStats(t *testing.T) {
	perf := perfPath(t, modernPerf)
	for _, path := range corpusFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden := readCorpusCounts(t, name)
			r := bpfmeta(t, nil, "dump", "--stats", "-i", path)
			switch name {
			case corruptPipe:
				if r.code != exitFailure {
					t.Fatalf("%v, want exit 1", r)
				}
				oneLine(t, "the corrupt corpus file", r, path+": bad record size 0 (type SAMPLE) at "+corruptOffset)
				return
			case trailingPipe:
				if !strings.HasSuffix(r.stdout, "\n143 bytes at "+trailingOffset+" after the last record are not a record\n") {
					t.Errorf("no line about the 143 bytes at %s after the last record:\n%s", trailingOffset, r.stdout)
				}
			}
			if r.code != exitOK || r.stderr != "" {
				t.Fatalf("dump --stats: %v", r)
			}
			ours, ok := parseStats(r.stdout)
			if !ok {
				t.Fatalf("dump --stats has no Aggregated stats:\n%s", r.stdout)
			}
			if !strings.HasPrefix(golden.perf, "perf 7.2") {
				t.Logf("perf 7.2 does not read it (%s): not compared", golden.perf)
				return
			}
			cmd := exec.Command(perf, "report", "--stats", "-i", path)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("perf report --stats: %v\n%s", err, stderr.String())
			}
			theirs, ok := parseStats(stdout.String())
			pipeLimit := strings.Contains(stderr.String(), "Compressed events found but HEADER_COMPRESSED not set") ||
				strings.Contains(stderr.String(), "unexpected end of event stream") && golden.types[perfdata.RecordHeaderTracingData] > 0
			switch {
			case pipeLimit:
				theirs = statsBlock{counts: map[string]int{}}
				for typ, n := range golden.types {
					theirs.counts[typ.String()] += n
					theirs.counts["TOTAL"] += n
				}
				for typ, n := range golden.outer {
					if n > 0 {
						theirs.counts[typ.String()] += n
						theirs.counts["TOTAL"] += n
					}
				}
			case !ok:
				t.Fatalf("perf report --stats prints no Aggregated stats:\n%s", stderr.String())
			}
			want := theirs.counts
			for typ, n := range golden.skipped {
				want[typ.String()] += n
				want["TOTAL"] += n
			}
			for k, n := range want {
				if ours.counts[k] != n {
					t.Errorf("%s events: %d, perf says %d", k, ours.counts[k], n)
				}
			}
			for k, n := range ours.counts {
				if _, ok := want[k]; !ok {
					t.Errorf("%s events: %d, perf has none", k, n)
				}
			}
			if len(golden.skipped) == 0 && !pipeLimit && strings.Join(ours.lines, "\n") != strings.Join(theirs.lines, "\n") {
				t.Errorf("the lines differ from perf's:\n%s\nperf:\n%s", strings.Join(ours.lines, "\n"), strings.Join(theirs.lines, "\n"))
			}
		})
	}
}
