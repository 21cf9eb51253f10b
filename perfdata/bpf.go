package perfdata

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/bpfmeta/bpfmeta/internal/enum"
)

// KSymbolType is PERF_RECORD_KSYMBOL's ksym_type (enum perf_record_ksymbol_type).
type KSymbolType uint16

const (
	KSymbolTypeUnknown KSymbolType = 0
	KSymbolTypeBPF     KSymbolType = 1
	// KSymbolTypeOOL is out-of-line code: optimized kprobes, ftrace trampolines.
	KSymbolTypeOOL KSymbolType = 2
)

var ksymbolTypeNames = []string{KSymbolTypeUnknown: "UNKNOWN", KSymbolTypeBPF: "BPF", KSymbolTypeOOL: "OOL"}

func (t KSymbolType) String() string { return enum.String(ksymbolTypeNames, t, "KSymbolType") }

// KSymbolFlags are PERF_RECORD_KSYMBOL's flags.
type KSymbolFlags uint16

// KSymbolUnregister is PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER: the symbol is
// gone (the program was unloaded).
const KSymbolUnregister KSymbolFlags = 1 << 0

func (f KSymbolFlags) String() string {
	if f == 0 {
		return "0"
	}
	var parts []string
	if f&KSymbolUnregister != 0 {
		parts = append(parts, "UNREGISTER")
	}
	if rest := f &^ KSymbolUnregister; rest != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(uint64(rest), 16))
	}
	return strings.Join(parts, "|")
}

// KSymbol is PERF_RECORD_KSYMBOL: header | u64 addr | u32 len | u16
// ksym_type | u16 flags | char name[] (NUL-padded to 8) | sample_id.
type KSymbol struct {
	Addr  uint64
	Len   uint32
	Type  KSymbolType
	Flags KSymbolFlags
	Name  string
}

// kSymbolFieldsSize is the size of a KSYMBOL's fields before its name.
const kSymbolFieldsSize = EventHeaderSize + 16

// KSymNameLen is KSYM_NAME_LEN, the size of the buffer the kernel
// (perf_event_ksymbol(), bpf_prog_ksym_set_name()) and perf
// (perf_event__synthesize_one_bpf_prog()) snprintf() a KSYMBOL's name
// into: 512 since Linux 6.1, as perf defines it.
const KSymNameLen = 512

// DecodeKSymbol decodes a KSYMBOL record (raw includes the header). A name
// longer than KSymNameLen-1 bytes, which neither the kernel nor perf
// writes, is cut to that, as their snprintf() would have cut it: a record
// may hold 64 KiB of name, and a BPF_METADATA's prog_name is at most as
// long (BPFProgNameLen).
func DecodeKSymbol(raw []byte, bo binary.ByteOrder) (KSymbol, error) {
	if err := CheckFields(RecordKSymbol, raw); err != nil {
		return KSymbol{}, err
	}
	name := raw[kSymbolFieldsSize:]
	return KSymbol{
		Addr:  bo.Uint64(raw[8:]),
		Len:   bo.Uint32(raw[16:]),
		Type:  KSymbolType(bo.Uint16(raw[20:])),
		Flags: KSymbolFlags(bo.Uint16(raw[22:])),
		Name:  cString(name[:min(len(name), KSymNameLen-1)]),
	}, nil
}

// Unregister reports whether the record announces the symbol's removal.
func (k KSymbol) Unregister() bool { return k.Flags&KSymbolUnregister != 0 }

// BPF tells a KSYMBOL of a BPF function (ksym_type
// PERF_RECORD_KSYMBOL_TYPE_BPF), registered or unregistered: the symbols
// perf's machine__process_ksymbol() gives a BPF dso.
func (k KSymbol) BPF() bool { return k.Type == KSymbolTypeBPF }

// RegistersBPF tells a KSYMBOL that registers a BPF function, as a
// program loads: BPF and not unregistering.
func (k KSymbol) RegistersBPF() bool { return k.BPF() && !k.Unregister() }

// BPFEventType is PERF_RECORD_BPF_EVENT's type (enum perf_bpf_event_type).
type BPFEventType uint16

const (
	BPFEventUnknown    BPFEventType = 0
	BPFEventProgLoad   BPFEventType = 1
	BPFEventProgUnload BPFEventType = 2
)

var bpfEventNames = []string{BPFEventUnknown: "UNKNOWN", BPFEventProgLoad: "PROG_LOAD", BPFEventProgUnload: "PROG_UNLOAD"}

func (t BPFEventType) String() string { return enum.String(bpfEventNames, t, "BPFEventType") }

// BPFTagSize is BPF_TAG_SIZE.
const BPFTagSize = 8

