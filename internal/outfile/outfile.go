// Package outfile creates the files bpfmeta writes, by one policy safe for root.
//
// It creates the files bpfmeta writes (recordings, snapshots) with one
// policy, safe for a root process in a directory other users can write to:
//
//   - Without Force, an existing regular file of the caller's is replaced,
//     as perf inject -o, cp and a shell's > replace it, and kept as
//     NAME.old, as perf record keeps perf.data.old (check_backup()), unless
//     it is empty (mktemp's): nothing of it is lost, and a script written
//     for perf inject runs unchanged. NAME.old must be absent or a regular
//     file of the caller's, which it replaces (one generation is kept, as
//     perf record keeps one). The old file stays under its name until the
//     new one is renamed over it, and only if it is still that file.
//     NoClobber (--no-clobber) refuses such a file instead, unless it is
//     empty. Anything else that exists (another user's file, a symlink,
//     dangling or not, a FIFO, a device, a directory) is refused before
//     anything is opened for writing.
//   - A new file is written unnamed in its directory (O_TMPFILE, mode 0600:
//     what perf record gives perf.data), so that nothing of it survives the
//     process however it ends, and appears under its name only when complete
//     (Commit, by linkat of /proc/self/fd). Where O_TMPFILE fails, and for a
//     journal, it has a temporary name in the same directory instead,
//     created O_CREAT|O_EXCL|O_NOFOLLOW. Without Force it cannot replace a
//     file that appeared meanwhile: it is linked into place (link(2) fails
//     on an existing name, where rename(2) would replace it; renameio has no
//     such mode). Abort, or a Commit that fails, removes it.
//   - With Force, a regular file is replaced atomically by rename(2) (an
//     unnamed file is linked to a temporary name first); a
//     character device or a FIFO, or a symlink to one (/dev/null), is
//     written through, never replaced; anything else (a symlink to a file or
//     to nothing, a block device, a socket, a directory) is refused: Force
//     replaces only regular files, and follows no symlink to one.
//   - Written through only if nobody else planted it: in a sticky directory
//     others can write (/tmp), a FIFO or device is written through, and a
//     symlink followed (any on the way: the output's name, a directory
//     of its path, one in a symlink's target; see walk), only if it
//     belongs to the caller, to the directory's owner or to root,
//     whatever fs.protected_fifos and fs.protected_symlinks say (the
//     kernel's may_create_in_sticky() and may_follow_link() rules; its
//     protected_fifos covers only O_CREAT opens). A FIFO no process reads
//     is refused after FIFOWait, not waited on for ever.
//   - The directory is opened once (openDir): the temporary file is
//     created, linked and removed relative to it (openat, linkat,
//     unlinkat), so that a directory renamed meanwhile keeps no temporary
//     file.
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
//
// An output held back waits in a scratch file (internal/scratch, by the
// same rules); an output's error, as opposed to its input's, is a
// WriteError. Nothing here reads.
package outfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// mode is the mode of the files createPath makes (before the umask).
const mode fs.FileMode = 0o600

// errExists is returned (wrapped, with the path) for an existing path
// createPath may not replace.
var errExists = errors.New("exists")

// Options say what createPath may do with an existing path.
type Options struct {
	// Force replaces an existing regular file, and writes through to an
	// existing character device or FIFO (or a symlink to one).
	Force bool
	// NoClobber refuses, without Force, an existing file that is not
	// empty, instead of keeping it as NAME.old (see the package comment).
	NoClobber bool
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
	path string
	dir  *os.File // the directory the file is made in; nil when writing through
	base string   // its name in dir
	// unnamed: made O_TMPFILE, the file has no name until Commit links it.
	unnamed bool
	tmp     string    // the temporary name in dir, while it has one
	id      [2]uint64 // the new file's device and inode: what remove may remove
	ending
	opts   Options
	placed bool // the file is under its name (a journal)
	// replaces is the device and inode of the regular file of the
	// caller's that the file replaces without Force (keepOld keeps it
	// unless it is empty); zero if none.
	replaces [2]uint64
}

// createPath opens path for writing, by the policy of the package comment.
func createPath(path string, opts Options) (*File, error) {
	dir, base, err := openDir(path)
	if err != nil {
		return nil, err
	}
	f, err := createIn(dir, base, path, opts)
	if err != nil || f.dir != dir {
		dir.Close()
	}
	return f, err
}

