package inject_test

import (
	"bytes"
	"os"
	"os/exec"
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
	"github.com/bpfmeta/bpfmeta/writer"
)

// TestOracleThreads is TestOracle for directory recordings (perf record
// --threads: data, and a data.N per recording thread). A system-wide perf
// 6.1 --threads recording, and then a perf 7.2 one, each while this test
// (another process than perf's) loads the fixtures; the fixtures loaded
// before both too. The perf 6.1 recording injected from the running kernel
// must have perf 7.2's BPF_METADATA records, byte for byte (PerfNames), in
// perf 7.2's places: after the BPF_EVENT perf synthesized in data for a
// program loaded before, at the end of data for one loaded during (its
// KSYMBOL and BPF_EVENT are in a data.N); the data.N files unchanged. perf
// 7.2 reads the injected directory (report --stats, script
// --show-bpf-events and -D), and strip gives back every file of the input.
func TestOracleThreads(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	objects := []string{"meta", "nometa", "rich"}
	before := loadFixtures(t, filepath.Join(bpffs, "threads-before"), objects...)
	dir := t.TempDir()
	record := func(perf, who string) (string, []uint32) {
		out := filepath.Join(dir, who+".data")
		r := testkit.StartPerf(t, perf, out, testkit.PerfOptions{SystemWide: true, Args: []string{"--threads", "-F", "99"}})
		r.WaitReady(t)
		time.Sleep(200 * time.Millisecond)
		ids := loadFixtures(t, filepath.Join(bpffs, "threads-"+who), objects...)
		time.Sleep(200 * time.Millisecond)
		r.Stop(t)
		if st, err := os.Stat(out); err != nil || !st.IsDir() {
			t.Fatalf("%s record --threads wrote no directory: %v", perf, err)
		}
		return out, ids
	}
	stock, during := record(perfStock, "stock")
	modern, _ := record(perfModern, "modern")
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	out, sum := mustInject(t, stock, dir, live, inject.Options{PerfNames: true, RecordedOnly: true})
	S, O, M := readRecording(t, stock), readRecording(t, out), readRecording(t, modern)
	if n := len(S.DataFiles); n == 0 || !slices.Equal(O.DataFiles, S.DataFiles) {
		t.Fatalf("data files: input %q, injected %q", S.DataFiles, O.DataFiles)
	}
	hasMetadata := func(id uint32) (*bpfprog.Program, bool) {
		p, err := live.Program(id)
		if err != nil {
			t.Fatalf("program %d: %v", id, err)
		}
		return p, p.Metadata != nil && len(p.Metadata.Entries) > 0
	}

	// Loaded before: after their BPF_EVENT, in data.
	for _, id := range before {
		p, meta := hasMetadata(id)
		want := 0
		if meta {
			want = len(p.Funcs)
		}
		o, m := metadataAfter(t, O, id), metadataAfter(t, M, id)
		if len(m) != want {
			t.Errorf("program %d (%s) loaded before: perf 7.2 wrote %d records after its BPF_EVENT, want %d", id, p.Name, len(m), want)
		}
		if !equalRecords(o, m) {
			t.Errorf("program %d (%s) loaded before: inject wrote %d records after its BPF_EVENT that are not perf 7.2's %d", id, p.Name, len(o), len(m))
		}
		if o := O.partOf(t, id); o != 0 {
			t.Errorf("program %d: its BPF_EVENT is in file %d of the output, not in data", id, o)
		}
	}

	// Loaded during: at the end of data, ascending id. The recordings are
	// system-wide on a shared machine: the end of data has the records of
	// every program loaded meanwhile, this test's among them, in order;
	// perf 7.2's of the same objects are the same bytes.
	var perfNames []string
	for _, id := range during {
		if p, meta := hasMetadata(id); meta {
			perfNames = append(perfNames, p.Metadata.ProgNames...)
		}
		if part := S.partOf(t, id); part == 0 {
			t.Errorf("program %d loaded during the recording: its BPF_EVENT is in data, not in a data.N", id)
		}
	}
	if len(perfNames) == 0 {
		t.Fatal("no program loaded during the recording has metadata")
	}
	oTail, mTail := dataTail(t, O), dataTail(t, M)
	oMine, mMine := namedSubsequence(t, O, oTail, perfNames), namedSubsequence(t, M, mTail, perfNames)
	switch {
	case oMine == nil:
		t.Errorf("loaded during: the records at the end of data are for\n%q\nwhich has not, in order (ascending id),\n%q", progNames(t, O, oTail), perfNames)
	case mMine == nil:
		t.Errorf("loaded during: perf 7.2's records at the end of data are for\n%q\nwhich has not, in order,\n%q", progNames(t, M, mTail), perfNames)
	case !equalRecords(oMine, mMine):
		t.Errorf("loaded during: the injected records at the end of data are not perf 7.2's")
	}
	t.Logf("injected %d records (%d after BPF_EVENTs, %d at the end of data; perf 7.2: %d at the end), summary: %d programs",
		sum.Injected, len(allMetadata(O))-len(oTail), len(oTail), len(mTail), len(sum.Programs))

	// The data files are the input's.
	for _, n := range S.DataFiles {
		if !bytes.Equal(testkit.ReadFile(t, filepath.Join(stock, n)), testkit.ReadFile(t, filepath.Join(out, n))) {
			t.Errorf("%s of the output is not the input's", n)
		}
	}

	// perf 7.2 reads the injected directory and sees exactly these records.
	if got, want := perfScriptMetadata(t, perfModern, out), allMetadata(O); !equalRecords(got, want) {
		t.Errorf("perf-modern script -D shows %d BPF_METADATA records, not the %d the directory has", len(got), len(want))
	}
	cmd := exec.Command(perfModern, "script", "--show-bpf-events", "-i", out)
	script, err := cmd.Output()
	if err != nil {
		t.Fatalf("perf-modern script --show-bpf-events: %v", err)
	}
	if n := strings.Count(string(script), "PERF_RECORD_BPF_METADATA"); n != len(allMetadata(O)) {
		t.Errorf("perf-modern script --show-bpf-events shows %d BPF_METADATA records, want %d", n, len(allMetadata(O)))
	}
	stats, err := exec.Command(perfModern, "report", "--stats", "-i", out).Output()
	if err != nil {
		t.Fatalf("perf-modern report --stats: %v", err)
	}
	if !strings.Contains(string(stats), "BPF_METADATA events:") {
		t.Errorf("perf-modern report --stats counts no BPF_METADATA:\n%s", stats)
	}

	// Injecting again changes nothing; stripping gives back the input.
	again, _ := mustInject(t, out, dir, live, inject.Options{PerfNames: true, RecordedOnly: true})
	sameDir(t, again, out)
	sameDir(t, stripDir(t, out), stock)
}

