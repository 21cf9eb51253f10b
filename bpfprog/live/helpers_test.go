package live

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// fixtureObjects are the compiled objects in testdata/bpf the tests load.
var fixtureObjects = []string{"meta", "nometa", "rodata", "manyfunc", "rich", "rich19"}

// loadedProg is a program a test loaded, and how.
type loadedProg = testkit.Loaded

// newKernel is the running kernel, for a test that needs root and BPF.
func newKernel(t *testing.T) *Kernel {
	t.Helper()
	testkit.BPF(t)
	k, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// loadAll loads every fixture with both loaders, and the Go-built program.
// The pins of this set are named after prefix.
func loadAll(t *testing.T, bpffs, prefix string) []loadedProg {
	t.Helper()
	var all []loadedProg
	for _, obj := range fixtureObjects {
		c, _ := testkit.LoadCilium(t, obj)
		b, _ := testkit.LoadBpftool(t, bpffs, obj, prefix+"-"+obj)
		all = append(all, c...)
		all = append(all, b...)
	}
	a, _ := testkit.LoadAsm(t)
	all = append(all, a...)
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// readLoaded reads the loaded programs from the kernel, in id order.
func readLoaded(t *testing.T, live *Kernel, loaded []loadedProg) []*bpfprog.Program {
	t.Helper()
	progs := make([]*bpfprog.Program, len(loaded))
	for i, l := range loaded {
		p, err := live.Program(l.ID)
		if err != nil {
			t.Fatalf("%v: %v", l, err)
		}
		progs[i] = p
	}
	return progs
}

// startPerf starts `perf record -a -o DIR/NAME.data` with a workload that
// waits until the recording is stopped, so that a test can load programs
// while it records.
func startPerf(t *testing.T, perf, dir, name string) *testkit.PerfRun {
	t.Helper()
	return testkit.StartPerf(t, perf, filepath.Join(dir, name+".data"), testkit.PerfOptions{SystemWide: true})
}

// stopPerf ends the recording and reads its BPF records.
func stopPerf(t *testing.T, r *testkit.PerfRun) []perfRecord {
	t.Helper()
	r.Stop(t)
	return readPerfRecords(t, r.Out)
}

// recordBefore records `perf record -a -- sleep 0.5` (programs loaded
// before it starts are synthesized) with each perf, concurrently.
func recordBefore(t *testing.T, dir string, perfs ...string) [][]perfRecord {
	t.Helper()
	recs := make([]*testkit.PerfRun, len(perfs))
	for i, perf := range perfs {
		recs[i] = startPerf(t, perf, dir, fmt.Sprintf("before%d", i))
	}
	for _, r := range recs {
		r.WaitReady(t)
	}
	time.Sleep(500 * time.Millisecond)
	out := make([][]perfRecord, len(perfs))
	for i, r := range recs {
		out[i] = stopPerf(t, r)
	}
	return out
}

// loadEvent returns the index in recs of the PROG_LOAD BPF_EVENT of p
// (loaded as l), checking its tag; -1, with the test failed, when there is
// not one.
func loadEvent(t *testing.T, recs []perfRecord, l loadedProg, p *bpfprog.Program) int {
	t.Helper()
	at, err := findBPFEvent(recs, p.ID)
	if err != nil {
		t.Errorf("%v: %v", l, err)
		return -1
	}
	if e := recs[at].BPFEvent; e.Tag != p.Tag {
		t.Errorf("%v: BPF_EVENT %+v, want tag %s", l, *e, p.Tag)
	}
	return at
}

// findBPFEvent returns the index of the PROG_LOAD BPF_EVENT for id.
func findBPFEvent(recs []perfRecord, id uint32) (int, error) {
	idx := -1
	for i, r := range recs {
		if e := r.BPFEvent; e != nil && e.Type == bpfEventProgLoad && e.ID == id {
			if idx >= 0 {
				return -1, fmt.Errorf("two PROG_LOAD BPF_EVENTs for program %d (at %#x and %#x)", id, recs[idx].Offset, r.Offset)
			}
			idx = i
		}
	}
	if idx < 0 {
		return -1, fmt.Errorf("no PROG_LOAD BPF_EVENT for program %d", id)
	}
	return idx, nil
}

// findMetadataRun finds, at or after start, len(names) consecutive
// BPF_METADATA records with these prog_names and entry keys; -1 if none.
func findMetadataRun(recs []perfRecord, start int, names, entryKeys []string) int {
	for i := start; i+len(names) <= len(recs); i++ {
		ok := true
		for j, name := range names {
			m := recs[i+j].Metadata
			if m == nil || m.ProgName != name || !slices.Equal(keys(m.Entries), entryKeys) {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}