// createIn is createPath of base in dir (openDir's), which it keeps open in the
// File it makes, and otherwise leaves to the caller to close.
func createIn(dir *os.File, base, path string, opts Options) (*File, error) {
	st, err := lstatAt(dir, base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return create(dir, base, path, opts, [2]uint64{})
	case err != nil:
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	case !opts.Force:
		id, ok := ownRegular(st)
		switch {
		case !ok || opts.NoClobber && st.Size() > 0:
			return nil, existing(path, opts.NoClobber, "a file, or writes to a device or FIFO")
		case st.Size() > 0:
			if err := checkOld(dir, base, path); err != nil {
				return nil, err
			}
		}
		return create(dir, base, path, opts, id)
	case st.IsDir():
		return nil, &fs.PathError{Op: "create", Path: path, Err: syscall.EISDIR}
	case st.Mode().IsRegular():
		return create(dir, base, path, opts, [2]uint64{})
	case st.Mode()&fs.ModeSymlink != 0:
		if err := notPlanted(path, int(dir.Fd()), st); err != nil {
			return nil, err
		}
		// The symlink, and every symlink its target goes through, by
		// notPlanted's rule.
		tdir, tbase, err := walk(dir, base, true)
		var target fs.FileInfo
		if err == nil {
			defer tdir.Close()
			target, err = lstatAt(tdir, tbase)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("a symlink to nothing: -f replaces only regular files")}
		case err != nil:
			var pe *fs.PathError
			if errors.As(err, &pe) && pe.Path == base {
				err = &fs.PathError{Op: "create", Path: path, Err: pe.Err}
			}
			return nil, err
		case writeThrough(target.Mode()):
			if err := notPlanted(path, int(tdir.Fd()), target); err != nil {
				return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("its target: %w", errors.Unwrap(err))}
			}
			return openThrough(path, tdir, tbase, target)
		case target.Mode().IsRegular():
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("a symlink to a file: -f replaces only regular files and does not follow symlinks to them")}
		}
		return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a symlink to a %s: bpfmeta writes only regular files, character devices and FIFOs", kind(target.Mode()))}
	case writeThrough(st.Mode()):
		if err := notPlanted(path, int(dir.Fd()), st); err != nil {
			return nil, err
		}
		return openThrough(path, dir, base, st)
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
// st its Lstat or Stat, dirFD the directory it is in) if another user may
// have put it there: it is in a sticky directory that others can write,
// and belongs neither to the caller, nor to the directory's owner, nor to
// root. That is the kernel's
// rule for FIFOs (may_create_in_sticky(), fs.protected_fifos=2) and for
// symlinks (may_follow_link(), fs.protected_symlinks), applied whatever
// the sysctls say: protected_fifos covers only opens with O_CREAT, and a
// root process writing a snapshot into another user's FIFO, device or
// terminal gives that user kernel addresses.
func notPlanted(path string, dirFD int, st fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	var dir unix.Stat_t
	if err := unix.Fstat(dirFD, &dir); err != nil {
		return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("its directory: %w", err)}
	}
	owner := sys.Uid
	if dir.Mode&unix.S_ISVTX == 0 || dir.Mode&0o022 == 0 || owner == dir.Uid || owner == 0 || int(owner) == os.Geteuid() {
		return nil
	}
	what, rule := "a FIFO", "the kernel's protected_fifos rule"
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		what, rule = "a symlink", "the kernel's protected_symlinks rule"
	case st.Mode()&fs.ModeCharDevice != 0:
		what, rule = "a device", "another user could have put it there to read what bpfmeta writes"
	}
	return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("%s of user %d in a sticky directory others can write: bpfmeta writes there only through one of its own user, of the directory's owner or of root (%s); -o - writes to a pipe", what, owner, rule)}
}

// FIFOWait is how long createPath waits for a process to open a FIFO for
// reading (a reader started at the same time) before it refuses it.
const FIFOWait = 2 * time.Second

