package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// input is an opened recording.
type input struct {
	*reader.Reader
	name    string   // for messages: the path (quoted as needed), or "stdin"
	file    *os.File // the file the reader reads, when it has random access
	cleanup []func()
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
	name := quoteName(path)
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
	if len(head) == perfdata.PipeHeaderSize && isFileFormat(head) {
		return spoolStream(br, name, opts)
	}
	r, err := reader.NewStream(br, opts)
	if err != nil {
		return nil, recordingError(name, nil, err)
	}
	return &input{Reader: r, name: name}, nil
}

// isFileFormat reports whether head starts a file-format recording.
func isFileFormat(head []byte) bool {
	m, ok := perfdata.ParseMagic(head[:8], nil)
	if !ok {
		return string(head[:8]) == "PERFFILE" || string(head[:8]) == "ELIFFREP"
	}
	return m.Order.Uint64(head[8:]) != perfdata.PipeHeaderSize
}

// spoolStream copies a file-format recording arriving on a stream into an
// unnamed file in $TMPDIR and reads it from there. It copies no more than
// the recording's header says there is: up to the end of its last section
// (the feature table, read as it goes by, says where the features end). A
// stream that goes on past that, or a header that claims more than the
// directory has room for, is an error.
func spoolStream(src *bufio.Reader, name string, opts reader.Options) (*input, error) {
	dir := os.TempDir()
	fail := func(format string, args ...any) (*input, error) {
		return nil, fmt.Errorf("%s: a file-format recording on a pipe (copied to %s to be read): "+format, append([]any{name, dir}, args...)...)
	}
	head, _ := src.Peek(perfdata.FileHeaderSize)
	m, ok := perfdata.ParseMagic(head, head[min(16, len(head)):min(24, len(head))])
	if !ok || len(head) < perfdata.FileHeaderSize {
		return nil, recordingError(name, bytes.NewReader(head), reader.ErrNotPerfData)
	}
	h, err := perfdata.DecodeFileHeader(head, m.Order)
	if err != nil {
		return fail("%v", err)
	}
	end := max(h.Attrs.End(), h.Data.End())
	if end < h.Attrs.Offset || end < h.Data.Offset || end > 1<<62 {
		return fail("its header's sections end past 2^62 bytes")
	}
	nfeat := 0
	for _, w := range h.Features {
		nfeat += bits.OnesCount64(w)
	}
	tableEnd := h.Data.End() + uint64(nfeat)*perfdata.SectionSize
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil {
		if free := st.Bavail * uint64(st.Bsize); max(end, tableEnd) > free {
			return fail("its header says it is %d bytes, %s has %d free", max(end, tableEnd), dir, free)
		}
	}
	f, err := unnamedFile(dir)
	if err != nil {
		return fail("%v", err)
	}
	ok = false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	copied := int64(0)
	copyTo := func(to uint64) error {
		n, err := io.CopyN(f, src, int64(to)-copied)
		copied += n
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the stream ends at %#x, its header says it has %#x bytes", copied, to)
		}
		return err
	}
	if err := copyTo(max(end, tableEnd)); err != nil {
		return fail("%v", err)
	}
	// The features end where the last one ends.
	table := make([]byte, nfeat*perfdata.SectionSize)
	if _, err := f.ReadAt(table, int64(h.Data.End())); err != nil {
		return fail("%v", err)
	}
	featEnd := uint64(0)
	for i := 0; i < nfeat; i++ {
		s := perfdata.DecodeSection(table[i*perfdata.SectionSize:], m.Order)
		if s.End() < s.Offset || s.End() > 1<<62 {
			return fail("feature %d ends past 2^62 bytes", i)
		}
		featEnd = max(featEnd, s.End())
	}
	if featEnd > uint64(copied) {
		if err := copyTo(featEnd); err != nil {
			return fail("%v", err)
		}
	}
	// Writers leave a few bytes after the last section; a stream that goes
	// on is not a recording of that header.
	n, err := io.CopyN(f, src, maxSlack+1)
	copied += n
	if err != nil && !errors.Is(err, io.EOF) {
		return fail("%v", err)
	}
	if n > maxSlack {
		return fail("the stream goes on past %#x, the end of the last section its header names", copied-n)
	}
	in, err := openFile(f, copied, name, opts)
	if err != nil {
		return nil, err
	}
	ok = true
	in.cleanup = append(in.cleanup, func() { f.Close() })
	return in, nil
}

// maxSlack is how many bytes after its last section a file-format recording
// read from a pipe may have.
const maxSlack = 64 << 10

// unnamedFile makes a file in dir that has no name (O_TMPFILE), or one
// whose name is removed at once: nothing is left of it when bpfmeta ends.
func unnamedFile(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
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
