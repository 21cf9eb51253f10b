package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// input is an opened recording.
type input struct {
	*reader.Reader
	name    string   // for messages: the path (quoted as needed), or "stdin"
	file    *os.File // the file the reader reads, when it has random access
	cleanup []func()

	records, inner int64 // read so far: top level, inside compressed records
	innerBytes     int64 // the bytes of the records inside compressed records
}

func (in *input) Close() {
	in.Reader.Close()
	for i := len(in.cleanup) - 1; i >= 0; i-- {
		in.cleanup[i]()
	}
}

// defaultInput is what the reading commands read when stdin is a terminal
// and no -i says otherwise, as perf report does.
const defaultInput = "perf.data"

// stdinName is how messages name standard input.
const stdinName = "stdin"

func inputFlag() cli.Flag {
	return &cli.StringFlag{Name: "input", Aliases: []string{"i"}, Value: "-", TakesFile: true,
		Usage: "read the recording from `FILE` (- for stdin; with stdin a terminal, ./perf.data)"}
}

// openInput opens the recording -i names: a path, or "-" for standard
// input, which is ./perf.data when stdin is a terminal and -i was not given.
// A file-format recording on a pipe cannot be read in one pass (its header
// says where its data ends only after the data was written), so it is first
// copied to an unnamed file in $TMPDIR, as far as its header says it goes.
func openInput(c *cli.Context, opts reader.Options) (*input, error) {
	s := sessionOf(c)
	path := c.String("input")
	if path == "-" && !c.IsSet("input") && s.stdinTerminal {
		if _, err := os.Stat(defaultInput); errors.Is(err, fs.ErrNotExist) {
			return nil, usagef("no input: stdin is a terminal and there is no ./%s (perf record writes one; -i FILE names another, -i - reads stdin)", defaultInput)
		}
		path = defaultInput
	}
	if path == "-" {
		return openStdin(s.stdin, opts)
	}
	name := safetext.Quote(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, fileError(name, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileError(name, err)
	}
	var in *input
	switch {
	case st.IsDir():
		err = fmt.Errorf("%s is a directory, not a recording", name)
	case st.Mode().IsRegular():
		in, err = openFile(f, st.Size(), name, opts)
	default:
		// A FIFO or a device (-i <(perf record -o - ...), -i /dev/stdin)
		// cannot seek: it is read as stdin is.
		in, err = openStream(f, name, opts)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	in.cleanup = append(in.cleanup, func() { f.Close() })
	return in, nil
}

// fileError says what went wrong with a file, without Go's "open" and with
// the name quoted.
func fileError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", name, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

func openFile(f *os.File, size int64, name string, opts reader.Options) (*input, error) {
	r, err := reader.NewFile(f, size, opts)
	if err != nil {
		return nil, recordingError(name, f, err)
	}
	return &input{Reader: r, name: name, file: f}, nil
}

// recordingError is the message for a file that is no recording this
// reader reads: what the reader says, and what the user may have meant.
// Nothing of a file that is not a recording is quoted (it may be a secret).
func recordingError(name string, ra io.ReaderAt, err error) error {
	if errors.Is(err, reader.ErrNotPerfData) && ra != nil {
		var head [64]byte
		n, _ := ra.ReadAt(head[:], 0)
		if bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte("{")) && bytes.Contains(head[:n], []byte(`"format_version"`)) {
			return fmt.Errorf("%s is a bpfmeta snapshot, not a recording (inject reads one with --snapshot FILE)", name)
		}
		return fmt.Errorf("%s is not a perf.data recording (it does not start with perf's magic number)", name)
	}
	if errors.Is(err, reader.ErrTruncated) {
		return fmt.Errorf("%s: %w (was the perf record that wrote it properly terminated?)", name, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

func openStdin(stdin io.Reader, opts reader.Options) (*input, error) {
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if _, err := f.Seek(0, io.SeekCurrent); err == nil {
				return openFile(f, st.Size(), stdinName, opts)
			}
		}
	}
	return openStream(stdin, stdinName, opts)
}

// openStream reads a recording from a stream that cannot seek, named name.
func openStream(src io.Reader, name string, opts reader.Options) (*input, error) {
	if f, ok := src.(*os.File); ok {
		growPipe(f)
	}
	br := bufio.NewReaderSize(src, 1<<16)
	head, err := br.Peek(perfdata.PipeHeaderSize)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if reader.IsFileFormat(head) {
		return spoolStream(br, name, opts)
	}
	r, err := reader.NewStream(br, opts)
	if err != nil {
		return nil, recordingError(name, nil, err)
	}
	return &input{Reader: r, name: name}, nil
}

// spoolStream copies a file-format recording arriving on a stream into an
// unnamed file in $TMPDIR (reader.Spool: no more than its header says it
// has, and no more than the directory has room for) and reads it from there.
func spoolStream(src io.Reader, name string, opts reader.Options) (*input, error) {
	dir := os.TempDir()
	f, err := outfile.Unnamed(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: a file-format recording on a pipe is copied to %s to be read: %w", name, dir, err)
	}
	var free int64
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil {
		free = int64(min(st.Bavail*uint64(st.Bsize), 1<<62))
	}
	size, err := reader.Spool(f, src, free)
	if err == nil {
		var in *input
		if in, err = openFile(f, size, name, opts); err == nil {
			in.cleanup = append(in.cleanup, func() { f.Close() })
			return in, nil
		}
	}
	f.Close()
	if errors.Is(err, reader.ErrNotPerfData) {
		return nil, recordingError(name, nil, err)
	}
	return nil, fmt.Errorf("%s: a file-format recording on a pipe (copied to %s to be read): %w", name, dir, err)
}

// pipeSize is the pipe buffer bpfmeta asks for on a pipe it reads or
// writes: perf writes a stream in large blocks, and fewer, larger reads
// and writes cost less.
const pipeSize = 1 << 20

// growPipe enlarges f's pipe buffer if f is a pipe (F_SETPIPE_SZ; an
// unprivileged user may get less, which is fine).
func growPipe(f *os.File) {
	if st, err := f.Stat(); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeSize)
	}
}
