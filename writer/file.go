package writer

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// writeBufSize is the output buffer of FromPipe's data section.
const writeBufSize = 1 << 20

// RecordWriter is what File and Pipe have in common.
type RecordWriter interface {
	// WriteRecord writes rec: a record read from the input (rec.Offset >= 0)
	// or a new one (rec.Offset < 0). Records decoded from a compressed
	// record (rec.Outer >= 0) are skipped: the compressed record carries them.
	WriteRecord(rec *perfdata.Record) error
	// Close finishes the recording.
	Close() error
	// Abort gives up on the recording: it stops writing at once (the
	// output is to be removed), and may be called after Close.
	Abort()
}

// File rewrites a file-mode recording: it copies everything outside the data
// section from the source file and takes the data section as records.
//
// Writing happens in a goroutine, overlapped with the caller's reading.
// Records are copied into the writer's buffers, unless the reader was
// attached (Attach): then records passed through are written straight from
// the reader's buffers, which the reader keeps until they are written.
type File struct {
	dst    io.WriterAt
	src    io.ReaderAt
	l      *perfdata.FileLayout
	bo     binary.ByteOrder
	out    int64 // bytes of data written (and queued)
	delta  int64 // output minus input offset after the last record passed through
	edits  []edit
	closed bool
	sink   *sink
	held   bool // the reader keeps records' bytes for us (Attach)
}

// edit says that from input offset in on, data moved by delta bytes.
type edit struct {
	in, delta int64
}

// NewFile starts a rewrite of the recording src, laid out as l, into dst.
// dst must be empty; its data section starts where src's does.
//
// Records with Offset >= 0 must be records of src, at that offset.
func NewFile(dst io.WriterAt, src io.ReaderAt, l *perfdata.FileLayout) *File {
	w := &File{dst: dst, src: src, l: l, bo: l.Order}
	w.sink = newSink(
		func(b []byte, off int64) error { _, err := dst.WriteAt(b, off); return err },
		func(off, srcOff, n int64) error { return copyRange(dst, off, src, srcOff, n) },
		l.DataOffset())
	return w
}

// Retainer is what a reader that can keep the records it hands out offers
// a writer: reader.Reader.SetRetainer.
type Retainer interface {
	SetRetainer(retain func() (release func()))
}

// Attach has r keep the bytes of the records it hands out until this
// writer has written them, so that they need not be copied. Attach before
// the first record.
func (w *File) Attach(r Retainer) {
	w.held = true
	r.SetRetainer(w.sink.barrier)
}

// WriteRecord implements RecordWriter.
func (w *File) WriteRecord(rec *perfdata.Record) error {
	if rec.Outer >= 0 {
		return nil
	}
	n := int64(len(rec.Raw)) + rec.PayloadSize
	if rec.Offset >= 0 {
		d := w.l.DataOffset() + w.out - rec.Offset
		if d != w.delta {
			w.edits = append(w.edits, edit{in: rec.Offset, delta: d})
			w.delta = d
		}
		if w.held {
			w.sink.hold(rec.Raw)
		} else if _, err := w.sink.Write(rec.Raw); err != nil {
			return err
		}
		if rec.PayloadSize > 0 {
			// The AUX data is in the input file right after the record.
			w.sink.copyInput(rec.Offset+int64(len(rec.Raw)), rec.PayloadSize)
		}
	} else {
		if _, err := w.sink.Write(rec.Raw); err != nil {
			return err
		}
		if rec.PayloadSize > 0 {
			if _, err := io.CopyN(w.sink, rec.Payload, rec.PayloadSize); err != nil {
				return fmt.Errorf("copying %d bytes of data after a new %v record: %w", rec.PayloadSize, rec.Header.Type, err)
			}
		}
	}
	w.out += n
	return w.sink.failed()
}

// Abort implements RecordWriter.
func (w *File) Abort() {
	w.closed = true
	w.sink.abort()
}

