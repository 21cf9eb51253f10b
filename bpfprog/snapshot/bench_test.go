package snapshot

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkRead reads a snapshot of this machine's fixture programs (8
// programs with metadata, 14 KiB; the one make bench injects with) and
// looks every program up, as an inject of a recording of them does.
func BenchmarkRead(b *testing.B) {
	data, err := os.ReadFile("testdata/bench.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			b.Fatal(err)
		}
		for p, err := range s.All() {
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Lookup(p.ID, p.Tag); err != nil {
				b.Fatal(err)
			}
		}
	}
}
