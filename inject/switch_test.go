package inject_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestSwitchOutput: perf record --switch-output writes a series of files.
// perf 6.1 synthesizes the loaded programs' BPF_EVENTs at the start of
// every file, and inject gives each file the records after them, so each
// file stands alone; perf 7.2 synthesizes them (and their metadata) in the
// first file only. The difference is deliberate (README).
func TestSwitchOutput(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	before := loadFixtures(t, filepath.Join(bpffs, "before"), "meta")
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	// series records with perf into a series of files, switching once.
	series := func(perf, who string) []string {
		out := testkit.TempPath(t, who+".data")
		r := testkit.StartPerf(t, perf, out, testkit.PerfOptions{Args: []string{"-F", "99", "--switch-output"}})
		r.WaitReady(t)
		r.Signal(t, syscall.SIGUSR2)
		deadline := time.Now().Add(testkit.RecordTimeout)
		for {
			if files, _ := filepath.Glob(out + ".[0-9]*"); len(files) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s record --switch-output wrote no file after SIGUSR2", who)
			}
			time.Sleep(20 * time.Millisecond)
		}
		r.Stop(t)
		files, err := filepath.Glob(out + ".[0-9]*") // out.<timestamp>: in order
		if err != nil || len(files) < 2 {
			t.Fatalf("%s record --switch-output: files %q (%v), want 2", who, files, err)
		}
		return files
	}
	dir := t.TempDir()
	var first map[uint32][][]byte
	for i, in := range series(perfStock, "stock") {
		out, _ := mustInject(t, in, dir, live, inject.Options{RecordedOnly: true})
		O := readRecording(t, out)
		for _, id := range before {
			p, err := live.Program(id)
			if err != nil {
				t.Fatal(err)
			}
			ms := metadataAfter(t, O, id)
			if len(ms) != len(p.Funcs) {
				t.Errorf("perf 6.1 file %d: %d records after the BPF_EVENT of program %d, want %d", i, len(ms), id, len(p.Funcs))
			}
			if i == 0 {
				if first == nil {
					first = map[uint32][][]byte{}
				}
				first[id] = ms
			} else if !equalRecords(ms, first[id]) {
				t.Errorf("perf 6.1 file %d: the records of program %d are not the first file's", i, id)
			}
		}
	}
	for i, in := range series(perfModern, "modern") {
		M := readRecording(t, in)
		for _, id := range before {
			has := progLoad(M, id) >= 0
			if has != (i == 0) {
				t.Errorf("perf 7.2 file %d: a BPF_EVENT of program %d: %v; want one in the first file only", i, id, has)
			}
			if has && len(metadataAfter(t, M, id)) == 0 {
				t.Errorf("perf 7.2 file %d: no records after the BPF_EVENT of program %d", i, id)
			}
		}
	}
}
