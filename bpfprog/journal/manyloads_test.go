package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/internal/budget"
)

// craftOneID writes a segment with n loads of one id, the same tag and
// addresses, loaded at n load times (sameLoad: one load time, the load
// journaled n times).
func craftOneID(t testing.TB, n int, sameLoad bool) (string, *bpfprog.Program) {
	dir := filepath.Join(t.TempDir(), "alpha")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, segmentName(1)))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	sys := system("alpha", "boot-a")
	h, _ := json.Marshal(record{Segment: &segmentHeader{Header: doc.NewHeader(doc.KindJournal), Seq: 1, System: sys, Started: boot0}})
	bw.WriteString(magic)
	bw.Write(frame(nil, h))
	p := program(10, 1, time.Second)
	p.Metadata = nil
	for i := range n {
		if !sameLoad {
			p.LoadTime = time.Duration(i+1) * time.Millisecond
		}
		b, _ := json.Marshal(p)
		b, _ = json.Marshal(record{Load: b})
		bw.Write(frame(nil, b))
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return dir, p
}

// One id loaded many times (the same tag and addresses: a forged
// journal) costs a lookup a pass over its index entries and one record
// read, not a read of each (issue 46 item 5). BPFMETA_MANY_LOADS sets
// how many (60,000 by default).
func TestOneIDManyLoads(t *testing.T) {
	n := 60_000
	if s := os.Getenv("BPFMETA_MANY_LOADS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for _, same := range []bool{false, true} {
		dir, p := craftOneID(t, n, same)
		j, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start, cpu0 := time.Now(), cpuTime()
		got, err := j.Find(loadOf(p, "alpha", 0), "")
		elapsed, cpu := time.Since(start), cpuTime()-cpu0
		runtime.ReadMemStats(&after)
		reads := j.Host("alpha").reads
		t.Logf("%d loads of one id (one load time: %v): Find in %v (%v CPU), %d records read, %d MiB allocated, %v",
			n, same, elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond), reads, (after.TotalAlloc-before.TotalAlloc)>>20, err)
		switch {
		case same && (err != nil || got.ID != 10):
			t.Errorf("one load journaled %d times: %v, %v", n, got, err)
		case !same && !errors.Is(err, ErrAmbiguous):
			t.Errorf("%d loads: %v, %v; want ErrAmbiguous", n, got, err)
		}
		if reads > 1 {
			t.Errorf("%d records read for one lookup", reads)
		}
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A journal whose index is over the memory budget is not "not found":
// Find's error wraps ErrLimit and bpfprog.ErrLimit and names the budget,
// and the Source says so (issue 46 item 3).
func TestIndexOverBudget(t *testing.T) {
	dir, p := craftOneID(t, 5000, false)
	budget.Process().SetLimit(64 << 10)
	defer budget.Process().SetLimit(math.MaxInt64)
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := WithKernel(&bpfprog.List{Sys: system("alpha", "boot-now")}, j)
	_, err = s.Find(loadOf(p, "alpha", 0))
	if !errors.Is(err, ErrLimit) || !errors.Is(err, bpfprog.ErrLimit) || errors.Is(err, bpfprog.ErrNotFound) || !strings.Contains(err.Error(), "memory budget") {
		t.Fatalf("Find: %v; want ErrLimit naming the budget", err)
	}
	if why := s.WhyNot(err, true); !strings.Contains(why, "memory budget") {
		t.Errorf("WhyNot: %q", why)
	}
}

// TestIndexBound fills a journal of DefaultMaxSize through the writer with
// loads the size of libbpf's probes (a function, no metadata) and their
// unloads, past its size limit, and measures what its index takes of the
// memory budget: the bound README states (issue 46 item 3).
func TestIndexBound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes a journal of 128 MiB")
	}
	dir := t.TempDir()
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{SyncEvery: time.Hour})
	var last *bpfprog.Program
	for id := uint32(1); w.Stats().DroppedLoads < 200_000; id++ {
		p := program(id, 1, time.Duration(id)*time.Millisecond)
		p.Metadata, p.Name = nil, "probe"
		if err := w.Load(p); err != nil {
			t.Fatal(err)
		}
		if err := w.Unload(id, p.Tag, time.Duration(id+1)*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		last = p
	}
	st := w.Stats()
	w.Close()
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := j.Find(loadOf(last, "alpha", 0), ""); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	h := j.Host("alpha")
	x := h.index
	charged := int64(len(x.loads))*loadCost + int64(len(x.dropped))*droppedCost
	t.Logf("%d bytes in %d segments: %d loads and %d dropped loads indexed: %.1f MiB charged, heap %+.1f MiB",
		st.Bytes, st.Segments, len(x.loads), len(x.dropped), float64(charged)/(1<<20), float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20))
	if charged > 16<<20 {
		t.Errorf("the index of a journal of %d MiB takes %d MiB, over 16 MiB", DefaultMaxSize>>20, charged>>20)
	}
}

// The loads a journal says it lost (Lost records, each with its why) are
// charged to the budget as its loads are: a journal of only those, 20,000
// with a why of 200 bytes (4.6 MiB of index), is over a budget of 1 MiB.
func TestLostOverBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "journal")
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{SyncEvery: time.Hour})
	why := strings.Repeat("x", 200)
	for id := uint32(1); id <= 20_000; id++ {
		if err := w.Lost(Lost{ID: id, Name: "gone", Why: why}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	budget.Process().SetLimit(1 << 20)
	defer budget.Process().SetLimit(math.MaxInt64)
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	_, err = j.Find(loadOf(program(30_000, 1, time.Second), "alpha", 0), "")
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("Find: %v; want ErrLimit", err)
	}
}
