package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// input is an opened recording.
type input struct {
	*reader.Reader
	name    string      // for messages: the path, or "stdin"
	file    *os.File    // the file the reader reads, when it has random access
	src     io.ReaderAt // what a file-mode rewrite copies from
	cleanup []func()
}

func (in *input) Close() {
	in.Reader.Close()
	for i := len(in.cleanup) - 1; i >= 0; i-- {
		in.cleanup[i]()
	}
}

// stdinName is how messages name standard input.
const stdinName = "stdin"

// openInput opens a recording: a path, or "-" (or "") for standard input.
// A file-format recording on a pipe cannot be read in one pass (its header
// says where the data is only after the data was written), so it is first
// copied to a temporary file.
func openInput(path string, stdin io.Reader, opts reader.Options) (*input, error) {
	if path == "" || path == "-" {
		return openStdin(stdin, opts)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	open := openFile
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// A FIFO or a device (-i <(perf record -o - ...), -i /dev/stdin)
		// cannot seek: it is read as stdin is.
		open = func(f *os.File, name string, opts reader.Options) (*input, error) {
			return openStream(f, name, opts)
		}
	}
	in, err := open(f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	in.cleanup = append(in.cleanup, func() { f.Close() })
	return in, nil
}

func openFile(f *os.File, name string, opts reader.Options) (*input, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", name)
	}
	r, err := reader.NewFile(f, st.Size(), opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &input{Reader: r, name: name, file: f, src: f}, nil
}

func openStdin(stdin io.Reader, opts reader.Options) (*input, error) {
	if f, ok := stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if _, err := f.Seek(0, io.SeekCurrent); err == nil {
				return openFile(f, stdinName, opts)
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
		return nil, fmt.Errorf("%s: %w", name, err)
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

func spoolStream(src io.Reader, name string, opts reader.Options) (*input, error) {
	f, err := os.CreateTemp("", "bpfmeta-stdin-*.data")
	if err != nil {
		return nil, fmt.Errorf("%s: copying the file-format recording to a temporary file: %w", name, err)
	}
	os.Remove(f.Name()) // nothing to clean up if we are killed
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: copying the file-format recording to a temporary file: %w", name, err)
	}
	in, err := openFile(f, name, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	in.cleanup = append(in.cleanup, func() { f.Close() })
	return in, nil
}

// pipeSize is the pipe buffer bpfmeta asks for on a pipe it reads: perf
// writes a stream in large blocks, and fewer, larger reads cost less.
const pipeSize = 1 << 20

// growPipe enlarges f's pipe buffer if f is a pipe (F_SETPIPE_SZ; an
// unprivileged user may get less, which is fine).
func growPipe(f *os.File) {
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeSize)
	}
}
