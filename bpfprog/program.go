// Package bpfprog describes loaded BPF programs the way perf sees them: per
// JITed function its tag, address, length and names, and the bpf_metadata_*
// entries that perf record >= 6.16 writes into PERF_RECORD_BPF_METADATA.
//
// Programs come from a Source: the running kernel (Live, through cilium/ebpf
// and internal/bpfsys) or a Snapshot, a versioned JSON file that can be read on
// another machine long after the programs are gone. A Source is asked for one
// program at a time, by the id and tag of a PERF_RECORD_BPF_EVENT, and says
// whether that id is unknown (ErrNotFound) or belongs to a program with another
// tag (ErrTagMismatch), so that a caller never labels a recording's program
// with another program's metadata.
//
// Three names exist for function i of a program, and they differ:
//
//   - Func.PerfName: the KSYMBOL name perf synthesizes for programs that were
//     loaded before perf record started (perf's synthesize_bpf_prog_name() with
//     the program's BTF): "bpf_prog_" + hex(prog_tags[i]) + "_" + BTF name.
//   - Func.KernelName: the name in /proc/kallsyms and in the KSYMBOLs the
//     kernel emits for programs loaded during a recording. For the main
//     function (i == 0) of a program with subprograms the kernel uses the
//     whole-program tag, not prog_tags[0].
//   - Metadata.ProgNames[i]: the prog_name perf's bpf_metadata_create() writes
//     into BPF_METADATA. perf resolves the function's BTF type id in the
//     metadata MAP's BTF, which is the program's BTF for libbpf loaders but a
//     separate BTF object for cilium/ebpf loaders; then the name is whatever
//     type has that id there ("bpf_prog_<tag>_" for an anonymous type,
//     "bpf_prog_<tag>_int", ...), or "bpf_prog_<tag>" when the map's BTF has
//     no type with that id. These are the names perf 7.2 writes; perf 6.17's
//     code does not check the id and may crash or read garbage instead.
//
// The package does not read or write perf.data; package inject decides which
// records to add, and package btf formats the values.
package bpfprog

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
)

// TagSize is BPF_TAG_SIZE.
const TagSize = 8

// Tag is a BPF program or function tag: the truncated SHA-1 of its
// instructions (with map references zeroed, so the tag does not change when
// only the contents of its maps, .rodata included, change).
type Tag [TagSize]byte

// String returns the tag as 16 lower-case hex digits, as perf and bpftool print it.
func (t Tag) String() string { return hex.EncodeToString(t[:]) }

// MarshalText encodes the tag as 16 hex digits.
func (t Tag) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText decodes 16 hex digits.
func (t *Tag) UnmarshalText(b []byte) error {
	tag, err := ParseTag(string(b))
	if err != nil {
		return err
	}
	*t = tag
	return nil
}

// ParseTag parses 16 hex digits.
func ParseTag(s string) (Tag, error) {
	var t Tag
	if len(s) != 2*TagSize {
		return t, fmt.Errorf("bpfprog: tag %q: want %d hex digits", s, 2*TagSize)
	}
	if _, err := hex.Decode(t[:], []byte(s)); err != nil {
		return t, fmt.Errorf("bpfprog: tag %q: %w", s, err)
	}
	return t, nil
}

// Program is one loaded BPF program.
type Program struct {
	ID  uint32 `json:"id"`
	Tag Tag    `json:"tag"` // whole-program tag: the tag in PERF_RECORD_BPF_EVENT
	// Name is bpf_prog_info.name as the kernel keeps it: at most 15 bytes.
	Name         string           `json:"name"`
	Type         ebpf.ProgramType `json:"type"`
	LoadTime     time.Duration    `json:"load_time_ns"` // since boot (bpf_prog_info.load_time)
	CreatedByUID uint32           `json:"created_by_uid"`
	BTFID        uint32           `json:"btf_id"` // the program's BTF object; 0 without BTF
	MapIDs       []uint32         `json:"map_ids"`
	// Funcs are the program's functions in kernel order (bpf_prog_info.prog_tags
	// order): the main function first, then the subprograms.
	Funcs []Func `json:"funcs"`
	// Metadata is what perf record writes into BPF_METADATA for this program,
	// nil if perf writes none. It is incomplete when MetadataErr is set.
	Metadata *Metadata `json:"metadata,omitempty"`
	// MetadataErr says why Metadata is not exactly what perf writes (a value
	// that could not be formatted, a BTF object that could not be read). Use
	// BPFMetadata to get metadata only when it is exact.
	MetadataErr error `json:"-"`
}