// mapOffset returns where input file offset off is in the output.
func (w *File) mapOffset(off uint64) uint64 {
	o := int64(off)
	switch {
	case o >= w.l.DataEnd():
		return uint64(o + w.endDelta())
	case o >= w.l.DataOffset():
		i := sort.Search(len(w.edits), func(i int) bool { return w.edits[i].in > o }) - 1
		if i < 0 {
			return off
		}
		return uint64(o + w.edits[i].delta)
	}
	return off
}

// endDelta is how far everything after the data section moves.
func (w *File) endDelta() int64 { return w.out - int64(w.l.Header.Data.Size) }

// Close writes what follows the data section and the header.
func (w *File) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.sink.close(); err != nil {
		return err
	}
	l := w.l
	p := patches{}
	// Header: data.size, and sections that moved.
	p.put64(48, w.bo, uint64(w.out))
	p.put64(24, w.bo, w.mapOffset(l.Header.Attrs.Offset))
	if l.Header.EventTypes.Size > 0 {
		p.put64(56, w.bo, w.mapOffset(l.Header.EventTypes.Offset))
	}
	for _, a := range l.Attrs {
		p.put64(a.IDsFieldOffset(), w.bo, w.mapOffset(a.IDs.Offset))
	}
	for _, f := range l.Features {
		p.put64(f.TableOffset, w.bo, w.mapOffset(f.Offset))
		if f.ID == perfdata.FeatAuxtrace {
			if err := w.patchAuxtraceIndex(&p, f); err != nil {
				return err
			}
		}
	}
	// Everything after the data section, shifted.
	if err := copyPatched(w.dst, w.src, l.DataEnd(), l.Size, w.endDelta(), p); err != nil {
		return err
	}
	// Everything before it, in place.
	return copyPatched(w.dst, w.src, 0, l.DataOffset(), 0, p)
}

// patchAuxtraceIndex rewrites HEADER_AUXTRACE: u64 nr, then {u64
// file_offset, u64 sz}[nr], where file_offset is the absolute offset of an
// AUXTRACE record (perf's auxtrace_index__write()). simpleperf writes the
// entries without the count.
func (w *File) patchAuxtraceIndex(p *patches, f perfdata.FeatureSection) error {
	buf := make([]byte, f.Size)
	if _, err := w.src.ReadAt(buf, int64(f.Offset)); err != nil {
		return fmt.Errorf("reading the AUXTRACE feature at %#x: %w", f.Offset, err)
	}
	start, nr := uint64(0), f.Size/16
	if w.l.Dialect != perfdata.DialectSimpleperf {
		if f.Size < 8 {
			return nil
		}
		start, nr = 8, min(w.bo.Uint64(buf), (f.Size-8)/16)
	}
	for i := uint64(0); i < nr; i++ {
		at := start + 16*i
		p.put64(int64(f.Offset+at), w.bo, w.mapOffset(w.bo.Uint64(buf[at:])))
	}
	return nil
}

// patches are bytes to write over the input's at given input offsets.
type patches map[int64][]byte

func (p patches) put64(at int64, bo binary.ByteOrder, v uint64) {
	b := make([]byte, 8)
	bo.PutUint64(b, v)
	p[at] = b
}

// copyBufSize is the buffer of region copies.
const copyBufSize = 256 << 10

// copyPatched copies src[from, to) to dst at from+shift, applying the
// patches that fall in the range.
func copyPatched(dst io.WriterAt, src io.ReaderAt, from, to, shift int64, p patches) error {
	buf := make([]byte, min(copyBufSize, max(to-from, 0)))
	for off := from; off < to; {
		n := min(int64(len(buf)), to-off)
		b := buf[:n]
		if _, err := src.ReadAt(b, off); err != nil {
			return fmt.Errorf("reading the input at %#x: %w", off, err)
		}
		for at, v := range p {
			if at+int64(len(v)) > off && at < off+n {
				for i := range v {
					if j := at + int64(i) - off; j >= 0 && j < n {
						b[j] = v[i]
					}
				}
			}
		}
		if _, err := dst.WriteAt(b, off+shift); err != nil {
			return err
		}
		off += n
	}
	return nil
}
