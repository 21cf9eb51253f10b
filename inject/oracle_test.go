package inject_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/writer"
)

// oracleRun is one recording of the oracle workload.
type oracleRun struct {
	*testkit.PerfRun
	pin    string   // where the workload pinned what it loaded
	during []uint32 // the programs it loaded, ascending
}

// TestOracle is the comparison with perf record >= 6.17. It
// loads the fixtures, then records with perf 6.1 and with perf 7.2, in
// every mode, a workload that loads them once more and keeps them loaded;
// it injects the 6.1 recordings from the running kernel and checks that
// the BPF_METADATA records of its programs are perf 7.2's, byte for byte
// (Options{PerfNames: true}) and in the same place: right after the
// BPF_EVENT of a program loaded before, at the end (after the last
// FINISHED_ROUND, ascending id) for a program loaded during the recording.
// With the default naming the records of the latter are named after their
// KSYMBOLs. perf-modern script -D must read the injected files and see
// exactly these records.
//
// The machine is shared: programs are found by the ids of what this test
// loaded, never by name (others load the same fixtures). A system-wide perf
// record runs all along, as on a machine with a profiler: the kernel then
// pads the KSYMBOL and BPF_EVENT records it emits (see kernelLoadPadded).
func TestOracle(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	before := loadFixtures(t, filepath.Join(bpffs, "before"), "meta", "nometa", "rich", "rich19", "many202", "many203")
	dir := t.TempDir()
	stopNeighbour := startNeighbour(t, perfStock, dir)
	start := func(perf, who string, mode testkit.RecordMode) *oracleRun {
		pin := filepath.Join(bpffs, who+"-"+string(mode))
		w := loadCommand(t, pin, "meta", "nometa", "rich", "rich19", "many202", "many203") + " && sleep 0.2"
		return &oracleRun{PerfRun: startRecord(t, perf, mode, filepath.Join(dir, who+"-"+string(mode)+".data"), w), pin: pin}
	}
	finish := func(r *oracleRun) {
		r.Wait(t)
		r.during = pinnedIDs(t, r.pin)
	}
	stock := map[testkit.RecordMode]*oracleRun{}
	// perf 6.1 records its own processes' programs only: all at once.
	for _, m := range testkit.RecordModes {
		stock[m] = start(perfStock, "stock", m)
	}
	for _, m := range testkit.RecordModes {
		finish(stock[m])
	}
	// perf 7.2's side-band thread sees every program loaded on the machine
	// (and writes metadata for them): one recording at a time, and no other
	// loads of this test meanwhile.
	modern := map[testkit.RecordMode]*oracleRun{}
	for _, m := range testkit.RecordModes {
		modern[m] = start(perfModern, "modern", m)
		finish(modern[m])
	}
	stopNeighbour()
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range testkit.RecordModes {
		t.Run(string(m), func(t *testing.T) { compareWithModern(t, perfModern, live, before, stock[m], modern[m]) })
	}
}

