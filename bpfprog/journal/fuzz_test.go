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
	// issue 46 item 4: one bit flipped in the 2nd of four loads, in its
	// payload, length and checksum
	_, _, four, offs, _ := damagedSegment(f)
	for _, at := range []int64{offs[1] + frameHeader + 20, offs[1] + 2, offs[1] + 5} {
		b := bytes.Clone(four)
		b[at] ^= 0x10
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sr := newSegmentReaderFrom(bytes.NewReader(b), int64(len(b)), "fuzz")
		n := 0
		end := int64(0)
		for sr.Next() {
			r := sr.Record()
			if r.Damaged == "" && r.Size > frameHeader+MaxRecord {
				t.Fatalf("a record of %d bytes", r.Size)
			}
			if r.Offset < end || r.Size <= 0 || r.Offset+r.Size > int64(len(b)) {
				t.Fatalf("a record at %d, %d bytes, after one that ends at %d, in %d bytes", r.Offset, r.Size, end, len(b))
			}
			end = r.Offset + r.Size
			n++
		}
		if sr.Err() != nil && sr.Torn() != "" {
			t.Fatalf("both an error and a torn tail: %v, %s", sr.Err(), sr.Torn())
		}
	})
}
