package perfdata

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// KSymbol types and flags (perf_event.h).
const (
	KSymbolTypeUnknown = 0
	KSymbolTypeBPF     = 1
	KSymbolTypeOOL     = 2

	KSymbolFlagUnregister = 1 << 0
)

// KSymbol is PERF_RECORD_KSYMBOL: header | u64 addr | u32 len | u16
// ksym_type | u16 flags | char name[] (NUL-padded to 8) | sample_id.
type KSymbol struct {
	Addr  uint64
	Len   uint32
	Type  uint16
	Flags uint16
	Name  string
}

// DecodeKSymbol decodes a KSYMBOL record (raw includes the header).
func DecodeKSymbol(raw []byte, bo binary.ByteOrder) (KSymbol, error) {
	if len(raw) < 24 {
		return KSymbol{}, fmt.Errorf("KSYMBOL record of %d bytes, want at least 24", len(raw))
	}
	return KSymbol{
		Addr:  bo.Uint64(raw[8:]),
		Len:   bo.Uint32(raw[16:]),
		Type:  bo.Uint16(raw[20:]),
		Flags: bo.Uint16(raw[22:]),
		Name:  cString(raw[24:]),
	}, nil
}

// Unregister reports whether the record announces the symbol's removal.
func (k KSymbol) Unregister() bool { return k.Flags&KSymbolFlagUnregister != 0 }

// BPF_EVENT types (enum perf_bpf_event_type).
const (
	BPFEventUnknown    = 0
	BPFEventProgLoad   = 1
	BPFEventProgUnload = 2
)

// BPFTagSize is BPF_TAG_SIZE.
const BPFTagSize = 8

// BPFTag is a BPF program tag (the first 8 bytes of the SHA-1 of its instructions).
type BPFTag [BPFTagSize]byte

func (t BPFTag) String() string { return hex.EncodeToString(t[:]) }

// BPFEvent is PERF_RECORD_BPF_EVENT: header | u16 type | u16 flags | u32 id
// | u8 tag[8] | sample_id.
type BPFEvent struct {
	Type  uint16
	Flags uint16
	ID    uint32
	Tag   BPFTag
}

// DecodeBPFEvent decodes a BPF_EVENT record (raw includes the header).
func DecodeBPFEvent(raw []byte, bo binary.ByteOrder) (BPFEvent, error) {
	if len(raw) < 24 {
		return BPFEvent{}, fmt.Errorf("BPF_EVENT record of %d bytes, want at least 24", len(raw))
	}
	e := BPFEvent{
		Type:  bo.Uint16(raw[8:]),
		Flags: bo.Uint16(raw[10:]),
		ID:    bo.Uint32(raw[12:]),
	}
	copy(e.Tag[:], raw[16:24])
	return e, nil
}

// Sizes of PERF_RECORD_BPF_METADATA's fields (perf/event.h).
const (
	BPFMetadataKeyLen   = 64
	BPFMetadataValueLen = 256
	// BPFProgNameLen is BPF_PROG_NAME_LEN = KSYM_NAME_LEN as perf >= 6.16
	// is built upstream.
	BPFProgNameLen = 512
	// bpfProgNameLenOld is the KSYM_NAME_LEN some perf builds saw (the
	// sample record in the patch series' commit message has it).
	bpfProgNameLenOld = 256
	bpfMetadataEntry  = BPFMetadataKeyLen + BPFMetadataValueLen
)

// BPFMetadataEntry is one key/value pair of a BPF_METADATA record: the
// variable name without "bpf_metadata_" and its value as btf_dump formats it.
type BPFMetadataEntry struct {
	Key   string
	Value string
}

// BPFMetadata is PERF_RECORD_BPF_METADATA (84): header | char
// prog_name[BPF_PROG_NAME_LEN] | u64 nr_entries | {char key[64]; char
// value[256]}[nr_entries] | sample_id (zeros, id_hdr_size bytes).
type BPFMetadata struct {
	ProgName string
	Entries  []BPFMetadataEntry
	// NameLen is the prog_name field size the record was decoded with
	// (BPFProgNameLen unless it came from a perf built with 256).
	NameLen int
}

