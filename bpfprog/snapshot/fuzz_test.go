package snapshot_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// FuzzSnapshot: any bytes given as a snapshot are a snapshot or an error,
// never a panic or a hang; every program of one that opens can be read or
// is an error, and Lookup finds what All lists.
func FuzzSnapshot(f *testing.F) {
	for _, name := range []string{"testdata/snapshot.golden.jsonl", "testdata/snapshot-v1.golden.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(`{"format_version":2,"kind":"snapshot"}` + "\n" + `{"program":{"id":1,"tag":"0102030405060708"}}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := snapshot.Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		defer s.Close()
		n := 0
		for p, err := range s.All() {
			if n++; n > s.Len()+1 {
				t.Fatalf("All lists more than Len (%d) programs", s.Len())
			}
			if err != nil {
				continue
			}
			if q, err := s.Lookup(p.ID, p.Tag); err != nil || q.ID != p.ID {
				t.Fatalf("program %d is listed, Lookup: %v", p.ID, err)
			}
		}
		s.Lookup(1, perfdata.BPFTag{})
	})
}
