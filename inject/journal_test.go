package inject_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/watch"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
)

// TestOracleJournal is the flight recorder against perf 7.2: the journal
// runs (watch.StartJournal, as bpfmeta watch --journal does), programs
// are loaded before it starts, before the recording, and during it (some
// unloaded during it too), a perf 6.1 recording is made without watch and
// a perf 7.2 one of the same workload; then every program is unloaded,
// and the perf 6.1 recording injected from the kernel and the journal
// gets, for the programs of the recording, the BPF_METADATA records perf
// 7.2 wrote for the same objects, byte for byte and in the same places.
func TestOracleJournal(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	k, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	// loaded before the journal starts: its first walk has them
	before := loadFixtures(t, filepath.Join(bpffs, "j-before-journal"), "meta")
	jdir := filepath.Join(t.TempDir(), "journal")
	jw, err := journal.Create(jdir, k.System(), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jr, err := watch.StartJournal(k, jw)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			if _, _, err := jr.Stop(); err != nil {
				t.Error(err)
			}
		}
	}
	defer stop()
	before = append(before, loadFixtures(t, filepath.Join(bpffs, "j-before-recording"), "rich", "nometa")...)
	dir := t.TempDir()
	run := func(perf, who string) *oracleRun {
		pin, gone := filepath.Join(bpffs, who), filepath.Join(bpffs, who+"-gone")
		t.Cleanup(func() { os.RemoveAll(pin); os.RemoveAll(gone) })
		// loaded during the recording; the "gone" ones unloaded during it too
		w := loadCommand(t, pin, "meta", "rich", "many202") + " && " + loadCommand(t, gone, "meta") +
			" && sleep 0.3 && rm -rf '" + gone + "' && sleep 0.3"
		r := &oracleRun{PerfRun: startRecord(t, perf, testkit.RecordFile, filepath.Join(dir, who+".data"), w), pin: pin}
		r.Wait(t)
		r.during = pinnedIDs(t, pin)
		return r
	}
	stock := run(perfStock, "stock")
	modern := run(perfModern, "modern")
	// every program gone: only the journal has them now
	var all []uint32
	all = append(append(append(all, before...), stock.during...), modern.during...)
	for _, p := range []string{"j-before-journal", "j-before-recording", "stock", "modern"} {
		os.RemoveAll(filepath.Join(bpffs, p))
	}
	for _, id := range all {
		testkit.WaitUnloaded(t, id)
	}
	stop()

	j, err := journal.Open(jdir)
	if err != nil {
		t.Fatal(err)
	}
	src := journal.WithKernel(k, j)
	out, sum := mustInject(t, stock.Out, dir, src, inject.Options{PerfNames: true, RecordedOnly: true})
	O, M := readRecording(t, out), readRecording(t, modern.Out)
	for _, id := range before {
		o, m := metadataAfter(t, O, id), metadataAfter(t, M, id)
		if !equalRecords(o, m) {
			t.Errorf("program %d, loaded before: inject wrote %d records after its BPF_EVENT, perf 7.2 %d, not the same: %q, %q", id, len(o), len(m), progNames(t, O, o), progNames(t, M, m))
		}
	}
	oTail, mTail := tailMetadata(t, O), tailMetadata(t, M)
	if len(oTail) == 0 || !isSubsequence(oTail, mTail) {
		t.Errorf("loaded during: the %d injected records at the end are not perf 7.2's (it wrote %d there: %q; inject %q)", len(oTail), len(mTail), progNames(t, M, mTail), progNames(t, O, oTail))
	}
	// Every program of the test got its answer from the journal: none is
	// loaded any more.
	for _, p := range sum.Programs {
		mine := slices.Contains(before, p.ID) || slices.Contains(stock.during, p.ID)
		if mine && !p.Outcome.Resolved() {
			t.Errorf("program %d (%s): %v: %v", p.ID, p.Name, p.Outcome, p.Err)
		}
	}
	rep := strings.Join(src.Report(), "\n")
	if !strings.Contains(rep, "came from the journal") {
		t.Errorf("the report does not say what came from the journal: %q", rep)
	}
	t.Logf("%s; perf 7.2 wrote %d records at the end, inject %d", rep, len(mTail), len(oTail))
	if got, want := perfScriptMetadata(t, perfModern, O.Path), allMetadata(O); !equalRecords(got, want) {
		t.Errorf("perf 7.2 shows %d BPF_METADATA records, not the %d the file has", len(got), len(want))
	}

	// A journal of another host, or without the recording's boot, gives
	// nothing: the same journal read as another host's.
	other := filepath.Join(t.TempDir(), "other")
	os.Rename(filepath.Join(jdir, k.System().Hostname), other)
	os.MkdirAll(filepath.Join(jdir, "not-"+k.System().Hostname), 0o700)
	j2, _ := journal.Open(jdir)
	_, sum2 := mustInject(t, stock.Out, dir, journal.WithKernel(k, j2), inject.Options{RecordedOnly: true})
	for _, p := range sum2.Programs {
		if slices.Contains(stock.during, p.ID) && p.Outcome == inject.Injected {
			t.Errorf("program %d got metadata from no journal of its host", p.ID)
		}
		if slices.Contains(stock.during, p.ID) && !errors.Is(p.Err, bpfprog.ErrNotFound) {
			t.Errorf("program %d: %v", p.ID, p.Err)
		}
	}
}

