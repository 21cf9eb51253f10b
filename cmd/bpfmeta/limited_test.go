package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
)

// A program left without metadata because the source is over a limit
// (a journal too large to index) is said without -v: an error if it has
// samples (inject then fails; said even with -q), a warning if not; one
// not found is not (issue 46 item 3).
func TestReportLimited(t *testing.T) {
	limit := fmt.Errorf("/var/lib/bpfmeta/h: the journal is too large to index: %w: memory budget of 40 MiB exhausted", bpfprog.ErrLimit)
	sum := &inject.Summary{Programs: []inject.Program{
		{ID: 7, Outcome: inject.Failed, Missing: inject.MissingWithSamples, Samples: 119, Err: limit},
		{ID: 8, Outcome: inject.Failed, Missing: inject.MissingOther, Err: limit},
		{ID: 9, Outcome: inject.NotFound, Missing: inject.MissingWithSamples, Samples: 3, Err: fmt.Errorf("program 9: %w", bpfprog.ErrNotFound)},
	}}
	var errs, warns strings.Builder
	if n := reportLimited(&errs, &warns, "perf.data", sum); n != 1 {
		t.Errorf("%d with samples, want 1", n)
	}
	for _, c := range []struct {
		out  *strings.Builder
		want string
	}{
		{&errs, "bpfmeta: error: perf.data: program 7 ("},
		{&errs, "119 samples): /var/lib/bpfmeta/h: the journal is too large to index"},
		{&warns, "bpfmeta: warning: perf.data: program 8 ("},
	} {
		if !strings.Contains(c.out.String(), c.want) {
			t.Errorf("no %q in\n%s", c.want, c.out)
		}
	}
	out := errs.String() + warns.String()
	if strings.Contains(out, "program 9") {
		t.Errorf("a program not found is listed as limited:\n%s", out)
	}
}

// TestFailedOutput: an inject that fails after the copy says "no output
// written" only where nothing of it is left: a file, or a stream held back;
// a stream not held back has had the recording.
func TestFailedOutput(t *testing.T) {
	if got := failedOutput(true, "out.data"); got != "no output written" {
		t.Errorf("committed only: %q", got)
	}
	if got := failedOutput(false, "stdout"); got != "stdout has had the recording without their metadata" {
		t.Errorf("a stream: %q", got)
	}
}
