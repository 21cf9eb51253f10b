package outfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// nobody is the user that plants files in the tests.
const nobody = 65534

// TestPlanted: with Force, a FIFO, device or symlink another user put in a
// sticky directory others can write (/tmp) is not written through, as the
// kernel's protected_fifos and protected_symlinks rules would have it,
// whatever the sysctls say; one of the caller's, or one in a directory
// that is not sticky, is.
func TestPlanted(t *testing.T) {
	testkit.Root(t) // chown, mknod
	type kase struct {
		name    string
		make    func(t *testing.T, sticky, plain, path string) (reader string)
		through bool
	}
	fifo := func(t *testing.T, path string, uid int) string {
		if err := unix.Mkfifo(path, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(path, uid, uid); err != nil {
			t.Fatal(err)
		}
		return path
	}
	symlink := func(t *testing.T, target, path string, uid int) {
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(path, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	cases := []kase{
		{"another user's FIFO", func(t *testing.T, sticky, plain, path string) string {
			return fifo(t, path, nobody)
		}, false},
		{"another user's symlink to their FIFO", func(t *testing.T, sticky, plain, path string) string {
			target := fifo(t, filepath.Join(plain, "fifo"), nobody)
			symlink(t, target, path, nobody)
			return target
		}, false},
		{"another user's symlink to a character device", func(t *testing.T, sticky, plain, path string) string {
			dev := filepath.Join(plain, "null")
			if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
				t.Fatal(err)
			}
			os.Lchown(dev, nobody, nobody)
			symlink(t, dev, path, nobody)
			return ""
		}, false},
		{"another user's character device", func(t *testing.T, sticky, plain, path string) string {
			if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
				t.Fatal(err)
			}
			os.Lchown(path, nobody, nobody)
			return ""
		}, false},
		{"the caller's symlink to another user's FIFO in a sticky directory", func(t *testing.T, sticky, plain, path string) string {
			target := fifo(t, filepath.Join(sticky, "theirs"), nobody)
			symlink(t, target, path, os.Geteuid())
			return target
		}, false},
		{"the caller's FIFO", func(t *testing.T, sticky, plain, path string) string {
			return fifo(t, path, os.Geteuid())
		}, true},
		{"the caller's symlink to another user's FIFO elsewhere", func(t *testing.T, sticky, plain, path string) string {
			target := fifo(t, filepath.Join(plain, "fifo"), nobody)
			symlink(t, target, path, os.Geteuid())
			return target
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sticky, plain := t.TempDir(), t.TempDir()
			if err := unix.Chmod(sticky, 0o1777); err != nil { // os.Chmod wants fs.ModeSticky
				t.Fatal(err)
			}
			path := filepath.Join(sticky, "out.data")
			reader := c.make(t, sticky, plain, path)
			var rd *os.File
			if reader != "" {
				var err error
				if rd, err = os.OpenFile(reader, os.O_RDONLY|unix.O_NONBLOCK, 0); err != nil {
					t.Fatal(err)
				}
				defer rd.Close()
			}
			err := write(t, path, outfile.Options{Force: true}, "secret")
			got := 0
			if rd != nil {
				buf := make([]byte, 64)
				got, _ = rd.Read(buf)
			}
			switch {
			case c.through && (err != nil || (rd != nil && got != len("secret"))):
				t.Errorf("%v, the reader got %d bytes; want it written through", err, got)
			case !c.through && (err == nil || got != 0):
				t.Errorf("%v, the reader got %d bytes; want it refused", err, got)
			case !c.through && !saysRule(err.Error()):
				t.Errorf("the error does not say which rule: %v", err)
			}
		})
	}
}

// TestFIFONoReader: with Force, a FIFO no process reads is refused after
// FIFOWait instead of blocking the run for ever; a reader that comes
// within it is written to.
func TestFIFONoReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- write(t, path, outfile.Options{Force: true}, "data") }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no process reads") {
			t.Errorf("%v, want an error saying no process reads the FIFO", err)
		}
		if d := time.Since(start); d < outfile.FIFOWait {
			t.Errorf("refused after %v, before FIFOWait", d)
		}
	case <-time.After(outfile.FIFOWait + 5*time.Second):
		t.Fatal("Create blocked on a FIFO nobody reads")
	}

	go func() { done <- write(t, path, outfile.Options{Force: true}, "data") }()
	time.Sleep(outfile.FIFOWait / 4)
	b, err := os.ReadFile(path)
	if werr := <-done; werr != nil || err != nil || string(b) != "data" {
		t.Errorf("a reader that came late: %v, %v, got %q", werr, err, b)
	}
}

// TestDirectoryRenamed: a directory renamed away while a file is written in
// it keeps no temporary file: the file is made, linked and removed
// relative to the directory, wherever it went.
func TestDirectoryRenamed(t *testing.T) {
	for _, opts := range []outfile.Options{{}, {Force: true}, {Journal: true}} {
		for _, commit := range []bool{true, false} {
			root := t.TempDir()
			dir, moved := filepath.Join(root, "dir"), filepath.Join(root, "moved")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := outfile.Create(filepath.Join(dir, "out.data"), opts)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("data")
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
			want := []string(nil)
			if commit {
				if err := f.Commit(); err != nil {
					t.Errorf("%+v: Commit: %v", opts, err)
				}
				want = []string{"out.data"}
			} else {
				f.Abort()
			}
			if got := testkit.DirNames(t, moved); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%+v, commit %v: the renamed directory holds %q, want %q", opts, commit, got, want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%+v: the old name exists again: %v", opts, err)
			}
		}
	}
}