// MaxBPFMetadataEntries is the most entries a record with the given
// trailer size can hold without overflowing perf_event_header.size.
func MaxBPFMetadataEntries(idHdrSize int) int {
	return (MaxRecordSize - EventHeaderSize - BPFProgNameLen - 8 - idHdrSize) / bpfMetadataEntry
}

// BPFMetadataSize is header.size of a record with n entries.
func BPFMetadataSize(n, idHdrSize int) int {
	return EventHeaderSize + BPFProgNameLen + 8 + n*bpfMetadataEntry + idHdrSize
}

// Encode builds the record as perf's bpf_metadata_create() and
// synthesize_perf_record_bpf_metadata() do: misc 0, strings NUL-padded and
// cut to their fields (key to 63 bytes, value to 255, name to 511), and
// idHdrSize zero bytes of sample_id trailer.
func (m *BPFMetadata) Encode(bo binary.ByteOrder, idHdrSize int) ([]byte, error) {
	if idHdrSize < 0 || idHdrSize%8 != 0 {
		return nil, fmt.Errorf("BPF_METADATA: bad sample_id trailer size %d", idHdrSize)
	}
	n := len(m.Entries)
	if n > MaxBPFMetadataEntries(idHdrSize) {
		return nil, fmt.Errorf("BPF_METADATA for %s: %d entries do not fit in a perf record (at most %d)", m.ProgName, n, MaxBPFMetadataEntries(idHdrSize))
	}
	size := BPFMetadataSize(n, idHdrSize)
	b := make([]byte, size)
	EventHeader{Type: RecordBPFMetadata, Size: uint16(size)}.Encode(b, bo)
	putCString(b[8:8+BPFProgNameLen], m.ProgName)
	bo.PutUint64(b[8+BPFProgNameLen:], uint64(n))
	off := 16 + BPFProgNameLen
	for _, e := range m.Entries {
		putCString(b[off:off+BPFMetadataKeyLen], e.Key)
		putCString(b[off+BPFMetadataKeyLen:off+bpfMetadataEntry], e.Value)
		off += bpfMetadataEntry
	}
	return b, nil
}

// putCString copies s into dst as snprintf(dst, len(dst), "%s", s) would.
func putCString(dst []byte, s string) {
	n := copy(dst[:len(dst)-1], s)
	clear(dst[n:])
}

// DecodeBPFMetadata decodes a BPF_METADATA record. idHdrSize is the
// recording's sample_id trailer size; the prog_name field length is found as
// the reference's recommendation says: 512, else 256, whichever makes the
// record's size add up (with or without the trailer).
func DecodeBPFMetadata(raw []byte, bo binary.ByteOrder, idHdrSize int) (BPFMetadata, error) {
	for _, l := range []int{BPFProgNameLen, bpfProgNameLenOld} {
		if len(raw) < 16+l {
			continue
		}
		n := bo.Uint64(raw[8+l:])
		if n > uint64(len(raw)) {
			continue
		}
		rest := len(raw) - 16 - l - int(n)*bpfMetadataEntry
		if rest != 0 && rest != idHdrSize {
			continue
		}
		m := BPFMetadata{ProgName: cString(raw[8 : 8+l]), NameLen: l}
		off := 16 + l
		for i := 0; i < int(n); i++ {
			m.Entries = append(m.Entries, BPFMetadataEntry{
				Key:   cString(raw[off : off+BPFMetadataKeyLen]),
				Value: cString(raw[off+BPFMetadataKeyLen : off+bpfMetadataEntry]),
			})
			off += bpfMetadataEntry
		}
		return m, nil
	}
	return BPFMetadata{}, fmt.Errorf("BPF_METADATA record of %d bytes does not have the layout of perf's (prog_name of 512 or 256 bytes, then nr_entries entries of 320)", len(raw))
}
