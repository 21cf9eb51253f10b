package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// dirMode is the mode of the directories CreateDir makes, as perf record
// makes a directory recording's (S_IRWXU).
const dirMode fs.FileMode = 0o700

// Dir is an output directory being written: a directory recording (perf
// record --threads), by the policy of the package comment for files.
//
//   - Without Force, a directory recording or regular file of the
//     caller's at the path is kept as NAME.old (which may be absent, or a
//     regular file or directory recording of the caller's, replaced), as
//     perf record keeps perf.data.old; with NoClobber, or anything else,
//     the path is refused before anything is written.
//   - The directory is made under a temporary name beside the target
//     (".NAME.tmpXXXXXXXXXX", mkdir, which fails on an existing name), its
//     files created in it O_EXCL|O_NOFOLLOW, mode 0600; Commit (with
//     Options.Sync, --sync, syncs them (syncfs) and the directory, then)
//     renames it into place with
//     RENAME_NOREPLACE, which cannot replace what appeared meanwhile.
//     Abort, or a Commit that fails, removes it and its files.
//   - With Force, an existing directory recording (a directory holding
//     only files named data and data.N) or regular file is replaced
//     atomically (RENAME_EXCHANGE, then the old one is removed); anything
//     else is refused.
type Dir struct {
	path   string
	parent *os.File // the directory it is made in (openDir's)
	base   string   // its name in parent
	name   string   // the temporary directory's name in parent
	tmp    string   // and its path, for messages
	dir    *os.File // the temporary directory: files are made in it by name
	force  bool
	sync   bool      // Options.Sync
	keep   [2]uint64 // what is at path, kept as NAME.old without Force
	ending
}

// CreateDir starts the directory at path, by Dir's policy.
func CreateDir(path string, opts Options) (*Dir, error) {
	parent, base, err := openDir(path)
	if err != nil {
		return nil, err
	}
	d, err := createDir(parent, base, path, opts)
	if err != nil {
		parent.Close()
	}
	return d, err
}

// createDir is CreateDir of base in parent (openDir's), which the Dir
// keeps.
func createDir(parent *os.File, base, path string, opts Options) (*Dir, error) {
	st, err := lstatAt(parent, base)
	var keep [2]uint64
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: err}
	case !opts.Force:
		if err := keepableDir(parent, base, path, st, opts.NoClobber); err != nil {
			return nil, err
		}
		keep = statID(st)
	default:
		if err := replaceable(parent, base, path, st); err != nil {
			return nil, err
		}
	}
	pfd := int(parent.Fd())
	name, err := withTempName(filepath.Base(path), func(tmp string) error {
		return unix.Mkdirat(pfd, tmp, uint32(dirMode))
	})
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: path, Err: err}
	}
	tmp := filepath.Join(filepath.Dir(path), name)
	f, err := openSubdir(parent, name, tmp)
	if err != nil {
		unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
		return nil, &fs.PathError{Op: "create", Path: path, Err: err}
	}
	return &Dir{path: path, parent: parent, base: base, name: name, tmp: tmp, dir: f, force: opts.Force, sync: opts.Sync, keep: keep}, nil
}

// replaceable checks that -f may replace what stands at path (st): a
// directory recording (checkReplaceable), or a regular file. It is base
// in parent.
func replaceable(parent *os.File, base, path string, st fs.FileInfo) error {
	switch {
	case st.IsDir():
		return checkReplaceable(parent, base, path)
	case !st.Mode().IsRegular():
		return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a %s: -f replaces only a directory recording or a regular file", kind(st.Mode()))}
	}
	return nil
}

// maxReplaced bounds the entries of a directory -f replaces.
const maxReplaced = 1 << 17

// checkReplaceable checks that the directory at path is one -f may
// replace: it holds only data and data.N, none of them a directory. It is
// base in parent.
func checkReplaceable(parent *os.File, base, path string) error {
	ents, err := readNames(parent, base, path)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !isRecordingName(e.Name()) || e.IsDir() {
			return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a directory holding %q: -f replaces only a directory recording (data and data.N files)", e.Name())}
		}
	}
	return nil
}

func readNames(parent *os.File, base, path string) ([]fs.DirEntry, error) {
	d, err := openSubdir(parent, base, path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer d.Close()
	ents, err := d.ReadDir(maxReplaced + 1)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(ents) > maxReplaced {
		return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("more than %d files: not a directory recording -f replaces", maxReplaced)}
	}
	return ents, nil
}