// BPFTag is a BPF program's or function's tag: the first 8 bytes of the
// SHA-1 of its instructions, with map references zeroed (so it does not
// change when only the contents of its maps, .rodata included, change).
type BPFTag [BPFTagSize]byte

// String returns the tag as 16 lower-case hex digits, as perf and bpftool print it.
func (t BPFTag) String() string { return hex.EncodeToString(t[:]) }

// MarshalText encodes the tag as 16 hex digits.
func (t BPFTag) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText decodes 16 hex digits.
func (t *BPFTag) UnmarshalText(b []byte) error {
	tag, err := ParseBPFTag(string(b))
	if err != nil {
		return err
	}
	*t = tag
	return nil
}

// ParseBPFTag parses 16 hex digits.
func ParseBPFTag(s string) (BPFTag, error) {
	var t BPFTag
	if len(s) != 2*BPFTagSize {
		return t, fmt.Errorf("BPF tag %q: want %d hex digits", s, 2*BPFTagSize)
	}
	if _, err := hex.Decode(t[:], []byte(s)); err != nil {
		return t, fmt.Errorf("BPF tag %q: %w", s, err)
	}
	return t, nil
}

// BPFEvent is PERF_RECORD_BPF_EVENT: header | u16 type | u16 flags | u32 id
// | u8 tag[8] | sample_id.
type BPFEvent struct {
	Type  BPFEventType
	Flags uint16
	ID    uint32
	Tag   BPFTag
}

// BPFEventFieldsSize is the size of a BPF_EVENT before its sample_id.
const BPFEventFieldsSize = EventHeaderSize + 16

// DecodeBPFEvent decodes a BPF_EVENT record (raw includes the header).
func DecodeBPFEvent(raw []byte, bo binary.ByteOrder) (BPFEvent, error) {
	if err := CheckFields(RecordBPFEvent, raw); err != nil {
		return BPFEvent{}, err
	}
	e := BPFEvent{
		Type:  BPFEventType(bo.Uint16(raw[8:])),
		Flags: bo.Uint16(raw[10:]),
		ID:    bo.Uint32(raw[12:]),
	}
	copy(e.Tag[:], raw[16:24])
	return e, nil
}

// CheckFields is the error of a KSYMBOL or BPF_EVENT record too short for
// its fields (raw includes the header), the one DecodeKSymbol and
// DecodeBPFEvent return, or nil: for a record that holds them, and for a
// record of any other type. It is the rule by which every reader of a
// recording's programs refuses a record, bpftrack (through the decoders)
// and bpfmeta dump alike: a stream of such records is no recording, and a
// listing of it could go on for gigabytes (issue 37). It decodes nothing.
func CheckFields(t RecordType, raw []byte) error {
	switch {
	case t == RecordKSymbol && len(raw) < kSymbolFieldsSize:
		return fmt.Errorf("KSYMBOL record of %d bytes, want at least %d", len(raw), kSymbolFieldsSize)
	case t == RecordBPFEvent && len(raw) < BPFEventFieldsSize:
		return fmt.Errorf("BPF_EVENT record of %d bytes, want at least %d", len(raw), BPFEventFieldsSize)
	}
	return nil
}

// bpfProgPrefix starts the names the kernel and perf give BPF functions.
const bpfProgPrefix = "bpf_prog_"

// BPFProgName is the name the kernel (bpf_prog_ksym_set_name) and perf
// (synthesize_bpf_prog_name) give a JITed BPF function: "bpf_prog_", the
// tag in hex, then "_" and the function's name unless it has none. Names are
// cut to BPFProgNameLen-1 bytes.
func BPFProgName(tag BPFTag, fn string) string {
	name := bpfProgPrefix + tag.String()
	if fn != "" {
		name += "_" + fn
	}
	return CutBPFProgName(name)
}

// CutBPFProgName cuts a name as snprintf() into BPF_PROG_NAME_LEN bytes does.
func CutBPFProgName(name string) string {
	if len(name) > BPFProgNameLen-1 {
		return name[:BPFProgNameLen-1]
	}
	return name
}

// ParseBPFProgName splits a name of the form BPFProgName makes into the
// tag and what follows "bpf_prog_<tag>_" (empty when nothing does):
// "bpf_prog_", 16 lowercase hex digits (the kernel's bin2hex() in
// bpf_prog_ksym_set_name() and perf's "%02x" in synthesize_bpf_prog_name()
// write no other), then nothing or "_" and the name. It is the one rule of
// that form: a name, a KSYMBOL's or a record's, as a string, or a symbol
// of perf script's text as bytes (package annotate), with no copy.
func ParseBPFProgName[S ~string | ~[]byte](name S) (tag BPFTag, fn S, ok bool) {
	const n = len(bpfProgPrefix)
	if len(name) < n+2*BPFTagSize {
		return tag, fn, false
	}
	for i := range n {
		if name[i] != bpfProgPrefix[i] {
			return tag, fn, false
		}
	}
	for i := range BPFTagSize {
		hi, ok1 := lowerHex(name[n+2*i])
		lo, ok2 := lowerHex(name[n+2*i+1])
		if !ok1 || !ok2 {
			return BPFTag{}, fn, false
		}
		tag[i] = hi<<4 | lo
	}
	rest := name[n+2*BPFTagSize:]
	switch {
	case len(rest) == 0:
		return tag, rest, true
	case rest[0] == '_':
		return tag, rest[1:], true
	}
	return BPFTag{}, fn, false
}

