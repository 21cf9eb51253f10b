package inject_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
)

// perfClocks are the clocks perf record -k takes (perf's parse_clockid()
// table; the kernel's perf_event_set_clock() accepts these only).
var perfClocks = []string{"CLOCK_REALTIME", "CLOCK_TAI", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_BOOTTIME"}

// TestOracleClocks is TestOracleUnrecorded on every clock perf record -k
// takes: a recording of one command (sleep 1.2) while another process
// loads a program at 0.3 s has its timestamps on that clock, and perf
// 7.2's side-band thread writes the program's metadata at the end all
// the same. inject must place the kernel's load times (CLOCK_BOOTTIME) on
// the recording's clock, through the recording's CLOCK_DATA, and write
// the same records as perf 7.2 for the program (file and pipe).
func TestOracleClocks(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	dir := t.TempDir()
	// loaded before: the recordings' proof of being of this boot
	loadFixtures(t, filepath.Join(bpffs, "before"), "nometa")
	type run struct {
		clock string
		mode  testkit.RecordMode
	}
	var runs []run
	for _, c := range perfClocks {
		runs = append(runs, run{c, testkit.RecordFile})
	}
	runs = append(runs, run{"CLOCK_REALTIME", testkit.RecordPipe}, run{"CLOCK_TAI", testkit.RecordPipeZstd})
	kernel, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		t.Run(r.clock+"-"+string(r.mode), func(t *testing.T) {
			name := func(who string) string { return filepath.Join(dir, who+"-"+r.clock+"-"+string(r.mode)) }
			opts := testkit.PerfOptions{Mode: r.mode, Workload: "sleep 1.2", Args: []string{"-k", r.clock}}
			stock, stockIDs := recordLoadingAt(t, perfStock, name("stock")+".data", opts, filepath.Join(bpffs, "stock", r.clock+"-"+string(r.mode)), "meta")
			modern, _ := recordLoadingAt(t, perfModern, name("modern")+".data", opts, filepath.Join(bpffs, "modern", r.clock+"-"+string(r.mode)), "meta")
			out, sum := mustInject(t, stock, dir, kernel, inject.Options{})
			if sum.UnrecordedSkipped != "" {
				t.Fatalf("inject did not look for the programs loaded during the recording: %s", sum.UnrecordedSkipped)
			}
			// the records of this test's programs, by the names perf gives
			// them (other tests may load programs meanwhile)
			names := map[string]bool{}
			for p, err := range kernel.All() {
				if err == nil && slices.Contains(stockIDs, p.ID) && p.Metadata != nil {
					for _, n := range p.Metadata.ProgNames {
						names[n] = true
					}
				}
			}
			if len(names) == 0 {
				t.Fatalf("programs %v have no metadata", stockIDs)
			}
			O, M := readRecording(t, out), readRecording(t, modern)
			ours := func(r *recording) [][]byte {
				var mine [][]byte
				for _, m := range tailMetadata(t, r) {
					if names[r.metadata(t, rectest.Record{Raw: m}).ProgName] && !slices.ContainsFunc(mine, func(b []byte) bool { return bytes.Equal(b, m) }) {
						mine = append(mine, m)
					}
				}
				return mine
			}
			got, want := ours(O), ours(M)
			if len(want) == 0 {
				t.Fatalf("perf 7.2 wrote no records for the program loaded while it recorded: %q", progNames(t, M, tailMetadata(t, M)))
			}
			if !equalRecords(got, want) {
				t.Errorf("the records at the end for the program loaded elsewhere:\ninject   %q\nperf 7.2 %q", progNames(t, O, got), progNames(t, M, want))
			}
			for _, id := range stockIDs {
				i := slices.IndexFunc(sum.Programs, func(p inject.Program) bool { return p.ID == id })
				if i < 0 || !sum.Programs[i].Unrecorded || sum.Programs[i].Outcome != inject.Injected {
					t.Errorf("program %d is not in the summary as loaded during the recording and injected", id)
				}
			}
			if got, want := perfScriptMetadata(t, perfModern, O.Path), allMetadata(O); !equalRecords(got, want) {
				t.Errorf("perf 7.2 shows %d BPF_METADATA records, not the %d the file has", len(got), len(want))
			}
		})
	}
}

// recordLoadingAt records with perf into out (the workload and what opts
// ask) while this test, another process than perf's, loads objects pinned
// under pin 300 ms after perf is ready, and waits for the workload to end.
// It returns the ids loaded.
func recordLoadingAt(t *testing.T, perf, out string, opts testkit.PerfOptions, pin string, objects ...string) (string, []uint32) {
	t.Helper()
	r := testkit.StartPerf(t, perf, out, opts)
	r.WaitReady(t)
	time.Sleep(300 * time.Millisecond)
	ids := loadFixtures(t, pin, objects...)
	r.Wait(t)
	return out, ids
}
