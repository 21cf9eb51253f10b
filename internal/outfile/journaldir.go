package outfile

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// JournalDir opens the directory path for a journal that is written in
// place (segment files, bpfprog/journal), making it, mode 0700, if it does
// not exist; its parent must. The path is resolved by the rule of every
// output (walk: a symlink another user planted is not followed), and path
// itself must be a directory, not a symlink to one. An existing directory
// must belong to the caller and be writable by nobody else: a journal in
// a directory others can write could have its files replaced.
func JournalDir(path string) (*os.File, error) {
	parent, base, err := openDir(path)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	return SubDir(parent, base, path)
}

// SubDir is JournalDir of name in the directory dir (JournalDir's), named
// path in errors.
func SubDir(dir *os.File, name, path string) (*os.File, error) {
	fail := func(err error) (*os.File, error) { return nil, &fs.PathError{Op: "open", Path: path, Err: err} }
	if name == "" || name == "." || name == ".." {
		return fail(fmt.Errorf("not a directory name a journal can be made in"))
	}
	made := true
	if err := unix.Mkdirat(int(dir.Fd()), name, uint32(dirMode)); err == unix.EEXIST {
		made = false
	} else if err != nil {
		return fail(err)
	}
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return fail(fmt.Errorf("not a directory (a symlink is not followed)"))
		}
		return fail(err)
	}
	d := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		d.Close()
		return fail(err)
	}
	if err := checkOwner(&st, false); err != nil {
		d.Close()
		return fail(err)
	}
	if made {
		// whatever the umask
		if err := unix.Fchmod(fd, uint32(dirMode)); err != nil {
			d.Close()
			return fail(err)
		}
		// the new name on the disk before anything is written in it
		unix.Fsync(int(dir.Fd()))
	}
	return d, nil
}

// CreateAt creates the new file name in the directory dir (JournalDir's),
// mode 0600 whatever the umask, O_EXCL|O_NOFOLLOW: it never opens a file
// that exists, nor follows a symlink. The directory is synced, so that
// the new name survives a crash.
func CreateAt(dir *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: dir.Name() + "/" + name, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir.Name()+"/"+name)
	if err := unix.Fchmod(fd, uint32(mode)); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "chmod", Path: f.Name(), Err: err}
	}
	if err := unix.Fsync(int(dir.Fd())); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "sync", Path: dir.Name(), Err: err}
	}
	return f, nil
}

// checkOwner is the rule of a journal's directories and files: they are
// bpfmeta's user's (the writer's; a reader's, or root's, as reading) and
// nobody else can write them, or a journal's records could be another
// user's.
func checkOwner(st *unix.Stat_t, reading bool) error {
	switch uid := int(st.Uid); {
	case reading && uid != os.Geteuid() && uid != 0:
		return fmt.Errorf("owned by uid %d, neither root nor bpfmeta's user (%d)", st.Uid, os.Geteuid())
	case !reading && uid != os.Geteuid():
		return fmt.Errorf("owned by uid %d, not by bpfmeta's user (%d)", st.Uid, os.Geteuid())
	case st.Mode&0o022 != 0:
		return fmt.Errorf("mode %04o: others can write it", st.Mode&0o7777)
	}
	return nil
}

// ReadJournalDir opens the existing directory path of a journal to read
// it, by the rules JournalDir writes one by: the path resolved as
// JournalDir resolves it, path itself no symlink, the directory root's or
// the caller's and writable by nobody else. Its errors name path and the
// rule.
func ReadJournalDir(path string) (*os.File, error) {
	parent, base, err := openDir(path)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	return ReadSubDir(parent, base, path)
}

// ReadSubDir is ReadJournalDir of name in the directory dir (a journal's
// tree, ReadJournalDir's), named path in errors.
func ReadSubDir(dir *os.File, name, path string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: journalOpenError(err, "directory")}
	}
	d := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		d.Close()
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if err := checkOwner(&st, true); err != nil {
		d.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return d, nil
}

// ReadJournalFile opens the file name of the directory dir (ReadSubDir's)
// to read it: not through a symlink, without blocking (a FIFO put in its
// place), and only if it is then, by fstat(2), a regular file by the rule
// of the directory. The file's name is dir's and name.
func ReadJournalFile(dir *os.File, name string) (*os.File, error) {
	path := dir.Name() + "/" + name
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: journalOpenError(err, "regular file")}
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	switch {
	case err != nil:
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = fmt.Errorf("not a regular file (mode %#o)", st.Mode)
	default:
		err = checkOwner(&st, true)
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}

// journalOpenError says why a journal's name could not be opened as a
// what: a symlink, which is not followed, or errno.
func journalOpenError(err error, what string) error {
	switch {
	case err == unix.ELOOP:
		return fmt.Errorf("a symlink, not followed: a journal's %s is read only where it is", what)
	case err == unix.ENOTDIR && what == "directory":
		return fmt.Errorf("not a directory (a symlink is not followed)")
	}
	return err
}
