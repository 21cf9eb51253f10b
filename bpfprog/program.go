// Package bpfprog describes loaded BPF programs the way perf sees them: per
// JITed function its tag, address, length and names, and the bpf_metadata_*
// entries that perf record >= 6.17 writes into PERF_RECORD_BPF_METADATA.
//
// Programs come from a Source: the running kernel (Live, through cilium/ebpf
// and internal/bpfsys) or a Snapshot, a versioned file that can be read on
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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Program is one loaded BPF program.
type Program struct {
	ID  uint32
	Tag perfdata.BPFTag // whole-program tag: the tag in PERF_RECORD_BPF_EVENT
	// Name is bpf_prog_info.name as the kernel keeps it: at most 15 bytes.
	Name string
	Type ebpf.ProgramType
	// LoadTime is bpf_prog_info.load_time: CLOCK_BOOTTIME when it was
	// loaded. LoadedAt is the same moment as a date, on the clock of the
	// machine it was read on.
	LoadTime     time.Duration
	LoadedAt     time.Time
	CreatedByUID uint32
	BTFID        uint32 // the program's BTF object; 0 without BTF
	MapIDs       []uint32
	// Funcs are the program's functions in kernel order (bpf_prog_info.prog_tags
	// order): the main function first, then the subprograms.
	Funcs []Func
	// Metadata is what perf record writes into BPF_METADATA for this program,
	// nil if perf writes none. It is incomplete when MetadataErr is set.
	Metadata *Metadata
	// MetadataErr says why Metadata is not exactly what perf writes (a value
	// that could not be formatted, a BTF object that could not be read). Use
	// BPFMetadata to get metadata only when it is exact.
	MetadataErr error
	// TooLarge is set when perf writes no metadata for the program because
	// its metadata has too many variables (Metadata is then nil).
	TooLarge *TooLargeError
}

// Func is one JITed function of a program.
type Func struct {
	Tag perfdata.BPFTag // bpf_prog_info.prog_tags[i]
	// BTFName is the name of the function's BTF FUNC (func_info[i] in the
	// program's BTF); empty for programs loaded without func_info.
	BTFName string
	// Addr and Len are bpf_prog_info.jited_ksyms[i] and jited_func_lens[i]:
	// the KSYMBOL addr and len. Addr is 0 when the kernel hides addresses
	// from the reader (kernel.kptr_restrict, no CAP_SYSLOG).
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
	MapID   uint32 // the .rodata map the entries come from
	MapName string // bpf_map_info.name (".rodata", "<obj>.rodata")
	// BTFID is the map's BTF object. It is Program.BTFID for programs
	// loaded by libbpf, a separate object for programs loaded by cilium/ebpf.
	BTFID uint32
	// ProgNames holds the prog_name of each BPF_METADATA record, one per
	// function, in the order of Program.Funcs.
	ProgNames []string
	// Entries in DATASEC variable order.
	Entries []Entry
}

// Entry is one metadata variable as perf records it.
type Entry struct {
	// Key is the variable name without "bpf_metadata_", at most 63 bytes
	// (perf's snprintf into key[64]: perfdata.BPFMetadataKey).
	Key string
	// Value is the value as libbpf's btf_dump__dump_type_data() prints it
	// for perf, at most 255 bytes: what the record holds.
	Value string
	// Typed is the value as JSON (strings, numbers, enumerators by name,
	// objects and arrays), where its type allows: for programs, not perf.
	Typed json.RawMessage
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
	// .rodata map with bpf_metadata_ variables, or (TooLargeError) too many.
	ErrNoMetadata = errors.New("BPF program has no metadata")
)

// TagMismatchError is returned when the program with ID has tag Got, not Want.
type TagMismatchError struct {
	ID        uint32
	Want, Got perfdata.BPFTag
}

func (e *TagMismatchError) Error() string {
	return fmt.Sprintf("program %d has tag %s, not %s (id reused, or a recording from another boot)", e.ID, e.Got, e.Want)
}

// Is reports whether target is ErrTagMismatch.
func (e *TagMismatchError) Is(target error) bool { return target == ErrTagMismatch }

// TooLargeError says that perf writes no metadata for a program because
// its metadata map has more variables than a record holds.
type TooLargeError struct {
	MapID     uint32 `json:"map_id"`
	Variables int    `json:"variables"`
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("its metadata map %d has %d bpf_metadata_ variables; perf writes BPF_METADATA for at most %d", e.MapID, e.Variables, perfdata.MaxBPFMetadataEntries)
}

// Is reports whether target is ErrNoMetadata: perf writes none.
func (e *TooLargeError) Is(target error) bool { return target == ErrNoMetadata }