// TestOracleUnrecorded: a recording of one task (the workload's) has no
// record of the programs another process loads meanwhile; perf 7.2's
// side-band thread sees the loads and writes their metadata at the end all
// the same, and so must inject: a perf 6.1 recording and a perf 7.2 one,
// made one after the other while a loader loads the same objects (202 and
// 203 variables among them: perf writes no record for 203), end in the
// same records for them.
func TestOracleUnrecorded(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	dir := t.TempDir()
	// loaded before both: the recordings' proof of being of this boot
	loadFixtures(t, filepath.Join(bpffs, "before"), "nometa")
	objects := []string{"meta", "many202", "many203"}
	record := func(perf, who string) (string, []uint32) {
		out := filepath.Join(dir, who+".data")
		ids := recordWhileLoading(t, perf, out, testkit.PerfOptions{Args: []string{"-F", "99"}}, filepath.Join(bpffs, who), objects...)
		return out, ids
	}
	stock, stockIDs := record(perfStock, "stock")
	modern, _ := record(perfModern, "modern")
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	out, sum := mustInject(t, stock, dir, live, inject.Options{})
	ours := func(r *recording, ms [][]byte) [][]byte {
		var mine [][]byte
		for _, m := range ms {
			name := r.metadata(t, rectest.Record{Raw: m}).ProgName
			if strings.Contains(name, "_bpfprogt_") {
				mine = append(mine, m)
			}
		}
		return mine
	}
	O, M := readRecording(t, out), readRecording(t, modern)
	got, want := ours(O, tailMetadata(t, O)), ours(M, tailMetadata(t, M))
	if len(want) == 0 {
		t.Fatalf("perf 7.2 wrote no records for the programs loaded while it recorded: %q", progNames(t, M, tailMetadata(t, M)))
	}
	if !equalRecords(got, want) {
		t.Errorf("the records at the end for the programs loaded elsewhere:\ninject   %q\nperf 7.2 %q", progNames(t, O, got), progNames(t, M, want))
	}
	for _, id := range stockIDs {
		i := slices.IndexFunc(sum.Programs, func(p inject.Program) bool { return p.ID == id })
		if i < 0 || !sum.Programs[i].Unrecorded {
			t.Errorf("program %d is not in the summary as loaded during the recording", id)
			continue
		}
		p := sum.Programs[i]
		if strings.Contains(p.Name, "many203") != (p.Outcome == inject.TooLarge) {
			t.Errorf("program %d (%s): %v", id, p.Name, p.Outcome)
		}
	}
	if sum.UnrecordedSkipped != "" {
		t.Errorf("inject did not look for them: %s", sum.UnrecordedSkipped)
	}
	// perf 7.2 reads the result and sees exactly these records
	if got, want := perfScriptMetadata(t, perfModern, O.Path), allMetadata(O); !equalRecords(got, want) {
		t.Errorf("perf 7.2 shows %d BPF_METADATA records, not the %d the file has", len(got), len(want))
	}
}

// startNeighbour starts a system-wide perf record (with its default KSYMBOL
// and BPF_EVENT side-band records) and waits until it records; the returned
// function ends it.
func startNeighbour(t *testing.T, perf, dir string) func() {
	t.Helper()
	r := testkit.StartPerf(t, perf, filepath.Join(dir, "neighbour.data"), testkit.PerfOptions{SystemWide: true, Args: []string{"-F", "99"}})
	r.WaitReady(t)
	return func() { r.Stop(t) }
}

// padded counts the top-level KSYMBOL and BPF_EVENT records of r that are
// longer than their fields and sample_id.
func padded(r *recording) int {
	n := 0
	for _, x := range r.Top() {
		fields := 0
		switch x.Type {
		case perfdata.RecordKSymbol:
			k, err := perfdata.DecodeKSymbol(x.Raw, r.Order)
			if err != nil {
				continue
			}
			fields = 24 + (len(k.Name)+8)&^7
		case perfdata.RecordBPFEvent:
			fields = 24
		default:
			continue
		}
		if len(x.Raw) > fields+r.IDHeaderSize {
			n++
		}
	}
	return n
}

