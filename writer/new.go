package writer

import (
	"encoding/binary"
	"io"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Setup says what New copies, and where to.
type Setup struct {
	// Layout, Source and Order describe the input: its sections (nil for
	// a pipe stream), the file it is in (for the sections a file-mode
	// rewrite copies), and its byte order.
	Layout *perfdata.FileLayout
	Source io.ReaderAt
	Order  binary.ByteOrder
	// Out is the output. File is the same output when it is a file that
	// can seek, nil for a stream (stdout, a FIFO), which gets pipe format.
	Out  io.Writer
	File io.WriterAt
	// ToFile turns a pipe-stream input into a file-mode output when the
	// output is a file (convert); otherwise the input's format is kept, so
	// that records pass through byte for byte (inject, strip).
	ToFile bool
	// Reader, if set, is attached (File.Attach): records are written from
	// its buffers.
	Reader Retainer
}

// New returns the writer for a copy of a recording: a layout-keeping
// rewrite for file to file, a pipe stream (with the pipe prelude for a
// file input) for a stream output or a pipe input, and a new file for a
// pipe input turned into a file. It also returns the Pipe, if it is one,
// and the sections a pipe prelude left out (see WritePrelude).
func New(s Setup) (RecordWriter, *Pipe, []Omitted, error) {
	switch {
	case s.File != nil && s.Layout != nil:
		w := NewFile(s.File, s.Source, s.Layout)
		if s.Reader != nil {
			w.Attach(s.Reader)
		}
		return w, nil, nil, nil
	case s.File != nil && s.ToFile:
		return NewFromPipe(s.File, s.Order), nil, nil, nil
	}
	p, err := NewPipe(s.Out, s.Order)
	if err != nil {
		return nil, nil, nil, err
	}
	var omitted []Omitted
	if s.Layout != nil {
		if omitted, err = p.WritePrelude(s.Layout, s.Source); err != nil {
			p.Abort()
			return nil, nil, nil, err
		}
	}
	if s.Reader != nil {
		p.Attach(s.Reader)
	}
	return p, p, omitted, nil
}
