package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// lower sets a reader's bound for the test.
func lower[T any](t *testing.T, v *T, to T) {
	old := *v
	*v = to
	t.Cleanup(func() { *v = old })
}

// TestEmptySegmentsCheap: empty segment files (a writer whose start
// failed) are skipped by their size, unopened: 20,000 of them cost the
// reader little memory (it allocated a 64 KiB buffer for each: 1.3 GB).
func TestEmptySegmentsCheap(t *testing.T) {
	dir := journalTree(t)
	for i := range 20000 {
		f, err := os.Create(filepath.Join(dir, "alpha", segmentName(uint64(0x100+i))))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := readJournal(dir); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("20,000 empty segments: %d MiB allocated", alloc>>20)
	}
}

// TestReadBounds: past its bounds a journal is refused (entries, hosts),
// or its oldest segments are skipped with a warning (segments, bytes).
func TestReadBounds(t *testing.T) {
	t.Run("entries", func(t *testing.T) {
		dir := journalTree(t)
		lower(t, &maxDirEntries, 50)
		for i := range 60 {
			os.WriteFile(filepath.Join(dir, "alpha", fmt.Sprintf("other%d", i)), nil, 0o600)
		}
		if err := readJournal(dir); err == nil || !strings.Contains(err.Error(), "more than 50 entries") {
			t.Errorf("60 entries: %v", err)
		}
	})
	t.Run("hosts", func(t *testing.T) {
		dir := journalTree(t)
		lower(t, &maxHosts, 8)
		for i := range 8 {
			os.Mkdir(filepath.Join(dir, fmt.Sprintf("h%d", i)), 0o700)
		}
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "more than 8 directories") {
			t.Errorf("9 host directories: %v", err)
		}
	})
	for _, c := range []struct {
		name  string
		bound func(t *testing.T)
	}{
		{"segments", func(t *testing.T) { lower(t, &maxSegments, 2) }},
		{"bytes", func(t *testing.T) { lower(t, &maxHostBytes, 2000) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "journal")
			for id := uint32(1); id <= 4; id++ { // a segment each
				w := mustCreate(t, dir, system("alpha", "boot-a"), Options{})
				w.Load(program(id, 1, time.Duration(id)*time.Second))
				w.Close()
			}
			c.bound(t)
			j, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if _, err := j.Find(loadOf(program(4, 1, 4*time.Second), "alpha", 0), ""); err != nil {
				t.Errorf("the newest: %v", err)
			}
			if _, err := j.Find(loadOf(program(1, 1, time.Second), "alpha", 0), ""); err == nil {
				t.Error("the oldest segment was read past the bound")
			}
			if w := j.Warnings(); len(w) != 1 || !strings.Contains(w[0], "oldest segments") {
				t.Errorf("warnings %q", w)
			}
		})
	}
}

