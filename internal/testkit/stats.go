package testkit

import (
	"bytes"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Stats is the "Aggregated stats:" block of perf report --stats (and of
// bpfmeta dump --stats, which prints it as perf does): its lines, and the
// count of each record name ("TOTAL", "SAMPLE", ...).
type Stats struct {
	Lines  []string
	Counts map[string]int
}

var statsLine = regexp.MustCompile(`^\s*(\S+) events:\s+(\d+)`)

// ParseStats reads the Aggregated stats block of a report --stats output
// (perf's print_stats(): the block, then a block per event, "NAME stats:",
// that repeats names); false where out has none.
func ParseStats(out string) (Stats, bool) {
	// perf adds " (excludes AUX area (e.g. instruction trace) decoded /
	// synthesized events)" when it decodes AUX data, which dump does not.
	_, block, ok := strings.Cut(out, "\nAggregated stats:")
	if !ok {
		return Stats{}, false
	}
	_, block, _ = strings.Cut(block, "\n")
	s := Stats{Counts: map[string]int{}}
	for _, l := range strings.Split(block, "\n") {
		g := statsLine.FindStringSubmatch(l)
		if g == nil || strings.HasSuffix(l, " stats:") {
			break // the per-event blocks, or the end
		}
		s.Lines = append(s.Lines, l)
		s.Counts[g[1]], _ = strconv.Atoi(g[2])
	}
	return s, true
}

// ReportStats runs perf report --stats on path and returns its Aggregated
// stats.
func ReportStats(t testing.TB, perf, path string) Stats {
	t.Helper()
	cmd := exec.Command(perf, "report", "--stats", "-i", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s report --stats -i %s: %v\n%s", perf, path, err, stderr.String())
	}
	s, ok := ParseStats(stdout.String())
	if !ok {
		t.Fatalf("%s report --stats -i %s prints no Aggregated stats:\n%s", perf, path, stderr.String())
	}
	return s
}
