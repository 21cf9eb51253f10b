package perfdata

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/bpfmeta/bpfmeta/internal/enum"
)

// Magic numbers. A little-endian writer stores the bytes "PERFILE2"; a
// big-endian one "2ELIFREP". The version-1 format used "PERFFILE".
const (
	magic2  = "PERFILE2"
	magic2r = "2ELIFREP"
	magic1  = "PERFFILE"
	magic1r = "ELIFFREP"
)

// Sizes of the fixed headers (struct perf_file_header, perf_pipe_file_header).
const (
	FileHeaderSize = 104
	// OldFileHeaderSize is perf_file_header without the feature bitmap, which
	// perf still accepts as an "old format" with no features.
	OldFileHeaderSize = 72
	// FeatureBitsOffset is where the header's feature bitmap starts.
	FeatureBitsOffset = 72
	PipeHeaderSize    = 16
	// EventHeaderSize is sizeof(struct perf_event_header).
	EventHeaderSize = 8
	// SectionSize is sizeof(struct perf_file_section) {u64 offset; u64 size}.
	SectionSize = 16
)

// Format tells a file (seekable layout with header sections) from a pipe
// stream (records only, metadata carried in HEADER_* records).
type Format int

const (
	FormatFile Format = iota + 1
	FormatPipe
)

var formatNames = []string{FormatFile: "file", FormatPipe: "pipe"}

func (f Format) String() string { return enum.String(formatNames, f, "Format") }

// Section is struct perf_file_section: an absolute file offset and a size.
type Section struct {
	Offset uint64
	Size   uint64
}

// End is the offset one past the section.
func (s Section) End() uint64 { return s.Offset + s.Size }

// Magic is the result of recognising the first 8 bytes of a recording.
type Magic struct {
	Order   binary.ByteOrder
	Version int // 1 for "PERFFILE", 2 for "PERFILE2"
}

// ParseMagic recognises the magic number at the start of a recording and the
// byte order it implies. Version 1 files carry no byte-order mark; perf
// infers it from attr_size, so ParseMagic needs the 8 bytes that follow the
// header size too (pass nil for pipe-length input: version 1 has no pipe format).
func ParseMagic(b []byte, attrSize []byte) (Magic, bool) {
	if len(b) < 8 {
		return Magic{}, false
	}
	switch string(b[:8]) {
	case magic2:
		return Magic{binary.LittleEndian, 2}, true
	case magic2r:
		return Magic{binary.BigEndian, 2}, true
	case magic1, magic1r:
		// As perf's try_all_file_abis(): the byte order is the one in which
		// attr_size is a known perf_event_attr size plus the ids section.
		if len(attrSize) < 8 {
			return Magic{}, false
		}
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			if isFileAttrSize(bo.Uint64(attrSize)) {
				return Magic{bo, 1}, true
			}
		}
		return Magic{}, false
	}
	return Magic{}, false
}

// IsMagicPrefix reports whether b, shorter than any header, starts as a
// recording does: with a magic number, or with the start of one. A file
// that does is a recording cut short, not something else.
func IsMagicPrefix(b []byte) bool {
	for _, m := range []string{magic2, magic2r, magic1, magic1r} {
		n := min(len(b), len(m))
		if string(b[:n]) == m[:n] {
			return true
		}
	}
	return false
}

// isFileAttrSize reports whether n is sizeof(perf_event_attr) of some ABI
// version plus sizeof(perf_file_section).
func isFileAttrSize(n uint64) bool {
	for _, s := range attrSizes {
		if n == uint64(s)+SectionSize {
			return true
		}
	}
	return false
}

// FileHeader is struct perf_file_header.
type FileHeader struct {
	Magic      [8]byte
	Size       uint64 // FileHeaderSize, or OldFileHeaderSize
	AttrSize   uint64 // size of one attrs-section entry: attr + ids section
	Attrs      Section
	Data       Section
	EventTypes Section
	Features   [FeatureBits / 64]uint64
}

