package inject_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
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

// bootSource is a listSource of a machine that booted at boot (and whose
// perf clock is not known: only a recording on another clock can have
// programs placed).
type bootSource struct {
	listSource
	boot time.Time
}

func (b bootSource) System() bpfprog.System { return bpfprog.System{BootTime: b.boot} }

// TestUnrecordedClocks: in a recording perf record -k CLOCK_TAI made, the
// timestamps are TAI, which is neither the load times' CLOCK_BOOTTIME nor
// the time of day (37 s ahead of it since 2017): a program loaded within
// the recording's span, by the recording's CLOCK_DATA and the source's
// boot time, gets its records at the end, one loaded after does not.
// Without CLOCK_DATA, or on a clock no perf event has, inject says that it
// could not look for them.
func TestUnrecordedClocks(t *testing.T) {
	boot := time.Unix(1796400000, 0)
	const taiAhead = 37 * time.Second
	// the recording: TAI 1000 s to 1010 s after boot
	tai := func(sinceBoot time.Duration) uint64 { return uint64(boot.Add(sinceBoot + taiAhead).UnixNano()) }
	a := prog(1, 0x10, 0xffff1000, 0, true) // loaded before: synthesized
	a.LoadTime = 100 * time.Second
	b := prog(7, 0x70, 0xffff7000, 1, true) // loaded during, not recorded
	b.LoadTime = 1005 * time.Second
	c := prog(8, 0x80, 0xffff8000, 0, true) // loaded 37 s after the recording: the TAI offset
	c.LoadTime = 1010*time.Second + taiAhead - time.Second
	src := bootSource{listSource{fakeSource{1: a, 7: b, 8: c}, 0}, boot}

	stream := func(clock perfdata.ClockID, clockData bool) []byte {
		s := &stream{testkit.NewRecords(le)}
		s.Write(perfdata.PipeHeader(le))
		attr := testkit.StreamAttr(le)
		le.PutUint64(attr[40:], le.Uint64(attr[40:])|1<<25) // use_clockid
		le.PutUint32(attr[92:], uint32(clock))
		s.rec(perfdata.RecordHeaderAttr, attr)
		if clockData {
			// perf's reading when it started: the time of day, then TAI 37 s ahead
			f := make([]byte, 8+perfdata.ClockDataSize)
			le.PutUint64(f, uint64(perfdata.FeatClockData))
			le.PutUint32(f[8:], 1)
			le.PutUint32(f[12:], uint32(clock))
			wall := uint64(boot.Add(999 * time.Second).UnixNano())
			le.PutUint64(f[16:], wall)
			le.PutUint64(f[24:], wall+uint64(taiAhead)+3000)
			s.rec(perfdata.RecordHeaderFeature, f)
		}
		s.synth(a)
		s.SampleAt(0x1000, tai(1000*time.Second)+3000)
		s.SampleAt(0x1000, tai(1010*time.Second)+3000)
		s.rec(perfdata.RecordFinishedRound, nil)
		return s.Bytes()
	}
	got, sum := run(t, stream(perfdata.ClockTAI, true), src, inject.Options{})
	if !bytes.Contains(got, []byte(b.Funcs[0].PerfName)) || bytes.Contains(got, []byte(c.Funcs[0].PerfName)) {
		t.Errorf("CLOCK_TAI: the program loaded during the recording has no records, or the one loaded after has: %+v", sum.Programs)
	}
	if sum.UnrecordedSkipped != "" || sum.ClockUnplaced {
		t.Errorf("CLOCK_TAI: %q", sum.UnrecordedSkipped)
	}
	for _, c := range []struct {
		name      string
		clock     perfdata.ClockID
		clockData bool
		want      string
	}{
		{"no CLOCK_DATA", perfdata.ClockTAI, false, "the recording's clock is CLOCK_TAI, and it has no CLOCK_DATA"},
		{"a clock of no perf event", 6, true, "the recording's clock is ClockID(6), which no perf event uses"},
	} {
		got, sum := run(t, stream(c.clock, c.clockData), src, inject.Options{})
		if bytes.Contains(got, []byte(b.Funcs[0].PerfName)) {
			t.Errorf("%s: records for a program it cannot place", c.name)
		}
		if !sum.ClockUnplaced || !strings.Contains(sum.UnrecordedSkipped, c.want) {
			t.Errorf("%s: the summary says %q (clock unplaced %v), want %q", c.name, sum.UnrecordedSkipped, sum.ClockUnplaced, c.want)
		}
	}
}
