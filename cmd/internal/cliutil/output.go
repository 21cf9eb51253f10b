package cliutil

import (
	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// OutputOptions say what an output is and what the user allowed.
type OutputOptions struct {
	Given bool // -o was given (-o - writes a recording to a terminal)
	Force bool // -f: outfile.Options.Force
	// NoClobber is --no-clobber: outfile.Options.NoClobber.
	NoClobber bool
	Journal   bool     // a new file appears under its name at once (watch)
	Sync      bool     // a file is on the disk when committed: outfile.Options.Sync
	Binary    bool     // a recording, not text: never to a terminal unasked
	Input     *os.File // the input, which the output may not be
	// Dir makes a path a directory (outfile.OpenDir): a copy of a
	// directory recording, InputDir, which the output may not be. An
	// existing FIFO or character device (with Force) is written to as
	// a stream all the same.
	Dir      bool
	InputDir string
}

// IsDevNull reports whether path is the null device itself (character
// device 1,3, not a link to it), which -o takes without -f, as perf
// record -o /dev/null does.
func IsDevNull(path string) bool {
	var st unix.Stat_t
	return unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && uint64(st.Rdev) == unix.Mkdev(1, 3) // Rdev is uint32 on mips
}

// OpenOutput opens what -o names. "-" is stdout, which for a binary output
// must not be a terminal unless -o - was given; /dev/stdout and /dev/fd/1
// are "-". The null device needs no -f. A file is created by
// package outfile's policy, mode 0600, and removed if a signal ends the run.
// Naming the input is an error, and so is a stdout that is the input (>>
// INPUT): either would write the input while it is read.
//
// A stdout the shell closed (>&-) cannot be told from /dev/null: the Go
// runtime opens /dev/null on a closed standard descriptor before main
// runs. Only a write's EBADF or EPIPE says stdout is closed.
func (s *Session) OpenOutput(path string, o OutputOptions) (*outfile.Output, error) {
	if path == "-" || outfile.IsStdout(path) {
		f, isFile := s.out.File()
		switch {
		case o.Binary && s.StdoutTerminal && !o.Given:
			return nil, Usagef("stdout is a terminal, and a recording is binary: -o FILE writes a file (-o - writes to the terminal anyway)")
		case isFile && sameFile(o.Input, f.Stat):
			return nil, Usagef("stdout is the input: write the output to another file")
		}
		if isFile && o.Binary {
			scratch.GrowPipe(f)
		}
		return outfile.NewStream("stdout", s.Stdout), nil
	}
	name := safetext.Quote(path)
	if IsDevNull(path) {
		o.Force = true // nothing there to lose
	}
	if sameFile(o.Input, func() (os.FileInfo, error) { return os.Stat(path) }) {
		return nil, Usagef("%s is the input: write the output to another file", name)
	}
	if _, err := os.Lstat(path); err == nil && !o.Force && !o.NoClobber && sameFile(o.Input, func() (os.FileInfo, error) { return os.Stat(outfile.OldName(path)) }) {
		return nil, Usagef("%s is the input, and bpfmeta would keep the %s it replaces there: write the output to another file, or -f replaces it without keeping it", safetext.Quote(outfile.OldName(path)), name)
	}
	if o.InputDir != "" {
		if ist, err := os.Stat(o.InputDir); err == nil {
			if ost, err := os.Stat(path); err == nil && os.SameFile(ist, ost) {
				return nil, Usagef("%s is the input: write the output to another directory", name)
			}
			if inDir(ist, path) {
				return nil, Usagef("%s is inside the input %s: write the output outside it", name, safetext.Quote(o.InputDir))
			}
		}
	}
	opts := outfile.Options{Force: o.Force, NoClobber: o.NoClobber, Journal: o.Journal, Sync: o.Sync}
	if o.Dir && !isStream(path) {
		out, err := outfile.OpenDir(path, name, opts, s.track)
		if err != nil {
			return nil, FileError(name, err)
		}
		return out, nil
	}
	out, err := outfile.Open(path, name, opts, s.track)
	if err != nil {
		return nil, FileError(name, err)
	}
	return out, nil
}

// inDir reports whether path, existing or not, is below the directory
// dir describes: a file written there (data.N, or over data) would
// change the input while it is read. path's directory is opened as
// creating path would open it (the kernel resolves its symlinks and ..),
// and its ancestors are those of that directory, not of the path's text;
// of a directory still to be made, the deepest one on the path that is
// there.
func inDir(dir os.FileInfo, path string) bool {
	in, ok := dir.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	parent := "."
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		parent = path[:i+1]
	}
	const flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
	fd, err := unix.Open(parent, flags, 0)
	for err == unix.ENOENT && parent != "." && parent != "/" {
		// a directory still to be made: its deepest one that exists
		parent = strings.TrimRight(parent, "/")
		parent = parent[:strings.LastIndexByte(parent, '/')+1]
		if parent == "" {
			parent = "."
		}
		fd, err = unix.Open(parent, flags, 0)
	}
	if err != nil {
		return false
	}
	defer func() { unix.Close(fd) }()
	var below unix.Stat_t // the directory fd was the parent of
	for {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Dev == below.Dev && st.Ino == below.Ino {
			return false // the root is its own parent
		}
		if st.Dev == in.Dev && st.Ino == in.Ino {
			return true
		}
		up, err := unix.Openat(fd, "..", flags, 0)
		if err != nil {
			return false
		}
		unix.Close(fd)
		fd, below = up, st
	}
}

// sameFile reports whether the output stat describes is the input in.
func sameFile(in *os.File, stat func() (os.FileInfo, error)) bool {
	if in == nil {
		return false
	}
	ist, err := in.Stat()
	if err != nil {
		return false
	}
	ost, err := stat()
	return err == nil && os.SameFile(ist, ost)
}

// isStream reports whether path is an existing FIFO or character device,
// or a symlink to one: written to, never replaced (outfile.Open).
func isStream(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0
}
