package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// writeDir makes a directory at path by CreateDir with files names, each
// holding its name, and commits it (or aborts, with abort).
func writeDir(path string, opts Options, abort bool, names ...string) error {
	d, err := CreateDir(path, opts)
	if err != nil {
		return err
	}
	for _, n := range names {
		f, err := d.Create(n)
		if err != nil {
			d.Abort()
			return err
		}
		f.WriteString(n)
		if err := d.Finish(f); err != nil {
			d.Abort()
			return err
		}
	}
	if abort {
		d.Abort()
		return nil
	}
	return d.Commit()
}

func TestDir(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out.data")
	if err := writeDir(out, Options{}, false, "data", "data.0", "data.1"); err != nil {
		t.Fatal(err)
	}
	if got := testkit.DirNames(t, out); !slices.Equal(got, []string{"data", "data.0", "data.1"}) {
		t.Errorf("files %q", got)
	}
	st, _ := os.Stat(out)
	if st.Mode().Perm() != dirMode {
		t.Errorf("mode %v", st.Mode())
	}
	if got := testkit.DirNames(t, parent); !slices.Equal(got, []string{"out.data"}) {
		t.Errorf("left beside it: %q", got)
	}
	// exists, with NoClobber: refused, untouched
	if err := writeDir(out, Options{NoClobber: true}, false, "data"); !errors.Is(err, errExists) {
		t.Errorf("an existing output with NoClobber: %v", err)
	}
	// -f replaces a directory recording, whole
	if err := writeDir(out, Options{Force: true}, false, "data", "data.0"); err != nil {
		t.Fatal(err)
	}
	if got := testkit.DirNames(t, out); !slices.Equal(got, []string{"data", "data.0"}) {
		t.Errorf("after -f: files %q", got)
	}
	if got := testkit.DirNames(t, parent); !slices.Equal(got, []string{"out.data"}) {
		t.Errorf("after -f, left beside it: %q", got)
	}
	// an abort leaves nothing
	if err := writeDir(filepath.Join(parent, "aborted"), Options{}, true, "data", "data.0"); err != nil {
		t.Fatal(err)
	}
	if got := testkit.DirNames(t, parent); !slices.Equal(got, []string{"out.data"}) {
		t.Errorf("after an abort, left: %q", got)
	}
	// -f does not replace a directory that is not a recording
	other := filepath.Join(parent, "other")
	if err := os.MkdirAll(filepath.Join(other, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeDir(other, Options{Force: true}, false, "data"); err == nil || !strings.Contains(err.Error(), "only a directory recording") {
		t.Errorf("-f over another directory: %v", err)
	}
	// nor a symlink
	link := filepath.Join(parent, "link")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	if err := writeDir(link, Options{Force: true}, false, "data"); err == nil {
		t.Error("-f over a symlink: no error")
	}
	// a name another process takes meanwhile is not replaced
	late := filepath.Join(parent, "late")
	d, err := CreateDir(late, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(late, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); !errors.Is(err, errExists) {
		t.Errorf("a name taken meanwhile: %v", err)
	}
	if got := testkit.DirNames(t, parent); !slices.Equal(got, []string{"late", "link", "other", "out.data"}) {
		t.Errorf("left: %q", got)
	}
	// a file name inside cannot be a symlink planted in the directory
	d, err = CreateDir(filepath.Join(parent, "x"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	if err := os.Symlink("/etc/passwd", filepath.Join(d.tmp, "data")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create("data"); err == nil {
		t.Error("Create wrote through a planted symlink")
	}
}

// TestOpenSubdirNoSymlink: the directories a Dir opens by name in its
// parent (the temporary one, the one -f replaces, one a failed run left)
// are never opened through a symlink put under that name, so that removing
// a recording's files cannot reach into the directory the symlink leads
// to. Lstat before the open catches most symlinks; this is the open
// itself, which holds when the name is swapped after the lstat.
func TestOpenSubdirNoSymlink(t *testing.T) {
	top := t.TempDir()
	victim := filepath.Join(top, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"data", "data.1"} {
		if err := os.WriteFile(filepath.Join(victim, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("victim", filepath.Join(top, "rec")); err != nil {
		t.Fatal(err)
	}
	parent, err := os.Open(top)
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()

	if f, err := openSubdir(parent, "rec", "rec"); err == nil {
		f.Close()
		t.Fatal("openSubdir opened a directory through a symlink")
	}
	if _, err := readNames(parent, "rec", "rec"); err == nil {
		t.Error("readNames read a directory through a symlink")
	}
	removeRecording(parent, "rec")
	for _, n := range []string{"data", "data.1"} {
		if _, err := os.Stat(filepath.Join(victim, n)); err != nil {
			t.Errorf("removeRecording through a symlink: %v", err)
		}
	}
	if _, err := os.Lstat(filepath.Join(top, "rec")); err != nil {
		t.Errorf("the symlink: %v", err)
	}

	// and a directory of that name is opened
	f, err := openSubdir(parent, "victim", "victim")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
