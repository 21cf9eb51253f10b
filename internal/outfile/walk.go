package outfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// maxLinks is how many symlinks a path may go through: the kernel's
// MAXSYMLINKS, past which its lookups fail with ELOOP.
const maxLinks = 40

// openDir opens the directory an output at path is made in, for reading
// (so that it can be synced) or, without read permission, as a path
// only, and returns it with the output's name in it. Every symlink on the
// way is followed by notPlanted's rule (walk), not only the output's own.
func openDir(path string) (*os.File, string, error) {
	dir, base, err := walk(nil, path, false)
	if err != nil {
		return nil, "", err
	}
	defer dir.Close()
	fd, err := unix.Openat(int(dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == unix.EACCES {
		fd, err = unix.Openat(int(dir.Fd()), ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, "", &fs.PathError{Op: "create", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), dir.Name()), base, nil
}

// walk resolves path (relative to from, or to the working directory if
// from is nil) as the kernel does, one component at a time, each opened
// O_PATH|O_NOFOLLOW relative to the one before: a symlink is followed,
// whether it is a directory of the path, in a symlink's target, or (with
// follow) the last name, only if notPlanted allows it. That is the
// kernel's protected_symlinks rule (may_follow_link()) for every symlink
// the path goes through, whatever fs.protected_symlinks says: checking
// the output's own name alone let another user's symlink in /tmp, as a
// directory of the path, send the output where that user chose. Nothing
// is looked up again by name once checked, so a symlink put in place of
// a checked directory meanwhile is not followed (the open fails): this
// needs no openat2(2) RESOLVE_NO_SYMLINKS, nor a way round its absence
// before Linux 5.6.
//
// walk returns the directory holding the last name, open O_PATH and named
// by its path with no symlink in it, and that name, which need not exist
// (with follow, it is no symlink). Errors name path.
func walk(from *os.File, path string, follow bool) (*os.File, string, error) {
	w := &walker{path: path, follow: follow, from: from, todo: path}
	defer func() {
		if w.dir != nil {
			w.dir.Close()
		}
	}()
	if path == "" {
		return w.fail(unix.ENOENT)
	}
	if err := w.restart(path); err != nil {
		return w.fail(err)
	}
	for {
		name, last, err := w.step()
		if err != nil {
			return w.fail(err)
		}
		if last {
			d := w.dir
			w.dir = nil
			return d, name, nil
		}
	}
}

// walker is walk's state: the directory reached (dir, open O_PATH), what
// is left of the path to resolve (todo), and the symlinks followed.
type walker struct {
	path   string
	follow bool
	from   *os.File
	dir    *os.File
	todo   string
	links  int
}

// fail is walk's error, naming the path.
func (w *walker) fail(err error) (*os.File, string, error) {
	if pe, ok := err.(*fs.PathError); ok && pe.Path != w.path {
		err = pe.Err
	}
	if _, ok := err.(*fs.PathError); !ok {
		err = &fs.PathError{Op: "create", Path: w.path, Err: err}
	}
	return nil, "", err
}

// restart makes dir the directory where p starts.
func (w *walker) restart(p string) error {
	start, name, at := unix.AT_FDCWD, ".", "."
	switch {
	case strings.HasPrefix(p, "/"):
		name, at = "/", "/"
	case w.from != nil:
		start, at = int(w.from.Fd()), w.from.Name()
	}
	fd, err := unix.Openat(start, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if w.dir != nil {
		w.dir.Close()
	}
	w.dir = os.NewFile(uintptr(fd), at)
	return nil
}

// step resolves the next name of what is left: the last one, which walk
// returns (last), or a directory it moves into, or a symlink whose target
// goes before the rest (follow1).
func (w *walker) step() (name string, last bool, err error) {
	if strings.HasSuffix(w.todo, "/") {
		w.todo += "." // a directory, whatever symlink names it
	}
	w.todo = strings.TrimLeft(w.todo, "/")
	name, rest, _ := strings.Cut(w.todo, "/")
	rest = strings.TrimLeft(rest, "/")
	last = rest == ""
	if last && (!w.follow || name == "." || name == "..") {
		return name, true, nil
	}
	w.todo = rest
	if name == "." {
		return "", false, nil
	}
	fd, err := unix.Openat(int(w.dir.Fd()), name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if last && err == unix.ENOENT {
		return name, true, nil
	}
	if err != nil {
		return "", false, err
	}
	at := filepath.Join(w.dir.Name(), name)
	f := os.NewFile(uintptr(fd), at)
	st, err := f.Stat()
	if err == nil && last && st.Mode()&fs.ModeSymlink == 0 {
		f.Close()
		return name, true, nil
	}
	if err == nil && st.IsDir() {
		w.dir.Close()
		w.dir = f
		return "", false, nil
	}
	if err == nil {
		err = follow1(f, w.dir, st, &w.links, &w.todo, last)
		if err == nil && strings.HasPrefix(w.todo, "/") {
			err = w.restart(w.todo)
		}
	}
	f.Close()
	if pe, ok := err.(*fs.PathError); ok && pe.Path == at {
		err = &fs.PathError{Op: "create", Path: w.path, Err: fmt.Errorf("through %s: %w", safetext.Quote(at), pe.Err)}
	}
	return "", false, err
}

// follow1 follows the symlink f (st its stat) in dir, if notPlanted
// allows it: its target goes before the rest of the path, todo (or is the
// path, for the last name).
func follow1(f, dir *os.File, st fs.FileInfo, links *int, todo *string, last bool) error {
	if st.Mode()&fs.ModeSymlink == 0 {
		return unix.ENOTDIR
	}
	if *links++; *links > maxLinks {
		return unix.ELOOP
	}
	if err := notPlanted(f.Name(), int(dir.Fd()), st); err != nil {
		return err
	}
	target, err := readlink(int(f.Fd()))
	if err != nil {
		return err
	}
	if last {
		*todo = target
	} else {
		*todo = target + "/" + *todo
	}
	return nil
}

// readlink reads the symlink open O_PATH|O_NOFOLLOW as fd: the one
// checked, not one put under its name since.
func readlink(fd int) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

// lstatAt is lstat(2) of name in dir; its error is the bare errno.
func lstatAt(dir *os.File, name string) (fs.FileInfo, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	st, err := f.Stat()
	if pe, ok := err.(*fs.PathError); ok {
		err = pe.Err
	}
	return st, err
}
