package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// oldSuffix names the file an output replaces, kept beside it: NAME.old,
// as perf record keeps the perf.data it replaces (perf_data__open's
// check_backup()).
const oldSuffix = ".old"

// OldName is the name the file at path is kept under when an output
// replaces it without Force.
func OldName(path string) string { return path + oldSuffix }

// ownRegular reports whether st is a regular file of the caller's (the
// effective user's), which an output replaces without Force (keeping it
// as NAME.old unless it is empty), and returns its device and inode.
func ownRegular(st fs.FileInfo) ([2]uint64, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || !st.Mode().IsRegular() || int(sys.Uid) != os.Geteuid() {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(sys.Dev), sys.Ino}, true
}

// existing is the error for an existing path that createPath or CreateDir
// may not replace without Force.
func existing(path string, noClobber bool, what string) error {
	if noClobber {
		return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("%w (--no-clobber; -f replaces %s)", errExists, what)}
	}
	return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("%w and is not a file of yours, which bpfmeta would keep as %s (-f replaces %s)", errExists, oldSuffix, what)}
}

// checkOld checks that NAME.old (base+oldSuffix in dir, path's) may take
// the file at path: there is nothing there, or a regular file of the
// caller's, which it replaces, as perf record replaces perf.data.old.
// Anything else (a directory, a symlink, a FIFO, another user's file) is
// left alone, and the output refused.
func checkOld(dir *os.File, base, path string) error {
	old := OldName(path)
	st, err := lstatAt(dir, base+oldSuffix)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &fs.PathError{Op: "lstat", Path: old, Err: err}
	}
	if _, ok := ownRegular(st); !ok {
		what := "not a file of yours"
		if st.Mode().IsRegular() {
			what = "another user's file"
		}
		return &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("%w, and %s, where bpfmeta keeps the file it replaces, is %s: remove it, or -f replaces %s without keeping it", errExists, old, what, path)}
	}
	return nil
}

// keepOld moves the file base in dir (path's) to NAME.old, replacing what
// checkOld allows there. It is linked there first (the output's name
// holds the old file until the new one is renamed over it, so that the
// name is never missing); where a link cannot be made (a file system
// without hard links), it is renamed.
func keepOld(dir *os.File, base, path string) error {
	if err := checkOld(dir, base, path); err != nil {
		return err
	}
	dfd := int(dir.Fd())
	tmp, err := withTempName(base, func(tmp string) error { return unix.Linkat(dfd, base, dfd, tmp, 0) })
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, base+oldSuffix)
		// gone if renamed; but a rename between two links of one file
		// does nothing (rename(2)): another run kept the same file as
		// NAME.old a moment before, and the temporary name stays
		unix.Unlinkat(dfd, tmp, 0)
	} else if err != errNoTempName {
		err = unix.Renameat(dfd, base, dfd, base+oldSuffix)
	}
	if err != nil {
		return &fs.PathError{Op: "rename", Path: OldName(path), Err: err}
	}
	return nil
}

// statID is the device and inode st describes; zero if it cannot tell.
func statID(st fs.FileInfo) [2]uint64 {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}
	}
	return [2]uint64{uint64(sys.Dev), sys.Ino}
}

// ownEntry reports whether st is the caller's.
func ownEntry(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Geteuid()
}

// keepableDir checks that a directory output may replace what is at path
// (st, base in parent) without Force: a directory recording or a regular
// file of the caller's, which is kept as NAME.old (checkOldDir), unless
// noClobber.
func keepableDir(parent *os.File, base, path string, st fs.FileInfo, noClobber bool) error {
	if noClobber || !ownEntry(st) || !st.IsDir() && !st.Mode().IsRegular() {
		return existing(path, noClobber, "a directory recording")
	}
	if err := replaceable(parent, base, path, st); err != nil {
		return err
	}
	return checkOldDir(parent, base, path)
}

// checkOldDir is checkOld for a directory output: NAME.old may also be
// a directory recording of the caller's, which it replaces, as perf
// record's check_backup() removes a perf.data.old directory.
func checkOldDir(parent *os.File, base, path string) error {
	st, err := lstatAt(parent, base+oldSuffix)
	if err != nil || !st.IsDir() || !ownEntry(st) {
		return checkOld(parent, base, path)
	}
	return checkReplaceable(parent, base+oldSuffix, OldName(path))
}

// keepOld moves what is at the directory's path to NAME.old and the
// new directory to its name. NAME.old, checked again, is removed first (a
// rename cannot put a directory over a file, nor over a directory with
// files in it). If the new directory cannot take the name, the old one
// is put back.
func (d *Dir) keepOld() error {
	if err := checkOldDir(d.parent, d.base, d.path); err != nil {
		return err
	}
	pfd, old := int(d.parent.Fd()), d.base+oldSuffix
	if ost, err := lstatAt(d.parent, old); err == nil && ost.IsDir() {
		removeRecording(d.parent, old)
	} else if err == nil {
		unix.Unlinkat(pfd, old, 0)
	}
	if err := unix.Renameat2(pfd, d.base, pfd, old, unix.RENAME_NOREPLACE); err != nil {
		return &fs.PathError{Op: "rename", Path: OldName(d.path), Err: err}
	}
	if err := unix.Renameat2(pfd, d.name, pfd, d.base, unix.RENAME_NOREPLACE); err != nil {
		unix.Renameat2(pfd, old, pfd, d.base, unix.RENAME_NOREPLACE)
		return &fs.PathError{Op: "rename", Path: d.path, Err: err}
	}
	return nil
}