// stripDir copies the directory recording at in without its BPF_METADATA
// records.
func stripDir(t *testing.T, in string) string {
	t.Helper()
	return rectest.Rewrite(t, in, writer.Options{}, func(w *writer.Writer, rec *perfdata.Record) error {
		if rec.Header.Type == perfdata.RecordBPFMetadata {
			return nil
		}
		return w.WriteRecord(rec)
	})
}

// sameDir checks that directories a and b hold the same files, byte for
// byte.
func sameDir(t *testing.T, a, b string) {
	t.Helper()
	na, nb := testkit.DirNames(t, a), testkit.DirNames(t, b)
	if !slices.Equal(na, nb) {
		t.Fatalf("%s has %q, %s %q", a, na, b, nb)
	}
	for _, n := range na {
		if x, y := testkit.ReadFile(t, filepath.Join(a, n)), testkit.ReadFile(t, filepath.Join(b, n)); !bytes.Equal(x, y) {
			t.Errorf("%s: %s", n, firstDiff(x, y))
		}
	}
}

// dataTail returns the BPF_METADATA records at the end of a directory
// recording's data file: after its last record of another type.
func dataTail(t *testing.T, r *recording) [][]byte {
	t.Helper()
	var ms [][]byte
	for _, x := range r.Top() {
		switch {
		case x.Part != 0:
		case x.Type == perfdata.RecordBPFMetadata:
			ms = append(ms, x.Raw)
		default:
			ms = ms[:0]
		}
	}
	return ms
}

// partOf returns the file of r the PROG_LOAD BPF_EVENT of program id is in.
func (r *recording) partOf(t *testing.T, id uint32) int {
	t.Helper()
	for _, x := range r.Records {
		if x.Type != perfdata.RecordBPFEvent {
			continue
		}
		if e, err := perfdata.DecodeBPFEvent(x.Raw, r.Order); err == nil && e.Type == perfdata.BPFEventProgLoad && e.ID == id {
			return x.Part
		}
	}
	t.Fatalf("%s: no PROG_LOAD BPF_EVENT for program %d", filepath.Base(r.Path), id)
	return -1
}

// namedSubsequence returns the first records of ms, in order, named names
// (in that order), or nil if ms has not them all.
func namedSubsequence(t *testing.T, r *recording, ms [][]byte, names []string) [][]byte {
	t.Helper()
	var sub [][]byte
	have := progNames(t, r, ms)
	for i := 0; i < len(ms) && len(sub) < len(names); i++ {
		if have[i] == names[len(sub)] {
			sub = append(sub, ms[i])
		}
	}
	if len(sub) < len(names) {
		return nil
	}
	return sub
}
