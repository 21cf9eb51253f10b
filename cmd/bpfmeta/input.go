package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
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
// What cannot seek is read as a stream (reader.OpenStream: a file-format
// recording on a pipe is copied to an unnamed file in $TMPDIR first).
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
		var r *reader.Reader
		var err error
		f, ok := s.stdin.(*os.File)
		if ok {
			r, err = reader.OpenFile(f, os.TempDir(), opts)
		} else {
			r, err = reader.OpenStream(s.stdin, os.TempDir(), opts)
		}
		if err != nil {
			return nil, recordingError(stdinName, nil, err)
		}
		in := &input{Reader: r, name: stdinName}
		if ok && isRegular(f) {
			in.file = f
		}
		return in, nil
	}
	name := safetext.Quote(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, fileError(name, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a recording", name)
	}
	r, err := reader.OpenFile(f, os.TempDir(), opts)
	if err != nil {
		f.Close()
		return nil, recordingError(name, f, err)
	}
	in := &input{Reader: r, name: name, cleanup: []func(){func() { f.Close() }}}
	if isRegular(f) {
		in.file = f
	}
	return in, nil
}

// isRegular reports whether f is a regular file.
func isRegular(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
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
