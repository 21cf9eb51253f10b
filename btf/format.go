package btf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// Errors reported by Format, matching the errno libbpf returns. Test with
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
	// MaxOutput is the most output Format produces before it gives up with
	// ErrLimit. A value whose data fits in a BPF map is far shorter.
	MaxOutput = 1 << 20

	// maxSteps bounds the work of one call (types visited). Huge arrays
	// stop being visited where the data ends, so real values need about
	// one step per element.
	maxSteps = 1 << 22

	// ValueLen is the size of perf's BPF_METADATA value buffer
	// (BPF_METADATA_VALUE_LEN), the n perf uses with FormatN.
	ValueLen = 256
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

// Format renders data, a value of type t, as libbpf's btf_dump__dump_type_data()
// does with .compact, .skip_names and .emit_strings set. On error it returns the
// output libbpf would have produced before failing, together with the error.
func Format(t btf.Type, data []byte) (string, error) {
	d := newDumper(data, int64(len(data)), MaxOutput, maxSteps)
	d.abort = true
	return d.run(t, 0)
}

// FormatN is Format written into a buffer of n bytes the way perf's
// format_btf_cb() fills BPF_METADATA values: at most n-1 bytes of the output.
// It returns the same error as Format, except that it reports no ErrLimit
// once the buffer is full (the output is then exact).
func FormatN(t btf.Type, data []byte, n int) (string, error) {
	d := newDumper(data, int64(len(data)), max(n-1, 0), maxSteps)
	return d.run(t, 0)
}

// FormatVar formats a variable of a data section the way perf's
// format_btf_variable() does for a bpf_metadata_* variable: the VAR's type,
// over btf__resolve_size() bytes at the variable's offset in rodata (the map
// value), into a buffer of n bytes (ValueLen for perf). Unlike Format it sees
// the whole section, as libbpf does where it reads past the value (zero checks
// and bitfields), and it knows the variable's alignment in perf's buffer.
// rodata bytes past the end are taken to be missing.
func FormatVar(v btf.VarSecinfo, rodata []byte, n int) (string, error) {
	vr, ok := v.Type.(*btf.Var)
	if !ok {
		return "", fmt.Errorf("btf: section variable %v is not a VAR: %w", v.Type, ErrInvalidType)
	}
	d := newDumper(rodata, 0, max(n-1, 0), maxSteps)
	size := resolveSize(vr.Type)
	if size < 0 {
		d.fail(int(size), "btf__resolve_size", vr.Type, int64(v.Offset), "size of variable %s", vr.Name)
		return "", d.err
	}
	d.end = min(int64(v.Offset)+size, int64(len(rodata)))
	return d.run(vr.Type, int64(v.Offset))
}

// run is btf_dump__dump_type_data() from the top level.
func (d *dumper) run(t btf.Type, off int64) (string, error) {
	ret := d.dumpTypeData(t, off, 0, 0)
	out := string(d.out)
	if d.limited() {
		// arrays swallow errors, so a limit can end the dump with ret >= 0
		if d.full && !d.abort {
			return out, nil
		}
		return out, d.err
	}
	if ret >= 0 {
		return out, nil
	}
	if d.err == nil { // not expected: every failure is recorded
		return out, &FormatError{Type: t, Offset: off, Msg: "dump failed", code: ret}
	}
	return out, d.err
}
