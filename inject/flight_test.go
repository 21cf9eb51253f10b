package inject_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// flightModes are the ways perf record synthesizes at the tail of a
// recording: --tail-synthesize, and --overwrite (backward ring buffers,
// read newest first), which implies it; into a file and a pipe.
var flightModes = []struct {
	name string
	mode testkit.RecordMode
	args []string
}{
	{"tail-synthesize", testkit.RecordFile, []string{"--tail-synthesize"}},
	{"overwrite", testkit.RecordFile, []string{"--overwrite"}},
	{"pipe-tail-synthesize", testkit.RecordPipe, []string{"--tail-synthesize"}},
	{"pipe-overwrite", testkit.RecordPipe, []string{"--overwrite"}},
	// Not --overwrite --threads: perf 6.1 then has, in about half of
	// the recordings, no record of a load but its own in the tail
	// synthesis (the kernel's are in no data.N), and inject takes the
	// program for one loaded before the recording.
	{"threads-tail-synthesize", testkit.RecordFile, []string{"--tail-synthesize", "--threads"}},
}

// TestFlightRecorder: perf record --tail-synthesize and --overwrite (the
// flight recorder perf daemon runs) synthesize nothing at the start; perf
// 7.2 writes the BPF_METADATA of the programs loaded during the recording
// right before the FINISHED_INIT that starts the tail synthesis, and a
// program loaded before it, still loaded, gets its records after its
// BPF_EVENT in the tail; one loaded during it gets none there. System-wide
// perf 6.1 and perf 7.2 recordings in each mode, each while this test loads
// the fixtures, with the fixtures loaded before too: the 6.1 recording
// injected must have perf 7.2's records, byte for byte (PerfNames), in
// perf 7.2's places, and perf 7.2 must read it.
func TestFlightRecorder(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	objects := []string{"meta", "nometa", "rich"}
	before := loadFixtures(t, filepath.Join(bpffs, "flight-before"), objects...)
	dir := t.TempDir()
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range flightModes {
		t.Run(m.name, func(t *testing.T) {
			record := func(perf, who string) (string, []uint32) {
				out := filepath.Join(dir, who+"-"+m.name+".data")
				opts := testkit.PerfOptions{Mode: m.mode, SystemWide: true, Args: append([]string{"-F", "99", "-m", "512"}, m.args...)}
				return out, recordWhileLoading(t, perf, out, opts, filepath.Join(bpffs, "flight-"+who+"-"+strings.ReplaceAll(m.name, "-", "")), objects...)
			}
			stock, during := record(perfStock, "stock")
			S := readRecording(t, stock)
			if lost := slices.IndexFunc(during, func(id uint32) bool { i := progLoad(S, id); return i < 0 || i > tailInit(t, S) }); lost >= 0 {
				t.Fatalf("perf 6.1 has no record of the load of program %d before its tail synthesis", during[lost])
			}
			modern, _ := record(perfModern, "modern")
			opts := inject.Options{PerfNames: true, RecordedOnly: true}
			out, sum := mustInject(t, stock, dir, live, opts)
			O, M := readRecording(t, out), readRecording(t, modern)
			checkFlight(t, live, before, during, S, O, M)
			logUnresolved(t, sum)
			// perf 7.2 reads the injected file and sees exactly these
			// records, if it reads the input: not a system-wide pipe stream
			// synthesized at its tail, whose SAMPLEs come before the
			// HEADER_ATTRs (perf 6.1 and 7.2 stop at the first: "piped
			// event processing failed")
			if err := exec.Command(perfModern, "script", "-D", "-i", stock).Run(); err != nil {
				t.Logf("perf-modern script -D does not read the perf 6.1 recording (%v): nor is the injected one checked", err)
			} else if got, want := perfScriptMetadata(t, perfModern, O.Path), allMetadata(O); !equalRecords(got, want) {
				t.Errorf("perf-modern script -D shows %d BPF_METADATA records, not the %d the file has", len(got), len(want))
			}
			// injecting again changes nothing
			again, _ := mustInject(t, out, dir, live, opts)
			if len(S.DataFiles) > 0 {
				testkit.SameDir(t, again, out)
			} else if !bytes.Equal(testkit.ReadFile(t, again), testkit.ReadFile(t, out)) {
				t.Errorf("injecting the injected file again changed it")
			}
		})
	}
}