// openThrough opens an existing character device or FIFO for writing,
// without blocking (a FIFO no process reads is refused after FIFOWait)
// and without making a terminal the controlling one. What was opened must
// be what st describes, base in dir: it must not have been replaced
// meanwhile, nor by a symlink.
func openThrough(path string, dir *os.File, base string, st fs.FileInfo) (*File, error) {
	const flags = unix.O_WRONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(int(dir.Fd()), base, flags, 0)
	for deadline := time.Now().Add(FIFOWait); errors.Is(err, unix.ENXIO) && st.Mode()&fs.ModeNamedPipe != 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		fd, err = unix.Openat(int(dir.Fd()), base, flags, 0)
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

// errNoTempName: every temporary name tried was taken.
var errNoTempName = errors.New("no free temporary name next to it")

// withTempName calls try with temporary names for base (tempName) until
// one is free: try's EEXIST means taken. It returns the name made, or
// try's other error as it is, or errNoTempName after 100 tries.
func withTempName(base string, try func(tmp string) error) (string, error) {
	for range 100 {
		tmp, err := tempName(base)
		if err != nil {
			return "", err
		}
		if err := try(tmp); errors.Is(err, unix.EEXIST) {
			continue
		} else if err != nil {
			return "", err
		}
		return tmp, nil
	}
	return "", errNoTempName
}

// create makes the new file base in dir (openDir's), for path; replaces
// is the file of the caller's it replaces without Force (ownRegular), or
// zero.
func create(dir *os.File, base, path string, opts Options, replaces [2]uint64) (*File, error) {
	dirName := filepath.Dir(path)
	f := &File{path: path, dir: dir, base: base, opts: opts, replaces: replaces}
	fd := -1
	if !opts.Journal {
		fd = openUnnamed(int(dir.Fd()))
	}
	if fd >= 0 {
		f.unnamed = true
		f.File = os.NewFile(uintptr(fd), path) // unnamed until Commit: messages name the output
	} else if err := f.createNamed(dirName); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	err := unix.Fstat(int(f.File.Fd()), &st)
	if err == nil {
		f.id = [2]uint64{uint64(st.Dev), st.Ino} // Dev is uint32 on mips
		if opts.Journal {
			err = f.place()
		}
	}
	if err != nil {
		f.remove()
		f.File.Close()
		if _, ok := err.(*fs.PathError); !ok {
			err = &fs.PathError{Op: "create", Path: path, Err: err}
		}
		return nil, err
	}
	return f, nil
}

// openUnnamed makes the file unnamed in the directory dfd (O_TMPFILE), so
// that nothing of it is left whatever ends the process, SIGKILL and the Go
// runtime's fatal errors included; Commit links it by /proc/self/fd. It
// returns -1 where the file system or a missing /proc does not allow that.
func openUnnamed(dfd int) int {
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(mode))
	if err != nil {
		return -1
	}
	var st unix.Stat_t
	if unix.Stat(procFD(fd), &st) != nil {
		unix.Close(fd)
		return -1
	}
	return fd
}

// procFD is the name of descriptor fd in /proc: linkat(2) of it with
// AT_SYMLINK_FOLLOW names an unnamed file without the CAP_DAC_READ_SEARCH
// that AT_EMPTY_PATH needs.
func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// createNamed makes the file under a temporary name in its directory,
// O_EXCL|O_NOFOLLOW, where it cannot be unnamed.
func (f *File) createNamed(dirName string) error {
	fd := -1
	tmp, err := withTempName(f.base, func(tmp string) (err error) {
		fd, err = unix.Openat(int(f.dir.Fd()), tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
		return err
	})
	if err != nil {
		return &fs.PathError{Op: "create", Path: f.path, Err: err}
	}
	f.File, f.tmp = os.NewFile(uintptr(fd), filepath.Join(dirName, tmp)), tmp
	return nil
}

// place links (or, with Force, renames) the file to its name, in the
// directory it was made in. An unnamed file is linked, with Force to a
// temporary name first and renamed from it.
func (f *File) place() error {
	dfd := int(f.dir.Fd())
	link := func(to string) error {
		if f.unnamed {
			return unix.Linkat(unix.AT_FDCWD, procFD(int(f.File.Fd())), dfd, to, unix.AT_SYMLINK_FOLLOW)
		}
		return unix.Linkat(dfd, f.tmp, dfd, to, 0)
	}
	force, err := f.replacing()
	if err != nil {
		return err
	}
	if force {
		if f.unnamed {
			if err := f.linkTemp(link); err != nil {
				return err
			}
		}
		if err := unix.Renameat(dfd, f.tmp, dfd, f.base); err != nil {
			return &fs.PathError{Op: "rename", Path: f.path, Err: err}
		}
		f.tmp = ""
	} else if err := link(f.base); errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "create", Path: f.path, Err: fmt.Errorf("%w: it appeared while bpfmeta wrote it (-f replaces it)", errExists)}
	} else if err != nil {
		return &fs.PathError{Op: "link", Path: f.path, Err: err}
	} else if f.tmp != "" {
		unix.Unlinkat(dfd, f.tmp, 0)
		f.tmp = ""
	}
	f.placed = true
	return nil
}

