package outfile_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

func write(t *testing.T, path string, opts outfile.Options, data string) error {
	t.Helper()
	f, err := outfile.Create(path, opts)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

func TestNewFile(t *testing.T) {
	dir := t.TempDir()
	old := unix.Umask(0)
	defer unix.Umask(old)
	path := filepath.Join(dir, "out.data")
	if err := write(t, path, outfile.Options{}, "hello"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 (even with umask 0)", st.Mode().Perm())
	}
	if got := testkit.DirNames(t, dir); len(got) != 1 {
		t.Errorf("directory holds %q, want only out.data", got)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := outfile.Create(filepath.Join(dir, "out.data"), outfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("partial")
	f.Abort()
	f.Abort()
	if got := testkit.DirNames(t, dir); len(got) != 0 {
		t.Errorf("after Abort the directory holds %q", got)
	}
}

// TestExisting: without Force every kind of existing path is refused and
// left as it was; with Force a regular file or a symlink is replaced (the
// link, not its target), a FIFO or character device is written through,
// other kinds are refused.
func TestExisting(t *testing.T) {
	type kase struct {
		name     string
		make     func(t *testing.T, dir, path string)
		force    string // "replace", "through" or "refuse"
		needRoot bool
	}
	target := func(dir string) string { return filepath.Join(dir, "target") }
	cases := []kase{
		{"regular file", func(t *testing.T, dir, path string) { os.WriteFile(path, []byte("old"), 0o644) }, "replace", false},
		{"symlink to a file", func(t *testing.T, dir, path string) {
			os.WriteFile(target(dir), []byte("victim"), 0o644)
			os.Symlink(target(dir), path)
		}, "refuse", false},
		{"dangling symlink", func(t *testing.T, dir, path string) { os.Symlink(target(dir), path) }, "refuse", false},
		{"directory", func(t *testing.T, dir, path string) { os.Mkdir(path, 0o755) }, "refuse", false},
		{"FIFO", func(t *testing.T, dir, path string) { unix.Mkfifo(path, 0o666) }, "through", false},
		{"symlink to a FIFO", func(t *testing.T, dir, path string) {
			unix.Mkfifo(target(dir), 0o666)
			os.Symlink(target(dir), path)
		}, "through", false},
		{"character device", func(t *testing.T, dir, path string) {
			if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil { // /dev/null's numbers
				t.Fatal(err)
			}
		}, "through", true},
		{"block device", func(t *testing.T, dir, path string) {
			if err := unix.Mknod(path, unix.S_IFBLK|0o666, int(unix.Mkdev(7, 0))); err != nil { // loop0's numbers
				t.Fatal(err)
			}
		}, "refuse", true},
		{"symlink to a block device", func(t *testing.T, dir, path string) {
			if err := unix.Mknod(target(dir), unix.S_IFBLK|0o666, int(unix.Mkdev(7, 0))); err != nil {
				t.Fatal(err)
			}
			os.Symlink(target(dir), path)
		}, "refuse", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.needRoot {
				testkit.Root(t)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "out.data")
			c.make(t, dir, path)
			before := testkit.DirNames(t, dir)
			lst, _ := os.Lstat(path)
			// pathKept: a refused write leaves the path as c.make made it.
			pathKept := func(msg string) {
				t.Helper()
				if now, _ := os.Lstat(path); now == nil || now.Mode() != lst.Mode() {
					t.Error(msg)
				}
			}
			// targetKept: a write is never through a symlink to a file:
			// refused, or the link replaced, its target holds what it held.
			targetKept := func() {
				t.Helper()
				if c.name == "symlink to a file" {
					if b, _ := os.ReadFile(target(dir)); string(b) != "victim" {
						t.Errorf("the symlink's target was written: %q", b)
					}
				}
			}

			done := make(chan error, 1)
			go func() { done <- write(t, path, outfile.Options{NoClobber: true}, "new") }()
			select {
			case err := <-done:
				if !errors.Is(err, outfile.ErrExists) {
					t.Errorf("with NoClobber: %v, want ErrExists", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("with NoClobber: Create blocked (it opened the path)")
			}
			pathKept("with NoClobber the path changed")
			targetKept()

			var got []byte
			var readers sync.WaitGroup
			if c.force == "through" {
				// a reader for the FIFO
				if st, _ := os.Stat(path); st != nil && st.Mode()&fs.ModeNamedPipe != 0 {
					readers.Add(1)
					go func() {
						defer readers.Done()
						got, _ = os.ReadFile(path)
					}()
				}
			}
			err := write(t, path, outfile.Options{Force: true}, "new")
			readers.Wait()
			switch c.force {
			case "replace":
				if err != nil {
					t.Fatalf("with Force: %v", err)
				}
				st, _ := os.Lstat(path)
				if st == nil || !st.Mode().IsRegular() {
					t.Fatalf("with Force the path is not a regular file: %v", st)
				}
				if b, _ := os.ReadFile(path); string(b) != "new" {
					t.Errorf("with Force the file holds %q", b)
				}
				targetKept()
			case "through":
				if err != nil {
					t.Fatalf("with Force: %v", err)
				}
				if st, _ := os.Lstat(path); st == nil || st.Mode() != lst.Mode() {
					t.Errorf("with Force the %s was replaced", c.name)
				}
				if got != nil && string(got) != "new" {
					t.Errorf("the FIFO's reader got %q", got)
				}
			case "refuse":
				if err == nil {
					t.Errorf("with Force: written, want an error")
				}
				pathKept("with Force the refused path changed")
				targetKept()
			}
			if now := testkit.DirNames(t, dir); len(now) != len(before) {
				t.Errorf("the directory held %q, now %q", before, now)
			}
		})
	}
}

// TestRace: outputs created at once under one name without Force: exactly
// one commit wins, and no temporary file is left.
func TestRace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.data")
	const n = 8
	var files []*outfile.File
	for range n {
		f, err := outfile.Create(path, outfile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("x")
		files = append(files, f)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, f := range files {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f.Commit() }()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, outfile.ErrExists):
			t.Errorf("a loser's error is %v, want ErrExists", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d commits won, want 1", won, n)
	}
	if got := testkit.DirNames(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %q", got)
	}
}

// TestLongName: a name of 255 bytes (NAME_MAX) still gets a temporary name.
func TestLongName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{240, 250, 255} {
		path := filepath.Join(dir, strings.Repeat("a", n-5)+".data")
		if err := write(t, path, outfile.Options{}, "x"); err != nil {
			t.Errorf("a %d-byte name: %v", n, err)
		}
	}
}

// TestNotFollowed: a symlink planted at the temporary name's place cannot be
// followed (O_EXCL|O_NOFOLLOW): Create never writes through one.
func TestNotFollowed(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("victim"), 0o644)
	f, err := outfile.Create(filepath.Join(dir, "out.data"), outfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	// Unnamed (O_TMPFILE), the output has no name to plant a symlink at.
	if got := testkit.DirNames(t, dir); len(got) != 1 {
		t.Errorf("while it is written, the directory holds %q, want the victim only", got)
	}
	// Named (where O_TMPFILE fails): O_CREAT|O_EXCL on an existing symlink
	// fails with EEXIST.
	if _, err := os.Lstat(f.File.Name()); err == nil {
		_, err = os.OpenFile(f.File.Name(), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			t.Errorf("reopening the temporary name exclusively: %v", err)
		}
	}
}

// TestJournal: a journal is under its name while it is written, and an
// abort removes it.
func TestJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "snap.jsonl")
	f, err := outfile.Create(path, outfile.Options{Journal: true})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("line 1\n")
	if b, _ := os.ReadFile(path); string(b) != "line 1\n" {
		t.Errorf("while written, the journal holds %q", b)
	}
	if got := testkit.DirNames(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %q", got)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := outfile.Create(path, outfile.Options{Journal: true, NoClobber: true}); !errors.Is(err, outfile.ErrExists) {
		t.Errorf("a second journal with NoClobber: %v", err)
	}
	g, err := outfile.Create(path, outfile.Options{Journal: true, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	g.Abort()
	if got := testkit.DirNames(t, dir); len(got) != 0 {
		t.Errorf("after Abort the directory holds %q", got)
	}
}

// An Output held back writes nothing to its stream until Release, and
// nothing at all if aborted.
func TestOutputHold(t *testing.T) {
	for _, release := range []bool{true, false} {
		var stream bytes.Buffer
		o := outfile.NewStream("stdout", &stream)
		if err := o.Hold(t.TempDir(), "the output"); err != nil {
			t.Fatal(err)
		}
		io.WriteString(o.Dest(), "all or nothing")
		if stream.Len() != 0 {
			t.Fatalf("%q written before Release", stream.String())
		}
		if release {
			if err := o.Release(); err != nil {
				t.Fatal(err)
			}
		}
		o.Abort()
		if want := map[bool]string{true: "all or nothing", false: ""}[release]; stream.String() != want {
			t.Errorf("release %v: %q written, want %q", release, stream.String(), want)
		}
	}
}

// TestSync: with Options.Sync the file is on the disk when Commit returns;
// without it, Commit leaves its pages to the kernel's writeback (a
// recording is derived data, not synced unless asked).
func TestSync(t *testing.T) {
	data := strings.Repeat("x", 4<<20)
	for _, sync := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "out.data")
		f, err := outfile.Create(path, outfile.Options{Sync: sync})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(data); err != nil {
			t.Fatal(err)
		}
		// the file may be unnamed (O_TMPFILE) until Commit
		before := testkit.Unsynced(t, "/proc/self/fd/"+strconv.Itoa(int(f.File.Fd())))
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		after := testkit.Unsynced(t, path)
		switch {
		case sync && after != 0:
			t.Errorf("Sync: %d pages not on the disk after Commit", after)
		case !sync && before == 0:
			t.Log("without Sync: the kernel wrote the file back before Commit; cannot tell whether Commit synced")
		case !sync && after == 0:
			t.Errorf("without Sync: Commit wrote the file to the disk (%d pages were dirty before)", before)
		}
	}
}

// TestEmptyOwn: an empty regular file of the caller's (mktemp's) is
// replaced without Force, even with NoClobber, as perf inject -o, cp and
// the shell's > write there (perf's tests/shell/pipe_test.sh: data=$(mktemp);
// ... -o "$data"), and not kept as NAME.old; with NoClobber, one with a
// byte in it, or another user's, is refused, and one that changed before
// Commit is kept.
func TestEmptyOwn(t *testing.T) {
	for _, journal := range []bool{false, true} {
		t.Run("journal="+strconv.FormatBool(journal), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "tmp.XXXXXXXXXX")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := write(t, path, outfile.Options{Journal: journal}, "new"); err != nil {
				t.Fatalf("an empty file of the caller's without Force: %v", err)
			}
			if b, _ := os.ReadFile(path); string(b) != "new" {
				t.Errorf("the file holds %q", b)
			}
			if st, _ := os.Stat(path); st == nil || st.Mode().Perm() != outfile.Mode {
				t.Errorf("mode %v", st)
			}
			if err := write(t, path, outfile.Options{Journal: journal, NoClobber: true}, "newer"); !errors.Is(err, outfile.ErrExists) {
				t.Errorf("a non-empty file with NoClobber: %v, want ErrExists", err)
			}
			if got := testkit.DirNames(t, dir); len(got) != 1 {
				t.Errorf("the directory holds %q", got)
			}
		})
	}

	t.Run("changed before Commit", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.data")
		os.WriteFile(path, nil, 0o600)
		f, err := outfile.Create(path, outfile.Options{NoClobber: true})
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("new")
		os.WriteFile(path, []byte("written meanwhile"), 0o600) // same inode, no longer empty
		if err := f.Commit(); !errors.Is(err, outfile.ErrExists) {
			t.Errorf("Commit over a file written meanwhile: %v, want ErrExists", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "written meanwhile" {
			t.Errorf("the file holds %q", b)
		}
		g, err := outfile.Create(filepath.Join(dir, "gone.data"), outfile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := testkit.DirNames(t, dir); len(got) != 1 {
			t.Errorf("the directory holds %q", got)
		}
		g.Abort()
	})

	t.Run("removed before Commit", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.data")
		os.WriteFile(path, nil, 0o600)
		f, err := outfile.Create(path, outfile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("new")
		os.Remove(path)
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "new" {
			t.Errorf("the file holds %q", b)
		}
	})

	t.Run("another user's", func(t *testing.T) {
		testkit.Root(t)
		dir := t.TempDir()
		path := filepath.Join(dir, "out.data")
		os.WriteFile(path, nil, 0o600)
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := write(t, path, outfile.Options{}, "new"); !errors.Is(err, outfile.ErrExists) {
			t.Errorf("another user's empty file without Force: %v, want ErrExists", err)
		}
		if st, _ := os.Stat(path); st == nil || st.Size() != 0 {
			t.Errorf("the file changed: %v", st)
		}
	})
}
