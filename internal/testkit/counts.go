package testkit

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Counts is what a NAME.counts file beside a corpus recording says perf
// counted in it (testdata/corpus/regen.sh and threads/regen.sh document how
// they were taken from perf >= 6.17 and perf 6.1).
type Counts struct {
	Perf    string                      // "perf 7.2.13 rc=0", "perf 6.1.192 rc=0", or "perf none": no perf reads it
	Types   map[perfdata.RecordType]int // perf script -D's event lines, by type (compressed records' contents)
	Outer   map[perfdata.RecordType]int // the top-level COMPRESSED and COMPRESSED2 records
	Skipped map[perfdata.RecordType]int // records perf 7.2 reads but neither dumps nor counts
}

var (
	countsType  = regexp.MustCompile(`^type (\d+) count (\d+)$`)
	countsOuter = regexp.MustCompile(`^outer (\d+) count (\d+)$`)
	// Notes of records perf skips: (count, type).
	countsSkipped = []*regexp.Regexp{
		// types >= perf 7.2's HEADER_MAX (simpleperf's)
		regexp.MustCompile(`^note (\d+)x Unsupported header type (\d+),`),
		// HEADER_EVENT_TYPE records shorter than perf 7.2 accepts
		regexp.MustCompile(`^note (\d+)x .*[A-Z_]+ \((\d+)\) event size \d+ too small`),
	}
)

// ReadCounts reads the .counts file at path.
func ReadCounts(t testing.TB, path string) Counts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (regen.sh beside it makes it; go test -update ./reader runs it)", err)
	}
	defer f.Close()
	c := Counts{Types: map[perfdata.RecordType]int{}, Outer: map[perfdata.RecordType]int{}, Skipped: map[perfdata.RecordType]int{}}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if g := countsType.FindStringSubmatch(l); g != nil {
			c.Types[perfdata.RecordType(atoi(g[1]))] = atoi(g[2])
		} else if g := countsOuter.FindStringSubmatch(l); g != nil {
			c.Outer[perfdata.RecordType(atoi(g[1]))] = atoi(g[2])
		} else if strings.HasPrefix(l, "perf ") {
			c.Perf = l
		}
		for _, re := range countsSkipped {
			if g := re.FindStringSubmatch(l); g != nil {
				c.Skipped[perfdata.RecordType(atoi(g[2]))] += atoi(g[1])
			}
		}
	}
	if err := sc.Err(); err != nil || c.Perf == "" {
		t.Fatalf("%s: %v, perf line %q", path, err, c.Perf)
	}
	return c
}

// Regen runs dir's regen.sh, which takes its recordings' .counts files
// from perf (for go test -update).
func Regen(t testing.TB, dir string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(dir, "regen.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("regen.sh: %v\n%s", err, out)
	}
}
