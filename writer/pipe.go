package writer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// pipe writes a pipe-mode recording: the 16-byte pipe header, then records.
// Like file, it writes in a goroutine, from its own buffers or, attached to
// the reader, from the reader's.
type pipe struct {
	bw      *sink
	bo      byteOrder
	held    bool             // the reader keeps the records until written (retain.Attach)
	dialect perfdata.Dialect // of the input
}

func newPipe(w io.Writer, bo binary.ByteOrder, dialect perfdata.Dialect) *pipe {
	p := &pipe{bo: orderOf(bo), dialect: dialect}
	p.bw = newSink(
		func(b []byte, _ int64) error { _, err := w.Write(b); return err },
		func(_, _, _ int64) error { return errors.New("writer: a pipe stream has no input file to copy from") },
		0)
	p.bw.Write(perfdata.PipeHeader(bo))
	return p
}

func (p *pipe) WriteRecord(rec *perfdata.Record) error {
	if p.dialect == perfdata.DialectSimpleperf && rec.Header.Type == perfdata.RecordHeaderTracingData {
		// simpleperf keeps the trace data inside its record (header | u32
		// size | data, padded to 64); a stream frames it as perf does.
		if len(rec.Raw) < 12 {
			return fmt.Errorf("simpleperf TRACING_DATA record at %#x: %d bytes", rec.Offset, len(rec.Raw))
		}
		n := p.bo.Uint32(rec.Raw[8:])
		if uint64(n) > uint64(len(rec.Raw)-12) {
			return fmt.Errorf("simpleperf TRACING_DATA record at %#x: %d bytes of data in %d", rec.Offset, n, len(rec.Raw))
		}
		return p.tracingRecord(int64(n), func(w io.Writer) error {
			_, err := w.Write(rec.Raw[12 : 12+n])
			return err
		})
	}
	if err := p.write(rec.Raw, rec.Offset >= 0); err != nil {
		return recordError(rec, err)
	}
	if err := writePayload(p.bw, rec); err != nil {
		return err
	}
	return p.bw.failed()
}

func (p *pipe) passThrough(_ int64, _ int, raw []byte) error {
	if err := p.write(raw, true); err != nil {
		return err
	}
	return p.bw.failed()
}

// write writes the bytes of records: from the input's buffers where the
// reader keeps them until written (retain.Attach), else copied.
func (p *pipe) write(b []byte, input bool) error {
	if p.held && input {
		p.bw.hold(b)
		return nil
	}
	_, err := p.bw.Write(b)
	return err
}

// writeRaw writes bytes that are not a record, such as the trailing bytes a
// reader found after a pipe stream's last record.
func (p *pipe) writeRaw(b []byte) error {
	_, err := p.bw.Write(b)
	return err
}

func (p *pipe) Abort() { p.bw.abort() }

// Close writes what is queued. It does not close the underlying writer.
func (p *pipe) Close() error { return p.bw.close() }

// maxFeaturePayload is the largest feature payload a HEADER_FEATURE record
// (header | u64 feat_id | payload) can carry.
const maxFeaturePayload = perfdata.MaxRecordSize - 16

// pipeEndMarker is the feat_id of the HEADER_FEATURE record that ends a
// pipe's features: the writing perf's HEADER_LAST_FEATURE. perf 6.1 writes
// 32 and its perf report rejects anything higher, so a converted stream uses
// 32 unless its features go beyond.
func pipeEndMarker(fs []perfdata.FeatureSection) uint64 {
	m := uint64(perfdata.FeatCPUDomainInfo)
	for _, f := range fs {
		m = max(m, uint64(f.ID)+1)
	}
	return m
}

