// Package scratch makes unnamed scratch files and grown pipes, for inputs and outputs alike.
//
// It makes what bpfmeta writes besides its outputs, for its inputs as much
// as its outputs: unnamed files (a file-format recording or a snapshot that
// arrives on a pipe, spooled by package reader and bpfprog/snapshot; the
// writer's spooled feature sections; an output held back by
// internal/outfile), and pipes grown for perf's large blocks. It lies below
// both reader and internal/outfile, which share it.
package scratch

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Scratch files are made by the same rules as an output (mode 0600,
// nothing of them survives the process). What is spooled, and when, is
// the caller's.

// mode is a scratch file's mode, an output's (outfile.mode).
const mode fs.FileMode = 0o600

// Unnamed makes a file in dir that has no name (O_TMPFILE), or one whose
// name is removed at once where O_TMPFILE is not supported: nothing is left
// of it when the process ends, however it ends.
func Unnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(mode))
	if err == nil {
		return os.NewFile(uintptr(fd), dir+"/(unnamed)"), nil
	}
	f, err := os.CreateTemp(dir, ".bpfmeta-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
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