// BPFProgNamePrefixLen is the length of "bpf_prog_<tag>": what
// ParseBPFProgName reads of a name before its "_" and function name.
const BPFProgNamePrefixLen = len(bpfProgPrefix) + 2*BPFTagSize

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// ProgID is the program id sel names, if it is one (ProgNamed): a decimal
// number a program id can be (a uint32); any other sel is a name.
func ProgID(sel string) (uint32, bool) {
	id, err := strconv.ParseUint(sel, 10, 32)
	return uint32(id), err == nil
}

// ProgNamed is the one rule by which a program is selected by what a user
// typed (sel): every --prog and --require, and the library's filters
// (bpfprog.Program.Named, bpftrack.MetadataRecord.OfProgram,
// inject.Summary.Unmet). sel names the program of id (0: not known) and
// names (its name, its functions' names: BTF, KSYMBOL, a record's) when it
// is the id in decimal, or one of the names whole, or one of the names'
// function after perf's and the kernel's bpf_prog_<tag>_ (ParseBPFProgName).
// An empty sel names nothing: a record named "bpf_prog_<tag>" has no
// function name to be selected by.
func ProgNamed(sel string, id uint32, names ...string) bool {
	if n, ok := ProgID(sel); ok {
		return id != 0 && n == id
	}
	if sel == "" {
		return false
	}
	for _, name := range names {
		if _, fn, ok := ParseBPFProgName(name); name == sel || ok && fn == sel {
			return true
		}
	}
	return false
}

// BPFNameIs reports whether name names the BPF function full (a KSYMBOL's
// or a BPF_METADATA record's bpf_prog_<tag>_<name>): full itself, or what
// follows bpf_prog_<tag>_, the function's name on any load.
func BPFNameIs(full, name string) bool {
	if full == name {
		return true
	}
	_, fn, ok := ParseBPFProgName(full)
	return ok && fn != "" && fn == name
}

// Sizes of PERF_RECORD_BPF_METADATA's fields (tools/lib/perf/include/perf/event.h).
const (
	BPFMetadataKeyLen   = 64  // BPF_METADATA_KEY_LEN
	BPFMetadataValueLen = 256 // BPF_METADATA_VALUE_LEN
	// BPFProgNameLen is BPF_PROG_NAME_LEN = KSYM_NAME_LEN, 512 as perf is
	// built upstream and as perf 7.2 reads the record.
	BPFProgNameLen = 512

	bpfMetadataEntrySize = BPFMetadataKeyLen + BPFMetadataValueLen
	// bpfMetadataFixedSize is the record before its entries: header,
	// prog_name, nr_entries.
	bpfMetadataFixedSize = EventHeaderSize + BPFProgNameLen + 8
)

// BPFMetadataPrefix starts the names of the variables perf records: the
// read-only bpf_metadata_* variables of a program's .rodata.
const BPFMetadataPrefix = "bpf_metadata_"

// BPFMetadataKey is the key perf's bpf_metadata_fill_event() writes for a
// variable: its name without BPFMetadataPrefix, snprintf()ed into key[64]
// (cut to 63 bytes). ok is false for a name without the prefix.
func BPFMetadataKey(varName string) (key string, ok bool) {
	k, ok := strings.CutPrefix(varName, BPFMetadataPrefix)
	if !ok {
		return "", false
	}
	if len(k) > BPFMetadataKeyLen-1 {
		k = k[:BPFMetadataKeyLen-1]
	}
	return k, true
}

// maxBPFMetadataBody is the largest record (before its sample_id trailer)
// perf record builds. perf 7.2's bpf_metadata_alloc() gives up when
// 8 + 512 + 8 + 320 * n exceeds 0xfeff bytes (read from the perf 7.2.13
// binary; 6.17's source has no check and overflows header.size), and
// bpf_metadata_create() then goes on to the program's next map.
const maxBPFMetadataBody = 0xfeff

// MaxBPFMetadataEntries is the most variables a program's metadata map may
// have for perf record to write BPF_METADATA records for it: 202.
const MaxBPFMetadataEntries = (maxBPFMetadataBody - bpfMetadataFixedSize) / bpfMetadataEntrySize

