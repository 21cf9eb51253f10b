package writer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/internal/retain"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Input is the recording a Writer copies. *reader.Reader is one.
type Input interface {
	Format() perfdata.Format
	ByteOrder() binary.ByteOrder
	Dialect() perfdata.Dialect
	// Layout and Source describe a file-mode recording: its sections and
	// the file to copy them from. Both are nil for a pipe stream.
	Layout() *perfdata.FileLayout
	Source() io.ReaderAt
	// Trailing returns the bytes after a pipe stream's last record that are
	// not a record, once the input has been read to its end.
	Trailing() (off int64, b []byte)
}

// Options change what New makes. The zero value keeps the input's format.
type Options struct {
	// Format is the output's format. Zero keeps the input's (so that every
	// record passes through byte for byte), except that an output that
	// cannot seek always gets pipe format.
	Format perfdata.Format
	// SpoolDir is where a pipe-to-file conversion keeps the header sections
	// until it writes them (an unnamed file, removed by the system when the
	// writer closes or the process ends); "" means os.TempDir().
	SpoolDir string

	// copyRecords makes the writer copy every record into its own buffers
	// even when the input is a reader that can keep them until written
	// (retain.Attach): the tests compare the two ways.
	copyRecords bool
}

// Omitted is a header section of a file that a pipe stream cannot carry.
type Omitted struct {
	Feature perfdata.Feature
	Size    uint64
	Why     string
}

// Lost reports whether leaving the section out loses what it says: not
// for AUXTRACE (an index of file offsets, which perf rebuilds from a
// stream), DIR_FORMAT (the layout of a directory recording's files, which
// a stream does not have) nor an empty section.
func (o Omitted) Lost() bool {
	return o.Feature != perfdata.FeatAuxtrace && o.Feature != perfdata.FeatDirFormat && o.Size > 0
}

// Writer writes one recording. It is not safe for concurrent use.
type Writer struct {
	w        recordWriter
	format   perfdata.Format
	in       Input
	omitted  []Omitted
	dropped  int
	closed   bool
	trailing bool // the format carries bytes after the last record
	// one checks a directory recording written as one file or stream
	one *oneStream
}

// recordWriter is what the file, pipe and pipe-to-file writers do.
type recordWriter interface {
	WriteRecord(rec *perfdata.Record) error
	// passThrough writes records read from the input, back to back in
	// raw, the first at input offset off of data file part, that pass
	// through unchanged and carry no data after them: what WriteRecord
	// does with each (runSink.WriteRun).
	passThrough(off int64, part int, raw []byte) error
	Close() error
	Abort()
}

// ErrFileFormat is returned by New when Options ask for file format on an
// output that cannot seek.
var ErrFileFormat = errors.New("file format needs an output that can seek")

// New returns the writer of a copy of in to out, in the format Options say:
//
//   - file to file: the input's layout kept, every offset after an added or
//     removed record adjusted; out must be empty;
//   - anything to a pipe stream (a file input gets perf's pipe prelude
//     first, as perf inject's perf_event__synthesize_for_pipe() writes it);
//   - pipe to file (Options.Format == FormatFile): a new file in perf's
//     default layout.
//
// A file output must be an io.WriterAt that can seek (a regular file);
// anything else gets pipe format. New writes the pipe prelude, if any.
func New(out io.Writer, in Input, opts Options) (*Writer, error) {
	wa, seekable := fileOutput(out)
	format := opts.Format
	switch {
	case format == perfdata.FormatFile && !seekable:
		return nil, ErrFileFormat
	case format == 0 && seekable:
		format = in.Format()
	case format == 0:
		format = perfdata.FormatPipe
	}
	w := &Writer{format: format, in: in}
	if d, ok := in.(DirInput); ok && d.IsDirRecording() {
		// A directory recording as one file or stream: its records in
		// reading order, the data files' after those of data.
		if _, aux := in.Layout().Feature(perfdata.FeatAuxtrace); aux && format == perfdata.FormatFile {
			return nil, errors.New("the AUXTRACE index of a directory recording is of its files' offsets: it is written only as a directory or a stream")
		}
		w.one = &oneStream{part: -1, name: d.PartName}
	}
	// A *reader.Reader keeps the records it hands out until the writer has
	// written them, if asked: they are then written from its buffers, not
	// copied into the writer's.
	attach := func(f retain.Func) bool { return !opts.copyRecords && retain.Attach(in, f) }
	switch {
	case format == perfdata.FormatFile && in.Format() == perfdata.FormatFile:
		if in.Layout() == nil || in.Source() == nil {
			return nil, errors.New("writer: a file-mode input has no layout or source")
		}
		f := newFile(wa, in.Source(), in.Layout())
		if w.one != nil {
			f.dropFeature(perfdata.FeatDirFormat)
		}
		f.held = attach(f.sink.barrier)
		w.w = f
	case format == perfdata.FormatFile:
		w.w = newFromPipe(wa, in.ByteOrder(), opts.SpoolDir)
	default:
		p := newPipe(out, in.ByteOrder(), in.Dialect())
		if l := in.Layout(); l != nil {
			omitted, err := p.writePrelude(l, in.Source())
			if err != nil {
				p.Abort()
				return nil, err
			}
			w.omitted = omitted
		}
		p.held = attach(p.bw.barrier)
		w.w = p
		w.trailing = true
	}
	return w, nil
}