// Func is one JITed function of a program.
type Func struct {
	Tag Tag // bpf_prog_info.prog_tags[i]
	// BTFName is the name of the function's BTF FUNC (func_info[i] in the
	// program's BTF); empty for programs loaded without func_info.
	BTFName string
	// Addr and Len are bpf_prog_info.jited_ksyms[i] and jited_func_lens[i]:
	// the KSYMBOL addr and len. Addr is 0 when the kernel hides addresses
	// from the reader (kernel.kptr_restrict).
	Addr uint64
	Len  uint32
	// PerfName is the KSYMBOL name perf synthesizes for a program that was
	// loaded before the recording started.
	PerfName string
	// KernelName is the name in /proc/kallsyms and in the kernel's KSYMBOLs
	// for a program loaded during a recording.
	KernelName string
}

// Metadata is the content of the BPF_METADATA records perf writes for a
// program: one record per function, all with the same entries.
type Metadata struct {
	MapID   uint32 `json:"map_id"`   // the .rodata map the entries come from
	MapName string `json:"map_name"` // bpf_map_info.name (".rodata", "<obj>.rodata")
	// BTFID is the map's BTF object. It is Program.BTFID for programs
	// loaded by libbpf, a separate object for programs loaded by cilium/ebpf.
	BTFID uint32 `json:"btf_id"`
	// ProgNames holds the prog_name of each BPF_METADATA record, one per
	// function, in the order of Program.Funcs.
	ProgNames []string `json:"prog_names"`
	// Entries in DATASEC variable order.
	Entries []Entry `json:"entries"`
}

// Metadata field sizes, as perf's perf_record_bpf_metadata_entry has them.
const (
	MetadataKeyLen   = 64  // BPF_METADATA_KEY_LEN
	MetadataValueLen = 256 // BPF_METADATA_VALUE_LEN
)

// MetadataPrefix starts the names of the variables perf records.
const MetadataPrefix = "bpf_metadata_"

// Entry is one metadata variable as perf records it.
type Entry struct {
	// Key is the variable name without MetadataPrefix, at most
	// MetadataKeyLen-1 bytes (perf's snprintf into key[64]).
	Key string `json:"key"`
	// Value is the value as libbpf's btf_dump__dump_type_data() prints it
	// for perf, at most MetadataValueLen-1 bytes.
	Value string `json:"value"`
}

// Errors a Source returns. Use errors.Is: the returned errors wrap these with
// the program id.
var (
	// ErrNotFound: no program with that id (never loaded, unloaded, or not
	// in the snapshot).
	ErrNotFound = errors.New("no such BPF program")
	// ErrTagMismatch: a program with that id exists but has another tag: the
	// id was reused, or the recording was made in another boot than the source.
	// The error is a *TagMismatchError.
	ErrTagMismatch = errors.New("BPF program tag differs")
	// ErrNoMetadata: perf writes no BPF_METADATA for the program: it has no
	// .rodata map with bpf_metadata_ variables.
	ErrNoMetadata = errors.New("BPF program has no metadata")
)

// TagMismatchError is returned when the program with ID has tag Got, not Want.
type TagMismatchError struct {
	ID        uint32
	Want, Got Tag
}

func (e *TagMismatchError) Error() string {
	return fmt.Sprintf("bpfprog: program %d has tag %s, not %s (id reused, or a recording from another boot)", e.ID, e.Got, e.Want)
}

// Is reports whether target is ErrTagMismatch.
func (e *TagMismatchError) Is(target error) bool { return target == ErrTagMismatch }

