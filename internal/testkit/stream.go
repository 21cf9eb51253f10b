package testkit

import (
	"bytes"
	"encoding/binary"

	"github.com/klauspost/compress/zstd"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// streamIDHeaderSize is the sample_id trailer of a Stream's records: its
// attr has sample_id_all with TID|TIME.
const streamIDHeaderSize = 16

// Stream builds a pipe-mode recording record by record, for tests that need
// records no perf writes on demand (programs of made-up ids, samples at
// given addresses, damaged records).
type Stream struct {
	bytes.Buffer
	Order binary.ByteOrder
	// ZstdWindow is the window the stream's zstd frame declares (0: the
	// encoder's default), set before the first Compressed.
	ZstdWindow int
	// Compressed2 makes the compressed records COMPRESSED2 (83), as perf
	// >= 6.16 writes them (a data_size field, the size padded to a
	// multiple of 8), not COMPRESSED (81); set before the first Compressed.
	Compressed2 bool

	zenc   *zstd.Encoder // the stream's one zstd stream (Compressed)
	zout   bytes.Buffer
	zcarry []byte // compressed bytes compressedCapped carries to the next record
}

// NewStream starts a recording as a machine of byte order bo writes it: the
// pipe header and a HEADER_ATTR with StreamAttr.
func NewStream(bo binary.ByteOrder) *Stream {
	s := &Stream{Order: bo}
	s.Write(perfdata.PipeHeader(bo))
	s.Record(perfdata.RecordHeaderAttr, StreamAttr(bo))
	return s
}

// NewRecords starts a sequence of records with no header, for the data
// section of a file (WriteFile) or the inside of COMPRESSED records.
func NewRecords(bo binary.ByteOrder) *Stream { return &Stream{Order: bo} }

// StreamAttr is the perf_event_attr of a Stream's records: it samples
// IP|TID|TIME with sample_id_all.
func StreamAttr(bo binary.ByteOrder) []byte {
	attr := make([]byte, 128)
	bo.PutUint32(attr[4:], 128)
	bo.PutUint64(attr[24:], uint64(perfdata.SampleIP|perfdata.SampleTID|perfdata.SampleTime))
	sampleIDAll := uint64(1) << 18 // bitfields start at the low bit on a little-endian machine
	if bo == binary.BigEndian {
		sampleIDAll = 1 << (63 - 18) // and at the high bit on a big-endian one
	}
	bo.PutUint64(attr[40:], sampleIDAll)
	return attr
}

// Record writes a record of type t with body.
func (s *Stream) Record(t perfdata.RecordType, body []byte) {
	h := make([]byte, 8)
	perfdata.EventHeader{Type: t, Size: uint16(8 + len(body))}.Encode(h, s.Order)
	s.Write(h)
	s.Write(body)
}

// Trailer is a sample_id: zeros, as perf writes for the records it
// synthesizes, or a pid and a time, as the kernel's.
func (s *Stream) Trailer(kernel bool) []byte {
	b := make([]byte, streamIDHeaderSize)
	if kernel {
		s.Order.PutUint32(b, 4242)
		s.Order.PutUint64(b[8:], 123456789)
	}
	return b
}

// KSymbol writes a BPF KSYMBOL.
func (s *Stream) KSymbol(addr uint64, length uint32, name string, unregister, kernel bool) {
	var t uint64
	if kernel {
		t = 123456789
	}
	s.KSymbolAt(addr, length, name, unregister, t)
}

// KSymbolAt writes a BPF KSYMBOL the kernel wrote at time t (perf's clock,
// ns), or, t 0, one perf synthesized.
func (s *Stream) KSymbolAt(addr uint64, length uint32, name string, unregister bool, t uint64) {
	b := make([]byte, 16)
	s.Order.PutUint64(b, addr)
	s.Order.PutUint32(b[8:], length)
	s.Order.PutUint16(b[12:], uint16(perfdata.KSymbolTypeBPF))
	if unregister {
		s.Order.PutUint16(b[14:], uint16(perfdata.KSymbolUnregister))
	}
	n := make([]byte, (len(name)+8)&^7)
	copy(n, name)
	tr := s.Trailer(t != 0)
	s.Order.PutUint64(tr[8:], t)
	s.Record(perfdata.RecordKSymbol, append(append(b, n...), tr...))
}

// BPFEvent writes a BPF_EVENT.
func (s *Stream) BPFEvent(typ perfdata.BPFEventType, id uint32, tag perfdata.BPFTag, kernel bool) {
	b := make([]byte, 16)
	s.Order.PutUint16(b, uint16(typ))
	s.Order.PutUint32(b[4:], id)
	copy(b[8:], tag[:])
	s.Record(perfdata.RecordBPFEvent, append(b, s.Trailer(kernel)...))
}

// Sample writes a SAMPLE at ip.
func (s *Stream) Sample(ip uint64) { s.SampleAt(ip, 123456789) }

// SampleAt writes a SAMPLE at ip at time t (perf's clock, ns).
func (s *Stream) SampleAt(ip, t uint64) {
	b := make([]byte, 24)
	s.Order.PutUint64(b, ip)
	s.Order.PutUint32(b[8:], 4242)
	s.Order.PutUint64(b[16:], t)
	s.Record(perfdata.RecordSample, b)
}

// Metadata writes a BPF_METADATA record.
func (s *Stream) Metadata(m perfdata.BPFMetadata) {
	raw, err := m.Encode(s.Order, streamIDHeaderSize)
	if err != nil {
		panic(err)
	}
	s.Write(raw)
}