// MetadataError says why a program's metadata is not known exactly.
type MetadataError struct {
	ProgID uint32
	MapID  uint32 // 0 if not about one map
	Key    string // the entry, if about one
	Err    error
}

func (e *MetadataError) Error() string {
	s := fmt.Sprintf("program %d: metadata", e.ProgID)
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
// records: an error wrapping ErrNoMetadata if perf records none, MetadataErr
// if it is not known exactly.
func (p *Program) BPFMetadata() (*Metadata, error) {
	switch {
	case p.MetadataErr != nil:
		return nil, p.MetadataErr
	case p.TooLarge != nil:
		return nil, fmt.Errorf("program %d: %w", p.ID, p.TooLarge)
	case p.Metadata == nil:
		return nil, fmt.Errorf("program %d: %w", p.ID, ErrNoMetadata)
	}
	return p.Metadata, nil
}

// programTypes are libbpf's names of the program types (prog_type_name[]),
// which bpftool prints, by enum bpf_prog_type.
var programTypes = []string{
	"unspec", "socket_filter", "kprobe", "sched_cls", "sched_act", "tracepoint", "xdp",
	"perf_event", "cgroup_skb", "cgroup_sock", "lwt_in", "lwt_out", "lwt_xmit", "sock_ops",
	"sk_skb", "cgroup_device", "sk_msg", "raw_tracepoint", "cgroup_sock_addr",
	"lwt_seg6local", "lirc_mode2", "sk_reuseport", "flow_dissector", "cgroup_sysctl",
	"raw_tracepoint_writable", "cgroup_sockopt", "tracing", "struct_ops", "ext", "lsm",
	"sk_lookup", "syscall", "netfilter",
}

// TypeName is the program type as bpftool names it ("socket_filter"), or
// its number for a type libbpf does not know.
func TypeName(t ebpf.ProgramType) string {
	if int(t) < len(programTypes) {
		return programTypes[t]
	}
	return strconv.FormatUint(uint64(t), 10)
}

func parseTypeName(s string) (ebpf.ProgramType, error) {
	for i, n := range programTypes {
		if n == s {
			return ebpf.ProgramType(i), nil
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, errors.New("not a program type libbpf names, nor a number")
	}
	return ebpf.ProgramType(n), nil
}

// The JSON form of a program, the same in every output (snapshot, programs
// --json, watch): FormatVersion. Kernel addresses are "0x..." strings:
// JSON numbers above 2^53 do not survive most JSON readers.
type programJSON struct {
	ID           uint32             `json:"id"`
	Tag          jsonTag            `json:"tag"`
	Name         string             `json:"name"`
	Type         string             `json:"type"`
	LoadedAt     int64              `json:"loaded_at"`
	LoadTime     int64              `json:"load_time_ns"`
	UID          uint32             `json:"uid"`
	BTFID        uint32             `json:"btf_id"`
	MapIDs       mapIDList          `json:"map_ids"`
	Funcs        funcList           `json:"funcs"`
	Metadata     *metadataJSON      `json:"metadata,omitempty"`
	MetadataErr  *metadataErrorJSON `json:"metadata_error,omitempty"`
	TooLarge     *TooLargeError     `json:"metadata_too_large,omitempty"`
	LoadedAtNano *int64             `json:"loaded_at_ns,omitempty"`
}

type funcJSON struct {
	Tag        jsonTag `json:"tag"`
	BTFName    string  `json:"btf_name,omitempty"`
	Addr       string  `json:"addr"`
	Len        uint32  `json:"len"`
	PerfName   string  `json:"perf_name"`
	KernelName string  `json:"kernel_name"`
}

type metadataJSON struct {
	MapID     uint32    `json:"map_id"`
	MapName   string    `json:"map_name"`
	BTFID     uint32    `json:"btf_id"`
	ProgNames nameList  `json:"prog_names"`
	Entries   entryList `json:"entries"`
}

type entryJSON struct {
	Key   string          `json:"key"`
	Value string          `json:"value"`
	Typed json.RawMessage `json:"typed,omitempty"`
}

type metadataErrorJSON struct {
	MapID uint32 `json:"map_id,omitempty"`
	Key   string `json:"key,omitempty"`
	Error string `json:"error"`
}

// MarshalJSON encodes the program in the JSON form every output shares.
func (p Program) MarshalJSON() ([]byte, error) {
	j := programJSON{
		ID: p.ID, Tag: jsonTag(p.Tag), Name: p.Name, Type: TypeName(p.Type),
		LoadTime: int64(p.LoadTime), UID: p.CreatedByUID, BTFID: p.BTFID, MapIDs: p.MapIDs,
		TooLarge: p.TooLarge,
	}
	if !p.LoadedAt.IsZero() {
		j.LoadedAt = p.LoadedAt.Unix()
		ns := p.LoadedAt.UnixNano()
		j.LoadedAtNano = &ns
	}
	if j.MapIDs == nil {
		j.MapIDs = mapIDList{}
	}
	j.Funcs = make(funcList, len(p.Funcs))
	for i, f := range p.Funcs {
		j.Funcs[i] = funcJSON{Tag: jsonTag(f.Tag), BTFName: f.BTFName, Addr: "0x" + strconv.FormatUint(f.Addr, 16), Len: f.Len,
			PerfName: f.PerfName, KernelName: f.KernelName}
	}
	if md := p.Metadata; md != nil {
		m := &metadataJSON{MapID: md.MapID, MapName: md.MapName, BTFID: md.BTFID, ProgNames: md.ProgNames, Entries: entryList{}}
		for _, e := range md.Entries {
			m.Entries = append(m.Entries, entryJSON(e))
		}
		j.Metadata = m
	}
	if p.MetadataErr != nil {
		var me *MetadataError
		if !errors.As(p.MetadataErr, &me) {
			me = &MetadataError{ProgID: p.ID, Err: p.MetadataErr}
		}
		j.MetadataErr = &metadataErrorJSON{MapID: me.MapID, Key: me.Key, Error: me.Err.Error()}
	}
	return json.Marshal(&j)
}

// UnmarshalJSON decodes the JSON form of a program.
func (p *Program) UnmarshalJSON(b []byte) error {
	var j programJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	typ, err := parseTypeName(j.Type)
	if err != nil {
		return &FieldError{Field: "type", Problem: err.Error()}
	}
	*p = Program{ID: j.ID, Tag: perfdata.BPFTag(j.Tag), Name: j.Name, Type: typ, LoadTime: time.Duration(j.LoadTime),
		CreatedByUID: j.UID, BTFID: j.BTFID, MapIDs: j.MapIDs, TooLarge: j.TooLarge}
	if j.LoadedAtNano != nil {
		p.LoadedAt = time.Unix(0, *j.LoadedAtNano).UTC()
	} else if j.LoadedAt != 0 {
		p.LoadedAt = time.Unix(j.LoadedAt, 0).UTC()
	}
	for i, f := range j.Funcs {
		addr, err := parseAddr(f.Addr)
		if err != nil {
			return &FieldError{Field: fmt.Sprintf("funcs[%d].addr", i), Problem: err.Error()}
		}
		p.Funcs = append(p.Funcs, Func{Tag: perfdata.BPFTag(f.Tag), BTFName: f.BTFName, Addr: addr, Len: f.Len, PerfName: f.PerfName, KernelName: f.KernelName})
	}
	if m := j.Metadata; m != nil {
		md := &Metadata{MapID: m.MapID, MapName: m.MapName, BTFID: m.BTFID, ProgNames: m.ProgNames}
		for _, e := range m.Entries {
			md.Entries = append(md.Entries, Entry(e))
		}
		p.Metadata = md
	}
	if e := j.MetadataErr; e != nil {
		p.MetadataErr = &MetadataError{ProgID: p.ID, MapID: e.MapID, Key: e.Key, Err: errors.New(e.Error)}
	}
	return nil
}

// parseAddr parses a function address, "0x" and hex digits. Its errors
// do not quote it: a snapshot may be any file.
func parseAddr(s string) (uint64, error) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return 0, errors.New("not 0x-prefixed hex")
	}
	a, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, errors.New("not a 64-bit hex number after 0x")
	}
	return a, nil
}