// MetadataError says why a program's metadata is not known exactly.
type MetadataError struct {
	ProgID uint32
	MapID  uint32 // 0 if not about one map
	Key    string // the entry, if about one
	Err    error
}

func (e *MetadataError) Error() string {
	s := fmt.Sprintf("bpfprog: program %d: metadata", e.ProgID)
	if e.MapID != 0 {
		s += fmt.Sprintf(" (map %d)", e.MapID)
	}
	if e.Key != "" {
		s += fmt.Sprintf(" entry %q", e.Key)
	}
	return s + ": " + e.Err.Error()
}

func (e *MetadataError) Unwrap() error { return e.Err }

// BPFMetadata returns the program's metadata if it is exactly what perf
// records: ErrNoMetadata if perf records none, MetadataErr if it is not known
// exactly.
func (p *Program) BPFMetadata() (*Metadata, error) {
	if p.MetadataErr != nil {
		return nil, p.MetadataErr
	}
	if p.Metadata == nil {
		return nil, fmt.Errorf("bpfprog: program %d: %w", p.ID, ErrNoMetadata)
	}
	return p.Metadata, nil
}

// programJSON is Program on the wire, with MetadataErr as "metadata_error".
type programJSON struct {
	programFields
	MetadataError *metadataErrorJSON `json:"metadata_error,omitempty"`
}

// programFields has Program's fields without its methods (no recursion
// into MarshalJSON).
type programFields Program

type metadataErrorJSON struct {
	MapID uint32 `json:"map_id,omitempty"`
	Key   string `json:"key,omitempty"`
	Error string `json:"error"`
}

// MarshalJSON encodes Program with MetadataErr as "metadata_error".
func (p Program) MarshalJSON() ([]byte, error) {
	j := programJSON{programFields: programFields(p)}
	if p.MetadataErr != nil {
		var me *MetadataError
		if !errors.As(p.MetadataErr, &me) {
			me = &MetadataError{ProgID: p.ID, Err: p.MetadataErr}
		}
		j.MetadataError = &metadataErrorJSON{MapID: me.MapID, Key: me.Key, Error: me.Err.Error()}
	}
	return json.Marshal(&j)
}

// UnmarshalJSON decodes Program, with "metadata_error" as a *MetadataError.
func (p *Program) UnmarshalJSON(b []byte) error {
	var j programJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = Program(j.programFields)
	if e := j.MetadataError; e != nil {
		p.MetadataErr = &MetadataError{ProgID: p.ID, MapID: e.MapID, Key: e.Key, Err: errors.New(e.Error)}
	}
	return nil
}

// funcJSON is Func on the wire, with Addr as 0x-prefixed hex text: JSON
// numbers above 2^53 do not survive most JSON readers.
type funcJSON struct {
	Tag        Tag    `json:"tag"`
	BTFName    string `json:"btf_name,omitempty"`
	Addr       string `json:"addr"`
	Len        uint32 `json:"len"`
	PerfName   string `json:"perf_name"`
	KernelName string `json:"kernel_name"`
}

// MarshalJSON encodes Func with Addr as "0x..." hex.
func (f Func) MarshalJSON() ([]byte, error) {
	return json.Marshal(funcJSON{
		Tag: f.Tag, BTFName: f.BTFName, Addr: "0x" + strconv.FormatUint(f.Addr, 16), Len: f.Len,
		PerfName: f.PerfName, KernelName: f.KernelName,
	})
}

// UnmarshalJSON decodes Func with Addr as "0x..." hex.
func (f *Func) UnmarshalJSON(b []byte) error {
	var j funcJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	hexAddr, ok := strings.CutPrefix(j.Addr, "0x")
	if !ok {
		return fmt.Errorf("bpfprog: function address %q: want 0x-prefixed hex", j.Addr)
	}
	addr, err := strconv.ParseUint(hexAddr, 16, 64)
	if err != nil {
		return fmt.Errorf("bpfprog: function address %q: %w", j.Addr, err)
	}
	*f = Func{Tag: j.Tag, BTFName: j.BTFName, Addr: addr, Len: j.Len, PerfName: j.PerfName, KernelName: j.KernelName}
	return nil
}
