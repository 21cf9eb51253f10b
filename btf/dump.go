package btf

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/cilium/ebpf/btf"
)

// libbpf's functions return a size or a negative errno. The port keeps that
// convention internally, because some rules depend on the exact value (see
// checkZero for structs); format.go turns the final value into a Go error.
const (
	errTooBig  = -7   // -E2BIG: the data ends before the value
	errInval   = -22  // -EINVAL: a type libbpf cannot dump
	errNoData  = -61  // -ENODATA: a zero value, skipped (not an error)
	errNotSup  = -95  // -ENOTSUP: <unsupported kind:N>
	errLimit   = -999 // ours: a work or nesting limit was reached
	posNoData  = 61   // ENODATA, for the comparison libbpf gets wrong
	maxNesting = 256  // recursion limit; libbpf has none (the kernel rejects cycles)

	// maxStepsWhenFull is the work a Truncate dump goes on with once its buffer is
	// full, to report the error libbpf would return.
	maxStepsWhenFull = 1 << 16
)

// dumper is libbpf's struct btf_dump plus struct btf_dump_data for one
// btf_dump__dump_type_data() call.
//
// Memory is mem: offsets into it stand for addresses, and mem[0] is taken to
// be aligned for every type, as perf's calloc()ed map value is (16 bytes;
// alignments of 3, 5, 6 or 7, from enums of odd sizes, really depend on the
// address). end <= len(mem) is libbpf's data_end. libbpf reads past data_end
// in a few places (zero checks, bitfields); those reads see mem, and zero
// bytes past its end.
type dumper struct {
	mem []byte
	end int64

	// the options (Dumper)
	indentLevel                                 int
	indent                                      string
	compact, skipNames, emitZeroes, emitStrings bool
	order                                       binary.ByteOrder
	ptrSize                                     int64
	enums                                       *EnumKinds

	out   []byte
	limit int  // output bytes kept
	full  bool // output reached limit; later output is dropped
	abort bool // stop with errLimit when the output reaches limit
	steps int  // work left
	nest  int

	// btf_dump_data's iteration state
	depth             int
	isArrayMember     bool
	isArrayTerminated bool
	isArrayChar       bool

	aligns map[btf.Type]int64 // alignOf's memo, made on first use
	names  nameResolver

	// last describes the most recent failure, if failed; it is the one
	// that propagated out when the final result is negative (errors are
	// returned at once, and the ones arrays swallow are overwritten by
	// later ones). Its Msg is made from msg and msgArgs when it leaves
	// (error): an array of millions of structs past the data's end fails
	// once an element, and formatting each message was half the work of
	// such a dump. It is a value, so that a failure allocates no error
	// either (a third less time for such a dump than a new one each time).
	failed  bool
	last    FormatError
	msg     string
	msgArgs []any
}

// fail records why a libbpf function returned code and returns code.
func (d *dumper) fail(code int, fn string, t btf.Type, off int64, format string, args ...any) int {
	if d.limited() {
		return errLimit // keep the first limit error
	}
	d.last = FormatError{Func: fn, Type: t, Offset: off, code: code}
	d.failed, d.msg, d.msgArgs = true, format, args
	return code
}

// error returns the failure recorded last, its message made.
func (d *dumper) error() error {
	if !d.failed {
		return nil
	}
	e := d.last
	e.Msg = fmt.Sprintf(d.msg, d.msgArgs...)
	return &e
}

// enter counts work and nesting; it fails once a limit is reached, and from
// then on every call fails, so the dump unwinds.
func (d *dumper) enter() bool {
	if d.limited() {
		return false
	}
	d.steps--
	d.nest++
	if d.steps < 0 || d.nest > maxNesting {
		d.nest--
		what := "too much work"
		if d.steps >= 0 {
			what = "types nested too deeply"
		}
		d.fail(errLimit, "", nil, 0, "%s", what)
		return false
	}
	return true
}

func (d *dumper) leave() { d.nest-- }

func (d *dumper) limited() bool { return d.failed && d.last.code == errLimit }

