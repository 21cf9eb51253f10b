package bpfmetatest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfmetatest"
	"github.com/bpfmeta/bpfmeta/internal/testkit" // its -update flag is the one Update reads
)

// inject's recordings of its fixture programs, made by perf 6.1 and perf
// 7.2 at other times (other loads: other ids and addresses), with the
// snapshots taken while they were made.
func recording(name string) (data, snap string) {
	dir := filepath.Join("..", "inject", "testdata")
	return filepath.Join(dir, name+".data"), filepath.Join(dir, name+".snapshot.json")
}

// TestRecording: a perf 6.1 recording of the fixture programs, injected
// from its snapshot, against the golden; and perf 7.2's native records of
// another load of the same programs, at another time, give the same text.
func TestRecording(t *testing.T) {
	data, snap := recording("stock_file_before_withmeta")
	bpfmetatest.Recording(t, "testdata/fixtures.golden", data, snap)
	for _, name := range []string{"modern_file_before_withmeta", "stock_pipe_before_withmeta", "stock_zstd_before_withmeta"} {
		data, snap := recording(name)
		bpfmetatest.Recording(t, "testdata/fixtures.golden", data, snap)
	}
}

// TestRecordingFails: a recording without its snapshot lacks the metadata,
// and Recording's text says so against the golden (the check can fail).
func TestRecordingFails(t *testing.T) {
	data, _ := recording("stock_file_before_withmeta")
	got, err := bpfmetatest.RecordingText(data, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/fixtures.golden")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) == string(want) || len(want) == 0 {
		t.Errorf("a recording without its metadata gives the golden's text:\n%s", got)
	}
}

// TestLoaded: the fixture program loaded twice (other ids, addresses and
// load times) matches one golden, made from either load.
func TestLoaded(t *testing.T) {
	testkit.BPF(t)
	bpffs := testkit.MountBPFFS(t)
	for _, pin := range []string{"bpfmetatest-a", "bpfmetatest-b"} {
		progs, unload := testkit.LoadBpftool(t, bpffs, "meta", pin)
		var ids []uint32
		for _, p := range progs {
			ids = append(ids, p.ID)
		}
		bpfmetatest.Loaded(t, "testdata/meta-loaded.golden", ids...)
		unload()
	}
}

// TestRecordingFuncs: the functions Recording's text is made of, with
// their entries, from the recording and its snapshot in one call.
func TestRecordingFuncs(t *testing.T) {
	data, snap := recording("stock_file_before_withmeta")
	fns, err := bpfmetatest.RecordingFuncs(data, snap, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	text, err := bpfmetatest.RecordingText(data, snap, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) == 0 || len(fns[0].Entries) == 0 {
		t.Fatalf("functions %+v", fns)
	}
	for _, f := range fns {
		if !strings.Contains(string(text), "\n"+f.Function+"\n") && !strings.HasPrefix(string(text), f.Function+"\n") {
			t.Errorf("function %s is not in the text:\n%s", f.Function, text)
		}
	}
}