// jsonTag is a BPF tag in JSON, 16 hex digits. A value that is not one is
// a json.UnmarshalTypeError, which encoding/json completes with the
// field's name and which quotes nothing of the value.
type jsonTag perfdata.BPFTag

var tagType = reflect.TypeFor[perfdata.BPFTag]()

func (t jsonTag) MarshalText() ([]byte, error) { return perfdata.BPFTag(t).MarshalText() }

func (t *jsonTag) UnmarshalText(b []byte) error {
	tag, err := perfdata.ParseBPFTag(string(b))
	if err != nil {
		return &json.UnmarshalTypeError{Value: "string", Type: tagType}
	}
	*t = jsonTag(tag)
	return nil
}

// FieldError is a JSON value that is wrong, named by its field and not
// quoted: a snapshot may be any file, a secret a user named included.
type FieldError struct {
	Field   string // as "funcs[1].addr"
	Problem string
}

func (e *FieldError) Error() string { return "field " + e.Field + ": " + e.Problem }

// jsonError says what is wrong with a JSON document without quoting any
// of it: the field and the kind of value, or the byte offset of a syntax
// error (encoding/json's own messages quote the offending character).
func jsonError(err error) error {
	var fe *FieldError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(the document)"
		}
		if te.Type == tagType {
			return &FieldError{Field: field, Problem: "not a BPF tag (16 hex digits)"}
		}
		kind, _, _ := strings.Cut(te.Value, " ") // "number 5" quotes the number
		return &FieldError{Field: field, Problem: fmt.Sprintf("a JSON %s where a %v is wanted", kind, te.Type)}
	case errors.As(err, &se):
		return fmt.Errorf("not valid JSON at byte %d", se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("JSON cut short")
	}
	return errors.New("not JSON this bpfmeta reads")
}

