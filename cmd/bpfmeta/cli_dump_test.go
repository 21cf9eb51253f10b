package main

// dump --stats counts records as perf report --stats does.

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestDumpStats: dump --stats of every corpus file perf 7.2 reads is
// perf-modern report --stats's "Aggregated stats", line for line, except for
// the records perf 7.2 skips (counted by dump); where perf 7.2's report
// --stats cannot read a pipe stream (compressed records: "Compressed
// events found but HEADER_COMPRESSED not set"; HEADER_TRACING_DATA: it
// stops after it), the numbers are its script -D counts plus the outer
// compressed records, which is what report --stats counts in a file.
func TestDumpStats(t *testing.T) {
	perf := perfPath(t, modernPerf)
	for _, path := range testkit.CorpusFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden := testkit.ReadCounts(t, filepath.Join(testkit.CorpusDir(), name+".counts"))
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
			ours, ok := testkit.ParseStats(r.stdout)
			if !ok {
				t.Fatalf("dump --stats has no Aggregated stats:\n%s", r.stdout)
			}
			if !strings.HasPrefix(golden.Perf, "perf 7.2") {
				t.Logf("perf 7.2 does not read it (%s): not compared", golden.Perf)
				return
			}
			cmd := exec.Command(perf, "report", "--stats", "-i", path)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("perf report --stats: %v\n%s", err, stderr.String())
			}
			theirs, ok := testkit.ParseStats(stdout.String())
			pipeLimit := strings.Contains(stderr.String(), "Compressed events found but HEADER_COMPRESSED not set") ||
				strings.Contains(stderr.String(), "unexpected end of event stream") && golden.Types[perfdata.RecordHeaderTracingData] > 0
			switch {
			case pipeLimit:
				theirs = testkit.Stats{Counts: map[string]int{}}
				for typ, n := range golden.Types {
					theirs.Counts[typ.String()] += n
					theirs.Counts["TOTAL"] += n
				}
				for typ, n := range golden.Outer {
					if n > 0 {
						theirs.Counts[typ.String()] += n
						theirs.Counts["TOTAL"] += n
					}
				}
			case !ok:
				t.Fatalf("perf report --stats prints no Aggregated stats:\n%s", stderr.String())
			}
			want := theirs.Counts
			for typ, n := range golden.Skipped {
				want[typ.String()] += n
				want["TOTAL"] += n
			}
			for k, n := range want {
				if ours.Counts[k] != n {
					t.Errorf("%s events: %d, perf says %d", k, ours.Counts[k], n)
				}
			}
			for k, n := range ours.Counts {
				if _, ok := want[k]; !ok {
					t.Errorf("%s events: %d, perf has none", k, n)
				}
			}
			if len(golden.Skipped) == 0 && !pipeLimit && strings.Join(ours.Lines, "\n") != strings.Join(theirs.Lines, "\n") {
				t.Errorf("the lines differ from perf's:\n%s\nperf:\n%s", strings.Join(ours.Lines, "\n"), strings.Join(theirs.Lines, "\n"))
			}
		})
	}
}