func compareWithModern(t *testing.T, perfModern string, live *live.Kernel, before []uint32, s, m *oracleRun) {
	dir := t.TempDir()
	// The perf 6.1 recordings ran at once, each seeing the others' loads
	// as perf 7.2's side-band thread would: their programs are compared
	// here; TestOracleUnrecorded compares the others.
	outPerf, _ := mustInject(t, s.Out, dir, live, inject.Options{PerfNames: true, RecordedOnly: true})
	outDefault, _ := mustInject(t, s.Out, dir, live, inject.Options{RecordedOnly: true})
	S, M := readRecording(t, s.Out), readRecording(t, m.Out)
	O, D := readRecording(t, outPerf), readRecording(t, outDefault)
	program := func(id uint32) *bpfprog.Program {
		t.Helper()
		p, err := live.Program(id)
		if err != nil {
			t.Fatalf("program %d: %v", id, err)
		}
		return p
	}
	hasMetadata := func(p *bpfprog.Program) bool { return p.Metadata != nil && len(p.Metadata.Entries) > 0 }

	// Loaded before: perf synthesized them in both recordings, with the
	// same ids; the records follow the BPF_EVENT.
	for _, id := range before {
		p := program(id)
		want := 0
		if hasMetadata(p) {
			want = len(p.Funcs)
		}
		o, mm, d := metadataAfter(t, O, id), metadataAfter(t, M, id), metadataAfter(t, D, id)
		if len(mm) != want {
			t.Errorf("program %d (%s) loaded before: perf 7.2 wrote %d records after its BPF_EVENT, want %d", id, p.Name, len(mm), want)
		}
		if !equalRecords(o, mm) {
			t.Errorf("program %d (%s) loaded before: inject wrote %d records after its BPF_EVENT that are not perf 7.2's %d", id, p.Name, len(o), len(mm))
		}
		if !equalRecords(d, o) {
			t.Errorf("program %d (%s) loaded before: the default naming differs from perf's", id, p.Name)
		}
	}

	// Loaded during: the last records, ascending id.
	oTail, mTail, dTail := tailMetadata(t, O), tailMetadata(t, M), tailMetadata(t, D)
	ksyms := S.ksymNames()
	var perfNames, ksymNames []string
	for _, id := range s.during {
		if p := program(id); hasMetadata(p) {
			perfNames = append(perfNames, p.Metadata.ProgNames...)
			for _, f := range p.Funcs {
				ksymNames = append(ksymNames, ksyms.of(f))
			}
		}
	}
	if got := progNames(t, O, oTail); !slices.Equal(got, perfNames) {
		t.Errorf("loaded during, PerfNames: the records at the end are for\n%q\nwant (ascending id)\n%q", got, perfNames)
	}
	if got := progNames(t, D, dTail); !slices.Equal(got, ksymNames) {
		t.Errorf("loaded during, default naming: the records at the end are for\n%q\nwant their KSYMBOLs'\n%q", got, ksymNames)
	}
	if slices.Equal(perfNames, ksymNames) {
		t.Errorf("loaded during: the fixture's main functions must have KSYMBOL names other than perf's (%q)", perfNames)
	}
	// Default naming changes the name only.
	for i := range min(len(dTail), len(oTail)) {
		const nameEnd = perfdata.EventHeaderSize + perfdata.BPFProgNameLen
		if !bytes.Equal(dTail[i][:perfdata.EventHeaderSize], oTail[i][:perfdata.EventHeaderSize]) || !bytes.Equal(dTail[i][nameEnd:], oTail[i][nameEnd:]) {
			t.Errorf("loaded during: the default-named record %d differs from the perf-named one beyond prog_name", i)
		}
	}
	// perf 7.2's tail has its own during-programs' records, and those of
	// any program loaded elsewhere while it recorded.
	if !isSubsequence(oTail, mTail) {
		t.Errorf("loaded during: the %d injected records at the end are not perf 7.2's (it wrote %d there: %q)", len(oTail), len(mTail), progNames(t, M, mTail))
	}
	if len(mTail) != len(oTail) {
		t.Logf("perf 7.2 wrote %d records at the end, inject %d: programs loaded elsewhere on the machine while perf 7.2 recorded", len(mTail), len(oTail))
	}

	if n := padded(S); n > 0 {
		t.Logf("%d KSYMBOL/BPF_EVENT records of the perf 6.1 recording are padded", n)
	}
	t.Logf("injected: %d records after BPF_EVENTs (programs loaded before: this test's %d and others'), %d at the end (perf 7.2: %d there)", len(allMetadata(O))-len(oTail), len(before), len(oTail), len(mTail))

	// perf 7.2 reads the injected files and sees exactly these records.
	for _, r := range []*recording{O, D, M} {
		if got, want := perfScriptMetadata(t, perfModern, r.Path), allMetadata(r); !equalRecords(got, want) {
			t.Errorf("%s: perf-modern script -D shows %d BPF_METADATA records, not the %d the file has", filepath.Base(r.Path), len(got), len(want))
		}
	}
}

// metadataAfter returns the BPF_METADATA records right after the top-level
// PROG_LOAD BPF_EVENT of program id.
func metadataAfter(t *testing.T, r *recording, id uint32) [][]byte {
	t.Helper()
	top := r.Top()
	i := progLoad(r, id)
	if i < 0 {
		t.Fatalf("%s: no top-level PROG_LOAD BPF_EVENT for program %d", filepath.Base(r.Path), id)
	}
	var ms [][]byte
	for _, y := range top[i+1:] {
		if y.Type != perfdata.RecordBPFMetadata {
			break
		}
		ms = append(ms, y.Raw)
	}
	return ms
}

// progLoad returns the index in r.Top() of the PROG_LOAD BPF_EVENT of
// program id, or -1.
func progLoad(r *recording, id uint32) int {
	for i, x := range r.Top() {
		if x.Type != perfdata.RecordBPFEvent {
			continue
		}
		if e, err := perfdata.DecodeBPFEvent(x.Raw, r.Order); err == nil && e.Type == perfdata.BPFEventProgLoad && e.ID == id {
			return i
		}
	}
	return -1
}