// fileOutput tells whether out can take a file-mode recording: an
// io.WriterAt that can seek, which an *os.File is only for a regular file.
func fileOutput(out io.Writer) (io.WriterAt, bool) {
	wa, ok := out.(io.WriterAt)
	if !ok {
		return nil, false
	}
	if f, ok := out.(interface{ Stat() (os.FileInfo, error) }); ok {
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return nil, false
		}
	}
	return wa, true
}

// Format is the output's format.
func (w *Writer) Format() perfdata.Format { return w.format }

// Omitted returns the header sections of a file input that a pipe output
// could not carry (AUXTRACE, an index of file offsets perf rebuilds from a
// pipe; sections too large for a HEADER_FEATURE record; simpleperf's own).
func (w *Writer) Omitted() []Omitted { return w.omitted }

// WriteRecord writes rec: a record read from the input (rec.Offset >= 0),
// or a new one (rec.Offset < 0, its payload in rec.Payload). Records decoded
// from a compressed record (rec.Outer >= 0) are skipped: the compressed
// record carries them.
func (w *Writer) WriteRecord(rec *perfdata.Record) error {
	switch {
	case w.closed:
		return errClosed
	case rec.Outer >= 0:
		return nil
	}
	if w.one != nil {
		if err := w.one.check(rec); err != nil {
			return recordError(rec, err)
		}
	}
	return w.w.WriteRecord(rec)
}

func init() {
	recrun.SetSinkOf(func(x any) recrun.Sink {
		if w, ok := x.(runWriter); ok {
			return w.runSink()
		}
		return nil
	})
}

// runWriter is a *Writer, or a value that embeds one: the writer writes
// its runs.
type runWriter interface{ runSink() recrun.Sink }

func (w *Writer) runSink() recrun.Sink {
	if w == nil {
		return nil
	}
	return (*runSink)(w)
}

// runSink is a Writer as the recrun.Sink of the runs of records it
// writes: package recrun's fast path (inject, Copy), not part of the
// Writer's API.
type runSink Writer

// WriteRun writes the records taken from u, a run of the input's that its
// Pass has moved past, as WriteRecord writes each of them, in one call:
// back to back, as one span of input bytes. They pass (recrun.Passes):
// kernel records, which carry no data after them and mean nothing to the
// framing of any output. Records decoded from a compressed record are not
// written: the compressed record, written as it is, carries them.
func (s *runSink) WriteRun(u recrun.Run) error {
	w := (*Writer)(s)
	off, raw := u.Taken()
	switch {
	case w.closed:
		return errClosed
	case u.Compressed(), len(raw) == 0:
		return nil
	}
	return w.w.passThrough(off, u.Part(), raw)
}

var errClosed = errors.New("writer: WriteRecord after Close")

// Close finishes the recording: bytes after the input's last record that
// are not a record go to a pipe output as they were (a file's data section
// can hold only records: see TrailingDropped), then the header sections and
// the header of a file. It does not close out.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	if _, tr := w.in.Trailing(); len(tr) > 0 {
		if w.trailing {
			if err := w.w.(*pipe).writeRaw(tr); err != nil {
				w.Abort()
				return err
			}
		} else {
			w.dropped = len(tr)
		}
	}
	w.closed = true
	return w.w.Close()
}

// TrailingDropped returns where the bytes after the input's last record
// that are not a record start, and how many of them Close left out of a
// file output (0: none).
func (w *Writer) TrailingDropped() (off int64, n int) {
	if w.dropped == 0 {
		return 0, 0
	}
	off, _ = w.in.Trailing()
	return off, w.dropped
}

// Abort gives up on the recording: it stops writing at once (the output is
// to be removed). It may be called after Close, and more than once.
func (w *Writer) Abort() {
	w.closed = true
	w.w.Abort()
}

// recordError says which record could not be written.
func recordError(rec *perfdata.Record, err error) error {
	if rec.Offset >= 0 {
		return fmt.Errorf("writing the %s at %#x: %w", rec.Header.Type.Noun(), rec.Offset, err)
	}
	return fmt.Errorf("writing a new %s: %w", rec.Header.Type.Noun(), err)
}

// writePayload copies the data a record carries after it (AUX or trace
// data) to w, read now: the reader moves on past it.
func writePayload(w io.Writer, rec *perfdata.Record) error {
	if rec.PayloadSize == 0 {
		return nil
	}
	if _, err := io.CopyN(w, rec.Payload, rec.PayloadSize); err != nil {
		return recordError(rec, fmt.Errorf("copying %d bytes of data after it: %w", rec.PayloadSize, err))
	}
	return nil
}