// printf is btf_dump_printf() through perf's format_btf_cb(): output beyond
// limit is dropped. MaxOutput is a safety net; Dumper.Truncate is a buffer.
func (d *dumper) printf(s string) {
	if room := d.limit - len(d.out); room < len(s) {
		d.out = append(d.out, s[:max(room, 0)]...)
		if !d.full {
			if d.abort {
				d.fail(errLimit, "", nil, 0, "output longer than %d bytes", d.limit)
			}
			// The output is final; go on a little to learn libbpf's
			// error, but not round a huge array.
			d.steps = min(d.steps, maxStepsWhenFull)
		}
		d.full = true
		return
	}
	d.out = append(d.out, s...)
}

// typeValues is the btf_dump_type_values() macro: the value, then
// btf_dump_data_delim() ("," below the top level) and
// btf_dump_data_newline().
func (d *dumper) typeValues(s string) {
	d.printf(s + d.delim() + d.newline())
}

// delim is btf_dump_data_delim().
func (d *dumper) delim() string {
	if d.depth == 0 {
		return ""
	}
	return ","
}

// newline is btf_dump_data_newline().
func (d *dumper) newline() string {
	if d.compact || d.depth == 0 {
		return ""
	}
	return "\n"
}

// pfx is btf_dump_data_pfx(): the indentation of a line.
func (d *dumper) pfx() {
	if d.compact {
		return
	}
	for range d.indentLevel + d.depth {
		d.printf(d.indent)
	}
}

// byteAt reads one byte of memory; past mem it reads zero.
func (d *dumper) byteAt(off int64) byte {
	if off < 0 || off >= int64(len(d.mem)) {
		return 0
	}
	return d.mem[off]
}

// read copies n bytes of memory at off.
func (d *dumper) read(off int64, n int) [16]byte {
	var b [16]byte
	for i := 0; i < n && i < len(b); i++ {
		b[i] = d.byteAt(off + int64(i))
	}
	return b
}

// uintAt reads an unsigned integer of n <= 8 bytes at off, in the data's
// byte order.
func (d *dumper) uintAt(off int64, n int) uint64 {
	b := d.read(off, n)
	return readUint(d.order, b[:n])
}

// ptrIsAligned is ptr_is_aligned(): libbpf's alignment of t, 0 meaning "not
// aligned".
func (d *dumper) ptrIsAligned(t btf.Type, off int64) bool {
	a := d.alignOf(t)
	return a > 0 && off%a == 0
}

// dumpTypeData is btf_dump_dump_type_data(): the size of the data dumped, or
// a negative error. fname is the member's name, or "".
func (d *dumper) dumpTypeData(t btf.Type, fname string, off int64, bitsOffset, bitSz uint8) int {
	if !d.enter() {
		return errLimit
	}
	defer d.leave()

	size := d.checkOverflow(t, off, bitsOffset, bitSz)
	if size < 0 {
		return size
	}
	if err := d.checkZero(t, off, bitsOffset, bitSz); err != 0 {
		// zeroed data is expected and not an error, so simply skip it
		if err == errNoData {
			return size
		}
		return err
	}
	d.pfx()
	if !d.skipNames {
		if fname != "" {
			d.printf("." + fname + " = ")
		}
		d.emitTypeCast(t, true)
	}

	id := t
	t = skipModsAndTypedefs(id)
	var err int
	switch kindOf(t) {
	case kindUnkn, kindFwd, kindFunc, kindFuncProto, kindDeclTag:
		err = d.unsupportedData(t)
	case kindInt:
		if bitSz != 0 {
			err = d.bitfieldData(t, off, bitsOffset, bitSz)
		} else {
			err = d.intData(t.(*btf.Int), id, off)
		}
	case kindFloat:
		err = d.floatData(t.(*btf.Float), off)
	case kindPtr:
		err = d.ptrData(id, off)
	case kindArray:
		err = d.arrayData(t.(*btf.Array), off)
	case kindStruct, kindUnion:
		err = d.structData(t, off)
	case kindEnum, kindEnum64:
		e := t.(*btf.Enum)
		// handle bitfield and int enum values
		if bitSz != 0 {
			// libbpf passes the bits on in a local __s64, which
			// btf_dump_enum_data() reads back as an enum of t->size
			var raw uint64
			if raw, err = d.getBitfieldValue(e, off, bitsOffset, bitSz); err == 0 {
				var v int64
				if v, err = enumValue(e, raw); err != 0 {
					err = d.fail(err, "btf_dump_get_enum_value", e, off, "unexpected size %d for enum", e.Size)
				} else {
					err = d.enumData(e, v)
				}
			}
		} else {
			var v int64
			if v, err = d.getEnumValue(e, id, off); err == 0 {
				err = d.enumData(e, v)
			}
		}
	case kindVar:
		err = d.varData(t.(*btf.Var), off)
	case kindDatasec:
		err = d.datasecData(t.(*btf.Datasec), off)
	default:
		return d.fail(errInval, "btf_dump_dump_type_data", t, off, "unexpected kind %T", t)
	}
	if err < 0 {
		return err
	}
	return size
}

