package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestCompressedAcrossRecords: a busy perf 6.1 -z recording's zstd blocks
// start in one COMPRESSED record of 65,535 bytes and end in the next,
// after a FINISHED_ROUND (testkit.BusyCompressed makes that shape; a real
// one is in testdata/busy). Every command reads it as perf does, and
// inject, strip and convert pass its records through untouched, in file
// and pipe format.
func TestCompressedAcrossRecords(t *testing.T) {
	dir := t.TempDir()
	bo := binary.LittleEndian
	pipe := testkit.NewStream(bo)
	pipe.BusyCompressed(3, true)
	pipePath := filepath.Join(dir, "busy.pipe.data")
	if err := os.WriteFile(pipePath, pipe.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	recs := testkit.NewRecords(bo)
	recs.BusyCompressed(3, true)
	filePath := filepath.Join(dir, "busy.data")
	if err := testkit.WriteFile(filePath, bo, recs.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	snap := emptySnapshot(t)
	for _, in := range []string{pipePath, filePath} {
		want := readRecording(t, in)
		capped := 0
		for _, r := range want.compressedRecords() {
			if len(r) == 65535 {
				capped++
			}
		}
		if capped < 3 {
			t.Fatalf("%s: %d COMPRESSED records of 65,535 bytes, want 3 or more", in, capped)
		}
		for _, c := range []struct {
			args []string
			same bool // every top-level record the same
		}{
			{[]string{"inject", "--snapshot", snap}, true},
			{[]string{"strip"}, true},
			{[]string{"convert"}, false},
		} {
			out := filepath.Join(dir, "out.data")
			os.Remove(out)
			r := bpfmeta(t, nil, append(c.args, "-i", in, "-o", out)...)
			if r.code != exitOK {
				t.Errorf("%s %s: %v", c.args[0], filepath.Base(in), r)
				continue
			}
			got := readRecording(t, out)
			if !sameRecords(want.compressedRecords(), got.compressedRecords()) {
				t.Errorf("%s %s: the COMPRESSED records changed", c.args[0], filepath.Base(in))
			}
			if c.same && !sameRecords(topRaw(want), topRaw(got)) {
				t.Errorf("%s %s: the records changed", c.args[0], filepath.Base(in))
			}
		}
		r := bpfmeta(t, nil, "dump", "--stats", "-i", in)
		if r.code != exitOK || !strings.Contains(r.stdout, "24000") {
			t.Errorf("dump --stats %s: %v\n%s", filepath.Base(in), r, r.stdout)
		}
	}
}

func topRaw(rb readBack) [][]byte {
	var out [][]byte
	for _, r := range rb.Records {
		if !r.Compressed() && r.Type != perfdata.RecordHeaderAttr && r.Type != perfdata.RecordHeaderFeature {
			out = append(out, r.Raw)
		}
	}
	return out
}

func sameRecords(a, b [][]byte) bool { return slices.EqualFunc(a, b, bytes.Equal) }
