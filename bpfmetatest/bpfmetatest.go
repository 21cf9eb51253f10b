// Package bpfmetatest checks BPF programs' metadata against golden files, in tests.
//
// It checks BPF programs' metadata against golden files, in the style of
// testing/fstest, for the teams that ship BPF programs: what perf will
// record of the programs of an object file (Object, needs neither root nor
// perf), what a freshly loaded program carries (Loaded, Collection, need
// root), and what a recording of one's programs carries, by perf >= 6.17 or
// once bpfmeta inject has added their metadata from a snapshot (Recording,
// needs nothing). They compare the stable form (package stable: programs
// --stable's and show --stable's text), the same on any host and boot, so
// that a golden made on one machine passes on another with the same
// programs, and its diff between two versions of a program shows only the
// values that changed. A failure prints the unified diff from the golden to
// what was found.
//
// A golden file is rewritten instead of compared when the test binary has
// a flag named update set (go test -update, the test package defining it:
// var _ = flag.Bool("update", false, "rewrite golden files")), or when
// BPFMETA_UPDATE=1; the test's log names each file written. A check never
// passes on nothing: an empty text is an error, also under -update.
package bpfmetatest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/linediff"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/stable"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Object checks what perf will record of each program of the BPF object
// file at path (clang's prog.bpf.o) once it is loaded, against the golden
// file, in the stable form (programs --stable's text): computed from the
// object's .rodata and BTF as the kernel and perf will (stable.ObjectFile),
// the same text Loaded gives of the programs loaded, with neither root nor
// perf. It fails on an object without programs, or whose programs have no
// BTF of their functions.
//
// The text is that of a load by libbpf, which hands the kernel the
// object's BTF as it is. cilium/ebpf writes BTF of its own, in which an
// 8-byte enum is always an ENUM64: of an object built by clang before 15
// with such an enum among its bpf_metadata_ variables, CollectionSpec
// gives what a load by cilium/ebpf carries.
func Object(t testing.TB, golden, path string) {
	t.Helper()
	got, err := ObjectText(path)
	if err != nil {
		t.Fatal(err)
	}
	check(t, golden, got)
}

// ObjectText is what Object compares.
func ObjectText(path string) ([]byte, error) {
	progs, err := stable.ObjectFile(path)
	if err != nil {
		return nil, err
	}
	return programsText(progs)
}

// CollectionSpec is Object of a spec (ebpf.LoadCollectionSpec's, or one
// whose variables the test has set): what perf will record of its
// programs once cilium/ebpf has loaded them (ebpf.NewCollection).
func CollectionSpec(t testing.TB, golden string, spec *ebpf.CollectionSpec) {
	t.Helper()
	got, err := SpecText(spec)
	if err != nil {
		t.Fatal(err)
	}
	check(t, golden, got)
}

// SpecText is what CollectionSpec compares.
func SpecText(spec *ebpf.CollectionSpec) ([]byte, error) {
	progs, err := stable.ObjectPrograms(spec, nil)
	if err != nil {
		return nil, err
	}
	return programsText(progs)
}

// programsText is progs in programs --stable's text.
func programsText(progs []*bpfprog.Program) ([]byte, error) {
	var b bytes.Buffer
	err := stable.WritePrograms(&b, stable.Programs(progs))
	return b.Bytes(), err
}

// Recording checks the metadata of the recording at path (a perf.data
// file, file or pipe format) against the golden file: its BPF_METADATA
// records (perf >= 6.17 writes them), and, with snap (a snapshot file,
// bpfmeta snapshot --prog), those bpfmeta inject adds from it, in the
// stable form (show --stable's text). programs names the programs that
// must be there with metadata (at least one; by name or id, as inject
// --require takes them): it fails, also under -update, naming each one
// missing and why, so that a recording of other programs never passes,
// nor writes an empty golden.
func Recording(t testing.TB, golden, path, snap string, programs ...string) {
	t.Helper()
	if len(programs) == 0 {
		t.Fatal("bpfmetatest.Recording: name the programs the recording must have metadata of")
	}
	fns, err := recordingFuncs(path, snap, t.TempDir(), programs)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := stable.WriteFuncs(&b, fns); err != nil {
		t.Fatal(err)
	}
	check(t, golden, b.Bytes())
}

