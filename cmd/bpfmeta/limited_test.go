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
// samples (inject then fails), a warning if not; one not found is not
// (issue 46 item 3).
func TestReportLimited(t *testing.T) {
	limit := fmt.Errorf("/var/lib/bpfmeta/h: the journal is too large to index: %w: memory budget of 40 MiB exhausted", bpfprog.ErrLimit)
	sum := &inject.Summary{Programs: []inject.Program{
		{ID: 7, Outcome: inject.Failed, Missing: inject.MissingWithSamples, Samples: 119, Err: limit},
		{ID: 8, Outcome: inject.Failed, Missing: inject.MissingOther, Err: limit},
		{ID: 9, Outcome: inject.NotFound, Missing: inject.MissingWithSamples, Samples: 3, Err: fmt.Errorf("program 9: %w", bpfprog.ErrNotFound)},
	}}
	var b strings.Builder
	if n := reportLimited(&b, "perf.data", sum); n != 1 {
		t.Errorf("%d with samples, want 1", n)
	}
	out := b.String()
	for _, want := range []string{"bpfmeta: error: perf.data: program 7 (", "119 samples): /var/lib/bpfmeta/h: the journal is too large to index", "bpfmeta: warning: perf.data: program 8 ("} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "program 9") {
		t.Errorf("a program not found is listed as limited:\n%s", out)
	}
}
