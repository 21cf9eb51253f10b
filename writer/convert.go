package writer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

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

// Omitted is a header section of a file that a pipe stream cannot carry.
type Omitted struct {
	Feature perfdata.Feature
	Size    uint64
	Why     string
}

// WritePrelude writes, for a file-mode recording laid out as l in src, the
// records a pipe stream carries instead of its header sections, in the
// order perf's perf_event__synthesize_for_pipe() writes them: a HEADER_ATTR
// per attr (with its ids), a HEADER_FEATURE per feature and the end marker,
// then HEADER_TRACING_DATA with the trace data. The file's build-id table
// becomes HEADER_BUILD_ID records. It returns the sections it left out:
// AUXTRACE (an index of file offsets, which perf rebuilds from a pipe), and
// any too large for a record (perf inject leaves those out too).
func (p *Pipe) WritePrelude(l *perfdata.FileLayout, src io.ReaderAt) ([]Omitted, error) {
	bo := p.bo
	p.dialect = l.Dialect
	for i, a := range l.Attrs {
		ids := make([]byte, a.IDs.Size&^7)
		if _, err := src.ReadAt(ids, int64(a.IDs.Offset)); err != nil {
			return nil, fmt.Errorf("reading the ids of attr %d at %#x: %w", i, a.IDs.Offset, err)
		}
		size := perfdata.EventHeaderSize + len(a.Attr.Raw) + len(ids)
		if size > perfdata.MaxRecordSize {
			return nil, fmt.Errorf("attr %d has %d ids, too many for a HEADER_ATTR record", i, len(ids)/8)
		}
		b := make([]byte, 0, size)
		b = appendHeader(b, bo, perfdata.RecordHeaderAttr, 0, size)
		b = append(b, a.Attr.Raw...)
		b = append(b, ids...)
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

// writeTracingData writes the TRACING_DATA feature as a
// HEADER_TRACING_DATA record, as perf_event__synthesize_tracing_data()
// does: size is the 8-aligned length, the data is padded with zeros. A pipe
// carries only what perf's trace_report() reads, with an empty kallsyms
// (see perfdata.TracingData).
func (p *Pipe) writeTracingData(src io.ReaderAt, f *perfdata.FeatureSection) error {
	data := make([]byte, f.Size)
	if _, err := src.ReadAt(data, int64(f.Offset)); err != nil {
		return fmt.Errorf("reading the TRACING_DATA feature at %#x: %w", f.Offset, err)
	}
	if td, err := perfdata.ParseTracingData(data); err == nil {
		data = td.ForPipe(data)
	}
	return p.tracingRecord(data)
}

func (p *Pipe) tracingRecord(data []byte) error {
	aligned := (len(data) + 7) &^ 7
	b := appendHeader(nil, p.bo, perfdata.RecordHeaderTracingData, 0, 16)
	b = p.bo.AppendUint32(b, uint32(aligned))
	b = p.bo.AppendUint32(b, 0)
	b = append(b, data...)
	b = append(b, make([]byte, aligned-len(data))...)
	_, err := p.bw.Write(b)
	return err
}

func appendHeader(b []byte, bo byteOrder, t perfdata.RecordType, misc uint16, size int) []byte {
	b = bo.AppendUint32(b, uint32(t))
	b = bo.AppendUint16(b, misc)
	return bo.AppendUint16(b, uint16(size))
}

func (p *Pipe) writeFeature(id uint64, payload io.Reader, n int) error {
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
// HEADER_BUILD_ID records (the same entries with their type set).
func (p *Pipe) writeBuildIDs(src io.ReaderAt, f *perfdata.FeatureSection) error {
	buf := make([]byte, f.Size)
	if _, err := src.ReadAt(buf, int64(f.Offset)); err != nil {
		return fmt.Errorf("reading the BUILD_ID feature at %#x: %w", f.Offset, err)
	}
	for off := 0; off+perfdata.EventHeaderSize <= len(buf); {
		h := perfdata.DecodeEventHeader(buf[off:], p.bo)
		if h.Size < perfdata.EventHeaderSize || off+int(h.Size) > len(buf) {
			return fmt.Errorf("BUILD_ID feature at %#x: bad entry size %d at %#x", f.Offset, h.Size, int(f.Offset)+off)
		}
		// Records in a stream are 8-byte multiples (perf 7.2 rejects
		// others); the filename is NUL-terminated, so zeros pad it.
		e := make([]byte, (int(h.Size)+7)&^7)
		copy(e, buf[off:off+int(h.Size)])
		p.bo.PutUint32(e, uint32(perfdata.RecordHeaderBuildID))
		p.bo.PutUint16(e[6:], uint16(len(e)))
		if _, err := p.bw.Write(e); err != nil {
			return err
		}
		off += int(h.Size)
	}
	return nil
}

// FromPipe writes a file-mode recording from the records of a pipe stream:
// HEADER_ATTR, HEADER_FEATURE, HEADER_TRACING_DATA and HEADER_BUILD_ID
// records become the file's attrs, ids and feature sections; every other
// record goes to the data section. The layout is perf's default: header,
// ids, attrs, data, feature table and payloads. The attrs must therefore
// come before the first data record, as every perf writes them.
type FromPipe struct {
	dst      io.WriterAt
	bo       byteOrder
	bw       *bufio.Writer
	attrs    []perfdata.HeaderAttr
	features map[perfdata.Feature][]byte
	buildIDs []byte
	tracing  []byte
	attrOff  int64
	attrLen  int64
	dataOff  int64
	out      int64
	// auxtrace is the file offset and size of every AUXTRACE record
	// written, for the HEADER_AUXTRACE index perf inject writes.
	auxtrace [][2]uint64
	started  bool
	closed   bool
}

// NewFromPipe starts a file-mode recording in byte order bo in dst.
func NewFromPipe(dst io.WriterAt, bo binary.ByteOrder) *FromPipe {
	return &FromPipe{dst: dst, bo: orderOf(bo), features: map[perfdata.Feature][]byte{}}
}

// WriteRecord implements RecordWriter.
func (w *FromPipe) WriteRecord(rec *perfdata.Record) error {
	if rec.Outer >= 0 {
		return nil
	}
	switch rec.Header.Type {
	case perfdata.RecordHeaderAttr:
		if w.started {
			return fmt.Errorf("HEADER_ATTR record at %#x after data records: a file needs its attrs before the data", rec.Offset)
		}
		a, err := perfdata.DecodeHeaderAttr(rec.Raw, w.bo)
		if err != nil {
			return fmt.Errorf("HEADER_ATTR record at %#x: %w", rec.Offset, err)
		}
		a.Attr.Raw = slices.Clone(a.Attr.Raw)
		w.attrs = append(w.attrs, a)
		return nil
	case perfdata.RecordHeaderFeature:
		if len(rec.Raw) < 16 {
			return fmt.Errorf("HEADER_FEATURE record at %#x: %d bytes", rec.Offset, len(rec.Raw))
		}
		id := w.bo.Uint64(rec.Raw[8:])
		payload := rec.Raw[16:]
		if len(payload) == 0 && id >= uint64(perfdata.FeatCPUDomainInfo) || id >= perfdata.FeatureBits {
			return nil // the end-of-features marker
		}
		w.features[perfdata.Feature(id)] = slices.Clone(payload)
		return nil
	case perfdata.RecordHeaderTracingData:
		b, err := io.ReadAll(io.LimitReader(rec.Payload, rec.PayloadSize))
		if err != nil {
			return fmt.Errorf("trace data of the record at %#x: %w", rec.Offset, err)
		}
		w.tracing = append(w.tracing, b...)
		return nil
	case perfdata.RecordHeaderBuildID:
		e := slices.Clone(rec.Raw)
		w.bo.PutUint32(e, 0) // as the BUILD_ID feature stores them
		w.buildIDs = append(w.buildIDs, e...)
		return nil
	}
	if !w.started {
		if err := w.start(); err != nil {
			return err
		}
	}
	if rec.Header.Type == perfdata.RecordAuxtrace {
		w.auxtrace = append(w.auxtrace, [2]uint64{uint64(w.dataOff + w.out), uint64(rec.Header.Size)})
	}
	if err := writeRecord(w.bw, rec); err != nil {
		return err
	}
	w.out += int64(len(rec.Raw)) + rec.PayloadSize
	return nil
}

// start writes the ids and attrs and opens the data section.
func (w *FromPipe) start() error {
	w.started = true
	off := int64(perfdata.FileHeaderSize)
	var attrSec []byte
	attrSize := w.fileAttrSize()
	for i, a := range w.attrs {
		ids := make([]byte, 0, 8*len(a.IDs))
		for _, id := range a.IDs {
			ids = w.bo.AppendUint64(ids, id)
		}
		if _, err := w.dst.WriteAt(ids, off); err != nil {
			return err
		}
		if len(a.Attr.Raw)+perfdata.SectionSize != attrSize {
			return fmt.Errorf("attr %d is %d bytes, attr %d is %d: a file's attrs all have one size", i, len(a.Attr.Raw), 0, attrSize-perfdata.SectionSize)
		}
		attrSec = append(attrSec, a.Attr.Raw...)
		attrSec = w.bo.AppendUint64(attrSec, uint64(off))
		attrSec = w.bo.AppendUint64(attrSec, uint64(len(ids)))
		off += int64(len(ids))
	}
	w.attrOff = off
	if _, err := w.dst.WriteAt(attrSec, off); err != nil {
		return err
	}
	w.attrLen = int64(len(attrSec))
	w.dataOff = off + int64(len(attrSec))
	w.bw = bufio.NewWriterSize(io.NewOffsetWriter(w.dst, w.dataOff), writeBufSize)
	return nil
}

func (w *FromPipe) fileAttrSize() int {
	if len(w.attrs) == 0 {
		return perfdata.AttrSizeVer8 + perfdata.SectionSize
	}
	return len(w.attrs[0].Attr.Raw) + perfdata.SectionSize
}

// Abort implements RecordWriter: nothing more is written.
func (w *FromPipe) Abort() { w.closed = true }

// Close writes the feature sections and the header.
func (w *FromPipe) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if !w.started {
		if err := w.start(); err != nil {
			return err
		}
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if len(w.tracing) > 0 {
		w.features[perfdata.FeatTracingData] = w.tracing
	}
	if len(w.buildIDs) > 0 {
		w.features[perfdata.FeatBuildID] = w.buildIDs
	}
	if len(w.auxtrace) > 0 {
		// as perf's auxtrace_index__write(): u64 nr, then {offset, size}
		b := w.bo.AppendUint64(nil, uint64(len(w.auxtrace)))
		for _, e := range w.auxtrace {
			b = w.bo.AppendUint64(b, e[0])
			b = w.bo.AppendUint64(b, e[1])
		}
		w.features[perfdata.FeatAuxtrace] = b
	}
	h := perfdata.FileHeader{
		Magic:    perfdata.PipeMagic(w.bo),
		Size:     perfdata.FileHeaderSize,
		AttrSize: uint64(w.fileAttrSize()),
		Attrs:    perfdata.Section{Offset: uint64(w.attrOff), Size: uint64(w.attrLen)},
		Data:     perfdata.Section{Offset: uint64(w.dataOff), Size: uint64(w.out)},
	}
	ids := make([]perfdata.Feature, 0, len(w.features))
	for id := range w.features {
		ids = append(ids, id)
		h.Features[id/64] |= 1 << (id % 64)
	}
	slices.Sort(ids)
	table := make([]byte, 0, len(ids)*perfdata.SectionSize)
	payloadOff := w.dataOff + w.out + int64(len(ids)*perfdata.SectionSize)
	var payloads []byte
	for _, id := range ids {
		b := w.features[id]
		table = w.bo.AppendUint64(table, uint64(payloadOff)+uint64(len(payloads)))
		table = w.bo.AppendUint64(table, uint64(len(b)))
		payloads = append(payloads, b...)
	}
	if _, err := w.dst.WriteAt(append(table, payloads...), w.dataOff+w.out); err != nil {
		return err
	}
	hb := make([]byte, perfdata.FileHeaderSize)
	h.Encode(hb, w.bo)
	_, err := w.dst.WriteAt(hb, 0)
	return err
}

func writeRecord(bw *bufio.Writer, rec *perfdata.Record) error {
	if _, err := bw.Write(rec.Raw); err != nil {
		return err
	}
	if rec.PayloadSize > 0 {
		n, err := io.CopyN(bw, rec.Payload, rec.PayloadSize)
		if err != nil {
			return fmt.Errorf("copying %d bytes of data after the %v record at %#x: %d copied: %w", rec.PayloadSize, rec.Header.Type, rec.Offset, n, err)
		}
	}
	return nil
}
