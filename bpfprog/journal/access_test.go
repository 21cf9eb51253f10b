package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// nobody is the uid a foreign-owned journal is chowned to.
const nobody = 65534

// journalTree writes a journal of host alpha with loads 1..3 under a new
// directory, and returns it.
func journalTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "journal")
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{})
	for id := uint32(1); id <= 3; id++ {
		if err := w.Load(program(id, 1, time.Duration(id)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readAll opens dir and reads host alpha's journal whole (Records, then
// Find), within a time limit: the reader must never block.
func readAll(t *testing.T, dir string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- readJournal(dir) }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("reading %s: still blocked after 20 s", dir)
		return nil
	}
}

func readJournal(dir string) error {
	j, err := Open(dir)
	if err != nil {
		return err
	}
	defer j.Close()
	h := j.Host("alpha")
	if h == nil {
		return errors.New("no host alpha")
	}
	for _, err := range h.Records() {
		if err != nil {
			return err
		}
	}
	_, err = j.Find(loadOf(program(2, 1, 2*time.Second), "alpha", 0), "")
	return err
}

// TestReaderRules: the reader applies the writer's rules to a journal's
// directories and segments (issue 46 item 1): a journal another user could
// have written, or reached through a symlink, or with a segment that is no
// regular file, is refused, the error naming the path and the rule.
func TestReaderRules(t *testing.T) {
	seg := func(dir string) string { return filepath.Join(dir, "alpha", segmentName(1)) }
	cases := []struct {
		name  string
		root  bool // needs root (chown)
		spoil func(t *testing.T, dir string) (open string)
		path  func(dir string) string // the path the error names
		rule  string
	}{
		{"tree 0777", false, func(t *testing.T, dir string) string { must(t, os.Chmod(dir, 0o777)); return dir },
			func(d string) string { return d }, "others can write"},
		{"tree group-writable", false, func(t *testing.T, dir string) string { must(t, os.Chmod(dir, 0o770)); return dir },
			func(d string) string { return d }, "others can write"},
		{"tree foreign-owned", true, func(t *testing.T, dir string) string { must(t, os.Chown(dir, nobody, nobody)); return dir },
			func(d string) string { return d }, "neither root nor"},
		{"host 0777", false, func(t *testing.T, dir string) string {
			must(t, os.Chmod(filepath.Join(dir, "alpha"), 0o777))
			return dir
		},
			func(d string) string { return filepath.Join(d, "alpha") }, "others can write"},
		{"host foreign-owned", true, func(t *testing.T, dir string) string {
			must(t, os.Chown(filepath.Join(dir, "alpha"), nobody, nobody))
			return dir
		}, func(d string) string { return filepath.Join(d, "alpha") }, "neither root nor"},
		{"host foreign-owned, read as one host's", true, func(t *testing.T, dir string) string {
			must(t, os.Chown(filepath.Join(dir, "alpha"), nobody, nobody))
			return filepath.Join(dir, "alpha")
		}, func(d string) string { return filepath.Join(d, "alpha") }, "neither root nor"},
		{"symlinked tree", false, func(t *testing.T, dir string) string {
			link := dir + ".link"
			must(t, os.Symlink(dir, link))
			return link
		}, func(d string) string { return d + ".link" }, "symlink"},
		{"symlinked host", false, func(t *testing.T, dir string) string {
			other := filepath.Join(dir, "..", "elsewhere")
			must(t, os.Rename(filepath.Join(dir, "alpha"), other))
			must(t, os.Symlink(other, filepath.Join(dir, "alpha")))
			return dir
		}, func(d string) string { return filepath.Join(d, "alpha") }, "symlink"},
		{"symlinked host beside a real one", false, func(t *testing.T, dir string) string {
			w := mustCreate(t, filepath.Join(dir, "..", "other"), system("beta", "boot-b"), Options{})
			w.Close()
			must(t, os.Symlink(filepath.Join(dir, "..", "other", "beta"), filepath.Join(dir, "beta")))
			return dir
		}, func(d string) string { return filepath.Join(d, "beta") }, "symlink"},
		{"symlinked segment", false, func(t *testing.T, dir string) string {
			must(t, os.Rename(seg(dir), filepath.Join(dir, "..", "seg")))
			must(t, os.Symlink(filepath.Join(dir, "..", "seg"), seg(dir)))
			return dir
		}, seg, "symlink"},
		{"FIFO segment", false, func(t *testing.T, dir string) string {
			must(t, os.Remove(seg(dir)))
			must(t, syscall.Mkfifo(seg(dir), 0o600))
			return dir
		}, seg, "not a regular file"},
		{"segment others can write", false, func(t *testing.T, dir string) string { must(t, os.Chmod(seg(dir), 0o666)); return dir },
			seg, "others can write"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				testkit.Missing(t, "chown to nobody needs root")
			}
			dir := journalTree(t)
			if err := readAll(t, dir); err != nil {
				t.Fatalf("the journal before it was spoiled: %v", err)
			}
			open := c.spoil(t, dir)
			err := readAll(t, open)
			if err == nil || !strings.Contains(err.Error(), c.path(dir)) || !strings.Contains(err.Error(), c.rule) {
				t.Errorf("got %v, want an error naming %s and %q", err, c.path(dir), c.rule)
			}
		})
	}
}

// TestFIFOAfterListing: a segment swapped for a FIFO after the host's
// segments were listed is refused when it is opened, without blocking.
func TestFIFOAfterListing(t *testing.T) {
	dir := journalTree(t)
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	h := j.Host("alpha")
	if _, err := h.segments(); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, "alpha", segmentName(1))
	must(t, os.Remove(seg))
	must(t, syscall.Mkfifo(seg, 0o600))
	done := make(chan error, 1)
	go func() {
		var last error
		for _, err := range h.Records() {
			last = err
		}
		done <- last
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO in place of a listed segment: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocked on a FIFO put in place of a segment")
	}
}

// TestNotAJournal: a directory that is no journal (no segment, no host
// directory holding one) is refused, not read as an empty tree.
func TestNotAJournal(t *testing.T) {
	empty := t.TempDir()
	os.Mkdir(filepath.Join(empty, "sub"), 0o700)
	for _, dir := range []string{"/", "/usr", empty} {
		j, err := Open(dir)
		if err == nil {
			j.Close()
			t.Errorf("%s: read as a journal", dir)
			continue
		}
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "no host directory holding one") {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