// checkOverflow is btf_dump_type_data_check_overflow(): the size of t, or
// errTooBig if a base type (only those) does not fit before the end.
func (d *dumper) checkOverflow(t btf.Type, off int64, bitsOffset, bitSz uint8) int {
	const fn = "btf_dump_type_data_check_overflow"
	if bitSz != 0 {
		// bits_offset is at most 7. bit_sz is at most 255.
		nrBytes := int64(uint8((int(bitsOffset) + int(bitSz) + 7) / 8))
		if off+nrBytes > d.end {
			return d.fail(errTooBig, fn, t, off, "%d-bit bitfield at bit %d needs %d bytes, have %d", bitSz, bitsOffset, nrBytes, max(d.end-off, 0))
		}
		return int(nrBytes)
	}

	size := resolveSize(t, d.ptrSize)
	if size < 0 || size >= 1<<31-1 {
		return d.fail(errInval, fn, t, off, "unexpected size [%d]", size)
	}
	// Only base types are checked, so that part of a struct, union or array
	// is shown even if the data ends inside it.
	base := skipModsAndTypedefs(t)
	if base == nil {
		return d.fail(errInval, fn, t, off, "unexpected error skipping mods/typedefs")
	}
	switch kindOf(base) {
	case kindInt, kindFloat, kindPtr, kindEnum, kindEnum64:
		if off+int64(bitsOffset/8)+size > d.end {
			return d.fail(errTooBig, fn, t, off, "%d bytes needed, have %d", size, max(d.end-off, 0))
		}
	}
	return int(size)
}

// checkZero is btf_dump_type_data_check_zero(): errNoData if the value is
// zero and so skipped, 0 if it is to be shown, or an error.
func (d *dumper) checkZero(t btf.Type, off int64, bitsOffset, bitSz uint8) int {
	// Zeroes are shown at the top level, and for members of arrays that are
	// not char arrays. Note that libbpf never clears is_array_char: after one
	// char array printed as an array, zeroes are skipped in every later
	// array of the same dump.
	if d.emitZeroes || d.depth == 0 || (d.isArrayMember && !d.isArrayChar) {
		return 0
	}
	if !d.enter() {
		return errLimit
	}
	defer d.leave()
	return d.checkZeroAt(t, off, bitsOffset, bitSz)
}