// writePrelude writes, for a file-mode recording laid out as l in src, the
// records a pipe stream carries instead of its header sections, in the
// order perf's perf_event__synthesize_for_pipe() writes them: a HEADER_ATTR
// per attr (with its ids), a HEADER_FEATURE per feature and the end marker,
// then HEADER_TRACING_DATA with the trace data. The file's build-id table
// becomes HEADER_BUILD_ID records. It returns the sections it left out:
// AUXTRACE (an index of file offsets, which perf rebuilds from a pipe), and
// any too large for a record (perf inject leaves those out too). Every
// section is copied in pieces.
func (p *pipe) writePrelude(l *perfdata.FileLayout, src io.ReaderAt) ([]Omitted, error) {
	bo := p.bo
	for i, a := range l.Attrs {
		nids := a.IDs.Size / 8
		size := uint64(perfdata.EventHeaderSize+len(a.Attr.Raw)) + 8*nids
		if size > perfdata.MaxRecordSize {
			return nil, inputError("attr %d has %d ids, too many for a pipe's HEADER_ATTR record, at %#x", i, nids, a.Offset)
		}
		b := make([]byte, 0, size)
		b = appendHeader(b, bo, perfdata.RecordHeaderAttr, 0, int(size))
		b = append(b, a.Attr.Raw...)
		b = b[:size]
		if _, err := src.ReadAt(b[perfdata.EventHeaderSize+len(a.Attr.Raw):], int64(a.IDs.Offset)); err != nil {
			return nil, inputError("reading the ids of attr %d at %#x: %w", i, a.IDs.Offset, err)
		}
		if _, err := p.bw.Write(b); err != nil {
			return nil, err
		}
	}
	var omitted []Omitted
	var written []perfdata.FeatureSection
	var tracing, buildIDs *perfdata.FeatureSection
	for i := range l.Features {
		f := &l.Features[i]
		switch {
		case f.ID == perfdata.FeatTracingData:
			tracing = f
			continue
		case f.ID == perfdata.FeatBuildID:
			buildIDs = f
			continue
		case f.ID == perfdata.FeatAuxtrace:
			omitted = append(omitted, Omitted{f.ID, f.Size, "an index of file offsets; perf rebuilds it from a pipe"})
			continue
		case f.ID == perfdata.FeatDirFormat:
			// perf's process_dir_format() fails on it outside a directory
			omitted = append(omitted, Omitted{f.ID, f.Size, "the layout of a directory recording; a stream is one"})
			continue
		case f.Size == 0 && f.ID != perfdata.FeatBranchStack && f.ID != perfdata.FeatStat:
			// Only flags are empty; perf fails on an empty CPUDESC & co.
			omitted = append(omitted, Omitted{f.ID, f.Size, "empty"})
			continue
		case f.Size > maxFeaturePayload:
			omitted = append(omitted, Omitted{f.ID, f.Size, "too large for a HEADER_FEATURE record"})
			continue
		case l.Dialect == perfdata.DialectSimpleperf && f.ID >= perfdata.SimpleperfFeatureStart:
			// perf report fails on a feat_id above its own last one
			omitted = append(omitted, Omitted{f.ID, f.Size, "a simpleperf feature, which perf does not know"})
			continue
		}
		written = append(written, *f)
		if err := p.writeFeature(uint64(f.ID), io.NewSectionReader(src, int64(f.Offset), int64(f.Size)), int(f.Size)); err != nil {
			return nil, fmt.Errorf("feature %v: %w", f.ID, err)
		}
	}
	if err := p.writeFeature(pipeEndMarker(written), nil, 0); err != nil {
		return nil, err
	}
	if tracing != nil {
		if err := p.writeTracingData(src, tracing); err != nil {
			return nil, err
		}
	}
	if buildIDs != nil {
		if err := p.writeBuildIDs(src, buildIDs); err != nil {
			return nil, err
		}
	}
	return omitted, nil
}

// maxTracingData is the most trace data HEADER_TRACING_DATA's u32 size can
// describe.
const maxTracingData = 1<<32 - 8

