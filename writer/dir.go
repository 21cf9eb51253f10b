package writer

import (
	"errors"
	"fmt"
	"os"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// DirInput is an Input that may be a directory recording (perf record
// --threads): a file "data" (Source and Layout) and data.N files of bare
// records, read one after the other (perfdata.Record.Part).
// *reader.Reader is one.
type DirInput interface {
	Input
	IsDirRecording() bool
	// DataFiles returns the N of each data.N file, in reading order.
	DataFiles() []int
	// PartName is the name of data file part ("data", or "data.N").
	PartName(part int) string
	// OpenPart returns a handle on the data file whose records are being
	// handed out now, which the caller closes.
	OpenPart() (*os.File, error)
}

// DirOutput is the directory a directory recording is written into
// (*outfile.Dir is one).
type DirOutput interface {
	// Create creates a new file of that name in the directory.
	Create(name string) (*os.File, error)
	// Finish closes a file Create returned; the output decides whether
	// and when it is made durable (*outfile.Dir: at Commit, with Sync).
	Finish(f *os.File) error
}

// NewDir returns the writer of a copy of the directory recording in into
// the directory out: "data" keeps its layout as a file-mode copy does (its
// data section takes the records of Part 0, and every new record of Part
// 0, at the end included), and each data.N file takes the records of its
// part, copied from the input file by offset. Every data file is written,
// empty ones included, so that a copy without changes is byte for byte
// the input.
func NewDir(out DirOutput, in DirInput, opts Options) (*Writer, error) {
	if !in.IsDirRecording() || in.Layout() == nil || in.Source() == nil {
		return nil, errors.New("writer: the input is no directory recording")
	}
	data, err := out.Create("data")
	if err != nil {
		return nil, err
	}
	w := &dirWriter{out: out, in: in, files: in.DataFiles(), dataOut: data}
	w.data = newFile(data, in.Source(), in.Layout())
	return &Writer{w: w, format: perfdata.FormatFile, in: in}, nil
}

// dirWriter writes a directory recording: data, and the data files one
// at a time, in order, through one sink: records passed through are copied
// from the input's data file by offset (copy_file_range), new ones written.
type dirWriter struct {
	out     DirOutput
	in      DirInput
	files   []int
	dataOut *os.File
	data    *file
	part    int      // the data file being written (Record.Part), 0 before the first
	dst     *os.File // it, and the input's
	src     *os.File
	sink    *sink // writes to dst, copies from src; nil before the first data file
}

func (w *dirWriter) WriteRecord(rec *perfdata.Record) error {
	if rec.Part == 0 {
		return w.data.WriteRecord(rec)
	}
	if err := w.toPart(rec.Part); err != nil {
		return recordError(rec, err)
	}
	if rec.Offset >= 0 {
		w.sink.copyInput(rec.Offset, int64(len(rec.Raw))+rec.PayloadSize)
	} else {
		if _, err := w.sink.Write(rec.Raw); err != nil {
			return recordError(rec, err)
		}
		if err := writePayload(w.sink, rec); err != nil {
			return err
		}
	}
	return w.sink.failed()
}

func (w *dirWriter) passThrough(off int64, part int, raw []byte) error {
	if part == 0 {
		return w.data.passThrough(off, part, raw)
	}
	if err := w.toPart(part); err != nil {
		return err
	}
	w.sink.copyInput(off, int64(len(raw)))
	return w.sink.failed()
}

// toPart makes data file p the one written, if it is not.
func (w *dirWriter) toPart(p int) error {
	if p == w.part {
		return nil
	}
	return w.startPart(p)
}

// startPart finishes the data file being written, writes those before p
// that have no records, and starts p.
func (w *dirWriter) startPart(p int) error {
	if p < w.part || p > len(w.files) {
		return fmt.Errorf("a record for data file %d of %d, after data file %d", p, len(w.files), w.part)
	}
	if err := w.endPart(); err != nil {
		return err
	}
	if err := w.emptyParts(p - 1); err != nil {
		return err
	}
	w.part = p
	src, err := w.in.OpenPart()
	if err != nil {
		return err
	}
	dst, err := w.out.Create(perfdata.DataFileName(w.files[p-1]))
	if err != nil {
		src.Close()
		return err
	}
	w.dst, w.src = dst, src
	if w.sink == nil {
		w.sink = newSink(
			func(b []byte, off int64) error { _, err := w.dst.WriteAt(b, off); return err },
			func(off, srcOff, n int64) error { return copyRange(w.dst, off, w.src, srcOff, n) },
			0)
	}
	// the sink is idle (endPart drained it): it starts the new file
	w.sink.pos = 0
	return nil
}

// emptyParts writes the data files after the current one up to last,
// which have no records.
func (w *dirWriter) emptyParts(last int) error {
	for ; w.part < last; w.part++ {
		f, err := w.out.Create(perfdata.DataFileName(w.files[w.part]))
		if err != nil {
			return err
		}
		if err := w.out.Finish(f); err != nil {
			return err
		}
	}
	return nil
}

// endPart writes what is queued for the current data file and finishes it.
func (w *dirWriter) endPart() error {
	if w.dst == nil {
		return nil
	}
	err := w.sink.drain()
	w.src.Close()
	if ferr := w.out.Finish(w.dst); err == nil {
		err = ferr
	}
	w.dst, w.src = nil, nil
	return err
}

// Close finishes the last data file, writes those after it, then the
// header sections and header of data.
func (w *dirWriter) Close() error {
	if err := w.endPart(); err != nil {
		return err
	}
	if w.sink != nil {
		if err := w.sink.close(); err != nil {
			return err
		}
	}
	if err := w.emptyParts(len(w.files)); err != nil {
		return err
	}
	if err := w.data.Close(); err != nil {
		return err
	}
	f := w.dataOut
	w.dataOut = nil
	return w.out.Finish(f)
}

func (w *dirWriter) Abort() {
	w.data.Abort()
	if w.sink != nil {
		w.sink.abort()
	}
	if w.src != nil {
		w.src.Close()
		w.src = nil
	}
	// The files Create gave and Finish has not closed: the output removes
	// them, and their space is free once they are closed.
	if w.dst != nil {
		w.dst.Close()
		w.dst = nil
	}
	if w.dataOut != nil {
		w.dataOut.Close()
		w.dataOut = nil
	}
}

// oneStream checks, for a directory recording written as one file or
// stream, that its compressed records are of one data file: perf
// compresses each thread's records as a zstd stream of its own, and reads
// one zstd stream per file.
type oneStream struct {
	part int              // the part of the compressed records seen, or -1
	name func(int) string // the input's PartName
}

func (o *oneStream) check(rec *perfdata.Record) error {
	t := rec.Header.Type
	if rec.Outer >= 0 || t != perfdata.RecordCompressed && t != perfdata.RecordCompressed2 {
		return nil
	}
	switch {
	case o.part < 0:
		o.part = rec.Part
	case o.part != rec.Part:
		return fmt.Errorf("the compressed records of %s and %s of the directory recording are two zstd streams, which one file or stream cannot hold (perf reads one a file): write a directory", o.name(o.part), o.name(rec.Part))
	}
	return nil
}
