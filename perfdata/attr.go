package perfdata

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Sizes of struct perf_event_attr by ABI version (PERF_ATTR_SIZE_VER0..8).
const (
	AttrSizeVer0 = 64
	AttrSizeVer8 = 136
)

var attrSizes = []int{64, 72, 80, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168}

// SampleType is perf_event_attr.sample_type (PERF_SAMPLE_* bits).
type SampleType uint64

// The sample_type bits a rewriter needs: the ones that make up the
// sample_id trailer of non-SAMPLE records.
const (
	SampleIP         SampleType = 1 << 0
	SampleTID        SampleType = 1 << 1
	SampleTime       SampleType = 1 << 2
	SampleAddr       SampleType = 1 << 3
	SampleRead       SampleType = 1 << 4
	SampleCallchain  SampleType = 1 << 5
	SampleID         SampleType = 1 << 6
	SampleCPU        SampleType = 1 << 7
	SamplePeriod     SampleType = 1 << 8
	SampleStreamID   SampleType = 1 << 9
	SampleRaw        SampleType = 1 << 10
	SampleIdentifier SampleType = 1 << 16
)

// sampleIDBits are the sample_type bits that each add 8 bytes to the
// sample_id trailer (struct sample_id in perf_event.h).
const sampleIDBits = SampleTID | SampleTime | SampleID | SampleStreamID | SampleCPU | SampleIdentifier

// attrFlagSampleIDAll is the bit number of perf_event_attr.sample_id_all in
// the flags word at offset 40 (counted from the least significant bit on a
// little-endian writer, from the most significant on a big-endian one:
// that is how C compilers lay out bitfields).
const attrFlagSampleIDAll = 18

// Attr is the part of struct perf_event_attr a rewriter needs, plus the raw
// bytes it came from (in the recording's byte order).
type Attr struct {
	Type       uint32
	Size       uint32 // attr.size as stored (0 means VER0 = 64 bytes)
	Config     uint64
	SampleType SampleType
	ReadFormat uint64
	Flags      uint64 // the bitfield word at offset 40, as read in the file's byte order
	Raw        []byte
	order      binary.ByteOrder
}

// DecodeAttr decodes a perf_event_attr stored in b (at least 64 bytes).
func DecodeAttr(b []byte, bo binary.ByteOrder) (Attr, error) {
	if len(b) < AttrSizeVer0 {
		return Attr{}, fmt.Errorf("perf_event_attr is %d bytes, want at least %d", len(b), AttrSizeVer0)
	}
	return Attr{
		Type:       bo.Uint32(b[0:]),
		Size:       bo.Uint32(b[4:]),
		Config:     bo.Uint64(b[8:]),
		SampleType: SampleType(bo.Uint64(b[24:])),
		ReadFormat: bo.Uint64(b[32:]),
		Flags:      bo.Uint64(b[40:]),
		Raw:        b,
		order:      bo,
	}, nil
}

// AttrSize returns the number of bytes the attr occupies: attr.size, with 0
// meaning PERF_ATTR_SIZE_VER0, as perf's read_attr() does.
func AttrSize(size uint32) int {
	if size == 0 {
		return AttrSizeVer0
	}
	return int(size)
}

func (a *Attr) flag(bit uint) bool {
	if a.order == binary.BigEndian {
		return a.Flags&(1<<(63-bit)) != 0
	}
	return a.Flags&(1<<bit) != 0
}

// SampleIDAll reports perf_event_attr.sample_id_all: whether non-SAMPLE
// records of this event carry the sample_id trailer.
func (a *Attr) SampleIDAll() bool { return a.flag(attrFlagSampleIDAll) }

// IDHeaderSize is the size of the sample_id trailer this attr gives
// non-SAMPLE records, as perf's evsel__id_hdr_size() computes it (0 without
// sample_id_all).
func (a *Attr) IDHeaderSize() int {
	if !a.SampleIDAll() {
		return 0
	}
	return 8 * bits.OnesCount64(uint64(a.SampleType&sampleIDBits))
}

// FileAttr is one entry of a file's attrs section (struct perf_file_attr)
// with the sample ids it points to.
type FileAttr struct {
	Attr Attr
	IDs  Section // absolute offset and size of the u64 id array
}

// HeaderAttr is a pipe-mode PERF_RECORD_HEADER_ATTR: header | attr
// (attr.size bytes) | u64 id[] (the rest of the record).
type HeaderAttr struct {
	Attr Attr
	IDs  []uint64
}

// DecodeHeaderAttr decodes a HEADER_ATTR record (raw includes the header),
// as perf's perf_event__process_attr() does: the ids start at attr.size.
func DecodeHeaderAttr(raw []byte, bo binary.ByteOrder) (HeaderAttr, error) {
	body := raw[EventHeaderSize:]
	if len(body) < AttrSizeVer0 {
		return HeaderAttr{}, fmt.Errorf("HEADER_ATTR record of %d bytes is too short for a perf_event_attr", len(raw))
	}
	sz := AttrSize(bo.Uint32(body[4:]))
	if sz > len(body) {
		return HeaderAttr{}, fmt.Errorf("HEADER_ATTR record of %d bytes holds a perf_event_attr of %d", len(raw), sz)
	}
	a, err := DecodeAttr(body[:sz], bo)
	if err != nil {
		return HeaderAttr{}, err
	}
	h := HeaderAttr{Attr: a}
	for p := body[sz:]; len(p) >= 8; p = p[8:] {
		h.IDs = append(h.IDs, bo.Uint64(p))
	}
	return h, nil
}
