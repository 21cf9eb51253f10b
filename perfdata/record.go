package perfdata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// MaxRecordSize is the largest record perf_event_header.size can describe.
const MaxRecordSize = 1<<16 - 1

// EventHeader is struct perf_event_header.
type EventHeader struct {
	Type RecordType
	Misc uint16
	Size uint16
}

// DecodeEventHeader decodes the 8 bytes at the start of b.
func DecodeEventHeader(b []byte, bo binary.ByteOrder) EventHeader {
	return DecodeEventHeaderBig(b, bo == binary.BigEndian)
}

// DecodeEventHeaderBig decodes the 8 bytes at the start of b, big-endian
// or not: for a loop over every record, which knows its recording's order
// (inlined, with no interface call or comparison per record).
func DecodeEventHeaderBig(b []byte, big bool) EventHeader {
	_ = b[7]
	if big {
		be := binary.BigEndian
		return EventHeader{Type: RecordType(be.Uint32(b)), Misc: be.Uint16(b[4:]), Size: be.Uint16(b[6:])}
	}
	return DecodeEventHeaderLittle(b)
}

// DecodeEventHeaderLittle decodes the 8 little-endian bytes at the start
// of b: for a loop over the records of a little-endian recording that
// must stay small enough to be inlined whole (recrun.Run.Peek).
func DecodeEventHeaderLittle(b []byte) EventHeader {
	le := binary.LittleEndian
	return EventHeader{Type: RecordType(le.Uint32(b)), Misc: le.Uint16(b[4:]), Size: le.Uint16(b[6:])}
}

// Encode writes the header into b[:8].
func (h EventHeader) Encode(b []byte, bo binary.ByteOrder) {
	bo.PutUint32(b, uint32(h.Type))
	bo.PutUint16(b[4:], h.Misc)
	bo.PutUint16(b[6:], h.Size)
}

// Record is one record of a recording as a reader hands it out and a writer
// takes it: the bytes as stored, plus where they came from.
type Record struct {
	// Offset is where the record starts: a byte offset in the input file or
	// stream (pipe header included), or, for a record decoded from a
	// COMPRESSED/COMPRESSED2 record, an offset in the decompressed stream.
	// New records made by a program have Offset -1.
	Offset int64
	Header EventHeader
	// Raw is the record as stored, header included: Header.Size bytes, in
	// the recording's byte order. A reader may reuse it on its next call.
	Raw []byte
	// PayloadSize is the number of bytes that follow Raw and belong to the
	// record without being counted in Header.Size: the AUX data after an
	// AUXTRACE record, the trace data after a HEADER_TRACING_DATA record.
	PayloadSize int64
	// Payload reads those bytes. It is valid until the reader moves on.
	Payload io.Reader
	// Outer is the offset of the COMPRESSED or COMPRESSED2 record this record
	// was decoded from, or -1 for a record stored as such. A writer that
	// passes compressed records through verbatim skips records with Outer >= 0.
	Outer int64
	// Part is the file of a directory recording (perf record --threads) the
	// record is in: 0 for its data file, which has the header, and for every
	// record of a single-file recording; i for the i-th of its data.N files
	// in reading order. Offset is then an offset in that file. A new record's
	// Part is the file it is to be written to.
	Part int
}

// Records is a recording read one record at a time, in the style of
// bufio.Scanner and sql.Rows:
//
//	for r.Next() {
//		rec := r.Record()
//		...
//	}
//	if err := r.Err(); err != nil {
//		...
//	}
//
// *reader.Reader is one. It is the one interface records are read
// through: writer.Copy, bpftrack and inject read it (writer.Records,
// bpftrack.Records and inject.Recording are it, with what else they
// ask of a recording). A producer that pushes records, as inject.Run
// writes them, is read as one by annotate.Injected, the one place a
// push becomes a pull (iter.Pull).
type Records interface {
	// Next moves to the next record, and reports whether there is one:
	// false at the end of the recording or on an error (Err).
	Next() bool
	// Record is the record Next moved to, valid until the next call of
	// Next.
	Record() *Record
	// Err is the error that ended Next, nil at the end of the recording.
	Err() error
}

// Compressed reports whether r was decoded from a COMPRESSED/COMPRESSED2 record.
func (r *Record) Compressed() bool { return r.Outer >= 0 }

// Body is the record after its 8-byte header.
func (r *Record) Body() []byte { return r.Raw[EventHeaderSize:] }

// PayloadLen returns the size of the data that follows a record of type t
// outside header.size, as perf's readers skip it: auxtrace.size after
// AUXTRACE (session.c: perf_session__process_user_event returns it as the
// "skip"), tracing_data.size after HEADER_TRACING_DATA. raw is the record.
func PayloadLen(t RecordType, raw []byte, bo binary.ByteOrder) (int64, error) {
	switch t {
	case RecordAuxtrace:
		// struct perf_record_auxtrace { header; u64 size; u64 offset; u64 reference; u32 idx, tid, cpu, reserved__; }
		if len(raw) < 16 {
			return 0, fmt.Errorf("AUXTRACE record of %d bytes has no size field", len(raw))
		}
		n := bo.Uint64(raw[8:])
		if n > 1<<62 {
			return 0, fmt.Errorf("AUXTRACE record claims %d bytes of AUX data", n)
		}
		return int64(n), nil
	case RecordHeaderTracingData:
		// struct perf_record_header_tracing_data { header; u32 size; u32 pad; }
		if len(raw) < 12 {
			return 0, fmt.Errorf("HEADER_TRACING_DATA record of %d bytes has no size field", len(raw))
		}
		return int64(bo.Uint32(raw[8:])), nil
	}
	return 0, nil
}

// CompressedPayload returns the zstd bytes a COMPRESSED or COMPRESSED2
// record carries: everything after the header for COMPRESSED (81), and
// data_size bytes after the u64 data_size field for COMPRESSED2 (83),
// as perf's perf_session__process_compressed_event() takes them.
func CompressedPayload(t RecordType, raw []byte, bo binary.ByteOrder) ([]byte, error) {
	switch t {
	case RecordCompressed:
		return raw[EventHeaderSize:], nil
	case RecordCompressed2:
		if len(raw) < 16 {
			return nil, fmt.Errorf("COMPRESSED2 record of %d bytes has no data_size field", len(raw))
		}
		n := bo.Uint64(raw[8:])
		if n > uint64(len(raw)-16) {
			return nil, fmt.Errorf("COMPRESSED2 data_size %d exceeds the record (%d bytes of data)", n, len(raw)-16)
		}
		return raw[16 : 16+n], nil
	}
	return nil, fmt.Errorf("record type %v is not compressed", t)
}

// cStringIn returns b up to its first NUL, and whether it has one.
func cStringIn(b []byte) (string, bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return string(b), false
	}
	return string(b[:i]), true
}

// cString returns b up to its first NUL.
func cString(b []byte) string {
	s, _ := cStringIn(b)
	return s
}
