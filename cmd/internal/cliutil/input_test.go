package cliutil

import (
	"testing"

	"github.com/bpfmeta/bpfmeta/cmd/internal/infile"
	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestInputHandsOutRuns: an Input, as the commands hand it to inject.Run
// and writer.Copy, passes its records on a run at a time, as the reader it
// embeds does (a wrapper that hid the runs would make inject take 2-3x
// the user time: every record by Next).
func TestInputHandsOutRuns(t *testing.T) {
	r, err := reader.Open(testkit.CorpusFile(t, "mstange_perf6.16_x86_64_sleep.data"), reader.Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	in := &Input{Input: &infile.Input{Reader: r}, Name: "sleep.data"}
	defer in.Close()
	runs := recrun.SourceOf(in)
	if runs == nil {
		t.Fatal("an Input hands out no runs")
	}
	passed := 0
	for {
		u := runs.Run()
		for {
			h, ok := u.Peek()
			if !ok {
				break
			}
			u.Take(h)
		}
		runs.Pass(u)
		passed += u.Len()
		if !in.Next() {
			break
		}
	}
	if err := in.Err(); err != nil {
		t.Fatal(err)
	}
	if c := in.Counts(); passed == 0 || passed*2 < int(c.Records) {
		t.Errorf("%d of %d records passed in runs", passed, c.Records)
	}
}
