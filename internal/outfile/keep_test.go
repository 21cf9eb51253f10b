package outfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestKeepOld: without Force, a file of the caller's at the output's path
// is replaced, as perf inject -o replaces it, and kept as NAME.old, as perf
// record keeps perf.data.old (one generation: a NAME.old of the caller's
// is replaced); NoClobber refuses it. A NAME.old that is not the caller's
// regular file, and another user's file, are refused and left as they
// are.
func TestKeepOld(t *testing.T) {
	for _, journal := range []bool{false, true} {
		t.Run("journal="+strconv.FormatBool(journal), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "perf.data")
			opts := outfile.Options{Journal: journal}
			for i, data := range []string{"first", "second", "third"} {
				if err := write(t, path, opts, data); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			if b, _ := os.ReadFile(path); string(b) != "third" {
				t.Errorf("the file holds %q", b)
			}
			if b, _ := os.ReadFile(outfile.OldName(path)); string(b) != "second" {
				t.Errorf("NAME.old holds %q, want the file replaced", b)
			}
			if got := testkit.DirNames(t, dir); !slices.Equal(got, []string{"perf.data", "perf.data.old"}) {
				t.Errorf("the directory holds %q", got)
			}
			if err := write(t, path, outfile.Options{Journal: journal, NoClobber: true}, "fourth"); !errors.Is(err, outfile.ErrExists) || !strings.Contains(err.Error(), "--no-clobber") {
				t.Errorf("with NoClobber: %v, want ErrExists naming --no-clobber", err)
			}
			if b, _ := os.ReadFile(path); string(b) != "third" {
				t.Errorf("after NoClobber's refusal the file holds %q", b)
			}
		})
	}

	t.Run("NAME.old not a file of the caller's", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "perf.data")
		os.WriteFile(path, []byte("kept"), 0o600)
		for _, make := range []func(string) error{
			func(old string) error { return os.Symlink(filepath.Join(dir, "victim"), old) },
			func(old string) error { return os.Mkdir(old, 0o700) },
		} {
			old := outfile.OldName(path)
			if err := make(old); err != nil {
				t.Fatal(err)
			}
			lst, _ := os.Lstat(old)
			if err := write(t, path, outfile.Options{}, "new"); !errors.Is(err, outfile.ErrExists) || !strings.Contains(err.Error(), "perf.data.old") {
				t.Errorf("NAME.old a %v: %v, want ErrExists naming it", lst.Mode().Type(), err)
			}
			if b, _ := os.ReadFile(path); string(b) != "kept" {
				t.Errorf("the file holds %q", b)
			}
			if now, _ := os.Lstat(old); now == nil || now.Mode() != lst.Mode() {
				t.Errorf("NAME.old changed: %v", now)
			}
			os.Remove(old)
		}
	})

	t.Run("changed before Commit", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.data")
		os.WriteFile(path, nil, 0o600)
		f, err := outfile.Create(path, outfile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("new")
		os.WriteFile(path, []byte("written meanwhile"), 0o600) // same inode, no longer empty
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(outfile.OldName(path)); string(b) != "written meanwhile" {
			t.Errorf("NAME.old holds %q", b)
		}
	})

	t.Run("another user's", func(t *testing.T) {
		testkit.Root(t)
		dir := t.TempDir()
		path := filepath.Join(dir, "out.data")
		os.WriteFile(path, []byte("theirs"), 0o600)
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := write(t, path, outfile.Options{}, "new"); !errors.Is(err, outfile.ErrExists) || !strings.Contains(err.Error(), "not a file of yours") {
			t.Errorf("another user's file without Force: %v, want ErrExists", err)
		}
		if got := testkit.DirNames(t, dir); !slices.Equal(got, []string{"out.data"}) {
			t.Errorf("the directory holds %q", got)
		}
	})
}
