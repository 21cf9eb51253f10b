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

// TestCompressedAcrossRecords: a busy perf -z recording's zstd blocks
// start in one compressed record perf filled (perf 6.1's COMPRESSED of
// 65,535 bytes, perf 7.2's COMPRESSED2 of 65,528) and end in the next,
// after a FINISHED_ROUND (testkit.BusyCompressed makes that shape; real
// ones are in testdata/corpus, perf6.1_x86_64_busy_zstd_capped.data and
// perf7.2_x86_64_busy_zstd2_capped.data). Every command reads it as perf
// does, and inject, strip and convert pass its records through untouched,
// in file and pipe format.
func TestCompressedAcrossRecords(t *testing.T) {
	for _, c := range []struct {
		c2     bool
		capped int
	}{{false, 65535}, {true, 65528}} {
		dir := t.TempDir()
		bo := binary.LittleEndian
		pipe := testkit.NewStream(bo)
		pipe.Compressed2 = c.c2
		pipe.BusyCompressed(3, true)
		pipePath := filepath.Join(dir, "busy.pipe.data")
		if err := os.WriteFile(pipePath, pipe.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		recs := testkit.NewRecords(bo)
		recs.Compressed2 = c.c2
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
				if len(r) == c.capped {
					capped++
				}
			}
			if capped < 3 {
				t.Fatalf("%s: %d compressed records of %d bytes, want 3 or more", in, capped, c.capped)
			}
			for _, cmd := range []struct {
				args []string
				same bool // every top-level record the same
			}{
				{[]string{"inject", "--snapshot", snap}, true},
				{[]string{"strip"}, true},
				{[]string{"convert"}, false},
			} {
				out := filepath.Join(dir, "out.data")
				os.Remove(out)
				r := bpfmeta(t, nil, append(cmd.args, "-i", in, "-o", out)...)
				if r.code != exitOK {
					t.Errorf("%s %s: %v", cmd.args[0], filepath.Base(in), r)
					continue
				}
				got := readRecording(t, out)
				if !sameRecords(want.compressedRecords(), got.compressedRecords()) {
					t.Errorf("%s %s (%d bytes): the compressed records changed", cmd.args[0], filepath.Base(in), c.capped)
				}
				if cmd.same && !sameRecords(topRaw(want), topRaw(got)) {
					t.Errorf("%s %s (%d bytes): the records changed", cmd.args[0], filepath.Base(in), c.capped)
				}
			}
			r := bpfmeta(t, nil, "dump", "--stats", "-i", in)
			if r.code != exitOK || !strings.Contains(r.stdout, "24000") {
				t.Errorf("dump --stats %s (%d bytes): %v\n%s", filepath.Base(in), c.capped, r, r.stdout)
			}
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
