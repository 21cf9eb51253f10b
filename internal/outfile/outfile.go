// Package outfile creates the files bpfmeta writes (recordings, snapshots)
// with one policy, safe for a root process in a directory other users can
// write to:
//
//   - Without Force, a path that exists as anything (a file, a symlink,
//     dangling or not, a FIFO, a device, a directory) is refused before
//     anything is opened for writing.
//   - A new file is written under a temporary name in the same directory,
//     created O_CREAT|O_EXCL|O_NOFOLLOW with mode 0600 (what perf record
//     gives perf.data), and appears under its name only when complete
//     (Commit). Without Force it then cannot replace a file that
//     appeared meanwhile: it is linked into place (link(2) fails on an
//     existing name, where rename(2) would replace it; renameio has no such
//     mode). Abort, or a Commit that fails, removes it.
//   - With Force, a regular file is replaced atomically by rename(2); a
//     character device or a FIFO, or a symlink to one (/dev/null), is
//     written through, never replaced; anything else (a symlink to a file or
//     to nothing, a block device, a socket, a directory) is refused: Force
//     replaces only regular files, and follows no symlink to one.
//   - Journal mode (for a file that is useful while it is written, such as
//     a watch's snapshot): the new file appears under its name as soon as it
//     is created, by the same link or rename, and is written in place.
//   - Sync (snapshots, journals, a recording written with --sync): Commit
//     fsyncs the file before it gets its name and the directory after, so
//     that it is on the disk when Commit returns. A recording is derived
//     data, made again from its input, and is not synced unless asked (perf
//     record, perf inject and cp do not sync either): the temporary name
//     already keeps a killed run from leaving half a file under the name;
//     only a crash of the machine can lose a file not synced.
//
// A Guard aborts the files it tracks when a signal ends the process.
package outfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Mode is the mode of the files Create makes (before the umask).
const Mode fs.FileMode = 0o600

// ErrExists is returned (wrapped, with the path) for an existing path
// Create may not replace.
var ErrExists = errors.New("exists")

// Options say what Create may do with an existing path.
type Options struct {
	// Force replaces an existing regular file, and writes through to an
	// existing character device or FIFO (or a symlink to one).
	Force bool
	// Journal makes the file appear under its name at once (see the
	// package comment); Commit then finishes it, Abort removes it.
	Journal bool
	// Sync has Commit fsync the file and its directory (see the package
	// comment). Without it nothing is synced.
	Sync bool
}

// File is an output file being written.
type File struct {
	*os.File
	path   string
	tmp    string // the temporary name; "" when writing through to a device or FIFO
	mu     sync.Mutex
	done   bool
	opts   Options
	placed bool // the file is under its name (a journal)
}

// Create opens path for writing, by the policy of the package comment.
func Create(path string, opts Options) (*File, error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return create(path, opts)
	case err != nil:
		return nil, err
	case !opts.Force:
		return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("%w (-f replaces a file, or writes to a device or FIFO)", ErrExists)}
	case st.IsDir():
		return nil, &fs.PathError{Op: "create", Path: path, Err: syscall.EISDIR}
	case st.Mode().IsRegular():
		return create(path, opts)
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("a symlink to nothing: -f replaces only regular files")}
		case err != nil:
			return nil, err
		case writeThrough(target.Mode()):
			return openThrough(path)
		case target.Mode().IsRegular():
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("a symlink to a file: -f replaces only regular files and does not follow symlinks to them")}
		}
		return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a symlink to a %s: bpfmeta writes only regular files, character devices and FIFOs", kind(target.Mode()))}
	case writeThrough(st.Mode()):
		return openThrough(path)
	}
	return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a %s: bpfmeta writes only regular files, character devices and FIFOs", kind(st.Mode()))}
}

