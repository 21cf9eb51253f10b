package journal

import (
	"bytes"
	"encoding/binary"
	"math"
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

// FuzzJournal: whatever a host's two segments hold, reading the journal
// (its records, a lookup of program id at time at, the loads of a span)
// ends in records and errors, never a panic, and a lookup that finds a
// program finds the load asked for. Seeded with the crafted journals of
// issue 46: one load journaled twice with two values (item 2), a damaged
// record (item 4), one id loaded many times (item 5).
func FuzzJournal(f *testing.F) {
	for _, c := range []struct {
		started  [2]time.Duration
		versions [2]string
		at       time.Duration
	}{
		{[2]time.Duration{4 * time.Second, 100 * time.Second}, [2]string{"v1", "v2"}, 4*time.Second + time.Millisecond},
		{[2]time.Duration{100 * time.Second, 4 * time.Second}, [2]string{"v2", "v1"}, 4*time.Second + time.Millisecond},
		{[2]time.Duration{200 * time.Second, 400 * time.Second}, [2]string{"v1", "v2"}, 300 * time.Second},
		{[2]time.Duration{4 * time.Second, 100 * time.Second}, [2]string{"v1", "v2"}, 0},
	} {
		dir, _ := writeTwice(f, c.started, c.versions)
		f.Add(readSegment(f, dir, 1), readSegment(f, dir, 2), uint32(10), uint64(c.at))
	}
	_, _, four, offs, _ := damagedSegment(f)
	for _, at := range []int64{offs[1] + frameHeader + 20, offs[1] + 2, offs[1] + 5} {
		b := bytes.Clone(four)
		b[at] ^= 0x10
		f.Add(b, []byte(nil), uint32(2), uint64(0))
		f.Add(b, []byte(nil), uint32(3), uint64(0))
	}
	// a torn tail (cut in a payload, in a frame header) and a huge claimed
	// length (past MaxRecord; within it but past the segment's end), in the
	// 2nd record and in the last (bounds_test.go, damaged_test.go)
	f.Add(four[:len(four)-3], []byte(nil), uint32(4), uint64(0))
	f.Add(four[:offs[3]+4], []byte(nil), uint32(3), uint64(0))
	for _, at := range []int64{offs[1], offs[3]} {
		for _, size := range []uint32{math.MaxUint32, MaxRecord + 1, MaxRecord} {
			b := bytes.Clone(four)
			binary.LittleEndian.PutUint32(b[at:], size)
			f.Add(b, []byte(nil), uint32(3), uint64(0))
		}
	}
	// lost records (issue 46 item 6), before and after a load, and one load
	// journaled in two segments with two values (item 2)
	{
		dir := f.TempDir()
		w, err := Create(dir, system("alpha", "boot-a"), Options{})
		if err != nil {
			f.Fatal(err)
		}
		w.Lost(Lost{ID: 7, Name: "gone", Why: "program 7: not found"})
		w.Load(program(10, 1, 5*time.Second))
		w.Lost(Lost{Records: 12})
		w.Close()
		seg := readSegment(f, dir, 1)
		f.Add(seg, []byte(nil), uint32(7), uint64(0))
		f.Add(seg, []byte(nil), uint32(10), uint64(6*time.Second))
		two, _ := writeTwice(f, [2]time.Duration{4 * time.Second, 100 * time.Second}, [2]string{"v1", "v2"})
		f.Add(readSegment(f, two, 1), seg, uint32(10), uint64(50*time.Second))
	}
	for _, same := range []bool{false, true} {
		dir, _ := craftOneID(f, 50, same)
		seg, err := os.ReadFile(filepath.Join(dir, segmentName(1)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seg, []byte(nil), uint32(10), uint64(0))
	}
	f.Fuzz(func(t *testing.T, seg1, seg2 []byte, id uint32, at uint64) {
		dir := t.TempDir()
		host := filepath.Join(dir, "alpha")
		if err := os.Mkdir(host, 0o700); err != nil {
			t.Fatal(err)
		}
		for i, b := range [][]byte{seg1, seg2} {
			if len(b) > 0 {
				if err := os.WriteFile(filepath.Join(host, segmentName(uint64(i+1))), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		j, err := Open(dir)
		if err != nil || j.Host("alpha") == nil {
			return
		}
		for range j.Host("alpha").Records() {
		}
		want := loadOf(program(id, 1, 0), "alpha", at)
		if p, err := j.Find(want, ""); err == nil && (p == nil || p.ID != id || p.Tag != want.Tag || !sameAddrs(p, want.Addrs)) {
			t.Fatalf("Find(%d) gave another load: %+v", id, p)
		}
		for p, err := range j.LoadedBetween("alpha", "boot-a", 0, time.Duration(math.MaxInt64)) {
			if err == nil && p == nil {
				t.Fatal("LoadedBetween: no program and no error")
			}
		}
	})
}

// readSegment is segment seq of host alpha of the journal in dir.
func readSegment(tb testing.TB, dir string, seq uint64) []byte {
	b, err := os.ReadFile(filepath.Join(dir, "alpha", segmentName(seq)))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
