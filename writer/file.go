package writer

import (
	"cmp"
	"encoding/binary"
	"io"
	"slices"
	"sort"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// file rewrites a file-mode recording: everything outside the data section
// comes from the source file, the data section from the records written.
//
// Writing happens in a goroutine, overlapped with the caller's reading.
// Records passed through unchanged are written from the reader's buffers,
// which it keeps until they are written (held, retain.Attach), or, from a
// reader that cannot keep them, copied from the source file by offset
// (copy_file_range). The reader has read those bytes already: writing them
// from its buffers, still in the CPU's cache, took 0.79x the wall time and
// 0.83x the CPU of having the kernel read them from the page cache again
// (inject of a 344 MB recording on ext4, 21 paired runs). Whatever the
// reader skips, the AUX data after AUXTRACE records and everything after
// the data section, is copied by offset.
type file struct {
	dst    io.WriterAt
	src    io.ReaderAt
	l      *perfdata.FileLayout
	bo     binary.ByteOrder
	out    int64 // bytes of data written (and queued)
	delta  int64 // output minus input offset after the last record passed through
	edits  []edit
	closed bool
	sink   *sink
	// drop is the feature table entry left out (a directory recording's
	// DIR_FORMAT in one file), if dropped.
	drop    perfdata.FeatureSection
	dropped bool
	// held: the reader keeps the records it hands out until the sink has
	// written them (retain.Attach).
	held bool
}

// edit says that from input offset in on, data moved by delta bytes.
type edit struct {
	in, delta int64
}

func newFile(dst io.WriterAt, src io.ReaderAt, l *perfdata.FileLayout) *file {
	w := &file{dst: dst, src: src, l: l, bo: l.Order}
	w.sink = newSink(
		func(b []byte, off int64) error { _, err := dst.WriteAt(b, off); return err },
		func(off, srcOff, n int64) error { return copyRange(dst, off, src, srcOff, n) },
		l.DataOffset())
	return w
}

func (w *file) WriteRecord(rec *perfdata.Record) error {
	if rec.Offset >= 0 && rec.Part == 0 {
		if !w.held {
			// The record and its AUX data, as they are in the input file.
			return w.copyInput(rec.Offset, int64(len(rec.Raw))+rec.PayloadSize)
		}
		w.holdInput(rec.Offset, rec.Raw)
		if rec.PayloadSize > 0 {
			return w.copyInput(rec.Offset+int64(len(rec.Raw)), rec.PayloadSize)
		}
		return w.sink.failed()
	}
	if err := w.write(rec.Raw); err != nil {
		return recordError(rec, err)
	}
	if err := writePayload(w.sink, rec); err != nil {
		return err
	}
	w.out += rec.PayloadSize
	return w.sink.failed()
}

func (w *file) passThrough(off int64, part int, raw []byte) error {
	if part == 0 {
		if w.held {
			w.holdInput(off, raw)
			return w.sink.failed()
		}
		return w.copyInput(off, int64(len(raw)))
	}
	// a data file's records, in a directory recording written as one file
	if err := w.write(raw); err != nil {
		return err
	}
	return w.sink.failed()
}

// write writes b, bytes of the data section not copied from the input.
func (w *file) write(b []byte) error {
	_, err := w.sink.Write(b)
	w.out += int64(len(b))
	return err
}

// copyInput writes the n bytes of the data section at input offset off,
// records passed through, by copying them from the input file.
func (w *file) copyInput(off, n int64) error {
	if s := w.sink; s.cpLen > 0 && s.cpOff+s.cpLen == off && s.cpLen+n < maxCopyRun {
		// Most records: the next of a run passed through, which
		// nothing was written into, so at the same shift.
		s.cpLen += n
		w.out += n
		return s.failed()
	}
	w.shift(off)
	w.sink.copyInput(off, n)
	w.out += n
	return w.sink.failed()
}

// holdInput writes raw, the bytes of records at input offset off that
// the reader keeps until they are written, from where they are.
func (w *file) holdInput(off int64, raw []byte) {
	w.shift(off)
	w.sink.hold(raw)
	w.out += int64(len(raw))
}

// shift notes where input offset off goes, if that moved.
func (w *file) shift(off int64) {
	if d := w.l.DataOffset() + w.out - off; d != w.delta {
		w.edits = append(w.edits, edit{in: off, delta: d})
		w.delta = d
	}
}

func (w *file) Abort() {
	w.closed = true
	w.sink.abort()
}

// mapOffset returns where input file offset off is in the output.
func (w *file) mapOffset(off uint64) uint64 {
	o := int64(off)
	switch {
	case w.dropped && o >= w.drop.TableOffset+perfdata.SectionSize:
		return uint64(o + w.endDelta() - perfdata.SectionSize)
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
func (w *file) endDelta() int64 { return w.out - int64(w.l.Header.Data.Size) }

// Close writes what follows the data section and the header: the input's
// bytes copied, then the offsets that moved written over them.
func (w *file) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.sink.close(); err != nil {
		return err
	}
	l := w.l
	// Everything after the data section, shifted (but a dropped feature's
	// table entry), and everything before it.
	if !w.dropped {
		if err := copyRange(w.dst, l.DataEnd()+w.endDelta(), w.src, l.DataEnd(), l.Size-l.DataEnd()); err != nil {
			return err
		}
	} else {
		cut := w.drop.TableOffset
		if err := copyRange(w.dst, l.DataEnd()+w.endDelta(), w.src, l.DataEnd(), cut-l.DataEnd()); err != nil {
			return err
		}
		after := cut + perfdata.SectionSize
		if err := copyRange(w.dst, int64(w.mapOffset(uint64(after))), w.src, after, l.Size-after); err != nil {
			return err
		}
	}
	if err := copyRange(w.dst, 0, w.src, 0, l.DataOffset()); err != nil {
		return err
	}
	// The offsets, where they now are (an input offset after the data
	// section is output offset + endDelta).
	var p []patch
	p = append(p, patch{48, uint64(w.out)}, patch{24, w.mapOffset(l.Header.Attrs.Offset)})
	if l.Header.EventTypes.Size > 0 {
		p = append(p, patch{56, w.mapOffset(l.Header.EventTypes.Offset)})
	}
	for _, a := range l.Attrs {
		p = append(p, patch{a.IDsFieldOffset(), w.mapOffset(a.IDs.Offset)})
	}
	for _, f := range l.Features {
		if w.dropped && f.TableOffset == w.drop.TableOffset {
			continue
		}
		p = append(p, patch{f.TableOffset, w.mapOffset(f.Offset)})
	}
	if w.dropped && len(l.HeaderRaw) >= perfdata.FileHeaderSize {
		// the feature's bit in the header's bitmap (u64 words from 72 on)
		at := perfdata.FeatureBitsOffset + 8*int64(w.drop.ID/64)
		word := w.bo.Uint64(l.HeaderRaw[at:]) &^ (1 << (w.drop.ID % 64))
		p = append(p, patch{at, word})
	}
	if err := w.writePatches(p); err != nil {
		return err
	}
	for _, f := range l.Features {
		if f.ID == perfdata.FeatAuxtrace {
			if err := w.patchAuxtraceIndex(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropFeature leaves feature id out of the copy, if the input has it: its
// table entry, and its bit in the header (its payload stays, unused).
func (w *file) dropFeature(id perfdata.Feature) {
	if s, ok := w.l.Feature(id); ok {
		w.drop, w.dropped = s, true
	}
}

// patch is a u64 to write over the input's bytes at input offset at.
type patch struct {
	at int64
	v  uint64
}

func (w *file) writePatches(ps []patch) error {
	slices.SortFunc(ps, func(a, b patch) int { return cmp.Compare(a.at, b.at) })
	var b, old [8]byte
	for _, p := range ps {
		if _, err := w.src.ReadAt(old[:], p.at); err != nil {
			return inputError("reading the offset at %#x: %w", p.at, err)
		}
		if w.bo.Uint64(old[:]) == p.v {
			continue // as copied
		}
		if w.inData(p.at, 8) {
			return inputError("an offset at %#x, inside the data section, would have to change: a header that points into its own records is not rewritten", p.at)
		}
		w.bo.PutUint64(b[:], p.v)
		if _, err := w.dst.WriteAt(b[:], int64(w.mapOffset(uint64(p.at)))); err != nil {
			return err
		}
	}
	return nil
}

// inData reports whether any of the n input bytes at off are in the data
// section: its records, which the output has where they were copied.
func (w *file) inData(off, n int64) bool {
	return off < w.l.DataEnd() && off+n > w.l.DataOffset()
}

// auxtraceChunk is how many HEADER_AUXTRACE entries are patched at a time.
const auxtraceChunk = 4096

// patchAuxtraceIndex rewrites HEADER_AUXTRACE: u64 nr, then {u64
// file_offset, u64 sz}[nr], where file_offset is the absolute offset of an
// AUXTRACE record (perf's auxtrace_index__write()), a piece at a time.
// simpleperf writes the entries without the count.
func (w *file) patchAuxtraceIndex(f perfdata.FeatureSection) error {
	start, nr := uint64(0), f.Size/16
	if w.l.Dialect != perfdata.DialectSimpleperf {
		if f.Size < 8 {
			return nil
		}
		var b [8]byte
		if _, err := w.src.ReadAt(b[:], int64(f.Offset)); err != nil {
			return inputError("reading the AUXTRACE feature at %#x: %w", f.Offset, err)
		}
		start, nr = 8, min(w.bo.Uint64(b[:]), (f.Size-8)/16)
	}
	buf := make([]byte, 16*min(nr, auxtraceChunk))
	for i := uint64(0); i < nr; {
		n := min(nr-i, auxtraceChunk)
		b := buf[:16*n]
		at := int64(f.Offset + start + 16*i)
		if _, err := w.src.ReadAt(b, at); err != nil {
			return inputError("reading the AUXTRACE feature at %#x: %w", at, err)
		}
		changed := false
		for e := 0; e < len(b); e += 16 {
			v := w.bo.Uint64(b[e:])
			if m := w.mapOffset(v); m != v {
				w.bo.PutUint64(b[e:], m)
				changed = true
			}
		}
		switch {
		case !changed:
			// as copied
		case w.inData(at, int64(len(b))):
			return inputError("the AUXTRACE index at %#x lies inside the data section, where rewriting its offsets would change records", at)
		default:
			if _, err := w.dst.WriteAt(b, int64(w.mapOffset(uint64(at)))); err != nil {
				return err
			}
		}
		i += n
	}
	return nil
}