// checkFlight checks the injected tail-synthesized recording O of S
// against perf 7.2's M: before are the programs loaded before both
// recordings, during those S's loader loaded.
func checkFlight(t *testing.T, live *live.Kernel, before, during []uint32, S, O, M *recording) {
	t.Helper()
	if tailInit(t, S) < 0 {
		t.Fatalf("%s: no FINISHED_INIT after the recorded data: not synthesized at its tail", filepath.Base(S.Path))
	}
	// Loaded during: right before the tail's FINISHED_INIT, ascending id,
	// among the records of every program loaded on the machine meanwhile.
	var perfNames []string
	for _, id := range during {
		p, err := live.Program(id)
		if err != nil {
			t.Fatalf("program %d: %v", id, err)
		}
		if p.Metadata != nil && len(p.Metadata.Entries) > 0 {
			perfNames = append(perfNames, p.Metadata.ProgNames...)
		}
		if i := lastProgLoad(S, id); i >= 0 && i < tailInit(t, S) {
			t.Errorf("program %d: its last BPF_EVENT in the perf 6.1 recording is not in the tail synthesis", id)
		}
	}
	if len(perfNames) == 0 {
		t.Fatal("no program loaded during the recording has metadata")
	}
	oFinal, mFinal := finalMetadata(t, O), finalMetadata(t, M)
	oMine, mMine := namedSubsequence(t, O, oFinal, perfNames), namedSubsequence(t, M, mFinal, perfNames)
	switch {
	case mMine == nil:
		t.Errorf("perf 7.2's records before the tail's FINISHED_INIT are for\n%q\nwhich has not, in order,\n%q", progNames(t, M, mFinal), perfNames)
	case oMine == nil:
		t.Errorf("the records before the tail's FINISHED_INIT are for\n%q\nwhich has not, in order (ascending id),\n%q\n(all of the injected file: %q)", progNames(t, O, oFinal), perfNames, progNames(t, O, allMetadata(O)))
	case !equalRecords(oMine, mMine):
		t.Errorf("the injected records before the tail's FINISHED_INIT are not perf 7.2's (sizes %d, perf 7.2 %d)", len(oMine[0]), len(mMine[0]))
	}
	// In the tail: none for a program loaded during the recording (perf
	// 7.2 writes its KSYMBOLs only); a program loaded before has perf
	// 7.2's records after its BPF_EVENT.
	for _, id := range during {
		if i := lastProgLoad(O, id); i > tailInit(t, O) {
			if ms := metadataAt(O, i); len(ms) > 0 {
				t.Errorf("program %d, loaded during the recording: %d records after its BPF_EVENT in the tail", id, len(ms))
			}
		}
	}
	for _, id := range before {
		o, m := metadataAt(O, lastProgLoad(O, id)), metadataAt(M, lastProgLoad(M, id))
		if lastProgLoad(O, id) < tailInit(t, O) || lastProgLoad(M, id) < tailInit(t, M) {
			t.Errorf("program %d, loaded before: no BPF_EVENT in the tail", id)
		}
		if !equalRecords(o, m) {
			t.Errorf("program %d, loaded before: %d records after its BPF_EVENT in the tail, perf 7.2 %d", id, len(o), len(m))
		}
	}
	t.Logf("%d records before the tail's FINISHED_INIT (perf 7.2: %d), %d in all", len(oFinal), len(mFinal), len(allMetadata(O)))
}

// tailInit returns the index in r.Top() of the FINISHED_INIT that starts
// the tail synthesis: the first after a SAMPLE or FINISHED_ROUND (in a
// directory recording, the reader hands out data's tail after the data
// files); -1 if there is none.
func tailInit(t *testing.T, r *recording) int {
	t.Helper()
	data := false
	for i, x := range r.Top() {
		switch x.Type {
		case perfdata.RecordSample, perfdata.RecordFinishedRound, perfdata.RecordCompressed, perfdata.RecordCompressed2:
			data = true
		case perfdata.RecordFinishedInit:
			if data {
				return i
			}
		}
	}
	return -1
}

// finalMetadata returns the BPF_METADATA records right before the tail's
// FINISHED_INIT in its file.
func finalMetadata(t *testing.T, r *recording) [][]byte {
	t.Helper()
	top := r.Top()
	end := tailInit(t, r)
	if end < 0 {
		t.Fatalf("%s: no FINISHED_INIT after the recorded data", filepath.Base(r.Path))
	}
	var ms [][]byte
	for i := end - 1; i >= 0; i-- {
		if top[i].Part != top[end].Part {
			continue
		}
		if top[i].Type != perfdata.RecordBPFMetadata {
			break
		}
		ms = append(ms, top[i].Raw)
	}
	slices.Reverse(ms)
	return ms
}

// lastProgLoad returns the index in r.Top() of the last PROG_LOAD
// BPF_EVENT of program id, or -1.
func lastProgLoad(r *recording, id uint32) int {
	last := -1
	for i, x := range r.Top() {
		if x.Type != perfdata.RecordBPFEvent {
			continue
		}
		if e, err := perfdata.DecodeBPFEvent(x.Raw, r.Order); err == nil && e.Type == perfdata.BPFEventProgLoad && e.ID == id {
			last = i
		}
	}
	return last
}