// writeThrough reports whether a file of this mode is written to rather
// than replaced.
func writeThrough(m fs.FileMode) bool {
	return m&fs.ModeNamedPipe != 0 || m&fs.ModeCharDevice != 0
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0:
		return "block device"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// openThrough opens an existing character device or FIFO for writing. A
// FIFO's open waits for a reader, as for any writer. What was opened is
// checked again: it must not have become something else meanwhile.
func openThrough(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !writeThrough(st.Mode()) {
		err = &fs.PathError{Op: "create", Path: path, Err: errors.New("was replaced by another kind of file while it was opened")}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// tempSuffix is what follows a temporary file's name: ".tmp" and random
// letters.
const (
	tempRandom = 10
	tempSuffix = len(".tmp") + tempRandom
	// maxName is NAME_MAX: a longer base name is cut in the temporary name.
	maxName = 255
)

// tempName is ".<base>.tmpXXXXXXXXXX" in path's directory, the base cut so
// that the name fits in NAME_MAX.
func tempName(path string) (string, error) {
	dir, base := filepath.Split(path)
	if n := maxName - 1 - tempSuffix; len(base) > n {
		base = base[:n]
	}
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	var r [tempRandom]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	for i := range r {
		r[i] = letters[int(r[i])%len(letters)]
	}
	return filepath.Join(dir, "."+base+".tmp"+string(r[:])), nil
}

func create(path string, opts Options) (*File, error) {
	for range 100 {
		tmp, err := tempName(path)
		if err != nil {
			return nil, err
		}
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, Mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			// Name the output, not the temporary file next to it.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, &fs.PathError{Op: "create", Path: path, Err: pe.Err}
			}
			return nil, err
		}
		file := &File{File: f, path: path, tmp: tmp, opts: opts}
		if opts.Journal {
			if err := file.place(); err != nil {
				f.Close()
				os.Remove(tmp)
				return nil, err
			}
		}
		return file, nil
	}
	return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("no free temporary name next to it")}
}

// place links (or, with Force, renames) the temporary file to its name.
func (f *File) place() error {
	if f.opts.Force {
		if err := os.Rename(f.tmp, f.path); err != nil {
			return err
		}
	} else if err := unix.Link(f.tmp, f.path); errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "create", Path: f.path, Err: fmt.Errorf("%w: it appeared while bpfmeta wrote it (-f replaces it)", ErrExists)}
	} else if err != nil {
		return &fs.PathError{Op: "link", Path: f.path, Err: err}
	} else {
		os.Remove(f.tmp)
	}
	f.placed = true
	return nil
}

// Name is the path the file appears under.
func (f *File) Name() string { return f.path }

// Regular reports whether the output is a new regular file (it can seek),
// rather than a device or FIFO written through.
func (f *File) Regular() bool { return f.tmp != "" }

// Commit closes the file and moves it into place: linked (or, with Force,
// renamed) to its name; with Options.Sync, the file is synced before and
// the directory after.
func (f *File) Commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return errors.New("outfile: Commit after Commit or Abort")
	}
	f.done = true
	if f.tmp == "" {
		return f.File.Close()
	}
	var err error
	if f.opts.Sync {
		err = f.File.Sync()
	}
	if err == nil && !f.placed {
		err = f.place()
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.remove()
		return err
	}
	if f.opts.Sync {
		syncParent(f.path)
	}
	return nil
}

// syncParent makes a new name at path durable: it syncs path's directory,
// best effort.
func syncParent(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
}

// Abort closes the file and removes it, unless it was committed. It is safe
// to call more than once and from another goroutine (a signal handler):
// the temporary file is gone when it returns.
func (f *File) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.done = true
	f.remove()
	f.File.Close()
}

// remove removes the file: its temporary name, or the name of a journal
// placed under it, if that is still this file.
func (f *File) remove() {
	switch {
	case f.tmp == "":
	case !f.placed:
		os.Remove(f.tmp)
	default:
		mine, err1 := f.File.Stat()
		there, err2 := os.Lstat(f.path)
		if err1 == nil && err2 == nil && os.SameFile(mine, there) {
			os.Remove(f.path)
		}
	}
}

// PipeSize is the pipe buffer GrowPipe asks for: perf writes a stream in
// large blocks, and fewer, larger reads and writes cost less.
const PipeSize = 1 << 20

// GrowPipe enlarges f's pipe buffer (F_SETPIPE_SZ) if f is a pipe; an
// unprivileged user may get less, which is fine.
func GrowPipe(f *os.File) {
	if st, err := f.Stat(); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, PipeSize)
	}
}
