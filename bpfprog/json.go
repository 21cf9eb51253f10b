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

// Addr is a kernel address as every JSON document of bpfmeta has it: a
// string, "0x" and lowercase hex digits. Kernel addresses are above 2^53,
// where JSON readers that use doubles (jq, JavaScript) round a number.
type Addr uint64

// String is "0x" and the address in lowercase hex.
func (a Addr) String() string { return "0x" + strconv.FormatUint(uint64(a), 16) }

// MarshalText is the address as its JSON string holds it.
func (a Addr) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses the address as MarshalText writes it (ParseAddr).
func (a *Addr) UnmarshalText(b []byte) error {
	v, err := ParseAddr(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// ParseAddr parses an address as Addr writes it. Its errors do not quote
// it: a snapshot may be any file.
func ParseAddr(s string) (Addr, error) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return 0, errors.New("not 0x-prefixed hex")
	}
	a, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, errors.New("not a 64-bit hex number after 0x")
	}
	return Addr(a), nil
}

// The JSON form of a program, the same in every document (snapshot,
// programs --json, watch: package doc, doc.FormatVersion). Kernel
// addresses are Addr strings.
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
	Tag     jsonTag `json:"tag"`
	BTFName string  `json:"btf_name,omitempty"`
	// Addr is an Addr, decoded by the program (ParseAddr) so that its
	// error names the function; null when the kernel hid it from the
	// reader (kernel.kptr_restrict, no CAP_SYSLOG: Func.Addr 0), never
	// "0x0" as if it were one.
	Addr *string `json:"addr"`
	// Len is null too when the kernel hid it with the address (it hides
	// jited_func_lens with jited_ksyms: bpf_dump_raw_ok()).
	Len        *uint32 `json:"len"`
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
		j.Funcs[i] = funcJSON{Tag: jsonTag(f.Tag), BTFName: f.BTFName,
			PerfName: f.PerfName, KernelName: f.KernelName}
		if !f.Hidden() {
			a, n := Addr(f.Addr).String(), f.Len
			j.Funcs[i].Addr, j.Funcs[i].Len = &a, &n
		}
	}
	if md := p.Metadata; md != nil {
		m := &metadataJSON{MapID: md.MapID, MapName: md.MapName, BTFID: md.BTFID, ProgNames: md.ProgNames, Entries: md.Entries}
		if m.Entries == nil {
			m.Entries = entryList{} // [], not null
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
		var addr Addr
		if f.Addr != nil { // null: hidden
			var err error
			if addr, err = ParseAddr(*f.Addr); err != nil {
				return &FieldError{Field: fmt.Sprintf("funcs[%d].addr", i), Problem: err.Error()}
			}
		}
		var n uint32
		if f.Len != nil {
			n = *f.Len
		}
		p.Funcs = append(p.Funcs, Func{Tag: perfdata.BPFTag(f.Tag), BTFName: f.BTFName, Addr: uint64(addr), Len: n, PerfName: f.PerfName, KernelName: f.KernelName})
	}
	if m := j.Metadata; m != nil {
		p.Metadata = &Metadata{MapID: m.MapID, MapName: m.MapName, BTFID: m.BTFID, ProgNames: m.ProgNames}
		if len(m.Entries) > 0 {
			p.Metadata.Entries = m.Entries
		}
	}
	if e := j.MetadataErr; e != nil {
		p.MetadataErr = &MetadataError{ProgID: p.ID, MapID: e.MapID, Key: e.Key, Err: errors.New(e.Error)}
	}
	return nil
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

// JSONError says what is wrong with a JSON document without quoting any
// of it: the field and the kind of value, or the byte offset of a syntax
// error (encoding/json's own messages quote the offending character). err
// is what encoding/json or UnmarshalJSON returned.
func JSONError(err error) error {
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

// DecodeV1 decodes a program of a version 1 snapshot; boot is when its
// machine booted (its load time is only the time since boot).
func DecodeV1(b []byte, boot time.Time) (*Program, error) {
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
	entryList []Entry
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
	return decodeList(b, (*[]Entry)(l), maxJSONEntries, "metadata.entries", "metadata entries")
}

// decodeList decodes the JSON array b (or null), field's value, into out,
// and refuses one of more than most elements before it decodes any. b is
// valid JSON, as encoding/json checks a document whole before it calls an
// UnmarshalJSON: its elements are counted by its commas (arrayLen), then
// decoded in one call.
func decodeList[T any](b []byte, out *[]T, most int, field, what string) error {
	n, ok := arrayLen(b)
	switch {
	case !ok && bytes.Equal(bytes.TrimSpace(b), []byte("null")):
		*out = nil
		return nil
	case !ok:
		return &FieldError{Field: field, Problem: "not an array"}
	case n > most:
		return &FieldError{Field: field, Problem: fmt.Sprintf("more than %d %s", most, what)}
	}
	list := make([]T, 0, n)
	if err := json.Unmarshal(b, &list); err != nil {
		return err // as it is: encoding/json adds the field to a type error
	}
	*out = list
	return nil
}

// arrayLen counts the elements of the JSON array b: the commas outside
// strings and nested values, and one. false when b is not an array. On
// JSON that is not valid the count may be anything; encoding/json then
// refuses it.
func arrayLen(b []byte) (int, bool) {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' {
		return 0, false
	}
	commas, depth, empty := 0, 0, true
	for i := 1; i < len(b)-1; i++ {
		switch c := b[i]; c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 0 {
				commas++
			}
		}
		empty = false
	}
	if empty {
		return 0, true
	}
	return commas + 1, true
}