func (d *dumper) checkZeroAt(t btf.Type, off int64, bitsOffset, bitSz uint8) int {
	id := t
	t = skipModsAndTypedefs(id)
	switch kindOf(t) {
	case kindInt:
		if bitSz != 0 {
			return d.bitfieldCheckZero(t, off, bitsOffset, bitSz)
		}
		return d.baseTypeCheckZero(t, off)
	case kindFloat, kindPtr:
		return d.baseTypeCheckZero(t, off)
	case kindArray:
		a := t.(*btf.Array)
		elemSize := uint32(resolveSize(a.Type, d.ptrSize)) // libbpf keeps it in a __u32
		elem := skipModsAndTypedefs(a.Type)
		isChar := kindOf(elem) == kindInt && elemSize == 1
		// If any element is non-zero the array is shown, except that a char
		// array starting with a NUL counts as zero.
		for i := int64(0); i < int64(a.Nelems); i++ {
			if i == 0 && isChar && d.byteAt(off) == 0 {
				return errNoData
			}
			eoff := off + i*int64(elemSize)
			err := d.checkZero(a.Type, eoff, bitsOffset, 0)
			if err != errNoData {
				return err
			}
			// Past the end of memory every element reads as zero, and
			// elements of size 0 are all the same one: all the remaining
			// elements give the same answer as this one.
			if eoff >= int64(len(d.mem)) || elemSize == 0 {
				break
			}
		}
		return errNoData
	case kindStruct, kindUnion:
		// libbpf means "if any member is non-zero, the struct is shown", but
		// compares with ENODATA instead of -ENODATA, so the first member
		// decides: a struct whose first member is zero is skipped whole.
		_, members := composite(t)
		for _, m := range members {
			moff := int64(m.Offset)
			err := d.checkZero(m.Type, off+moff/8, uint8(moff%8), memberBitfieldSize(m))
			if err != posNoData {
				return err
			}
		}
		return errNoData
	case kindEnum, kindEnum64:
		// A bitfield enum is checked over all t->size bytes at its start,
		// not over its bits.
		v, err := d.getEnumValue(t.(*btf.Enum), id, off)
		if err != 0 {
			return err
		}
		if v == 0 {
			return errNoData
		}
		return 0
	default:
		return 0
	}
}

// baseTypeCheckZero is btf_dump_base_type_check_zero() for ints, floats and
// pointers.
func (d *dumper) baseTypeCheckZero(t btf.Type, off int64) int {
	n := typeSize(t)
	if kindOf(t) == kindPtr {
		n = d.ptrSize
	}
	if n < 1 || n > 16 {
		return d.fail(errInval, "btf_dump_base_type_check_zero", t, off, "unexpected size %d", n)
	}
	for i := int64(0); i < n; i++ {
		if d.byteAt(off+i) != 0 {
			return 0
		}
	}
	return errNoData
}

// getBitfieldValue is btf_dump_get_bitfield_value(): it reads t->size bytes
// (past the bitfield, and past the checked range) and shifts the field out.
func (d *dumper) getBitfieldValue(t btf.Type, off int64, bitsOffset, bitSz uint8) (uint64, int) {
	const fn = "btf_dump_get_bitfield_value"
	startBit := bitsOffset % 8
	nrBytes := int64(uint8((int(startBit) + int(bitSz) + 7) / 8))
	if off+nrBytes > d.end {
		return 0, d.fail(errTooBig, fn, t, off, "%d-bit bitfield at bit %d needs %d bytes, have %d", bitSz, bitsOffset, nrBytes, max(d.end-off, 0))
	}
	size := typeSize(t)
	if size > 8 {
		return 0, d.fail(errInval, fn, t, off, "unexpected bitfield size %d", size)
	}
	if bitSz == 0 && bitsOffset == 0 {
		// Only btf_dump_get_enum_value() asks for this, for an enum that is
		// not aligned. libbpf then shifts a __u64 by 64, which is undefined;
		// the perf we compare with gets 0 (as if the shifts were folded at
		// compile time), so such an enum reads as 0: it is skipped as zero
		// inside a struct and shows the name of value 0 inside an array.
		return 0, 0
	}
	// The bytes are read as a number in the data's byte order, and the
	// field's bits counted from the low end (little-endian) or the high end.
	num := d.uintAt(off, int(size))
	nrCopyBits := bitSz + bitsOffset
	if d.order == binary.BigEndian {
		nrCopyBits = uint8(size*8) - bitsOffset
	}
	// __u16 shift counts; x86-64 shifts use the count modulo 64
	left := uint16(64-int(nrCopyBits)) & 63
	right := uint16(64-int(bitSz)) & 63
	return (num << left) >> right, 0
}

// bitfieldCheckZero is btf_dump_bitfield_check_zero().
func (d *dumper) bitfieldCheckZero(t btf.Type, off int64, bitsOffset, bitSz uint8) int {
	v, err := d.getBitfieldValue(t, off, bitsOffset, bitSz)
	if err != 0 {
		return err
	}
	if v == 0 {
		return errNoData
	}
	return 0
}

