package cliutil

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"io"
	"io/fs"
	"os"
	"sync/atomic"

	"github.com/bpfmeta/bpfmeta/cmd/internal/infile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Input is an opened recording: read by package infile's policy, named
// for messages.
type Input struct {
	*infile.Input
	Name string   // for messages: the path (quoted as needed), or "stdin"
	Dir  string   // the path of a directory recording (perf record --threads)
	f    *os.File // the file opened by name, closed with the Input
}

// Close closes the reader, and the file it opened.
func (in *Input) Close() {
	in.Input.Close()
	if in.f != nil {
		in.f.Close()
	}
}

// DefaultInput is what is read when stdin is a terminal and no -i says
// otherwise, as perf report does.
const DefaultInput = "perf.data"

// StdinName is how messages name standard input.
const StdinName = "stdin"

// openPipeShown is infile.OpenStream of the pipe f with a progress line
// while it opens: a file-format recording on a pipe is copied whole to
// $TMPDIR before its first record is read (cat big.data | bpfmeta inject
// was silent for 12 s while 348 MB were copied). Once open, the reading's
// own progress takes over.
func (s *Session) openPipeShown(f *os.File, opts reader.Options) (*infile.Input, error) {
	scratch.GrowPipe(f) // as infile does for an *os.File, which it is not given
	c := &countingReader{r: f}
	p := s.NewProgress(StdinName+" (a file-format recording, copied to "+os.TempDir()+" to be read)", 0, c.n.Load)
	c.update = p.Update
	in, err := infile.OpenStream(c, opts)
	c.opened.Store(true)
	p.Done()
	return in, err
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
// given. A directory is a directory recording (reader.Open); anything
// else is read by package infile's policy (what cannot seek as a stream,
// a file-format recording on a pipe from a copy in $TMPDIR).
func (s *Session) OpenInput(path string, given bool, opts reader.Options) (*Input, error) {
	if path == "-" && !given && s.StdinTerminal {
		if _, err := os.Stat(DefaultInput); errors.Is(err, fs.ErrNotExist) {
			return nil, Usagef("no input: stdin is a terminal and there is no ./%s (perf record writes one; -i FILE names another, -i - reads stdin)", DefaultInput)
		}
		path = DefaultInput
	}
	if path == "-" {
		var in *infile.Input
		var err error
		if f, ok := s.Stdin.(*os.File); ok {
			st, serr := f.Stat()
			if serr == nil && st.IsDir() {
				return nil, Usagef("stdin is a directory: a directory recording (perf record --threads) is read with -i DIR")
			}
			if serr == nil && st.Mode()&fs.ModeNamedPipe != 0 && IsTerminal(s.Stderr) {
				in, err = s.openPipeShown(f, opts)
			} else {
				in, err = infile.OpenFile(f, opts)
			}
		} else {
			in, err = infile.OpenStream(s.Stdin, opts)
		}
		if err != nil {
			return nil, recordingError(StdinName, nil, err)
		}
		return &Input{Input: in, Name: StdinName}, nil
	}
	name := safetext.Quote(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, FileError(name, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		r, err := reader.Open(path, opts)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the name is name
		}
		if errors.Is(err, reader.ErrNoDataFile) {
			return nil, fmt.Errorf("%s is a directory with no file named data: not a recording, nor a directory recording (perf record --threads writes data and data.N)", name)
		}
		if err != nil {
			return nil, recordingError(name, nil, err)
		}
		return &Input{Input: &infile.Input{Reader: r}, Name: name, Dir: path}, nil
	}
	in, err := infile.OpenFile(f, opts)
	if err != nil {
		err = recordingError(name, f, err) // reads f: closed after
		f.Close()
		return nil, err
	}
	if l := in.Layout(); l != nil {
		if _, ok := l.Feature(perfdata.FeatDirFormat); ok {
			in.Close()
			f.Close()
			return nil, fmt.Errorf("%s is the data file of a directory recording (perf record --threads), whose records are in the data.N files beside it: read the directory with -i", name)
		}
	}
	return &Input{Input: in, Name: name, f: f}, nil
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
