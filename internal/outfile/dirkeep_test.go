package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestDirKeepOld: without Force, a directory recording of the caller's at
// the path is kept as NAME.old (a NAME.old recording of the caller's
// replaced, as perf record's check_backup() removes it); NoClobber refuses
// it; a NAME.old that is another directory is left, and the output refused.
func TestDirKeepOld(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out.data")
	for _, names := range [][]string{{"data"}, {"data", "data.0"}, {"data", "data.1", "data.2"}} {
		if err := writeDir(out, Options{}, false, names...); err != nil {
			t.Fatal(err)
		}
	}
	if got := testkit.DirNames(t, out); !slices.Equal(got, []string{"data", "data.1", "data.2"}) {
		t.Errorf("files %q", got)
	}
	if got := testkit.DirNames(t, OldName(out)); !slices.Equal(got, []string{"data", "data.0"}) {
		t.Errorf("NAME.old: files %q, want the recording replaced", got)
	}
	if got := testkit.DirNames(t, parent); !slices.Equal(got, []string{"out.data", "out.data.old"}) {
		t.Errorf("left beside it: %q", got)
	}
	if err := writeDir(out, Options{NoClobber: true}, false, "data"); !errors.Is(err, errExists) {
		t.Errorf("with NoClobber: %v", err)
	}
	// a NAME.old that is not a recording stays, and so does the output
	os.WriteFile(filepath.Join(OldName(out), "notes"), []byte("mine"), 0o600)
	if err := writeDir(out, Options{}, false, "data"); err == nil {
		t.Error("over a NAME.old holding another file: no error")
	}
	if got := testkit.DirNames(t, OldName(out)); !slices.Equal(got, []string{"data", "data.0", "notes"}) {
		t.Errorf("NAME.old: files %q", got)
	}
	if got := testkit.DirNames(t, out); !slices.Equal(got, []string{"data", "data.1", "data.2"}) {
		t.Errorf("files %q", got)
	}
}
