package inject_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// keepRecordingsEnv set to anything makes -update rewrite the .golden files
// from the committed recordings instead of recording them anew.
const keepRecordingsEnv = "BPFMETA_KEEP_RECORDINGS"

// TestGolden injects every recording in testdata (made by record.sh
// with perf 6.1 and perf 7.2) from the snapshot taken while it was made, and
// compares a listing of the output with <case>.golden. As root, -update
// records the matrix anew first (unless BPFMETA_KEEP_RECORDINGS is set).
//
// Independently of the goldens: a recording perf 7.2 made (it has the
// records already) and one without metadata come out byte for byte as they
// went in; the output without the added records is the input byte for byte;
// injecting the output again, under either naming, changes nothing; perf
// 6.1's recordings get one record per function of every program with
// metadata, right after the program's BPF_EVENT (loaded before) or at the
// end in ascending id (loaded during), named after the recording's KSYMBOLs
// or, with PerfNames, as perf names them.
func TestGolden(t *testing.T) {
	if *testkit.Update && os.Getenv(keepRecordingsEnv) == "" {
		if os.Geteuid() == 0 {
			rerecord(t)
		} else {
			t.Logf("not root: rewriting the goldens from the committed recordings (as root, -update records them anew)")
		}
	}
	files, err := filepath.Glob(filepath.Join(casesDir, "*.data"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s (%v): make them with %s/record.sh", casesDir, err, casesDir)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".data")
		t.Run(name, func(t *testing.T) { checkCase(t, path) })
	}
}

// rerecord runs record.sh into testdata with a bpfmeta built from
// this tree.
func rerecord(t *testing.T) {
	t.Helper()
	cmd := exec.Command("./record.sh")
	cmd.Dir = casesDir
	cmd.Env = append(os.Environ(), "BPFMETA="+buildBpfmeta(t))
	out, err := cmd.CombinedOutput()
	t.Logf("record.sh:\n%s", out)
	if err != nil {
		t.Fatalf("record.sh: %v", err)
	}
}

// buildBpfmeta builds the command into a temporary directory.
func buildBpfmeta(t *testing.T) string {
	t.Helper()
	goCmd := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		goCmd = filepath.Join(root, "bin", "go")
	} else if _, err := exec.LookPath(goCmd); err != nil {
		goCmd = "/usr/local/go/bin/go"
	}
	bin := filepath.Join(t.TempDir(), "bpfmeta")
	if out, err := exec.Command(goCmd, "build", "-o", bin, "../cmd/bpfmeta").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/bpfmeta: %v\n%s", err, out)
	}
	return bin
}

// recordCase is a recording's case name (record.sh): perf_mode_timing_progs.
type recordCase struct {
	perf, mode, timing, progs string
}

func parseCase(t *testing.T, name string) recordCase {
	t.Helper()
	f := strings.Split(name, "_")
	if len(f) != 4 {
		t.Fatalf("%s: not a record.sh case name (perf_mode_timing_progs)", name)
	}
	return recordCase{f[0], f[1], f[2], f[3]}
}

// unchanged: inject must leave the recording as it is (perf 7.2 wrote the
// records itself, or nothing has metadata).
func (c recordCase) unchanged() bool { return c.perf == "modern" || c.progs == "nometa" }