// writeTracingData writes the TRACING_DATA feature as a HEADER_TRACING_DATA
// record, as perf_event__synthesize_tracing_data() does: size is the
// 8-aligned length, the data is padded with zeros. A pipe carries only what
// perf's trace_report() reads, with an empty kallsyms (see
// perfdata.TracingData); trace data perf could not read goes as it is.
func (p *pipe) writeTracingData(src io.ReaderAt, f *perfdata.FeatureSection) error {
	sec := io.NewSectionReader(src, int64(f.Offset), int64(f.Size))
	if f.Size > maxTracingData {
		return fmt.Errorf("TRACING_DATA feature of %d bytes is too large for a pipe stream", f.Size)
	}
	td, err := perfdata.ParseTracingData(sec, int64(f.Size))
	if err != nil {
		return p.tracingRecord(int64(f.Size), func(w io.Writer) error {
			_, err := io.Copy(w, sec)
			return err
		})
	}
	return p.tracingRecord(td.PipeLen(), func(w io.Writer) error { return td.WritePipe(w, sec) })
}

// tracingRecord writes a HEADER_TRACING_DATA record for n bytes of trace
// data that write writes.
func (p *pipe) tracingRecord(n int64, write func(io.Writer) error) error {
	aligned := (n + 7) &^ 7
	b := appendHeader(nil, p.bo, perfdata.RecordHeaderTracingData, 0, 16)
	b = p.bo.AppendUint32(b, uint32(aligned))
	b = p.bo.AppendUint32(b, 0)
	if _, err := p.bw.Write(b); err != nil {
		return err
	}
	cw := &countingWriter{w: p.bw}
	if err := write(cw); err != nil {
		return fmt.Errorf("copying the trace data: %w", err)
	}
	if cw.n != n {
		return fmt.Errorf("copying the trace data: %d bytes of %d", cw.n, n)
	}
	_, err := p.bw.Write(make([]byte, aligned-n))
	return err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func appendHeader(b []byte, bo byteOrder, t perfdata.RecordType, misc uint16, size int) []byte {
	b = bo.AppendUint32(b, uint32(t))
	b = bo.AppendUint16(b, misc)
	return bo.AppendUint16(b, uint16(size))
}

func (p *pipe) writeFeature(id uint64, payload io.Reader, n int) error {
	b := appendHeader(nil, p.bo, perfdata.RecordHeaderFeature, 0, 16+n)
	b = p.bo.AppendUint64(b, id)
	if _, err := p.bw.Write(b); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	_, err := io.CopyN(p.bw, payload, int64(n))
	return err
}

// writeBuildIDs turns the BUILD_ID feature, a sequence of
// perf_record_header_build_id entries with header.type 0, into
// HEADER_BUILD_ID records (the same entries with their type set), one entry
// at a time.
func (p *pipe) writeBuildIDs(src io.ReaderAt, f *perfdata.FeatureSection) error {
	e := make([]byte, perfdata.MaxRecordSize+8)
	for off := uint64(0); off+perfdata.EventHeaderSize <= f.Size; {
		at := int64(f.Offset + off)
		if _, err := src.ReadAt(e[:perfdata.EventHeaderSize], at); err != nil {
			return inputError("reading the BUILD_ID feature at %#x: %w", at, err)
		}
		h := perfdata.DecodeEventHeader(e, p.bo)
		if h.Size < perfdata.EventHeaderSize || off+uint64(h.Size) > f.Size {
			return inputError("BUILD_ID feature at %#x: bad entry size %d at %#x", f.Offset, h.Size, at)
		}
		if _, err := src.ReadAt(e[:h.Size], at); err != nil {
			return inputError("reading the BUILD_ID feature at %#x: %w", at, err)
		}
		// Records in a stream are 8-byte multiples (perf 7.2 rejects
		// others); the filename is NUL-terminated, so zeros pad it.
		n := (int(h.Size) + 7) &^ 7
		if n > perfdata.MaxRecordSize {
			return inputError("BUILD_ID feature at %#x: an entry of %d bytes at %#x does not fit in a record", f.Offset, h.Size, at)
		}
		clear(e[h.Size:n])
		p.bo.PutUint32(e, uint32(perfdata.RecordHeaderBuildID))
		p.bo.PutUint16(e[6:], uint16(n))
		if _, err := p.bw.Write(e[:n]); err != nil {
			return err
		}
		off += uint64(h.Size)
	}
	return nil
}

// byteOrder is what binary.LittleEndian and binary.BigEndian both are.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func orderOf(bo binary.ByteOrder) byteOrder {
	if bo == binary.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}
