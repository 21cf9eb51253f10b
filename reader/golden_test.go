package reader_test

import (
	"path/filepath"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
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

// TestCorpusPerfCounts: every record perf processes in a corpus file (the
// records inside compressed records included), the reader hands out too,
// and as many of each type.
func TestCorpusPerfCounts(t *testing.T) {
	if *testkit.Update {
		testkit.PerfModern(t)
		testkit.PerfStock(t)
		testkit.Regen(t, testkit.CorpusDir())
	}
	for _, name := range testkit.CorpusNames(t) {
		t.Run(name, func(t *testing.T) {
			want := testkit.ReadCounts(t, filepath.Join(testkit.CorpusDir(), name+".counts"))
			r := openFile(t, corpusFile(t, name), reader.Options{Decompress: true})
			got, outer := countTypes(r)
			for _, rt := range []perfdata.RecordType{perfdata.RecordCompressed, perfdata.RecordCompressed2} {
				if outer[rt] != want.Outer[rt] {
					t.Errorf("outer %v records: %d, want %d", rt, outer[rt], want.Outer[rt])
				}
			}
			if want.Perf == "perf none" {
				return // no perf reads it: the MANIFEST test checks the reader
			}
			if err := r.Err(); err != nil {
				t.Fatalf("%s reads it to the end, the reader stops: %v", want.Perf, err)
			}
			for rt, n := range got {
				if w := want.Types[rt] + want.Skipped[rt]; n != w {
					t.Errorf("%v records: %d, %s counts %d", rt, n, want.Perf, w)
				}
			}
			for rt, n := range want.Types {
				if got[rt] == 0 {
					t.Errorf("%v records: none, %s counts %d", rt, want.Perf, n)
				}
			}
		})
	}
}
