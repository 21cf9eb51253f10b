package cliutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Input is an opened recording.
type Input struct {
	*reader.Reader
	Name string   // for messages: the path (quoted as needed), or "stdin"
	File *os.File // the regular file the reader reads, if it is one
	Dir  string   // the path of a directory recording (perf record --threads)
	f    *os.File // the file opened by name, closed with the Input
}

// Close closes the reader, and the file it opened.
func (in *Input) Close() {
	in.Reader.Close()
	if in.f != nil {
		in.f.Close()
	}
}

// DefaultInput is what is read when stdin is a terminal and no -i says
// otherwise, as perf report does.
const DefaultInput = "perf.data"

// StdinName is how messages name standard input.
const StdinName = "stdin"

// OpenInput opens the recording -i names: a path, or "-" for standard
// input, which is ./perf.data when stdin is a terminal and -i was not
// given. What cannot seek is read as a stream (reader.OpenStream: a
// file-format recording on a pipe is copied to an unnamed file in $TMPDIR
// first).
func (s *Session) OpenInput(path string, given bool, opts reader.Options) (*Input, error) {
	if path == "-" && !given && s.StdinTerminal {
		if _, err := os.Stat(DefaultInput); errors.Is(err, fs.ErrNotExist) {
			return nil, Usagef("no input: stdin is a terminal and there is no ./%s (perf record writes one; -i FILE names another, -i - reads stdin)", DefaultInput)
		}
		path = DefaultInput
	}
	if path == "-" {
		var r *reader.Reader
		var err error
		f, ok := s.Stdin.(*os.File)
		if ok {
			if st, err := f.Stat(); err == nil && st.IsDir() {
				return nil, Usagef("stdin is a directory: a directory recording (perf record --threads) is read with -i DIR")
			}
			r, err = reader.OpenFile(f, os.TempDir(), opts)
		} else {
			r, err = reader.OpenStream(s.Stdin, os.TempDir(), opts)
		}
		if err != nil {
			return nil, recordingError(StdinName, nil, err)
		}
		in := &Input{Reader: r, Name: StdinName}
		if ok && isRegular(f) {
			in.File = f
		}
		return in, nil
	}
	name := safetext.Quote(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, FileError(name, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		r, err := reader.OpenDir(path, opts)
		if errors.Is(err, reader.ErrNoDataFile) {
			return nil, fmt.Errorf("%s is a directory with no file named data: not a recording, nor a directory recording (perf record --threads writes data and data.N)", name)
		}
		if err != nil {
			return nil, recordingError(name, nil, err)
		}
		return &Input{Reader: r, Name: name, Dir: path}, nil
	}
	r, err := reader.OpenFile(f, os.TempDir(), opts)
	if err != nil {
		f.Close()
		return nil, recordingError(name, f, err)
	}
	if l := r.Layout(); l != nil {
		if _, ok := l.Feature(perfdata.FeatDirFormat); ok {
			r.Close()
			f.Close()
			return nil, fmt.Errorf("%s is the data file of a directory recording (perf record --threads), whose records are in the data.N files beside it: read the directory with -i", name)
		}
	}
	in := &Input{Reader: r, Name: name, f: f}
	if isRegular(f) {
		in.File = f
	}
	return in, nil
}

// isRegular reports whether f is a regular file.
func isRegular(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

// FileError says what went wrong with a file, without Go's "open" and with
// the name quoted.
func FileError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", name, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// UnfinishedQuestion is what perf asks of a recording that perf record
// did not finish (perf_session__read_header()).
const UnfinishedQuestion = "was the 'perf record' command properly terminated?"

// recordingError is the message for a file that is no recording the
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
	switch {
	case errors.Is(err, reader.ErrEmpty):
		// perf's words: "zero-sized data (FILE), nothing to do!"
		return fmt.Errorf("%s is empty (0 bytes): no recording in it, nothing to do", name)
	case errors.Is(err, reader.ErrUnfinished):
		return fmt.Errorf("%s: %w, which is unexpected: %s", name, err, UnfinishedQuestion)
	case errors.Is(err, reader.ErrTruncated):
		return fmt.Errorf("%s: %w (%s)", name, err, UnfinishedQuestion)
	}
	return fmt.Errorf("%s: %w", name, err)
}