// programV1 is a program in a version 1 snapshot (bpfmeta before the
// shared JSON form): the type a number, the time since boot only.
type programV1 struct {
	ID           uint32             `json:"id"`
	Tag          jsonTag            `json:"tag"`
	Name         string             `json:"name"`
	Type         ebpf.ProgramType   `json:"type"`
	LoadTime     int64              `json:"load_time_ns"`
	CreatedByUID uint32             `json:"created_by_uid"`
	BTFID        uint32             `json:"btf_id"`
	MapIDs       mapIDList          `json:"map_ids"`
	Funcs        funcList           `json:"funcs"`
	Metadata     *metadataJSON      `json:"metadata,omitempty"`
	MetadataErr  *metadataErrorJSON `json:"metadata_error,omitempty"`
}

// decodeV1 decodes a version 1 program; boot is when its machine booted.
func decodeV1(b []byte, boot time.Time) (*Program, error) {
	var v programV1
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	j := programJSON{ID: v.ID, Tag: v.Tag, Name: v.Name, Type: TypeName(v.Type), LoadTime: v.LoadTime,
		UID: v.CreatedByUID, BTFID: v.BTFID, MapIDs: v.MapIDs, Funcs: v.Funcs, Metadata: v.Metadata, MetadataErr: v.MetadataErr}
	if !boot.IsZero() {
		ns := boot.Add(time.Duration(v.LoadTime)).UnixNano()
		j.LoadedAtNano = &ns
	}
	jb, err := json.Marshal(&j)
	if err != nil {
		return nil, err
	}
	p := new(Program)
	return p, p.UnmarshalJSON(jb)
}

// The most elements each array of a program's JSON form may have, checked
// as the array is decoded: a line of a few MiB can hold a million empty
// elements ("funcs":[{},{},...]), each tens or hundreds of bytes once
// decoded.
const (
	maxJSONFuncs   = 256  // BPF_MAX_SUBPROGS: a program's functions, and its prog_names
	maxJSONMapIDs  = 1024 // the kernel's MAX_USED_MAPS is 64
	maxJSONEntries = perfdata.MaxBPFMetadataEntries
)

// The arrays of a program's JSON form, decoded within their bound.
type (
	funcList  []funcJSON
	mapIDList []uint32
	nameList  []string
	entryList []entryJSON
)

func (l *funcList) UnmarshalJSON(b []byte) error {
	return decodeList(b, (*[]funcJSON)(l), maxJSONFuncs, "funcs", "functions")
}

func (l *mapIDList) UnmarshalJSON(b []byte) error {
	return decodeList(b, (*[]uint32)(l), maxJSONMapIDs, "map_ids", "map ids")
}

func (l *nameList) UnmarshalJSON(b []byte) error {
	return decodeList(b, (*[]string)(l), maxJSONFuncs, "metadata.prog_names", "prog_names")
}

func (l *entryList) UnmarshalJSON(b []byte) error {
	return decodeList(b, (*[]entryJSON)(l), maxJSONEntries, "metadata.entries", "metadata entries")
}

// decodeList decodes the JSON array b (or null), field's value, into out,
// one element at a time, and refuses one of more than most elements
// before it decodes more.
func decodeList[T any](b []byte, out *[]T, most int, field, what string) error {
	d := json.NewDecoder(bytes.NewReader(b))
	t, err := d.Token()
	switch {
	case err != nil:
		return err
	case t == nil:
		*out = nil
		return nil
	case t != json.Delim('['):
		return &FieldError{Field: field, Problem: "not an array"}
	}
	list := []T{}
	for d.More() {
		if len(list) == most {
			return &FieldError{Field: field, Problem: fmt.Sprintf("more than %d %s", most, what)}
		}
		var v T
		if err := d.Decode(&v); err != nil {
			return err // as it is: encoding/json adds the field to a type error
		}
		list = append(list, v)
	}
	if _, err := d.Token(); err != nil {
		return err
	}
	*out = list
	return nil
}
