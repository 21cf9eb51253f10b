package cliutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Input is an opened recording (reader.Open, OpenFile, OpenStream),
// named for messages. Closing it closes what the reader opened; its File
// (the reader's) is what an output must not be.
type Input struct {
	*reader.Reader
	Name string // for messages: the path (quoted as needed), or "stdin"
	Dir  string // the path of a directory recording (perf record --threads)
}

// defaultInput is what is read when stdin is a terminal and no -i says
// otherwise, as perf report does.
const defaultInput = "perf.data"

// StdinName is how messages name standard input.
const StdinName = "stdin"

// openPipeShown is reader.OpenStream of the pipe f with a progress line
// while it opens: a file-format recording on a pipe is copied whole to
// $TMPDIR before its first record is read (cat big.data | bpfmeta inject
// was silent for 12 s while 348 MB were copied). Once open, the reading's
// own progress takes over.
func (s *Session) openPipeShown(f *os.File, opts reader.Options) (*reader.Reader, error) {
	scratch.GrowPipe(f) // as reader.OpenStream does for an *os.File, which it is not given
	c := &countingReader{r: f}
	p := s.NewProgress(StdinName+" (a file-format recording, copied to "+os.TempDir()+" to be read)", 0, c.n.Load)
	c.update = p.Update
	r, err := reader.OpenStream(c, opts)
	c.opened.Store(true)
	p.Done()
	return r, err
}

// countingReader counts what is read through it, and has the progress
// line redrawn until the input is open.
type countingReader struct {
	r      io.Reader
	n      atomic.Int64
	opened atomic.Bool
	update func()
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	if !c.opened.Load() {
		c.update()
	}
	return n, err
}

// OpenInput opens the recording -i names: a path, or "-" for standard
// input, which is ./perf.data when stdin is a terminal and -i was not
// given. The reader reads it by its policy (reader.Open: a directory
// recording, a regular file by offset, anything else as a stream, a
// file-format recording on a pipe from a copy in $TMPDIR).
func (s *Session) OpenInput(path string, given bool, opts reader.Options) (*Input, error) {
	if path == "-" && !given && s.StdinTerminal {
		if _, err := os.Stat(defaultInput); errors.Is(err, fs.ErrNotExist) {
			return nil, Usagef("no input: stdin is a terminal and there is no ./%s (perf record writes one; -i FILE names another, -i - reads stdin)", defaultInput)
		}
		path = defaultInput
	}
	if path == "-" {
		var r *reader.Reader
		var err error
		if f, ok := s.Stdin.(*os.File); ok {
			st, serr := f.Stat()
			if serr == nil && st.IsDir() {
				return nil, Usagef("stdin is a directory: a directory recording (perf record --threads) is read with -i DIR")
			}
			if serr == nil && st.Mode()&fs.ModeNamedPipe != 0 && isTerminal(s.Stderr) {
				r, err = s.openPipeShown(f, opts)
			} else {
				r, err = reader.OpenFile(f, opts)
			}
		} else {
			r, err = reader.OpenStream(s.Stdin, opts)
		}
		if err != nil {
			return nil, recordingError(StdinName, "", err)
		}
		return &Input{Reader: r, Name: StdinName}, nil
	}
	name := safetext.Quote(path)
	r, err := reader.Open(path, opts)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the name is name
		}
		switch {
		case errors.Is(err, reader.ErrNoDataFile):
			return nil, fmt.Errorf("%s is a directory with no file named data: not a recording, nor a directory recording (perf record --threads writes data and data.N)", name)
		case errors.Is(err, reader.ErrDataFileOfDir):
			return nil, fmt.Errorf("%s is the data file of a directory recording (perf record --threads), whose records are in the data.N files beside it: read the directory with -i", name)
		}
		return nil, recordingError(name, path, err)
	}
	in := &Input{Reader: r, Name: name}
	if r.IsDirRecording() {
		in.Dir = path
	}
	return in, nil
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

// recordingError is the message for an input that is no recording the
// reader reads: what the reader says, and what the user may have meant.
// path is the file -i named ("" for stdin, which is told no more of): a
// file that is no directory "is not a perf.data recording", and a regular
// one's first bytes, as the reader read them (reader.NotRecordingError:
// the path is not opened again), say whether it is a snapshot. Nothing of
// a file that is not a recording is quoted (it may be a secret).
func recordingError(name, path string, err error) error {
	if errors.Is(err, reader.ErrNotPerfData) && path != "" {
		if st, serr := os.Stat(path); serr != nil || !st.IsDir() {
			var nr *reader.NotRecordingError
			if errors.As(err, &nr) && isSnapshotHead(nr.Head) {
				return fmt.Errorf("%s is a bpfmeta snapshot, not a recording (inject reads one with --snapshot FILE)", name)
			}
			return fmt.Errorf("%s is not a perf.data recording (it does not start with perf's magic number)", name)
		}
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

// isSnapshotHead reports whether a file's first bytes are those of a
// bpfmeta snapshot: a JSON object with a format_version.
func isSnapshotHead(head []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")) && bytes.Contains(head, []byte(`"format_version"`))
}