// replacing reports whether place replaces the file under the name: with
// Force, or without it the file of the caller's that createPath saw (kept as
// NAME.old unless it is empty, or refused with NoClobber), if it is still
// there. A file gone meanwhile is not replaced (place links the new one);
// any other file there is refused.
func (f *File) replacing() (bool, error) {
	if f.opts.Force || f.replaces == [2]uint64{} {
		return f.opts.Force, nil
	}
	var there unix.Stat_t
	err := unix.Fstatat(int(f.dir.Fd()), f.base, &there, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, nil
	case err != nil || there.Mode&unix.S_IFMT != unix.S_IFREG || f.replaces != [2]uint64{uint64(there.Dev), there.Ino}:
		return false, &fs.PathError{Op: "create", Path: f.path, Err: fmt.Errorf("%w: the file there was replaced while bpfmeta wrote it (-f replaces it)", errExists)}
	case there.Size == 0:
		return true, nil
	case f.opts.NoClobber:
		return false, &fs.PathError{Op: "create", Path: f.path, Err: fmt.Errorf("%w: the empty file there was written to while bpfmeta wrote it (--no-clobber)", errExists)}
	}
	return true, keepOld(f.dir, f.base, f.path)
}

// linkTemp gives an unnamed file a temporary name, which place then
// renames over the file it replaces.
func (f *File) linkTemp(link func(string) error) error {
	tmp, err := withTempName(f.base, link)
	if err != nil {
		op := "link"
		if err == errNoTempName {
			op = "create"
		}
		return &fs.PathError{Op: op, Path: f.path, Err: err}
	}
	f.tmp = tmp
	return nil
}

// Name is the path the file appears under.
func (f *File) Name() string { return f.path }

// Regular reports whether the output is a new regular file (it can seek),
// rather than a device or FIFO written through.
func (f *File) Regular() bool { return f.dir != nil }

// Commit closes the file and moves it into place: linked (or, with Force,
// renamed) to its name; with Options.Sync, the file is synced before and
// the directory after.
func (f *File) Commit() (err error) {
	if !f.end(func() { err = f.commit(); f.committed = err == nil }) {
		return errEnded
	}
	return err
}

func (f *File) commit() error {
	if f.dir == nil {
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

// Abort closes the file and removes it, unless it was committed. It is safe
// to call more than once and from another goroutine (a signal handler):
// the temporary file is gone when it returns.
func (f *File) Abort() {
	f.end(func() {
		f.remove()
		f.File.Close()
		if f.dir != nil {
			f.dir.Close()
		}
	})
}

// ending is what Commit and Abort share: an output ends once, by
// whichever comes first, and Abort may come from another goroutine (a
// signal handler).
type ending struct {
	mu        sync.Mutex
	done      bool
	committed bool // ended by a Commit that succeeded
}

// Committed reports whether the output was committed: it is complete
// under its name, and nothing removes it any more.
func (e *ending) Committed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.committed
}

// end runs f as the output's end, unless it has ended, and reports
// whether it ran.
func (e *ending) end(f func()) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return false
	}
	e.done = true
	f()
	return true
}

// errEnded is Commit's error after Commit or Abort.
var errEnded = errors.New("outfile: Commit after Commit or Abort")

// remove removes the file from its directory: its temporary name, or the
// name of a journal placed under it, if that is still this file. An
// unnamed file has nothing to remove.
func (f *File) remove() {
	switch {
	case f.dir == nil:
	case f.tmp != "":
		unix.Unlinkat(int(f.dir.Fd()), f.tmp, 0)
	case !f.placed:
	default:
		var there unix.Stat_t
		if unix.Fstatat(int(f.dir.Fd()), f.base, &there, unix.AT_SYMLINK_NOFOLLOW) == nil && f.id == [2]uint64{uint64(there.Dev), there.Ino} {
			unix.Unlinkat(int(f.dir.Fd()), f.base, 0)
		}
	}
}
