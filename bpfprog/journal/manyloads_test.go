package journal

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
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
	h, _ := json.Marshal(record{Segment: &segmentHeader{Header: bpfprog.NewHeader(Kind), Seq: 1, System: sys, Started: boot0}})
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