// bitfieldData is btf_dump_bitfield_data(): bitfields print in hex.
func (d *dumper) bitfieldData(t btf.Type, off int64, bitsOffset, bitSz uint8) int {
	v, err := d.getBitfieldValue(t, off, bitsOffset, bitSz)
	if err != 0 {
		return err
	}
	d.typeValues("0x" + strconv.FormatUint(v, 16))
	return 0
}

// unsupportedData is btf_dump_unsupported_data().
func (d *dumper) unsupportedData(t btf.Type) int {
	d.printf(fmt.Sprintf("<unsupported kind:%d>", kindOf(t)))
	return d.fail(errNotSup, "btf_dump_unsupported_data", t, 0, "unsupported kind %d", kindOf(t))
}

// int128Hex is a 128-bit int as btf_dump_int_data() prints one: in hex,
// with no leading zeros, whatever its signedness. first and second are the
// 8-byte words at its offset and 8 bytes after, read in order bo.
func int128Hex(first, second uint64, bo binary.ByteOrder) string {
	lo, hi := first, second // ints[0] is the low half on a little-endian machine
	if bo == binary.BigEndian {
		lo, hi = hi, lo
	}
	if hi == 0 {
		return "0x" + strconv.FormatUint(lo, 16)
	}
	return fmt.Sprintf("0x%x%016x", hi, lo)
}

// intData is btf_dump_int_data().
func (d *dumper) intData(t *btf.Int, id btf.Type, off int64) int {
	sz := int(t.Size)
	sign := t.Encoding&btf.Signed != 0
	if sz == 0 || sz > 16 {
		return d.fail(errInval, "btf_dump_int_data", t, off, "unexpected size %d", sz)
	}
	lo := d.uintAt(off, min(sz, 8))
	switch sz {
	case 16:
		// ints[0] is the low half on a little-endian machine
		d.typeValues(int128Hex(lo, d.uintAt(off+8, 8), d.order))
	case 8:
		if sign {
			d.typeValues(strconv.FormatInt(int64(lo), 10))
		} else {
			d.typeValues(strconv.FormatUint(lo, 10))
		}
	case 4:
		if sign {
			d.typeValues(strconv.FormatInt(int64(int32(lo)), 10))
		} else {
			d.typeValues(strconv.FormatUint(uint64(uint32(lo)), 10))
		}
	case 2:
		if sign {
			d.typeValues(strconv.FormatInt(int64(int16(lo)), 10))
		} else {
			d.typeValues(strconv.FormatUint(uint64(uint16(lo)), 10))
		}
	case 1:
		c := byte(lo)
		if d.isArrayChar {
			if d.isArrayTerminated {
				break
			}
			if c == 0 {
				d.typeValues(`'\0'`)
				d.isArrayTerminated = true
				break
			}
			if isprint(c) {
				d.typeValues("'" + string(rune(c)) + "'")
				break
			}
		}
		if sign {
			d.typeValues(strconv.Itoa(int(int8(c))))
		} else {
			d.typeValues(strconv.Itoa(int(c)))
		}
	default:
		return d.fail(errInval, "btf_dump_int_data", t, off, "unexpected sz %d", sz)
	}
	return 0
}

// floatData is btf_dump_float_data(): "%Lf", "%lf" or "%f" by size.
func (d *dumper) floatData(t *btf.Float, off int64) int {
	switch t.Size {
	case 16:
		d.typeValues(cLongDouble(d.read(off, 16)))
	case 8:
		d.typeValues(cDouble(math.Float64frombits(d.uintAt(off, 8))))
	case 4:
		d.typeValues(cDouble(float64(math.Float32frombits(uint32(d.uintAt(off, 4))))))
	default:
		return d.fail(errInval, "btf_dump_float_data", t, off, "unexpected size %d", t.Size)
	}
	return 0
}

