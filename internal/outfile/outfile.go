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
//   - Written through only if nobody else planted it: in a sticky directory
//     others can write (/tmp), a FIFO or device is written through, and a
//     symlink followed, only if it belongs to the caller, to the
//     directory's owner or to root, whatever fs.protected_fifos and
//     fs.protected_symlinks say (the kernel's may_create_in_sticky() and
//     may_follow_link() rules; its protected_fifos covers only O_CREAT
//     opens). A FIFO no process reads is refused after FIFOWait, not
//     waited on for ever.
//   - The directory is opened once: the temporary file is created, linked
//     and removed relative to it (openat, linkat, unlinkat), so that a
//     directory renamed meanwhile keeps no temporary file.
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
	"time"

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
	dir    *os.File  // the directory the file is made in
	base   string    // its name in dir
	id     [2]uint64 // the new file's device and inode: what remove may remove
	tmp    string    // the temporary name in dir; "" when writing through to a device or FIFO
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
			if err := notPlanted(path, st); err != nil {
				return nil, err
			}
			resolved, err := filepath.EvalSymlinks(path)
			if err != nil {
				return nil, err
			}
			if err := notPlanted(resolved, target); err != nil {
				return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("its target: %w", errors.Unwrap(err))}
			}
			return openThrough(path, target, 0)
		case target.Mode().IsRegular():
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("a symlink to a file: -f replaces only regular files and does not follow symlinks to them")}
		}
		return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a symlink to a %s: bpfmeta writes only regular files, character devices and FIFOs", kind(target.Mode()))}
	case writeThrough(st.Mode()):
		if err := notPlanted(path, st); err != nil {
			return nil, err
		}
		return openThrough(path, st, unix.O_NOFOLLOW)
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

// notPlanted refuses path (a FIFO, a device, or a symlink to be followed;
// st its Lstat or Stat) if another user may have put it there: it is in a
// sticky directory that others can write, and belongs neither to the
// caller, nor to the directory's owner, nor to root. That is the kernel's
// rule for FIFOs (may_create_in_sticky(), fs.protected_fifos=2) and for
// symlinks (may_follow_link(), fs.protected_symlinks), applied whatever
// the sysctls say: protected_fifos covers only opens with O_CREAT, and a
// root process writing a snapshot into another user's FIFO, device or
// terminal gives that user kernel addresses.
func notPlanted(path string, st fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	var dir unix.Stat_t
	if err := unix.Stat(filepath.Dir(path), &dir); err != nil {
		return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("its directory: %w", err)}
	}
	owner := sys.Uid
	if dir.Mode&unix.S_ISVTX == 0 || dir.Mode&0o022 == 0 || owner == dir.Uid || owner == 0 || int(owner) == os.Geteuid() {
		return nil
	}
	what := "a FIFO"
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		what = "a symlink"
	case st.Mode()&fs.ModeCharDevice != 0:
		what = "a device"
	}
	return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("%s of user %d in a sticky directory others can write: bpfmeta writes there only through one of its own user, of the directory's owner or of root (the kernel's protected_fifos rule); -o - writes to a pipe", what, owner)}
}

// FIFOWait is how long Create waits for a process to open a FIFO for
// reading (a reader started at the same time) before it refuses it.
const FIFOWait = 2 * time.Second

// openThrough opens an existing character device or FIFO for writing,
// without blocking (a FIFO no process reads is refused after FIFOWait)
// and without making a terminal the controlling one. What was opened must
// be what st describes: it must not have been replaced meanwhile.
func openThrough(path string, st fs.FileInfo, flags int) (*File, error) {
	flags |= unix.O_WRONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	fd, err := unix.Open(path, flags, 0)
	for deadline := time.Now().Add(FIFOWait); errors.Is(err, unix.ENXIO) && st.Mode()&fs.ModeNamedPipe != 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		fd, err = unix.Open(path, flags, 0)
	}
	if errors.Is(err, unix.ENXIO) && st.Mode()&fs.ModeNamedPipe != 0 {
		return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a FIFO no process reads (waited %v): start its reader first, or write to a pipe with -o -", FIFOWait)}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	// Blocking again: writes wait for the reader, as any writer's do.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	now, err := f.Stat()
	if err == nil && (!writeThrough(now.Mode()) || !os.SameFile(now, st)) {
		err = &fs.PathError{Op: "create", Path: path, Err: errors.New("was replaced by another file while it was opened")}
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

// tempName is ".<base>.tmpXXXXXXXXXX", base cut so that the name fits in
// NAME_MAX.
func tempName(base string) (string, error) {
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
	return "." + base + ".tmp" + string(r[:]), nil
}

// openDir opens the directory a new file is made in: for reading, so that
// it can be synced, or (without read permission) as a path only.
func openDir(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) {
		fd, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), dir), nil
}

func create(path string, opts Options) (*File, error) {
	dirName, base := filepath.Split(path)
	if dirName == "" {
		dirName = "."
	}
	dir, err := openDir(dirName)
	if err != nil {
		// Name the output, not its directory.
		return nil, &fs.PathError{Op: "create", Path: path, Err: err}
	}
	dfd := int(dir.Fd())
	for range 100 {
		tmp, err := tempName(base)
		if err != nil {
			dir.Close()
			return nil, err
		}
		fd, err := unix.Openat(dfd, tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(Mode))
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			dir.Close()
			return nil, &fs.PathError{Op: "create", Path: path, Err: err}
		}
		file := &File{File: os.NewFile(uintptr(fd), filepath.Join(dirName, tmp)), path: path, dir: dir, base: base, tmp: tmp, opts: opts}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			file.File.Close()
			unix.Unlinkat(dfd, tmp, 0)
			dir.Close()
			return nil, &fs.PathError{Op: "create", Path: path, Err: err}
		}
		file.id = [2]uint64{st.Dev, st.Ino}
		if opts.Journal {
			if err := file.place(); err != nil {
				file.File.Close()
				unix.Unlinkat(dfd, tmp, 0)
				dir.Close()
				return nil, err
			}
		}
		return file, nil
	}
	dir.Close()
	return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("no free temporary name next to it")}
}

// place links (or, with Force, renames) the temporary file to its name, in
// the directory it was made in.
func (f *File) place() error {
	dfd := int(f.dir.Fd())
	if f.opts.Force {
		if err := unix.Renameat(dfd, f.tmp, dfd, f.base); err != nil {
			return &fs.PathError{Op: "rename", Path: f.path, Err: err}
		}
	} else if err := unix.Linkat(dfd, f.tmp, dfd, f.base, 0); errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "create", Path: f.path, Err: fmt.Errorf("%w: it appeared while bpfmeta wrote it (-f replaces it)", ErrExists)}
	} else if err != nil {
		return &fs.PathError{Op: "link", Path: f.path, Err: err}
	} else {
		unix.Unlinkat(dfd, f.tmp, 0)
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
	defer f.dir.Close()
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
		f.dir.Sync() // the new name, durable; best effort (not on a path-only descriptor)
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
	if f.dir != nil {
		f.dir.Close()
	}
}

// remove removes the file from its directory: its temporary name, or the
// name of a journal placed under it, if that is still this file.
func (f *File) remove() {
	switch {
	case f.tmp == "":
	case !f.placed:
		unix.Unlinkat(int(f.dir.Fd()), f.tmp, 0)
	default:
		var there unix.Stat_t
		if unix.Fstatat(int(f.dir.Fd()), f.base, &there, unix.AT_SYMLINK_NOFOLLOW) == nil && f.id == [2]uint64{there.Dev, there.Ino} {
			unix.Unlinkat(int(f.dir.Fd()), f.base, 0)
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
