// Package bpfmetatest checks BPF programs' metadata against golden files,
// in the style of testing/fstest, for the teams that ship BPF programs:
// what a freshly loaded program carries (Loaded, needs root), and what a
// recording of one's programs carries once bpfmeta inject has added their
// metadata from a snapshot (Recording, needs nothing). Both compare the
// stable form (package stable: show --stable's and programs --stable's
// text), the same on any host and boot, so that a golden made on one
// machine passes on another with the same programs, and its diff between
// two versions of a program shows only the values that changed.
//
// A golden file is rewritten instead of compared when the test binary has
// a flag named update set (go test -update, the test package defining it:
// var _ = flag.Bool("update", false, "rewrite golden files")), or when
// BPFMETA_UPDATE=1.
package bpfmetatest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/stable"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Recording checks the metadata of the recording at path (a perf.data
// file, file or pipe format) against the golden file: its BPF_METADATA
// records, and, with snap (a snapshot file, bpfmeta snapshot --prog),
// those bpfmeta inject adds from it, in the stable form. It fails when a
// program of the recording that the snapshot has gets none.
func Recording(t testing.TB, golden, path, snap string) {
	t.Helper()
	got, err := RecordingText(path, snap, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	check(t, golden, got)
}

// RecordingText is what Recording compares: the recording's metadata in
// the stable form, after an inject from snap (if not "") into dir.
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
// (if not "") into dir: each function's entries, typed from the
// snapshot's programs, in the stable form (sorted, each distinct one once;
// json.Marshal gives show --stable --json's "functions").
func RecordingFuncs(path, snap, dir string) ([]stable.Func, error) {
	var fns stable.Funcs
	if snap != "" {
		out, err := injectFrom(path, snap, dir)
		if err != nil {
			return nil, err
		}
		path = out
		// the snapshot has the types the records' text has lost
		ix, err := typedIndex(snap)
		if err != nil {
			return nil, err
		}
		fns.Typed = ix.Typed
	}
	r, err := reader.Open(path, reader.Options{Decompress: true})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fns.Max = bpftrack.MaxMetadataRecords
	if _, err := bpftrack.WalkMetadata(r, func(rec *bpftrack.MetadataRecord) error { return fns.Add(rec.Metadata) }); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fns.Sorted(), nil
}

// typedIndex indexes the typed forms of the entries of the snapshot's
// programs.
func typedIndex(snap string) (*stable.TypedIndex, error) {
	src, err := snapshot.Open(snap)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var ix stable.TypedIndex
	if err := ix.AddAll(src); err != nil {
		return nil, fmt.Errorf("%s: %w", snap, err)
	}
	return &ix, nil
}

// injectFrom injects the recording at path from the snapshot snap into a
// file in dir, as bpfmeta inject does, and returns its path.
func injectFrom(path, snap, dir string) (string, error) {
	src, err := snapshot.Open(snap)
	if err != nil {
		return "", err
	}
	defer src.Close()
	r, err := reader.Open(path, reader.Options{Decompress: true})
	if err != nil {
		return "", err
	}
	defer r.Close()
	if r.IsDirRecording() {
		return "", fmt.Errorf("%s: a directory recording: give one file (bpfmeta convert -i DIR -o FILE)", path)
	}
	out := filepath.Join(dir, "injected.data")
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	defer f.Close()
	w, err := writer.New(f, r, writer.Options{})
	if err != nil {
		return "", err
	}
	sum, err := inject.Run(r, w, src, inject.Options{})
	if err == nil {
		err = w.Close()
	} else {
		w.Abort()
	}
	if err != nil {
		return "", fmt.Errorf("%s: inject from %s: %w", path, snap, err)
	}
	for _, p := range sum.Programs {
		if p.Outcome == inject.Mismatch {
			return "", fmt.Errorf("%s: program %d: the snapshot %s has another program of its id (%s)", path, p.ID, snap, p.Why())
		}
	}
	return out, f.Close()
}

// Loaded checks the loaded programs of the given ids (as the loader
// reports them) against the golden file, in the stable form (programs
// --stable's text): their names, functions and metadata, the same for
// every load of the same object. It needs root (CAP_BPF, CAP_PERFMON,
// CAP_SYS_ADMIN to read other processes' programs) and skips without,
// unless BPFMETA_REQUIRE_ALL=1.
func Loaded(t testing.TB, golden string, ids ...uint32) {
	t.Helper()
	got, err := LoadedText(ids...)
	if errors.Is(err, errNoKernel) {
		if os.Getenv("BPFMETA_REQUIRE_ALL") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	check(t, golden, got)
}

var errNoKernel = errors.New("the running kernel's BPF programs cannot be read (root, CAP_BPF and CAP_PERFMON are needed)")

// LoadedText is what Loaded compares.
func LoadedText(ids ...uint32) ([]byte, error) {
	if len(ids) == 0 {
		return nil, errors.New("bpfmetatest.Loaded: no program ids")
	}
	k, err := live.New()
	if err == nil {
		err = k.Check()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoKernel, err)
	}
	progs, err := k.Programs(ids...)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = stable.WritePrograms(&b, stable.Programs(progs))
	return b.Bytes(), err
}

// check compares got with the golden file, or rewrites it (Update).
func check(t testing.TB, golden string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update, or BPFMETA_UPDATE=1, writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update, or BPFMETA_UPDATE=1, rewrites it):\n--- got\n%s\n--- %s\n%s", golden, got, golden, want)
	}
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