// ptrData is btf_dump_ptr_data(): "%p" when aligned, else "0x%llx" (so a
// NULL pointer is "(nil)" or "0x0").
func (d *dumper) ptrData(id btf.Type, off int64) int {
	p := d.uintAt(off, int(min(d.ptrSize, 8)))
	if d.ptrIsAligned(id, off) {
		d.typeValues(cPointer(p))
	} else {
		d.typeValues("0x" + strconv.FormatUint(p, 16))
	}
	return 0
}

// getEnumValue is btf_dump_get_enum_value(). id is the type as referenced
// (perhaps a typedef or const), whose alignment libbpf checks.
func (d *dumper) getEnumValue(t *btf.Enum, id btf.Type, off int64) (int64, int) {
	if !d.ptrIsAligned(id, off) {
		v, err := d.getBitfieldValue(t, off, 0, 0)
		return int64(v), err
	}
	v, err := enumValue(t, d.uintAt(off, int(min(t.Size, 8))))
	if err != 0 {
		return 0, d.fail(err, "btf_dump_get_enum_value", t, off, "unexpected size %d for enum", t.Size)
	}
	return v, 0
}

// enumValue reads an enum of t's size from raw as libbpf does from memory:
// signed enums (kflag) sign-extend, 8-byte enums are always signed.
func enumValue(t *btf.Enum, raw uint64) (int64, int) {
	switch t.Size {
	case 8:
		return int64(raw), 0
	case 4:
		if t.Signed {
			return int64(int32(raw)), 0
		}
		return int64(uint32(raw)), 0
	case 2:
		if t.Signed {
			return int64(int16(raw)), 0
		}
		return int64(uint16(raw)), 0
	case 1:
		if t.Signed {
			return int64(int8(raw)), 0
		}
		return int64(uint8(raw)), 0
	}
	return 0, errInval
}

// isEnum64 tells BTF_KIND_ENUM64 from BTF_KIND_ENUM (cilium/ebpf's Enum is
// either): by the raw BTF's word when there is one, else by size.
func (d *dumper) isEnum64(t *btf.Enum) bool {
	if k, ok := d.enums.enum64(t); ok {
		return k
	}
	return t.Size == 8
}

// enumData is btf_dump_enum_data() once btf_dump_get_enum_value() has read
// the value: the enumerator's name, or the number.
//
// libbpf's format for a number is `is_signed ? "%d" : "%u"` passed to the
// btf_dump_type_values() macro, which appends "%s%s" for the delimiter and
// newline: string literal concatenation makes that `is_signed ? "%d" :
// "%u%s%s"`, so a signed enum's (kflag's, clang 15 and later) number is
// printed without the "," and newline after it. The same holds for
// ENUM64's "%lldLL" and "%lluULL".
func (d *dumper) enumData(t *btf.Enum, value int64) int {
	if !d.isEnum64(t) {
		for _, e := range t.Values {
			// struct btf_enum's val is a __s32: an unsigned enum's values
			// from 2^31 up never match.
			if value == int64(int32(uint32(e.Value))) {
				d.typeValues(e.Name)
				return 0
			}
		}
		// "%d" or "%u" of the __s64: the low 32 bits
		if t.Signed {
			d.printf(strconv.FormatInt(int64(int32(value)), 10))
		} else {
			d.typeValues(strconv.FormatUint(uint64(uint32(value)), 10))
		}
		return 0
	}
	for _, e := range t.Values {
		if uint64(value) == e.Value {
			d.typeValues(e.Name)
			return 0
		}
	}
	if t.Signed {
		d.printf(strconv.FormatInt(value, 10) + "LL")
	} else {
		d.typeValues(strconv.FormatUint(uint64(value), 10) + "ULL")
	}
	return 0
}