// tailMetadata returns the records after the last FINISHED_ROUND, which
// must all be BPF_METADATA.
func tailMetadata(t *testing.T, r *recording) [][]byte {
	t.Helper()
	top := r.Top()
	last := -1
	for i, x := range top {
		if x.Type == perfdata.RecordFinishedRound {
			last = i
		}
	}
	if last < 0 {
		t.Fatalf("%s: no FINISHED_ROUND", filepath.Base(r.Path))
	}
	var ms [][]byte
	for _, x := range top[last+1:] {
		if x.Type != perfdata.RecordBPFMetadata {
			t.Errorf("%s: a %v record at %#x after the last FINISHED_ROUND", filepath.Base(r.Path), x.Type, x.Offset)
			continue
		}
		ms = append(ms, x.Raw)
	}
	return ms
}

// allMetadata returns every top-level BPF_METADATA record of r in order.
func allMetadata(r *recording) [][]byte {
	var ms [][]byte
	for _, x := range r.Top() {
		if x.Type == perfdata.RecordBPFMetadata {
			ms = append(ms, x.Raw)
		}
	}
	return ms
}

func progNames(t *testing.T, r *recording, ms [][]byte) []string {
	t.Helper()
	var ns []string
	for _, raw := range ms {
		ns = append(ns, r.metadata(t, rectest.Record{Raw: raw}).ProgName)
	}
	return ns
}

func equalRecords(a, b [][]byte) bool { return slices.EqualFunc(a, b, bytes.Equal) }

// isSubsequence reports whether sub's records appear in all, in order.
func isSubsequence(sub, all [][]byte) bool {
	i := 0
	for _, r := range all {
		if i < len(sub) && bytes.Equal(sub[i], r) {
			i++
		}
	}
	return i == len(sub)
}

var (
	// 0x348@path [0x9a0]: event: 84
	dumpEventRE = regexp.MustCompile(`^(?:0x[0-9a-f]+|0)@.* \[0x[0-9a-f]+\]: event: 84$`)
	// . ... raw event: size 2464 bytes
	dumpSizeRE = regexp.MustCompile(`^\. \.\.\. raw event: size (\d+) bytes$`)
)

// perfScriptMetadata returns the BPF_METADATA records `perf-modern script
// -D` prints for path (user records are dumped as read: in file order),
// from its hex dumps: ".  0000:  54 00 ...  T.......", 16 bytes a line.
func perfScriptMetadata(t *testing.T, perfModern, path string) [][]byte {
	t.Helper()
	cmd := exec.Command(perfModern, "script", "-D", "-i", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("perf-modern script -D -i %s: %v\n%s", filepath.Base(path), err, stderr.String())
	}
	var ms [][]byte
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var cur []byte
	size := -1
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case dumpEventRE.MatchString(line):
			in, cur, size = true, nil, -1
		case !in:
		case dumpSizeRE.MatchString(line):
			size, _ = strconv.Atoi(dumpSizeRE.FindStringSubmatch(line)[1])
		case strings.HasPrefix(line, ".  ") && len(line) > 10 && line[7] == ':':
			const hexStart, perByte = 10, 3
			for k := 0; k < 16; k++ {
				at := hexStart + perByte*k
				if at+2 > len(line) || line[at] == ' ' {
					break
				}
				b, err := hex.DecodeString(line[at : at+2])
				if err != nil {
					t.Fatalf("perf-modern script -D: bad hex dump line %q", line)
				}
				cur = append(cur, b...)
			}
		case line == "" && size >= 0:
			if len(cur) != size {
				t.Fatalf("perf-modern script -D: a %d-byte BPF_METADATA dumped as %d bytes", size, len(cur))
			}
			ms = append(ms, cur)
			in = false
		}
	}
	if in {
		t.Fatalf("perf-modern script -D -i %s: the output ends inside a BPF_METADATA dump", filepath.Base(path))
	}
	return ms
}

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
		opts := testkit.PerfOptions{SystemWide: true, Args: []string{"--threads", "-F", "99"}}
		ids := recordWhileLoading(t, perf, out, opts, filepath.Join(bpffs, "threads-"+who), objects...)
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
	testkit.SameDir(t, again, out)
	testkit.SameDir(t, stripDir(t, out), stock)
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