// progLoadAfter returns the index in r.Top() of the first PROG_LOAD
// BPF_EVENT of program id after index from, or -1.
func progLoadAfter(r *recording, id uint32, from int) int {
	for i, x := range r.Top() {
		if i <= from || x.Type != perfdata.RecordBPFEvent {
			continue
		}
		if e, err := perfdata.DecodeBPFEvent(x.Raw, r.Order); err == nil && e.Type == perfdata.BPFEventProgLoad && e.ID == id {
			return i
		}
	}
	return -1
}

// metadataAt returns the BPF_METADATA records right after r.Top()[i]
// (none for i < 0).
func metadataAt(r *recording, i int) [][]byte {
	if i < 0 {
		return nil
	}
	var ms [][]byte
	for _, y := range r.Top()[i+1:] {
		if y.Type != perfdata.RecordBPFMetadata {
			break
		}
		ms = append(ms, y.Raw)
	}
	return ms
}

// TestFlightRecorderDaemon: perf daemon's sessions are perf record
// --overwrite --switch-output: a signal dumps the ring buffers into a
// file of their own, synthesized at its tail. A system-wide perf 6.1
// session signalled twice, while this test loads the fixtures in each of
// its three spans, and a perf 7.2 one likewise: each perf 6.1 file,
// injected, has the records of the programs loaded in its span before its
// tail's FINISHED_INIT, perf 7.2's bytes (perf 7.2 writes those of the
// whole session in its last file only: each injected file stands alone, as
// with --switch-output), and perf 7.2 reads it (report --stats, script
// --show-bpf-events).
func TestFlightRecorderDaemon(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	dir := t.TempDir()
	session := func(perf, who string) ([]string, [][]uint32) {
		out := filepath.Join(dir, who+".data")
		r := testkit.StartPerf(t, perf, out, testkit.PerfOptions{SystemWide: true, Args: []string{"-F", "99", "--overwrite", "--switch-output=signal"}})
		r.WaitReady(t)
		var spans [][]uint32
		load := func(i int) {
			time.Sleep(200 * time.Millisecond)
			spans = append(spans, loadFixtures(t, filepath.Join(bpffs, who, "span"+string(rune('0'+i))), "meta"))
			time.Sleep(200 * time.Millisecond)
		}
		for i := range 2 {
			load(i)
			r.Signal(t, syscall.SIGUSR2)
			waitFiles(t, out, i+1)
		}
		load(2)
		r.Stop(t)
		files := waitFiles(t, out, 3)
		return files, spans
	}
	stock, spans := session(perfStock, "stock")
	modern, _ := session(perfModern, "modern")
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	M := readRecording(t, modern[len(modern)-1])
	for i, in := range stock {
		out, sum := mustInject(t, in, dir, live, inject.Options{PerfNames: true, RecordedOnly: true})
		O := readRecording(t, out)
		defer logUnresolved(t, sum)
		var perfNames []string
		for _, id := range spans[i] {
			p, err := live.Program(id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Metadata != nil {
				perfNames = append(perfNames, p.Metadata.ProgNames...)
			}
		}
		oFinal := finalMetadata(t, O)
		oMine, mMine := namedSubsequence(t, O, oFinal, perfNames), namedSubsequence(t, M, finalMetadata(t, M), perfNames)
		switch {
		case mMine == nil:
			t.Fatalf("perf 7.2's last file has not the records of the fixture before its tail: %q", progNames(t, M, finalMetadata(t, M)))
		case oMine == nil:
			t.Errorf("file %d: the records before the tail's FINISHED_INIT are for\n%q\nwhich has not, in order,\n%q", i, progNames(t, O, oFinal), perfNames)
		case !equalRecords(oMine, mMine):
			t.Errorf("file %d: the injected records before the tail's FINISHED_INIT are not perf 7.2's", i)
		}
		// the programs of the spans before are loaded before this file:
		// their records follow their first BPF_EVENT in its tail (perf
		// synthesizes the last file's tail twice: at the switch
		// record__switch_output(rec, true) makes at the exit, and after)
		for _, span := range spans[:i] {
			for _, id := range span {
				if j := progLoadAfter(O, id, tailInit(t, O)); j < 0 {
					t.Errorf("file %d: program %d, loaded in an earlier span, has no BPF_EVENT in the tail", i, id)
				} else if p, _ := live.Program(id); p != nil && p.Metadata != nil && len(metadataAt(O, j)) != len(p.Funcs) {
					t.Errorf("file %d: program %d, loaded in an earlier span: %d records after its BPF_EVENT in the tail, want %d", i, id, len(metadataAt(O, j)), len(p.Funcs))
				}
			}
		}
		want := len(allMetadata(O))
		stats, err := exec.Command(perfModern, "report", "--stats", "-i", out).CombinedOutput()
		if err != nil {
			t.Fatalf("perf-modern report --stats -i %s: %v\n%s", filepath.Base(out), err, stats)
		}
		if got := statsCount(string(stats), "BPF_METADATA"); got != want {
			t.Errorf("file %d: perf-modern report --stats counts %d BPF_METADATA events, the file has %d", i, got, want)
		}
		script, err := exec.Command(perfModern, "script", "--show-bpf-events", "-i", out).Output()
		if err != nil {
			t.Fatalf("perf-modern script --show-bpf-events -i %s: %v", filepath.Base(out), err)
		}
		if got := strings.Count(string(script), "PERF_RECORD_BPF_METADATA"); got != want {
			t.Errorf("file %d: perf-modern script --show-bpf-events shows %d BPF_METADATA records, the file has %d", i, got, want)
		}
		t.Logf("file %d: %d records, %d before the tail's FINISHED_INIT", i, want, len(oFinal))
	}
}

// waitFiles waits until perf record --switch-output has written n files
// out.<timestamp>, and returns them in order.
func waitFiles(t *testing.T, out string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(testkit.RecordTimeout)
	for {
		files, _ := filepath.Glob(out + ".[0-9]*")
		if len(files) >= n {
			slices.Sort(files)
			return files
		}
		if time.Now().After(deadline) {
			t.Fatalf("perf record --switch-output wrote %d files, want %d", len(files), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// statsCount returns the count perf report --stats gives for records of
// type name ("  BPF_METADATA events:          6  ( 0.1%)"), 0 if none.
func statsCount(stats, name string) int {
	for _, line := range strings.Split(stats, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == name && f[1] == "events:" {
			n := 0
			for _, c := range f[2] {
				if c < '0' || c > '9' {
					return n
				}
				n = 10*n + int(c-'0')
			}
			return n
		}
	}
	return 0
}

// TestTailSynthesized: a recording synthesized at its tail, as perf record
// --overwrite writes it: the kernel's records newest first (a program's
// KSYMBOLs after its BPF_EVENT), a FINISHED_ROUND, FINISHED_INIT, then
// what perf synthesizes, the programs still loaded among it. The records of
// c, loaded during the recording, go right before FINISHED_INIT (perf
// 7.2's record__synthesize_final_bpf_metadata() comes before
// write_finished_init(rec, true)); a's, loaded before, right after its
// BPF_EVENT in the tail; none after c's BPF_EVENT there (its id is
// perf's already). Injecting twice is injecting once.
func TestTailSynthesized(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true)
	c := prog(30, 0xc0, 0xffff2000, 2, true)
	src := fakeSource{10: a, 30: c}
	data := newStream()
	data.sample()
	data.bpfEvent(perfdata.BPFEventProgLoad, c.ID, c.Tag, true)
	for i := len(c.Funcs) - 1; i >= 0; i-- {
		data.ksym(c.Funcs[i].Addr, c.Funcs[i].KernelName, false, true)
	}
	data.sample()
	data.rec(perfdata.RecordFinishedRound, nil)

	want := &stream{&testkit.Stream{Order: le}}
	want.Write(data.Bytes())
	for _, f := range c.Funcs {
		want.metadataOf(f.KernelName, c)
	}
	in := &stream{&testkit.Stream{Order: le}}
	in.Write(data.Bytes())
	for _, s := range []*stream{in, want} {
		s.rec(perfdata.RecordFinishedInit, nil)
		s.synth(a)
	}
	for _, f := range a.Funcs {
		want.metadataOf(f.PerfName, a)
	}
	for _, s := range []*stream{in, want} {
		s.synth(c)
	}
	once, sum := run(t, in.Bytes(), src, inject.Options{})
	if !bytes.Equal(once, want.Bytes()) {
		t.Fatalf("injected %d records, or not where perf writes them: %s", sum.Injected, testkit.FirstDiff(once, want.Bytes()))
	}
	if sum.Injected != len(a.Funcs)+len(c.Funcs) || len(sum.Missing()) != 0 {
		t.Errorf("injected %d records, %d programs missing; want %d, 0", sum.Injected, len(sum.Missing()), len(a.Funcs)+len(c.Funcs))
	}
	twice, sum := run(t, once, src, inject.Options{})
	if !bytes.Equal(twice, once) || sum.Injected != 0 {
		t.Errorf("injecting twice is not injecting once (%d records injected again): %s", sum.Injected, testkit.FirstDiff(twice, once))
	}
}

// logUnresolved says, after a failure, why inject left programs without
// their metadata: what a failure on a busy machine needs to be understood.
func logUnresolved(t *testing.T, sum *inject.Summary) {
	if !t.Failed() {
		return
	}
	for _, p := range sum.Unresolved() {
		t.Logf("program %d (%s): %v: %v", p.ID, p.Name, p.Outcome, p.Err)
	}
}