// TestReadToSizeAtOpen: a segment is read to the size it had when it was
// opened, however much its writer appends meanwhile.
func TestReadToSizeAtOpen(t *testing.T) {
	dir := journalTree(t)
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	f, err := j.Host("alpha").open(1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sr := newSegmentReader(f)
	// another writer appends a load after the open
	w, err := os.OpenFile(f.Name(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := programRecord(program(9, 1, 9*time.Second))
	w.Write(frame(nil, b))
	w.Close()
	n := 0
	for sr.Next() {
		if sr.Record().Program != nil {
			n++
		}
	}
	if n != 3 || sr.Err() != nil {
		t.Errorf("read %d loads (%v), want the 3 there when it was opened", n, sr.Err())
	}
}

// TestFailedStartLeavesNoSegment: a writer that cannot write a new
// segment's header (ENOSPC, on a full tmpfs) removes it: a service
// restarted on a full file system leaves no empty segment a start.
func TestFailedStartLeavesNoSegment(t *testing.T) {
	testkit.Root(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		testkit.Missing(t, "mounting a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	dir := filepath.Join(mnt, "journal")
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{})
	w.Close()
	fill, _ := os.Create(filepath.Join(mnt, "fill"))
	fill.Write(make([]byte, 1<<20)) // to ENOSPC
	fill.Close()
	for range 3 {
		if _, err := Create(dir, system("alpha", "boot-a"), Options{}); err == nil || !strings.Contains(err.Error(), "no space") {
			t.Fatalf("a start on a full file system: %v", err)
		}
	}
	names, _ := os.ReadDir(filepath.Join(dir, "alpha"))
	if len(names) != 1 {
		t.Errorf("after 3 failed starts the journal has %d files, want its 1 segment", len(names))
	}
}

// programRecord is the payload of p's load record, as Writer.Load writes it.
func programRecord(p *bpfprog.Program) ([]byte, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return json.Marshal(record{Load: b})
}

// TestMaxSizeBounds: the message's bounds are the bounds (4 MiB was
// refused by "at least 4 MiB").
func TestMaxSizeBounds(t *testing.T) {
	for size, ok := range map[int64]bool{MinMaxSize: true, MinMaxSize - 1: false, MaxMaxSize: true, MaxMaxSize + 1: false} {
		o := Options{MaxSize: size}
		if err := o.fill(); (err == nil) != ok {
			t.Errorf("--max-size %d: %v", size, err)
		}
	}
}

// TestLostRecord: a load the writer's watch could not journal is a record
// a reader hands out; and an error a write returned is not returned again
// by Close.
func TestLostRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "journal")
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{})
	w.Lost(Lost{ID: 7, Name: "gone", Why: "program 7: not found"})
	w.Lost(Lost{Records: 12})
	w.Close()
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var lost []Lost
	for e, err := range j.Host("alpha").Records() {
		if err != nil {
			t.Fatal(err)
		}
		if e.Lost != nil {
			lost = append(lost, *e.Lost)
		}
	}
	if len(lost) != 2 || lost[0].ID != 7 || lost[0].Why == "" || lost[1].Records != 12 {
		t.Errorf("lost records %+v", lost)
	}
}

// TestLostRecordFound: a program whose load the writer could not journal
// (a Lost record naming its id) is not found with ErrLost, which says why
// and which the Source counts and reports; a program of a boot in which
// kernel records were lost (a Lost record counting them) may have been
// among them (issue 46 item 6: "inject ... can say which programs may be
// missing and why"). It was "not in the journal", with no reason.
func TestLostRecordFound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "journal")
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{})
	w.Lost(Lost{ID: 7, Name: "gone", Why: "program 7: not found"})
	w.Load(program(10, 1, 5*time.Second))
	w.Close()
	w = mustCreate(t, dir, system("alpha", "boot-b"), Options{})
	w.Lost(Lost{Records: 12})
	w.Close()
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	s := WithKernel(&bpfprog.List{Sys: system("alpha", "boot-now")}, j)
	_, err = s.Find(loadOf(program(7, 1, 4*time.Second), "alpha", 0))
	if !errors.Is(err, ErrLost) || !errors.Is(err, bpfprog.ErrNotFound) {
		t.Fatalf("the lost load: %v, want ErrLost", err)
	}
	if why := s.WhyNot(err, true); !strings.Contains(why, "could not journal") || !strings.Contains(why, "program 7: not found") {
		t.Errorf("WhyNot: %q", why)
	}
	if p, err := j.Find(loadOf(program(10, 1, 5*time.Second), "alpha", 0), ""); err != nil || p.ID != 10 {
		t.Errorf("the load beside it: %v, %v", p, err)
	}
	if _, err := j.Find(loadOf(program(8, 1, 4*time.Second), "alpha", 0), "boot-a"); err == nil || errors.Is(err, ErrLost) {
		t.Errorf("another id of a boot without lost kernel records: %v", err)
	}
	if _, err := j.Find(loadOf(program(8, 1, 4*time.Second), "alpha", 0), "boot-b"); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "lost 12 kernel records") {
		t.Errorf("an id of a boot with 12 kernel records lost: %v", err)
	}
	if rep := strings.Join(s.Report(), "\n"); !strings.Contains(rep, "1 program not found in the journal") {
		t.Errorf("report %q", rep)
	}
}