// RecordingText is what Recording compares, of every program of the
// recording: its metadata in the stable form, after an inject from snap
// (if not ""). dir is a directory the injected recording is written to
// (a test's t.TempDir(): the file is left there).
func RecordingText(path, snap, dir string) ([]byte, error) {
	fns, err := RecordingFuncs(path, snap, dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = stable.WriteFuncs(&b, fns)
	return b.Bytes(), err
}

// RecordingFuncs is the recording's metadata, after an inject from snap
// (if not "") into a file in dir (as RecordingText's): each function's
// entries, typed from the snapshot's programs, in the stable form
// (sorted, each distinct one once; json.Marshal gives show --stable
// --json's "functions").
func RecordingFuncs(path, snap, dir string) ([]stable.Func, error) {
	return recordingFuncs(path, snap, dir, nil)
}

// recordingFuncs is RecordingFuncs, with an error naming each of programs
// that got no BPF_METADATA record, and why.
func recordingFuncs(path, snap, dir string, programs []string) ([]stable.Func, error) {
	var fns stable.Funcs
	defer fns.Close()
	var why []string // inject's, of the programs that got no metadata
	if snap != "" {
		out, sum, err := injectFrom(path, snap, dir)
		if err != nil {
			return nil, err
		}
		path, why = out, sum.Unmet(programs...)
		// the snapshot has the types the records' text has lost
		ix, err := stable.SnapshotTypes(snap)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", snap, err)
		}
		fns.Typed = ix.Typed
	}
	r, err := reader.Open(path, reader.Options{Decompress: true})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	found := make([]bool, len(programs))
	_, err = bpftrack.WalkMetadata(r, func(rec *bpftrack.MetadataRecord) error {
		for i, p := range programs {
			found[i] = found[i] || rec.OfProgram(p)
		}
		return fns.AddRecord(rec)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var missing []string
	for i, p := range programs {
		if !found[i] {
			missing = append(missing, unmetWhy(p, why))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: no metadata of %s", path, strings.Join(missing, "; "))
	}
	return fns.Sorted(), nil
}

// unmetWhy says why program got no record: inject's reason (why), or that
// the recording has none of it.
func unmetWhy(program string, why []string) string {
	if i := slices.IndexFunc(why, func(w string) bool { return strings.HasPrefix(w, program+": ") }); i >= 0 {
		return why[i]
	}
	return program + ": the recording has no BPF_METADATA record of a program of this name or id"
}

// injectFrom injects the recording at path from the snapshot snap into a
// file in dir, as bpfmeta inject does, and returns its path and what
// inject did.
func injectFrom(path, snap, dir string) (string, *inject.Summary, error) {
	src, err := snapshot.Open(snap)
	if err != nil {
		return "", nil, err
	}
	defer src.Close()
	r, err := reader.Open(path, reader.Options{Decompress: true})
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	if r.IsDirRecording() {
		return "", nil, fmt.Errorf("%s: a directory recording: give one file (bpfmeta convert -i DIR -o FILE)", path)
	}
	out := filepath.Join(dir, "injected.data")
	f, err := os.Create(out)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	w, err := writer.New(f, r, writer.Options{})
	if err != nil {
		return "", nil, err
	}
	sum, err := inject.Write(w, r, src, inject.Options{})
	if err != nil {
		return "", nil, fmt.Errorf("%s: inject from %s: %w", path, snap, err)
	}
	for _, p := range sum.Programs {
		if p.Outcome == inject.Mismatch {
			return "", nil, fmt.Errorf("%s: program %d: the snapshot %s has another program of its id (%s)", path, p.ID, snap, p.Why())
		}
	}
	return out, sum, f.Close()
}

// Loaded checks the loaded programs of the given ids against the golden
// file, in the stable form (programs --stable's text): their names,
// functions and metadata, the same for every load of the same object, and
// the same text Object gives of the object file. It needs root (CAP_BPF,
// CAP_PERFMON, CAP_SYS_ADMIN to read other processes' programs) and skips
// without, unless BPFMETA_REQUIRE_ALL=1.
func Loaded(t testing.TB, golden string, ids ...ebpf.ProgramID) {
	t.Helper()
	got, err := LoadedText(ids...)
	if errors.Is(err, errNoKernel) {
		skip(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	check(t, golden, got)
}

// SkipIfNotSupported ends a test whose load of its programs gave err (nil:
// it goes on), as cilium/ebpf's own tests do (testutils.SkipIfNotSupported):
// it skips when the kernel cannot (ebpf.ErrNotSupported) or the test may
// not (no root: EPERM, EACCES), unless BPFMETA_REQUIRE_ALL=1, and fails on
// any other error, a program the verifier rejects above all, so that a
// golden test never passes on a program that was not loaded.
func SkipIfNotSupported(t testing.TB, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, ebpf.ErrNotSupported), errors.Is(err, os.ErrPermission):
		skip(t, err)
	default:
		t.Fatal(err)
	}
}

// skip skips the test because of err, or fails it under
// BPFMETA_REQUIRE_ALL=1, which requires every test to run.
func skip(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("BPFMETA_REQUIRE_ALL") == "1" {
		t.Fatalf("%v (BPFMETA_REQUIRE_ALL=1: no test may skip)", err)
	}
	t.Skip(err)
}

// Collection is Loaded of every program of coll (ebpf.NewCollection's).
func Collection(t testing.TB, golden string, coll *ebpf.Collection) {
	t.Helper()
	ids, err := CollectionIDs(coll)
	if err != nil {
		t.Fatal(err)
	}
	Loaded(t, golden, ids...)
}

// CollectionIDs are the kernel's ids of coll's programs.
func CollectionIDs(coll *ebpf.Collection) ([]ebpf.ProgramID, error) {
	if coll == nil || len(coll.Programs) == 0 {
		return nil, errors.New("bpfmetatest: a collection without programs")
	}
	var ids []ebpf.ProgramID
	for name, p := range coll.Programs {
		info, err := p.Info()
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", name, err)
		}
		id, ok := info.ID()
		if !ok {
			return nil, fmt.Errorf("program %s: the kernel gives no id", name)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

var errNoKernel = errors.New("the running kernel's BPF programs cannot be read (root, CAP_BPF and CAP_PERFMON are needed)")

// LoadedText is what Loaded compares.
func LoadedText(ids ...ebpf.ProgramID) ([]byte, error) {
	if len(ids) == 0 {
		return nil, errors.New("bpfmetatest.Loaded: no program ids")
	}
	k, err := live.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoKernel, err)
	}
	raw := make([]uint32, len(ids))
	for i, id := range ids {
		raw[i] = uint32(id)
	}
	progs, err := k.Programs(raw...)
	if err != nil {
		return nil, err
	}
	return programsText(progs)
}

// check compares got with the golden file, or rewrites it (Update); an
// empty got is an error either way: a golden of nothing passes on nothing.
func check(t testing.TB, golden string, got []byte) {
	t.Helper()
	if len(got) == 0 {
		t.Fatalf("%s: no metadata at all to compare with or write", golden)
	}
	linediff.Golden(t, golden, got, Update(), "go test -update, or BPFMETA_UPDATE=1,")
}

// Update reports whether golden files are rewritten: the test binary's
// flag named update is set, or BPFMETA_UPDATE=1.
func Update() bool {
	if os.Getenv("BPFMETA_UPDATE") == "1" {
		return true
	}
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}