// stringData is btf_dump_string_data() (emit_strings): 0 if the array was
// printed as a string, else an error and nothing printed.
func (d *dumper) stringData(a *btf.Array, off int64) int {
	const fn = "btf_dump_string_data"
	var i int64
	// Make sure it is a NUL-terminated string.
	for i = 0; i < int64(a.Nelems); i++ {
		if off+i >= d.end {
			return d.fail(errTooBig, fn, a, off, "no NUL before the end of the data")
		}
		if d.byteAt(off+i) == 0 {
			break
		}
	}
	if i == int64(a.Nelems) {
		// the caller prints it as a regular array
		return d.fail(errInval, fn, a, off, "no NUL in %d elements", a.Nelems)
	}
	d.pfx()
	s := make([]byte, 0, i+2)
	s = append(s, '"')
	for j := int64(0); j < i; j++ {
		c := d.byteAt(off + j)
		if isprint(c) {
			s = append(s, c)
		} else {
			s = fmt.Appendf(s, `\x%02x`, c)
		}
	}
	s = append(s, '"')
	d.printf(string(s))
	return 0
}

// arrayData is btf_dump_array_data(). Errors of elements are ignored, as in
// libbpf: the array goes on and is closed.
func (d *dumper) arrayData(a *btf.Array, off int64) int {
	elem := skipModsAndTypedefs(a.Type)
	elemSize := resolveSize(a.Type, d.ptrSize)
	if elemSize <= 0 {
		return d.fail(errInval, "btf_dump_array_data", a, off, "unexpected elem size %d", elemSize)
	}
	if kindOf(elem) == kindInt && elemSize == 1 {
		// BTF_INT_CHAR is never set, so any 1-byte int array is chars
		if d.emitStrings && d.stringData(a, off) == 0 {
			return 0
		}
		d.isArrayChar = true // and never cleared
	}

	// depth goes up before the bracket and down before the closing one,
	// as in libbpf, so that newline() and pfx() see the inner depth.
	d.depth++
	d.printf("[" + d.newline())
	isArrayMember := d.isArrayMember
	d.isArrayMember = true
	isArrayTerminated := d.isArrayTerminated
	d.isArrayTerminated = false
	base := false
	switch kindOf(elem) {
	case kindInt, kindFloat, kindPtr, kindEnum, kindEnum64:
		base = true
	}
	for i := int64(0); i < int64(a.Nelems); i++ {
		if d.isArrayTerminated || d.limited() {
			break
		}
		eoff := off + i*elemSize
		// A base-type element past the end fails the overflow check and
		// prints nothing, and so do all the ones after it: stop here
		// instead of going round up to 2^32 times.
		if base && eoff+elemSize > d.end {
			d.checkOverflow(a.Type, eoff, 0, 0) // for the error libbpf would record
			break
		}
		d.dumpTypeData(a.Type, "", eoff, 0, 0)
	}
	d.isArrayMember = isArrayMember
	d.isArrayTerminated = isArrayTerminated
	d.depth--
	d.pfx()
	d.typeValues("]")
	return 0
}

// structData is btf_dump_struct_data(): a member's error ends the dump, with
// no closing brace.
func (d *dumper) structData(t btf.Type, off int64) int {
	_, members := composite(t)
	d.depth++
	d.printf("{" + d.newline())
	err := 0
	for _, m := range members {
		moff := int64(m.Offset)
		err = d.dumpTypeData(m.Type, m.Name, off+moff/8, uint8(moff%8), memberBitfieldSize(m))
		if err < 0 {
			return err
		}
	}
	d.depth--
	d.pfx()
	d.typeValues("}")
	return err
}

// varData is btf_dump_var_data(): "[linkage] type name = value". perf never
// dumps a VAR (it dumps the VAR's type), and the kernel does not accept one
// as a member, so this is reached only with hand-built types.
func (d *dumper) varData(v *btf.Var, off int64) int {
	switch v.Linkage {
	case btf.StaticVar:
		d.printf("static ")
	case btf.ExternVar:
		d.printf("extern ")
	}
	d.emitTypeCast(v.Type, false)
	d.printf(" " + v.Name + " = ")
	return d.dumpTypeData(v.Type, "", off, 0, 0)
}

// datasecData is btf_dump_datasec_data().
func (d *dumper) datasecData(ds *btf.Datasec, off int64) int {
	d.typeValues(`SEC("` + ds.Name + `") `)
	for _, vsi := range ds.Vars {
		if err := d.dumpTypeData(vsi.Type, "", off+int64(vsi.Offset), 0, 0); err < 0 {
			return err
		}
		d.printf(";")
	}
	return 0
}
