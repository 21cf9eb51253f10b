package bpfmetatest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

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

// the meta fixture's programs
var metaPrograms = []string{"bpfprogt_multi_function_main", "bpfprogt_second", "bpfprogt_single_function"}

// TestRecording: a perf 6.1 recording of the fixture programs, injected
// from its snapshot, against the golden; and perf 7.2's native records of
// another load of the same programs, at another time, give the same text.
func TestRecording(t *testing.T) {
	data, snap := recording("stock_file_before_withmeta")
	bpfmetatest.Recording(t, "testdata/fixtures.golden", data, snap, metaPrograms...)
	for _, name := range []string{"modern_file_before_withmeta", "stock_pipe_before_withmeta", "stock_zstd_before_withmeta"} {
		data, snap := recording(name)
		bpfmetatest.Recording(t, "testdata/fixtures.golden", data, snap, metaPrograms...)
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

// fakeT records what a check did, without ending the test.
type fakeT struct {
	testing.TB
	dir     string // the real test's
	failed  bool
	skipped bool
	msgs    []string
}

func (f *fakeT) Skip(a ...any) {
	f.skipped = true
	f.msgs = append(f.msgs, fmt.Sprint(a...))
	panic(f)
}

func (f *fakeT) Helper()                   {}
func (f *fakeT) TempDir() string           { return f.dir }
func (f *fakeT) Errorf(s string, a ...any) { f.fail(s, a...) }
func (f *fakeT) Logf(s string, a ...any) {
	f.msgs = append(f.msgs, strings.TrimSpace(fmt.Sprintf(s, a...)))
}
func (f *fakeT) Fatalf(s string, a ...any) {
	f.fail(s, a...)
	panic(f)
}
func (f *fakeT) Fatal(a ...any) { f.Fatalf("%s", fmt.Sprint(a...)) }
func (f *fakeT) fail(s string, a ...any) {
	f.failed = true
	f.msgs = append(f.msgs, fmt.Sprintf(s, a...))
}

// run runs check as a test would, and returns what it said.
func run(t *testing.T, check func(t testing.TB)) (failed bool, msgs string) {
	f := runFake(t, check)
	return f.failed, strings.Join(f.msgs, "\n")
}

// runFake runs check with a fakeT, which it returns.
func runFake(t *testing.T, check func(t testing.TB)) (f *fakeT) {
	f = &fakeT{dir: t.TempDir()}
	defer func() {
		if r := recover(); r != nil && r != any(f) {
			panic(r)
		}
	}()
	check(f)
	return f
}

// TestNeverOnNothing: Recording of a program the recording has no
// metadata of fails naming it and why, also under -update, and writes no
// golden; a recording without it, under -update, writes nothing either;
// one without required names fails (issue 48: an empty golden was
// written, and every later run passed).
func TestNeverOnNothing(t *testing.T) {
	data, snap := recording("stock_file_before_withmeta")
	golden := filepath.Join(t.TempDir(), "x.golden")
	for _, update := range []string{"0", "1"} {
		t.Setenv("BPFMETA_UPDATE", update)
		for _, tc := range []struct {
			snap, prog, says string
		}{
			{snap, "no_such_program", "no_such_program: the recording has no program of this name"},
			{"", "bpfprogt_second", "bpfprogt_second: the recording has no BPF_METADATA record"},
		} {
			failed, msgs := run(t, func(t testing.TB) { bpfmetatest.Recording(t, golden, data, tc.snap, "bpfprogt_second", tc.prog) })
			if !failed || !strings.Contains(msgs, tc.says) {
				t.Errorf("update %s, %s: failed %v: %s; want it to say %q", update, tc.prog, failed, msgs, tc.says)
			}
		}
		if failed, msgs := run(t, func(t testing.TB) { bpfmetatest.Recording(t, golden, data, snap) }); !failed {
			t.Errorf("update %s, no programs named: passed: %s", update, msgs)
		}
		if _, err := os.Stat(golden); err == nil {
			t.Fatalf("update %s: a golden was written", update)
		}
	}
	// under -update, the file written is named
	failed, msgs := run(t, func(t testing.TB) { bpfmetatest.Recording(t, golden, data, snap, "bpfprogt_second") })
	if failed || !strings.Contains(msgs, "wrote "+golden) {
		t.Errorf("-update: failed %v, said %q; want it to name the file", failed, msgs)
	}
}

// TestDiff: a failure shows the lines that differ as a unified diff, not
// both texts whole.
func TestDiff(t *testing.T) {
	data, snap := recording("stock_file_before_withmeta")
	golden := filepath.Join(t.TempDir(), "x.golden")
	want := strings.Replace(string(testkit.ReadFile(t, "testdata/fixtures.golden")), `"3.14159"`, `"3.0"`, 1)
	if err := os.WriteFile(golden, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	failed, msgs := run(t, func(t testing.TB) { bpfmetatest.Recording(t, golden, data, snap, metaPrograms...) })
	if !failed || !strings.Contains(msgs, "\n-  entry:              version = \"3.0\"\n+  entry:              version = \"3.14159\"\n") ||
		strings.Count(msgs, "\n") > 12 {
		t.Errorf("the failure says\n%s\nwant a diff of the one line", msgs)
	}
}

// TestLoaded: the fixture program loaded twice (other ids, addresses and
// load times) matches one golden, made from either load, and the object
// file's text (no root, no perf) is the same.
func TestLoaded(t *testing.T) {
	bpfmetatest.Object(t, "testdata/meta-loaded.golden", testkit.Fixture("meta"))
	testkit.BPF(t)
	bpffs := testkit.MountBPFFS(t)
	for _, pin := range []string{"bpfmetatest-a", "bpfmetatest-b"} {
		progs, unload := testkit.LoadBpftool(t, bpffs, "meta", pin)
		var ids []ebpf.ProgramID
		for _, p := range progs {
			ids = append(ids, ebpf.ProgramID(p.ID))
		}
		bpfmetatest.Loaded(t, "testdata/meta-loaded.golden", ids...)
		unload()
	}
}

// TestObjectIsLoaded: for every fixture object, what Object computes from
// the file is byte for byte what the programs carry once libbpf (bpftool)
// loaded them, and what CollectionSpec computes from the spec is what they
// carry once cilium/ebpf did (Collection).
func TestObjectIsLoaded(t *testing.T) {
	objs, err := filepath.Glob(testkit.RepoPath("testdata", "bpf", "*.bpf.o"))
	if err != nil || len(objs) < 5 {
		t.Fatalf("fixtures: %v %v", objs, err)
	}
	testkit.BPF(t)
	bpffs := testkit.MountBPFFS(t)
	for _, path := range objs {
		name := strings.TrimSuffix(filepath.Base(path), ".bpf.o")
		object, err := bpfmetatest.ObjectText(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		progs, unload := testkit.LoadBpftool(t, bpffs, name, "object-"+name)
		var ids []ebpf.ProgramID
		for _, p := range progs {
			ids = append(ids, ebpf.ProgramID(p.ID))
		}
		loaded, err := bpfmetatest.LoadedText(ids...)
		unload()
		if err != nil {
			t.Fatal(err)
		}
		if string(object) != string(loaded) {
			t.Errorf("%s: the object's text differs from the loaded programs':\n%s", name, testkit.Diff(loaded, object))
		}
		spec, err := ebpf.LoadCollectionSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		// cilium/ebpf hands the kernel BTF of its own (CollectionSpec)
		object, err = bpfmetatest.SpecText(spec)
		if err != nil {
			t.Fatal(err)
		}
		coll, err := ebpf.NewCollection(spec)
		if err != nil {
			t.Errorf("%s: cilium/ebpf: %v", name, err)
			continue
		}
		ids, err = bpfmetatest.CollectionIDs(coll)
		if err == nil {
			loaded, err = bpfmetatest.LoadedText(ids...)
		}
		coll.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(object) != string(loaded) {
			t.Errorf("%s: the object's text differs from cilium/ebpf's load:\n%s", name, testkit.Diff(loaded, object))
		}
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

// TestSkipIfNotSupported: a load that fails for want of kernel support or
// privilege skips (fails under BPFMETA_REQUIRE_ALL=1); any other error,
// a verifier's above all, fails the test (issue 48: the README's
// if err != nil { t.Skip(err) } passed on a program the verifier
// rejected).
func TestSkipIfNotSupported(t *testing.T) {
	verifier := fmt.Errorf("load program: %w", &ebpf.VerifierError{})
	for _, tc := range []struct {
		err             error
		requireAll      string
		failed, skipped bool
	}{
		{nil, "", false, false},
		{fmt.Errorf("map create: %w", ebpf.ErrNotSupported), "", false, true},
		{fmt.Errorf("load program: %w", unix.EPERM), "", false, true},
		{fmt.Errorf("load program: %w", unix.EPERM), "1", true, false},
		{verifier, "", true, false},
		{errors.New("no such file"), "", true, false},
	} {
		t.Setenv("BPFMETA_REQUIRE_ALL", tc.requireAll)
		f := runFake(t, func(t testing.TB) { bpfmetatest.SkipIfNotSupported(t, tc.err) })
		if f.failed != tc.failed || f.skipped != tc.skipped {
			t.Errorf("%v (BPFMETA_REQUIRE_ALL=%q): failed %v, skipped %v; want %v, %v", tc.err, tc.requireAll, f.failed, f.skipped, tc.failed, tc.skipped)
		}
	}
}