// TestOracleJournalUnrecorded: a perf 6.1 recording of one task has no
// record of the programs another process loads meanwhile, which perf
// 7.2's side-band thread sees and writes the metadata of at the end; when
// they are unloaded before inject, the journal has them (as
// TestOracleUnrecorded, with every program gone).
func TestOracleJournalUnrecorded(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	k, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	jdir := filepath.Join(t.TempDir(), "journal")
	jw, err := journal.Create(jdir, k.System(), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jr, err := watch.StartJournal(k, jw)
	if err != nil {
		t.Fatal(err)
	}
	defer jr.Stop()
	dir := t.TempDir()
	// loaded before both, and still loaded: the recordings' proof of being
	// of this boot
	loadFixtures(t, filepath.Join(bpffs, "before"), "nometa")
	objects := []string{"meta", "many202", "many203"}
	record := func(perf, who string) (string, []uint32) {
		out := filepath.Join(dir, who+".data")
		pin := filepath.Join(bpffs, who)
		ids := recordWhileLoading(t, perf, out, testkit.PerfOptions{Args: []string{"-F", "99"}}, pin, objects...)
		os.RemoveAll(pin)
		for _, id := range ids {
			testkit.WaitUnloaded(t, id)
		}
		return out, ids
	}
	stock, stockIDs := record(perfStock, "stock")
	modern, _ := record(perfModern, "modern")
	if _, _, err := jr.Stop(); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(jdir)
	if err != nil {
		t.Fatal(err)
	}
	out, sum := mustInject(t, stock, dir, journal.WithKernel(k, j), inject.Options{})
	ours := func(r *recording, ms [][]byte) [][]byte {
		var mine [][]byte
		for _, m := range ms {
			if strings.Contains(r.metadata(t, rectest.Record{Raw: m}).ProgName, "_bpfprogt_") {
				mine = append(mine, m)
			}
		}
		return mine
	}
	O, M := readRecording(t, out), readRecording(t, modern)
	got, want := ours(O, tailMetadata(t, O)), ours(M, tailMetadata(t, M))
	// The same records, each object's once: other processes on the
	// machine may load the same fixtures while either perf records.
	distinct := func(ms [][]byte) [][]byte {
		var out [][]byte
		for _, m := range ms {
			if !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, m) }) {
				out = append(out, m)
			}
		}
		slices.SortFunc(out, bytes.Compare)
		return out
	}
	if len(want) == 0 || !equalRecords(distinct(got), distinct(want)) {
		t.Errorf("the records at the end for the programs loaded elsewhere, gone by inject:\ninject   %q\nperf 7.2 %q", progNames(t, O, got), progNames(t, M, want))
	}
	for _, id := range stockIDs {
		i := slices.IndexFunc(sum.Programs, func(p inject.Program) bool { return p.ID == id })
		if i < 0 || !sum.Programs[i].Unrecorded || !sum.Programs[i].Outcome.Resolved() {
			t.Errorf("program %d is not in the summary as loaded during the recording, from the journal", id)
		}
	}
}