// DecodeFileHeader decodes the 104 (or old-format 72) header bytes. The
// feature bitmap is decoded as perf's perf_file_header__read() does for a
// cross-endian file: as u64 words, or as u32 words when that is the only way
// HEADER_HOSTNAME comes out set.
func DecodeFileHeader(b []byte, bo binary.ByteOrder) (FileHeader, error) {
	var h FileHeader
	if len(b) < OldFileHeaderSize {
		return h, fmt.Errorf("file header is %d bytes, want %d", len(b), FileHeaderSize)
	}
	copy(h.Magic[:], b[:8])
	h.Size = bo.Uint64(b[8:])
	h.AttrSize = bo.Uint64(b[16:])
	h.Attrs = decodeSection(b[24:], bo)
	h.Data = decodeSection(b[40:], bo)
	h.EventTypes = decodeSection(b[56:], bo)
	switch h.Size {
	case FileHeaderSize:
		if len(b) < FileHeaderSize {
			return h, fmt.Errorf("file header is %d bytes, want %d", len(b), FileHeaderSize)
		}
		for i := range h.Features {
			h.Features[i] = bo.Uint64(b[72+8*i:])
		}
		if bo != binary.LittleEndian && !h.HasFeature(FeatHostname) {
			// perf: "the bitmap was written as 32-bit words".
			var alt [4]uint64
			for i := range alt {
				lo := bo.Uint32(b[72+8*i:])
				hi := bo.Uint32(b[76+8*i:])
				alt[i] = uint64(lo) | uint64(hi)<<32
			}
			if alt[0]&(1<<FeatHostname) != 0 {
				h.Features = alt
			}
		}
	case OldFileHeaderSize:
	default:
		return h, fmt.Errorf("file header size is %d, want %d (or %d for the old format)", h.Size, FileHeaderSize, OldFileHeaderSize)
	}
	return h, nil
}

// Encode writes the header in byte order bo into b (len(b) >= h.Size).
// The feature bitmap is written as u64 words.
func (h *FileHeader) Encode(b []byte, bo binary.ByteOrder) {
	copy(b[:8], h.Magic[:])
	bo.PutUint64(b[8:], h.Size)
	bo.PutUint64(b[16:], h.AttrSize)
	encodeSection(b[24:], bo, h.Attrs)
	encodeSection(b[40:], bo, h.Data)
	encodeSection(b[56:], bo, h.EventTypes)
	if h.Size >= FileHeaderSize {
		for i, w := range h.Features {
			bo.PutUint64(b[72+8*i:], w)
		}
	}
}

// HasFeature reports whether bit f of the feature bitmap is set.
func (h *FileHeader) HasFeature(f Feature) bool {
	if f >= FeatureBits {
		return false
	}
	return h.Features[f/64]&(1<<(f%64)) != 0
}

// FeatureList returns the set feature bits in ascending order: the order of
// the feature section table that follows the data section.
func (h *FileHeader) FeatureList() []Feature {
	var fs []Feature
	for i, w := range h.Features {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			fs = append(fs, Feature(i*64+b))
			w &^= 1 << b
		}
	}
	return fs
}

// NumFeatures is the number of feature table entries: popcount(bitmap).
func (h *FileHeader) NumFeatures() int {
	n := 0
	for _, w := range h.Features {
		n += bits.OnesCount64(w)
	}
	return n
}

// FeatureTableOffset is where perf looks for the feature table: right after
// the data section. It is not stored in the file.
func (h *FileHeader) FeatureTableOffset() uint64 { return h.Data.End() }

func decodeSection(b []byte, bo binary.ByteOrder) Section {
	return Section{Offset: bo.Uint64(b), Size: bo.Uint64(b[8:])}
}

func encodeSection(b []byte, bo binary.ByteOrder, s Section) {
	bo.PutUint64(b, s.Offset)
	bo.PutUint64(b[8:], s.Size)
}

// DecodeSection decodes a perf_file_section.
func DecodeSection(b []byte, bo binary.ByteOrder) Section { return decodeSection(b, bo) }

// EncodeSection encodes a perf_file_section into b[:16].
func EncodeSection(b []byte, bo binary.ByteOrder, s Section) { encodeSection(b, bo, s) }

// PipeMagic returns the 8 magic bytes of a version-2 recording in byte order bo.
func PipeMagic(bo binary.ByteOrder) [8]byte {
	var m [8]byte
	if bo == binary.BigEndian {
		copy(m[:], magic2r)
	} else {
		copy(m[:], magic2)
	}
	return m
}

// PipeHeader returns struct perf_pipe_file_header in byte order bo.
func PipeHeader(bo binary.ByteOrder) []byte {
	b := make([]byte, PipeHeaderSize)
	m := PipeMagic(bo)
	copy(b, m[:])
	bo.PutUint64(b[8:], PipeHeaderSize)
	return b
}

// DecodeHeaderString decodes a perf_header_string (a u32 length, then a
// NUL-padded string) as perf's do_read_string() does; false when b is too
// short for the length it states.
func DecodeHeaderString(b []byte, bo binary.ByteOrder) (string, bool) {
	if len(b) < 4 {
		return "", false
	}
	n := bo.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return "", false
	}
	return cString(b[4 : 4+n]), true
}