// TestPlantedDirectory: every symlink on the way to an output is followed
// by the same rule as the output's own name (may_follow_link()), not only
// the last: another user's symlink in a sticky directory others can
// write, as a directory of the path, in a symlink's target or in a path
// relative to the working directory, is refused, by Create (a new file, a
// FIFO with Force) and by CreateDir; the caller's, the directory owner's,
// and any in a directory that is not sticky, are followed.
func TestPlantedDirectory(t *testing.T) {
	testkit.Root(t) // chown
	me := os.Geteuid()
	type kase struct {
		name string
		// make returns the output's directory, whose symlinks lead to
		// target (or sub, a directory in it), and the symlink refused as
		// the error names it ("" if none is).
		make func(t *testing.T, sticky, plain, target string) (dir, refused string)
	}
	symlink := func(t *testing.T, target, path string, uid int) string {
		t.Helper()
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(path, uid, uid); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := []kase{
		{"another user's symlink", func(t *testing.T, sticky, plain, target string) (string, string) {
			l := symlink(t, target, filepath.Join(sticky, "d"), nobody)
			return l, l
		}},
		{"another user's symlink deeper", func(t *testing.T, sticky, plain, target string) (string, string) {
			l := symlink(t, target, filepath.Join(sticky, "d"), nobody)
			return filepath.Join(l, "sub"), l
		}},
		{"another user's symlink in the caller's symlink's target", func(t *testing.T, sticky, plain, target string) (string, string) {
			l := symlink(t, target, filepath.Join(sticky, "d"), nobody)
			return symlink(t, filepath.Join(sticky, "d", "."), filepath.Join(plain, "mine"), me), l
		}},
		{"another user's symlink in a relative target", func(t *testing.T, sticky, plain, target string) (string, string) {
			l := symlink(t, target, filepath.Join(sticky, "d"), nobody)
			return symlink(t, "d", filepath.Join(sticky, "mine"), me), l
		}},
		{"another user's symlink, relative to the working directory", func(t *testing.T, sticky, plain, target string) (string, string) {
			symlink(t, target, filepath.Join(sticky, "d"), nobody)
			t.Chdir(sticky)
			return "d", "d"
		}},
		{"the caller's symlink", func(t *testing.T, sticky, plain, target string) (string, string) {
			return symlink(t, target, filepath.Join(sticky, "d"), me), ""
		}},
		{"the directory owner's symlink", func(t *testing.T, sticky, plain, target string) (string, string) {
			if err := os.Lchown(sticky, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return symlink(t, target, filepath.Join(sticky, "d"), nobody), ""
		}},
		{"another user's symlink in a directory that is not sticky", func(t *testing.T, sticky, plain, target string) (string, string) {
			if err := unix.Chmod(plain, 0o777); err != nil {
				t.Fatal(err)
			}
			return symlink(t, target, filepath.Join(plain, "d"), nobody), ""
		}},
	}
	for _, c := range cases {
		for _, how := range []string{"file", "FIFO", "directory"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				sticky, plain, target := t.TempDir(), t.TempDir(), t.TempDir()
				if err := unix.Chmod(sticky, 0o1777); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(filepath.Join(target, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(target, "out.data")
				if strings.HasSuffix(c.name, "deeper") {
					out = filepath.Join(target, "sub", "out.data")
				}
				dir, refused := c.make(t, sticky, plain, target)
				path := filepath.Join(dir, "out.data")
				var err error
				var rd *os.File
				switch how {
				case "file":
					err = write(t, path, outfile.Options{}, "secret")
				case "FIFO":
					if err := unix.Mkfifo(out, 0o600); err != nil {
						t.Fatal(err)
					}
					if rd, err = os.OpenFile(out, os.O_RDONLY|unix.O_NONBLOCK, 0); err != nil {
						t.Fatal(err)
					}
					defer rd.Close()
					err = write(t, path, outfile.Options{Force: true}, "secret")
				case "directory":
					var d *outfile.Dir
					if d, err = outfile.CreateDir(path, outfile.Options{}); err == nil {
						err = d.Commit()
					}
				}
				got := ""
				if rd != nil {
					buf := make([]byte, 64)
					n, _ := rd.Read(buf)
					got = string(buf[:n])
				} else if _, serr := os.Lstat(out); serr == nil {
					got = "out.data"
				}
				if refused == "" {
					if err != nil || got == "" {
						t.Errorf("%v, %q in the target; want it written there", err, got)
					}
					return
				}
				switch {
				case err == nil || got != "":
					t.Errorf("%v, %q in the target; want it refused", err, got)
				case !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "through "+refused+": a symlink of user 65534") || !strings.Contains(err.Error(), "protected_symlinks"):
					t.Errorf("the error does not name the output, the symlink and the rule: %v", err)
				}
				if names := testkit.DirNames(t, filepath.Dir(out)); how != "FIFO" && len(names) != 0 && !slices.Equal(names, []string{"sub"}) {
					t.Errorf("the target holds %q", names)
				}
			})
		}
	}
}

// saysRule reports whether a refusal of a planted file cites the rule of
// the kind of file it names: the kernel's protected_fifos for a FIFO, its
// protected_symlinks for a symlink, the reason in plain words for a device.
func saysRule(msg string) bool {
	switch {
	case strings.Contains(msg, "a FIFO of user"):
		return strings.Contains(msg, "protected_fifos") && !strings.Contains(msg, "protected_symlinks")
	case strings.Contains(msg, "a symlink of user"):
		return strings.Contains(msg, "protected_symlinks") && !strings.Contains(msg, "protected_fifos")
	case strings.Contains(msg, "a device of user"):
		return strings.Contains(msg, "could have put it there to read what bpfmeta writes")
	}
	return false
}
