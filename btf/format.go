package btf

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// Errors reported by Dump, matching the errno libbpf returns. Test with
// errors.Is; the *FormatError says where.
var (
	// ErrDataTooSmall is libbpf's -E2BIG: the data ends inside a value.
	ErrDataTooSmall = errors.New("data too small for type")
	// ErrInvalidType is libbpf's -EINVAL: a type it cannot dump, such as
	// an int of 3 bytes, a bitfield in an __int128 or a forward declaration.
	ErrInvalidType = errors.New("invalid type")
	// ErrUnsupportedKind is libbpf's -ENOTSUP, after "<unsupported kind:N>".
	ErrUnsupportedKind = errors.New("unsupported kind")
	// ErrLimit means the types or the output were too large to finish:
	// nesting deeper than libbpf's callers would see, or more than
	// MaxOutput bytes of output. libbpf has no such limit.
	ErrLimit = errors.New("limit exceeded")
)

const (
	// MaxOutput is the most output Dump produces before it gives up with
	// ErrLimit. A value whose data fits in a BPF map is far shorter.
	MaxOutput = 1 << 20

	// maxSteps bounds the work of one call (types visited). Huge arrays
	// stop being visited where the data ends, so real values need about
	// one step per element.
	maxSteps = 1 << 22

	// maxIndent is the longest indent string libbpf keeps: it copies
	// indent_str into a char[32] with libbpf_strlcpy().
	maxIndent = 31
)

// FormatError says which libbpf function failed, on which type and at which
// byte offset of the data.
type FormatError struct {
	Func   string   // the libbpf function that fails this way
	Type   btf.Type // the type being dumped, if known
	Offset int64    // byte offset into the data
	Msg    string
	code   int
}

func (e *FormatError) Error() string {
	s := "btf: "
	if e.Func != "" {
		s += e.Func + ": "
	}
	if e.Type != nil {
		s += fmt.Sprintf("%v: ", e.Type)
	}
	return s + fmt.Sprintf("%s at offset %d: %v", e.Msg, e.Offset, e.Unwrap())
}

func (e *FormatError) Unwrap() error {
	switch e.code {
	case errTooBig:
		return ErrDataTooSmall
	case errNotSup:
		return ErrUnsupportedKind
	case errLimit:
		return ErrLimit
	default:
		return ErrInvalidType
	}
}

// A Dumper prints values of BTF types as libbpf's btf_dump__dump_type_data()
// does. Its boolean fields are btf_dump_type_data_opts' (all false: one
// member a line, with names and type casts, zero members left out); the
// others describe the machine the data is from, which a btf.Type does not
// say, and how much output to keep. The zero Dumper prints as libbpf's
// defaults do, for a 64-bit little-endian machine.
//
// A Dumper may be used for any number of values, by several goroutines at
// once. Each call is a new btf_dump object in libbpf's terms: the names it
// gives clashing types ("name___2") start afresh.
type Dumper struct {
	// IndentLevel and Indent are indent_level and indent_str: without
	// Compact, a line starts with IndentLevel + nesting depth copies of
	// Indent ("" for a tab, as libbpf; libbpf keeps at most 31 bytes).
	IndentLevel int
	Indent      string
	// Compact puts the whole value on one line.
	Compact bool
	// SkipNames leaves out member names (".a = ") and type casts ("(int)").
	SkipNames bool
	// EmitZeroes shows members whose value is zero.
	EmitZeroes bool
	// EmitStrings shows NUL-terminated char arrays as "strings" (libbpf
	// 1.6 and later).
	EmitStrings bool

	// ByteOrder is the byte order of the data (nil: little-endian), as
	// libbpf reads data of the machine it runs on. long double is always
	// taken to be x86's 80-bit extended format.
	ByteOrder binary.ByteOrder
	// PointerSize is the size of a pointer in the data (0: 8).
	PointerSize int
	// Enums says which 8-byte enums were BTF_KIND_ENUM rather than ENUM64
	// in the BTF the types came from (see EnumKinds); nil: all of them
	// are ENUM64, as cilium/ebpf's btf.Builder writes them.
	Enums *EnumKinds

	// Truncate, when not 0, keeps only the first Truncate bytes of the
	// output (none if it is negative), as a caller that prints into a
	// fixed buffer does (perf keeps 255 bytes of each metadata value). The
	// dump still goes on to the error libbpf would return, within limits,
	// and MaxOutput does not apply.
	Truncate int
}

// Dump prints data, a value of type t. On error it returns the output
// libbpf would have produced before failing, together with the error.
func (o *Dumper) Dump(t btf.Type, data []byte) (string, error) {
	d := o.newDumper(data, int64(len(data)))
	return d.run(t, 0)
}

// DumpVar prints variable v of a data section whose contents are section
// (a map value): v's type, over btf__resolve_size() bytes at v's offset,
// as perf's format_btf_variable() dumps a bpf_metadata_* variable. Unlike
// Dump it sees the whole section, as libbpf does where it reads past the
// value (zero checks and bitfields), and it knows the variable's alignment.
// Bytes past the end of section are taken to be missing.
func (o *Dumper) DumpVar(v btf.VarSecinfo, section []byte) (string, error) {
	vr, ok := v.Type.(*btf.Var)
	if !ok {
		return "", fmt.Errorf("btf: section variable %v is not a VAR: %w", v.Type, ErrInvalidType)
	}
	d := o.newDumper(section, 0)
	size := resolveSize(vr.Type, d.ptrSize)
	if size < 0 {
		d.fail(int(size), "btf__resolve_size", vr.Type, int64(v.Offset), "size of variable %s", vr.Name)
		return "", d.error()
	}
	d.end = min(int64(v.Offset)+size, int64(len(section)))
	return d.run(vr.Type, int64(v.Offset))
}

func (o *Dumper) newDumper(mem []byte, end int64) *dumper {
	d := &dumper{
		mem:         mem,
		end:         min(end, int64(len(mem))),
		limit:       MaxOutput,
		abort:       true,
		steps:       maxSteps,
		indentLevel: o.IndentLevel,
		indent:      o.Indent,
		compact:     o.Compact,
		skipNames:   o.SkipNames,
		emitZeroes:  o.EmitZeroes,
		emitStrings: o.EmitStrings,
		order:       o.ByteOrder,
		ptrSize:     int64(o.PointerSize),
		enums:       o.Enums,
	}
	if o.Truncate != 0 {
		d.limit, d.abort = max(o.Truncate, 0), false
	}
	if d.indent == "" {
		d.indent = "\t"
	}
	if len(d.indent) > maxIndent {
		d.indent = d.indent[:maxIndent]
	}
	d.order = orderOr(d.order)
	if d.ptrSize == 0 {
		d.ptrSize = defaultPtrSize
	}
	return d
}

// run is btf_dump__dump_type_data() from the top level.
func (d *dumper) run(t btf.Type, off int64) (string, error) {
	ret := d.dumpTypeData(t, "", off, 0, 0)
	out := string(d.out)
	if d.limited() {
		// arrays swallow errors, so a limit can end the dump with ret >= 0
		if d.full && !d.abort {
			return out, nil
		}
		return out, d.error()
	}
	if ret >= 0 {
		return out, nil
	}
	if !d.failed { // not expected: every failure is recorded
		return out, &FormatError{Type: t, Offset: off, Msg: "dump failed", code: ret}
	}
	return out, d.error()
}
