package reader_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// The corpus directory holds, per recording, the records perf itself counts
// in it (NAME.counts: testdata/corpus/regen.sh documents how they were taken
// from perf >= 6.17 and perf 6.1; go test -update runs it).

type perfCounts struct {
	perf    string // "perf 7.2.13 rc=0", or "perf none"
	types   map[perfdata.RecordType]int
	outer   map[perfdata.RecordType]int
	skipped map[perfdata.RecordType]int // records perf reads but does not dump
}

var (
	typeLine = regexp.MustCompile(`^type (\d+) count (\d+)$`)
	outLine  = regexp.MustCompile(`^outer (\d+) count (\d+)$`)
	// perf 7.2 skips simpleperf's types (>= its HEADER_MAX) with this warning
	unsupported = regexp.MustCompile(`^note (\d+)x Unsupported header type (\d+),`)
	// and drops old HEADER_EVENT_TYPE records that are too small
	tooSmall = regexp.MustCompile(`^note (\d+)x .*[A-Z_]+ \((\d+)\) event size \d+ too small`)
)

// countTypes counts the records r hands out by type, as perf script -D
// dumps them (compressed records' contents), and the top-level compressed
// records apart.
func countTypes(r *reader.Reader) (got, outer map[perfdata.RecordType]int) {
	got, outer = map[perfdata.RecordType]int{}, map[perfdata.RecordType]int{}
	for r.Next() {
		rec := r.Record()
		if rt := rec.Header.Type; !rec.Compressed() && (rt == perfdata.RecordCompressed || rt == perfdata.RecordCompressed2) {
			outer[rt]++
			continue
		}
		got[rec.Header.Type]++
	}
	return got, outer
}

func readCounts(t *testing.T, path string) perfCounts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to make it)", err)
	}
	defer f.Close()
	c := perfCounts{types: map[perfdata.RecordType]int{}, outer: map[perfdata.RecordType]int{}, skipped: map[perfdata.RecordType]int{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
		if g := typeLine.FindStringSubmatch(l); g != nil {
			c.types[perfdata.RecordType(atoi(g[1]))] = atoi(g[2])
		} else if g := outLine.FindStringSubmatch(l); g != nil {
			c.outer[perfdata.RecordType(atoi(g[1]))] = atoi(g[2])
		} else if g := unsupported.FindStringSubmatch(l); g != nil {
			c.skipped[perfdata.RecordType(atoi(g[2]))] += atoi(g[1])
		} else if g := tooSmall.FindStringSubmatch(l); g != nil {
			c.skipped[perfdata.RecordType(atoi(g[2]))] += atoi(g[1])
		} else if strings.HasPrefix(l, "perf ") {
			c.perf = l
		}
	}
	return c
}

// TestCorpusPerfCounts: every record perf processes in a corpus file (the
// records inside compressed records included), the reader hands out too,
// and as many of each type.
func TestCorpusPerfCounts(t *testing.T) {
	if *testkit.Update {
		testkit.PerfModern(t)
		testkit.PerfStock(t)
		out, err := exec.Command(filepath.Join(testkit.CorpusDir(), "regen.sh")).CombinedOutput()
		if err != nil {
			t.Fatalf("regen.sh: %v\n%s", err, out)
		}
	}
	for _, name := range testkit.CorpusNames(t) {
		t.Run(name, func(t *testing.T) {
			want := readCounts(t, filepath.Join(testkit.CorpusDir(), name+".counts"))
			r := openFile(t, corpusFile(t, name), reader.Options{Decompress: true})
			got, outer := countTypes(r)
			for _, rt := range []perfdata.RecordType{perfdata.RecordCompressed, perfdata.RecordCompressed2} {
				if outer[rt] != want.outer[rt] {
					t.Errorf("outer %v records: %d, want %d", rt, outer[rt], want.outer[rt])
				}
			}
			if want.perf == "perf none" {
				return // no perf reads it: the MANIFEST test checks the reader
			}
			if err := r.Err(); err != nil {
				t.Fatalf("%s reads it to the end, the reader stops: %v", want.perf, err)
			}
			for rt, n := range got {
				if w := want.types[rt] + want.skipped[rt]; n != w {
					t.Errorf("%v records: %d, %s counts %d", rt, n, want.perf, w)
				}
			}
			for rt, n := range want.types {
				if got[rt] == 0 {
					t.Errorf("%v records: none, %s counts %d", rt, want.perf, n)
				}
			}
		})
	}
}