func readSnapshot(t *testing.T, path string) *snapshot.File {
	t.Helper()
	s, err := snapshot.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// programsOf lists the programs of a snapshot, in ascending id.
func programsOf(t *testing.T, s *snapshot.File) []*bpfprog.Program {
	t.Helper()
	var ps []*bpfprog.Program
	for p, err := range s.All() {
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

func checkCase(t *testing.T, path string) {
	name := strings.TrimSuffix(filepath.Base(path), ".data")
	c := parseCase(t, name)
	snapPath := strings.TrimSuffix(path, ".data") + ".snapshot.json"
	snap := readSnapshot(t, snapPath)
	inBytes := testkit.ReadFile(t, path)
	in := readRecording(t, path)
	dir := t.TempDir()

	var g bytes.Buffer
	fmt.Fprintf(&g, "# %s: %v format, %d bytes, sha256 %x\n", filepath.Base(path), in.Format, len(inBytes), sha256.Sum256(inBytes))
	fmt.Fprintf(&g, "# inject from %s (%d programs)\n", filepath.Base(snapPath), snap.Len())
	for _, opts := range []inject.Options{{}, {PerfNames: true}} {
		outPath, sum := mustInject(t, path, dir, snap, opts)
		outBytes := testkit.ReadFile(t, outPath)
		out := readRecording(t, outPath)
		ins := insertedRecords(t, in, out)

		if c.unchanged() && !bytes.Equal(outBytes, inBytes) {
			t.Errorf("%+v: the output differs from the input: %s", opts, testkit.FirstDiff(outBytes, inBytes))
		}
		if got := strip(t, outPath, ins); !bytes.Equal(got, inBytes) {
			t.Errorf("%+v: the output without its %d added records differs from the input: %s", opts, len(ins), testkit.FirstDiff(got, inBytes))
		}
		// Injecting again, under either naming, changes nothing.
		for _, again := range []inject.Options{{}, {PerfNames: true}} {
			p, _ := mustInject(t, outPath, dir, snap, again)
			if b := testkit.ReadFile(t, p); !bytes.Equal(b, outBytes) {
				t.Errorf("%+v: injecting the output again with %+v changes it: %s", opts, again, testkit.FirstDiff(b, outBytes))
			}
		}
		checkOutcomes(t, c, snap, sum, opts)
		checkPlacement(t, c, snap, out, ins, opts)

		if !opts.PerfNames {
			fmt.Fprintf(&g, "# programs (inject.Summary):\n")
			for _, p := range sum.Programs {
				how := "kernel"
				if p.Synthesized {
					how = "synthesized"
				}
				fmt.Fprintf(&g, "#   id %d tag %v %s %s: %v, %d records\n", p.ID, p.Tag, how, p.Name, p.Outcome, p.Records)
			}
			fmt.Fprintf(&g, "# output: %d bytes, sha256 %x; %d records added (+), %d kept\n", len(outBytes), sha256.Sum256(outBytes), sum.Injected, sum.Kept)
			fmt.Fprintf(&g, "# inner records: only BPF ones, indented, at their decompressed-stream offsets\n")
			listRecords(t, &g, out, ins, false)
		} else {
			fmt.Fprintf(&g, "\n# with Options{PerfNames: true}: %d bytes, sha256 %x; the added records:\n", len(outBytes), sha256.Sum256(outBytes))
			listRecords(t, &g, out, ins, true)
		}
	}
	testkit.Golden(t, filepath.Join(casesDir, name+".golden"), g.Bytes())
}

// withMetadata returns the snapshot's programs that have metadata, by id.
func withMetadata(t *testing.T, snap *snapshot.File) []*bpfprog.Program {
	var ps []*bpfprog.Program
	for _, p := range programsOf(t, snap) {
		if p.Metadata != nil && len(p.Metadata.Entries) > 0 {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *bpfprog.Program) int { return int(a.ID) - int(b.ID) })
	return ps
}

// checkOutcomes: every program record.sh loaded (the snapshot's) is in the
// summary, resolved.
func checkOutcomes(t *testing.T, c recordCase, snap *snapshot.File, sum *inject.Summary, opts inject.Options) {
	t.Helper()
	want := 0
	for _, p := range withMetadata(t, snap) {
		want += len(p.Funcs)
	}
	if c.unchanged() {
		want = 0
	}
	if sum.Injected != want {
		t.Errorf("%+v: %d records added, want %d", opts, sum.Injected, want)
	}
	for _, p := range programsOf(t, snap) {
		i := slices.IndexFunc(sum.Programs, func(sp inject.Program) bool { return sp.ID == p.ID })
		if i < 0 {
			t.Errorf("%+v: program %d (%s) of the snapshot is not in the summary", opts, p.ID, p.Name)
			continue
		}
		o := sum.Programs[i].Outcome
		ok := o == inject.NoMetadata
		if p.Metadata != nil {
			ok = o == inject.Injected
			if c.perf == "modern" {
				ok = o == inject.AlreadyPresent
			}
		}
		if !ok {
			t.Errorf("%+v: program %d (%s): %v (%v)", opts, p.ID, p.Name, o, sum.Programs[i].Err)
		}
	}
}

// checkPlacement checks the added records of a perf 6.1 recording with
// metadata against where perf 7.2 writes them.
func checkPlacement(t *testing.T, c recordCase, snap *snapshot.File, out *recording, ins map[int]bool, opts inject.Options) {
	t.Helper()
	if c.unchanged() {
		return
	}
	top := out.Top()
	ksyms := out.ksymNames()
	// names are the prog_names p's records must have.
	names := func(p *bpfprog.Program) []string {
		if opts.PerfNames {
			return p.Metadata.ProgNames
		}
		var ns []string
		for _, f := range p.Funcs {
			ns = append(ns, ksyms.of(f))
		}
		return ns
	}
	check := func(at int, p *bpfprog.Program) {
		t.Helper()
		want := names(p)
		if at+len(want) > len(top) {
			t.Errorf("%+v: program %d: %d records expected at index %d, the output has %d", opts, p.ID, len(want), at, len(top))
			return
		}
		for i, n := range want {
			x := top[at+i]
			if !ins[at+i] {
				t.Errorf("%+v: program %d: record %d at %#x is the input's %v, want an added BPF_METADATA for %s", opts, p.ID, i, x.Offset, x.Type, n)
				continue
			}
			m := out.metadata(t, x)
			same := slices.EqualFunc(m.Entries, p.Metadata.Entries, func(a perfdata.BPFMetadataEntry, b bpfprog.Entry) bool {
				return a.Key == b.Key && a.Value == b.Value
			})
			if m.ProgName != n || !same {
				t.Errorf("%+v: program %d: the record at %#x is for %q with %d entries, want %q with the snapshot's %d", opts, p.ID, x.Offset, m.ProgName, len(m.Entries), n, len(p.Metadata.Entries))
			}
		}
	}
	progs := withMetadata(t, snap)
	switch c.timing {
	case "before": // right after the program's BPF_EVENT
		for _, p := range progs {
			e := slices.IndexFunc(top, func(x rectest.Record) bool {
				ev, err := perfdata.DecodeBPFEvent(x.Raw, out.Order)
				return x.Type == perfdata.RecordBPFEvent && err == nil && ev.Type == perfdata.BPFEventProgLoad && ev.ID == p.ID
			})
			if e < 0 {
				t.Errorf("program %d: no top-level PROG_LOAD BPF_EVENT", p.ID)
				continue
			}
			check(e+1, p)
		}
	default: // the last records, after the last FINISHED_ROUND, ascending id
		n := 0
		for _, p := range progs {
			n += len(p.Funcs)
		}
		at := len(top) - n
		if at < 1 || top[at-1].Type != perfdata.RecordFinishedRound {
			t.Errorf("%+v: the %d added records do not follow a FINISHED_ROUND at the end", opts, n)
			return
		}
		for _, p := range progs {
			check(at, p)
			at += len(p.Funcs)
		}
	}
}

// listRecords writes one line per top-level record of r (only the added
// ones if onlyAdded), and the BPF records inside compressed ones, indented.
func listRecords(t *testing.T, w *bytes.Buffer, r *recording, ins map[int]bool, onlyAdded bool) {
	t.Helper()
	i := -1
	for _, x := range r.Records {
		if !x.Compressed() {
			i++
		}
		added := !x.Compressed() && ins[i]
		if onlyAdded && !added {
			continue
		}
		mark := " "
		if added {
			mark = "+"
		}
		if x.Compressed() {
			switch x.Type {
			case perfdata.RecordKSymbol, perfdata.RecordBPFEvent, perfdata.RecordBPFMetadata:
			default:
				continue
			}
			mark = "    "
		}
		fmt.Fprintf(w, "%s%#07x %5d %s\n", mark, x.Offset, len(x.Raw), describe(t, r, x))
	}
}

// describe says what a record is, decoding the BPF ones.
func describe(t *testing.T, r *recording, x rectest.Record) string {
	t.Helper()
	// sample_id, right after the fields (at fields): zeros in what perf
	// synthesized, pid and time in the kernel's. Kernel records can be
	// longer (see kernelLoadPadded): the listing shows by how much.
	sid := func(fields int) string {
		n := r.IDHeaderSize
		if n == 0 || fields+n > len(x.Raw) {
			return ""
		}
		s := " sample_id=set"
		if bytes.Count(x.Raw[fields:fields+n], []byte{0}) == n {
			s = " sample_id=zeros"
		}
		if pad := len(x.Raw) - fields - n; pad > 0 {
			s += fmt.Sprintf(" +%d bytes", pad)
		}
		return s
	}
	switch x.Type {
	case perfdata.RecordKSymbol:
		k, err := perfdata.DecodeKSymbol(x.Raw, r.Order)
		if err != nil {
			return fmt.Sprintf("KSYMBOL (%v)", err)
		}
		return fmt.Sprintf("KSYMBOL addr=%#x len=%d type=%d flags=%#x %s%s", k.Addr, k.Len, uint16(k.Type), uint16(k.Flags), k.Name, sid(24+(len(k.Name)+8)&^7))
	case perfdata.RecordBPFEvent:
		e, err := perfdata.DecodeBPFEvent(x.Raw, r.Order)
		if err != nil {
			return fmt.Sprintf("BPF_EVENT (%v)", err)
		}
		return fmt.Sprintf("BPF_EVENT type=%d flags=%d id=%d tag=%v%s", uint16(e.Type), e.Flags, e.ID, e.Tag, sid(24))
	case perfdata.RecordBPFMetadata:
		m := r.metadata(t, x)
		var es []string
		for _, e := range m.Entries {
			es = append(es, e.Key+"="+shorten(e.Value))
		}
		return fmt.Sprintf("BPF_METADATA %s: %s", m.ProgName, strings.Join(es, " "))
	}
	return x.Type.String()
}

// shortValue is the longest metadata value the listing shows whole.
const shortValue = 24

func shorten(v string) string {
	if len(v) <= shortValue {
		return v
	}
	return fmt.Sprintf("%s...(%d bytes)", v[:shortValue], len(v))
}