func isRecordingName(name string) bool {
	if name == "data" {
		return true
	}
	n, ok := strings.CutPrefix(name, "data.")
	if !ok || n == "" {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Name is the path the directory appears under.
func (d *Dir) Name() string { return d.path }

// Create creates the file name in the directory, for reading and writing.
func (d *Dir) Create(name string) (*os.File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return nil, errors.New("outfile: Create after Commit or Abort")
	}
	fd, err := unix.Openat(int(d.dir.Fd()), name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// Finish closes a file Create made. Commit makes it durable if asked: a
// sync of each of thousands of data files would cost more than one of
// their file system.
func (d *Dir) Finish(f *os.File) error {
	return f.Close()
}

// Commit moves the directory into place; with Options.Sync, it syncs it
// (its file system) first and its parent after.
func (d *Dir) Commit() (err error) {
	if !d.end(func() { err = d.commit(); d.committed = err == nil }) {
		return errEnded
	}
	return err
}

func (d *Dir) commit() error {
	var err error
	if d.sync {
		// the files (syncfs(2): the directory's file system), then the directory
		err = unix.Syncfs(int(d.dir.Fd()))
		if err == nil {
			err = d.dir.Sync()
		}
	}
	if err == nil {
		err = d.place()
	}
	if err != nil {
		d.remove()
		return err
	}
	d.dir.Close()
	if d.sync {
		d.parent.Sync() // the new name, durable; best effort (not on a path-only descriptor)
	}
	d.parent.Close()
	return nil
}

// place renames the temporary directory to its name: never over what
// appeared meanwhile, unless Force, which exchanges the two and removes
// the old one.
func (d *Dir) place() error {
	pfd := int(d.parent.Fd())
	err := unix.Renameat2(pfd, d.name, pfd, d.base, unix.RENAME_NOREPLACE)
	if err == nil {
		return nil
	}
	if err != unix.EEXIST {
		return &fs.PathError{Op: "rename", Path: d.path, Err: err}
	}
	st, err := lstatAt(d.parent, d.base)
	switch {
	case err != nil:
		return &fs.PathError{Op: "lstat", Path: d.path, Err: err}
	case !d.force && d.keep != [2]uint64{} && statID(st) == d.keep:
		return d.keepOld()
	case !d.force:
		return &fs.PathError{Op: "create", Path: d.path, Err: fmt.Errorf("%w: it appeared while bpfmeta wrote it (-f replaces it)", errExists)}
	}
	if err := replaceable(d.parent, d.base, d.path, st); err != nil {
		return err
	}
	if err := unix.Renameat2(pfd, d.name, pfd, d.base, unix.RENAME_EXCHANGE); err != nil {
		return &fs.PathError{Op: "rename", Path: d.path, Err: err}
	}
	// The old one is now under the temporary name.
	if st.IsDir() {
		removeRecording(d.parent, d.name)
	} else {
		unix.Unlinkat(pfd, d.name, 0)
	}
	return nil
}

// Abort removes the directory and its files, unless it was committed. It
// is safe to call more than once and from another goroutine (a signal
// handler).
func (d *Dir) Abort() { d.end(d.remove) }

func (d *Dir) remove() {
	removeIn(d.dir)
	d.dir.Close()
	unix.Unlinkat(int(d.parent.Fd()), d.name, unix.AT_REMOVEDIR)
	d.parent.Close()
}

// removeRecording removes the directory recording name in parent: its
// data and data.N files (nothing else, following no symlink), then the
// directory.
func removeRecording(parent *os.File, name string) {
	f, err := openSubdir(parent, name, name)
	if err != nil {
		return
	}
	removeIn(f)
	f.Close()
	unix.Unlinkat(int(parent.Fd()), name, unix.AT_REMOVEDIR)
}

// openSubdir opens the directory name in parent for reading, and not
// through a symlink put under that name: the *os.File is named label. Its
// error is the bare errno.
func openSubdir(parent *os.File, name, label string) (*os.File, error) {
	fd, err := unix.Openat(int(parent.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), label), nil
}

// removeIn removes the data and data.N files of the open directory d, a
// pass at a time until a pass finds none (a directory read while entries
// go may skip some).
func removeIn(d *os.File) {
	for {
		if _, err := d.Seek(0, io.SeekStart); err != nil {
			return
		}
		removed := 0
		for {
			ents, err := d.ReadDir(1024)
			for _, e := range ents {
				if isRecordingName(e.Name()) && !e.IsDir() && unix.Unlinkat(int(d.Fd()), e.Name(), 0) == nil {
					removed++
				}
			}
			if err != nil || len(ents) == 0 {
				break
			}
		}
		if removed == 0 {
			return
		}
	}
}