// BPFMetadataEntry is one key/value pair of a BPF_METADATA record: the
// variable name without "bpf_metadata_" and its value as btf_dump formats it.
//
// It marshals to JSON as bpfprog.Entry does ({"key":…,"value":…}), so
// that the metadata read back from a recording and the metadata of a
// program have one shape (a record has no "typed": perf writes only the
// text).
type BPFMetadataEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// BPFMetadata is PERF_RECORD_BPF_METADATA (84): header | char
// prog_name[BPF_PROG_NAME_LEN] | u64 nr_entries | {char key[64]; char
// value[256]}[nr_entries] | sample_id (zeros, id_hdr_size bytes).
type BPFMetadata struct {
	ProgName string
	Entries  []BPFMetadataEntry
}

// BPFMetadataSize is header.size of a record with n entries.
func BPFMetadataSize(n, idHdrSize int) int {
	return bpfMetadataFixedSize + n*bpfMetadataEntrySize + idHdrSize
}

// Encode builds the record as perf's bpf_metadata_create() and
// synthesize_perf_record_bpf_metadata() do: misc 0, strings NUL-padded and
// cut to their fields (key to 63 bytes, value to 255, name to 511), and
// idHdrSize zero bytes of sample_id trailer.
func (m *BPFMetadata) Encode(bo binary.ByteOrder, idHdrSize int) ([]byte, error) {
	if idHdrSize < 0 || idHdrSize%8 != 0 || idHdrSize > MaxIDHeaderSize {
		return nil, fmt.Errorf("BPF_METADATA: bad sample_id trailer size %d", idHdrSize)
	}
	n := len(m.Entries)
	if n > MaxBPFMetadataEntries {
		return nil, fmt.Errorf("BPF_METADATA for %s: %d entries, perf writes at most %d", m.ProgName, n, MaxBPFMetadataEntries)
	}
	size := BPFMetadataSize(n, idHdrSize)
	b := make([]byte, size)
	EventHeader{Type: RecordBPFMetadata, Size: uint16(size)}.Encode(b, bo)
	putCString(b[8:8+BPFProgNameLen], m.ProgName)
	bo.PutUint64(b[8+BPFProgNameLen:], uint64(n))
	off := bpfMetadataFixedSize
	for _, e := range m.Entries {
		putCString(b[off:off+BPFMetadataKeyLen], e.Key)
		putCString(b[off+BPFMetadataKeyLen:off+bpfMetadataEntrySize], e.Value)
		off += bpfMetadataEntrySize
	}
	return b, nil
}

// putCString copies s into dst as snprintf(dst, len(dst), "%s", s) would.
func putCString(dst []byte, s string) {
	n := copy(dst[:len(dst)-1], s)
	clear(dst[n:])
}

// DecodeBPFMetadata decodes a BPF_METADATA record with the checks perf 7.2
// makes before it uses one (and skips it with a warning otherwise): room for
// prog_name and nr_entries, a NUL-terminated prog_name, no more entries than
// the record holds, NUL-terminated keys and values. Bytes after the entries
// (the sample_id trailer) are not looked at.
func DecodeBPFMetadata(raw []byte, bo binary.ByteOrder) (BPFMetadata, error) {
	if len(raw) < bpfMetadataFixedSize {
		return BPFMetadata{}, fmt.Errorf("BPF_METADATA record of %d bytes is too small (at least %d)", len(raw), bpfMetadataFixedSize)
	}
	name, ok := cStringIn(raw[8 : 8+BPFProgNameLen])
	if !ok {
		return BPFMetadata{}, fmt.Errorf("BPF_METADATA record: prog_name is not NUL-terminated")
	}
	n := bo.Uint64(raw[8+BPFProgNameLen:])
	if most := uint64(len(raw)-bpfMetadataFixedSize) / bpfMetadataEntrySize; n > most {
		return BPFMetadata{}, fmt.Errorf("BPF_METADATA record of %d bytes: nr_entries %d, it holds at most %d", len(raw), n, most)
	}
	m := BPFMetadata{ProgName: name, Entries: make([]BPFMetadataEntry, n)}
	off := bpfMetadataFixedSize
	for i := range m.Entries {
		k, kok := cStringIn(raw[off : off+BPFMetadataKeyLen])
		v, vok := cStringIn(raw[off+BPFMetadataKeyLen : off+bpfMetadataEntrySize])
		if !kok || !vok {
			return BPFMetadata{}, fmt.Errorf("BPF_METADATA record: entry %d: key or value is not NUL-terminated", i)
		}
		m.Entries[i] = BPFMetadataEntry{Key: k, Value: v}
		off += bpfMetadataEntrySize
	}
	return m, nil
}
