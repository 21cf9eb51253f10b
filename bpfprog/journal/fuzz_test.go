package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzSegmentReader: whatever a segment file holds, reading it ends in
// records, a torn tail or an error, never a panic, and no record is
// larger than MaxRecord.
func FuzzSegmentReader(f *testing.F) {
	dir := f.TempDir()
	w, err := Create(dir, system("alpha", "boot-a"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	p := program(10, 1, 5*time.Second)
	w.Load(p)
	w.Unload(10, p.Tag, 6*time.Second)
	w.Close()
	seg, err := os.ReadFile(filepath.Join(dir, "alpha", segmentName(1)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seg)
	f.Add(seg[:len(seg)-3])
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		sr := newSegmentReaderFrom(bytes.NewReader(b), "fuzz")
		n := 0
		for sr.Next() {
			if r := sr.Record(); r.Size > frameHeader+MaxRecord {
				t.Fatalf("a record of %d bytes", r.Size)
			}
			n++
		}
		if sr.Err() != nil && sr.Torn() != "" {
			t.Fatalf("both an error and a torn tail: %v, %s", sr.Err(), sr.Torn())
		}
	})
}
