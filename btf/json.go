package btf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/cilium/ebpf/btf"
)

// JSON renders data, a value of type t in the byte order of the machine the
// data comes from (little endian when bo is nil), as a JSON value for
// programs, not people: integers and floats as numbers (integers beyond
// ±2^53 as decimal strings, which readers that use doubles cannot round;
// 16-byte integers as "0x..." strings), bools as true/false, enums by their enumerator's
// name (a number when none matches), char arrays that hold a NUL-terminated
// UTF-8 string as strings (else arrays of numbers), other arrays as arrays,
// structs and unions as objects with their members in order (the members
// of anonymous ones inline), pointers as "0x..." strings. It is the typed
// counterpart of bpftool's btf_dumper, not of libbpf's typed-data dumper.
// Types it cannot render (functions, forward declarations) are errors.
func JSON(t btf.Type, data []byte, bo binary.ByteOrder) ([]byte, error) {
	j := jsonDumper{data: data, bo: orderOr(bo), steps: maxSteps}
	if err := j.value(t, 0, 0, 0, 0); err != nil {
		return nil, err
	}
	return j.out.Bytes(), nil
}

// JSONVar is JSON for a variable of a data section: the VAR's type at its
// offset in the section's data (little endian).
func JSONVar(v btf.VarSecinfo, section []byte) ([]byte, error) {
	vr, ok := v.Type.(*btf.Var)
	if !ok {
		return nil, fmt.Errorf("btf: section variable %v is not a VAR: %w", v.Type, ErrInvalidType)
	}
	end := int64(v.Offset) + int64(v.Size)
	if end > int64(len(section)) {
		return nil, fmt.Errorf("btf: variable %s ends past its section: %w", vr.Name, ErrDataTooSmall)
	}
	return JSON(vr.Type, section[v.Offset:end], nil)
}

type jsonDumper struct {
	data  []byte
	bo    binary.ByteOrder
	out   bytes.Buffer
	steps int
}

var errJSONLimit = fmt.Errorf("btf: value too large or nested too deeply: %w", ErrLimit)

func (j *jsonDumper) value(t btf.Type, off int64, bitOff, bitSize uint8, depth int) error {
	if j.steps--; j.steps < 0 || depth > maxNesting {
		return errJSONLimit
	}
	t = skipModsAndTypedefs(t)
	if t == nil {
		return errJSONLimit
	}
	switch t := t.(type) {
	case *btf.Int:
		if bitSize != 0 {
			v, err := j.bits(off, bitOff, bitSize)
			if err != nil {
				return err
			}
			if t.Encoding&btf.Signed != 0 && bitSize < 64 && v&(1<<(bitSize-1)) != 0 {
				j.int(int64(v | ^(1<<bitSize - 1)))
			} else {
				j.uintValue(v)
			}
			return nil
		}
		return j.integer(t, off)
	case *btf.Enum:
		var v uint64
		var err error
		if bitSize != 0 {
			v, err = j.bits(off, bitOff, bitSize)
		} else {
			v, err = j.uint(off, int(t.Size))
		}
		if err != nil {
			return err
		}
		sv := signExtend(v, int(t.Size))
		for _, e := range t.Values {
			if e.Value == v || t.Signed && int64(e.Value) == sv {
				j.str(e.Name)
				return nil
			}
		}
		if t.Signed {
			j.int(sv)
		} else {
			j.uintValue(v)
		}
		return nil
	case *btf.Float:
		return j.float(t, off)
	case *btf.Pointer:
		v, err := j.uint(off, defaultPtrSize)
		if err != nil {
			return err
		}
		j.str("0x" + strconv.FormatUint(v, 16))
		return nil
	case *btf.Array:
		return j.array(t, off, depth)
	case *btf.Struct:
		return j.object(t.Members, off, depth)
	case *btf.Union:
		return j.object(t.Members, off, depth)
	}
	return fmt.Errorf("btf: no JSON for %v: %w", t, ErrInvalidType)
}

// float writes a float as a JSON number, or as a string where JSON has no
// number for it (NaN, infinities).
func (j *jsonDumper) float(t *btf.Float, off int64) error {
	v, err := j.uint(off, int(min(t.Size, 8)))
	if err != nil {
		return err
	}
	var f float64
	switch t.Size {
	case 4:
		f = float64(math.Float32frombits(uint32(v)))
	case 8:
		f = math.Float64frombits(v)
	default:
		return fmt.Errorf("btf: a %d-byte float: %w", t.Size, ErrInvalidType)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		j.str(strconv.FormatFloat(f, 'g', -1, 64))
	} else {
		j.out.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return nil
}

func (j *jsonDumper) integer(t *btf.Int, off int64) error {
	if t.Size == 16 {
		lo, err := j.uint(off, 8)
		if err != nil {
			return err
		}
		hi, err := j.uint(off+8, 8)
		if err != nil {
			return err
		}
		j.str(int128Hex(lo, hi, j.bo))
		return nil
	}
	v, err := j.uint(off, int(t.Size))
	if err != nil {
		return err
	}
	switch {
	case t.Encoding&btf.Bool != 0:
		j.out.WriteString(strconv.FormatBool(v != 0))
	case t.Encoding&btf.Signed != 0:
		j.int(signExtend(v, int(t.Size)))
	default:
		j.uintValue(v)
	}
	return nil
}

func (j *jsonDumper) array(a *btf.Array, off int64, depth int) error {
	elemSize := resolveSize(a.Type, defaultPtrSize)
	if elemSize < 0 {
		return fmt.Errorf("btf: array of %v: %w", a.Type, ErrInvalidType)
	}
	if off+elemSize*int64(a.Nelems) > int64(len(j.data)) {
		return ErrDataTooSmall
	}
	if e, ok := skipModsAndTypedefs(a.Type).(*btf.Int); ok && e.Size == 1 {
		b := j.data[off : off+int64(a.Nelems)]
		if i := bytes.IndexByte(b, 0); i >= 0 && utf8.Valid(b[:i]) {
			j.str(string(b[:i]))
			return nil
		}
	}
	j.out.WriteByte('[')
	for i := int64(0); i < int64(a.Nelems); i++ {
		if i > 0 {
			j.out.WriteByte(',')
		}
		if err := j.value(a.Type, off+i*elemSize, 0, 0, depth+1); err != nil {
			return err
		}
	}
	j.out.WriteByte(']')
	return nil
}

func (j *jsonDumper) object(members []btf.Member, off int64, depth int) error {
	j.out.WriteByte('{')
	if err := j.members(members, off, depth, true); err != nil {
		return err
	}
	j.out.WriteByte('}')
	return nil
}

// members writes the members as object fields, those of anonymous struct
// and union members inline.
func (j *jsonDumper) members(members []btf.Member, off int64, depth int, first bool) error {
	for _, m := range members {
		moff := off + int64(m.Offset)/8
		if m.Name == "" {
			switch mt := skipModsAndTypedefs(m.Type).(type) {
			case *btf.Struct:
				if err := j.members(mt.Members, moff, depth+1, first && j.out.Bytes()[j.out.Len()-1] == '{'); err != nil {
					return err
				}
				continue
			case *btf.Union:
				if err := j.members(mt.Members, moff, depth+1, first && j.out.Bytes()[j.out.Len()-1] == '{'); err != nil {
					return err
				}
				continue
			}
		}
		if j.out.Bytes()[j.out.Len()-1] != '{' {
			j.out.WriteByte(',')
		}
		j.str(m.Name)
		j.out.WriteByte(':')
		if err := j.value(m.Type, moff, uint8(m.Offset%8), uint8(m.BitfieldSize), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// maxExactInt is the largest integer a JSON reader that uses doubles (jq,
// JavaScript) reads exactly: beyond it, integers are written as strings.
const maxExactInt = 1 << 53

func (j *jsonDumper) int(v int64) {
	if v > maxExactInt || v < -maxExactInt {
		j.str(strconv.FormatInt(v, 10))
		return
	}
	j.out.WriteString(strconv.FormatInt(v, 10))
}

func (j *jsonDumper) uintValue(v uint64) {
	if v > maxExactInt {
		j.str(strconv.FormatUint(v, 10))
		return
	}
	j.out.WriteString(strconv.FormatUint(v, 10))
}

func (j *jsonDumper) str(s string) {
	b, _ := json.Marshal(s)
	j.out.Write(b)
}

// uint reads an n-byte unsigned integer (n <= 8) at off.
func (j *jsonDumper) uint(off int64, n int) (uint64, error) {
	if n < 1 || n > 8 {
		return 0, fmt.Errorf("btf: a %d-byte integer: %w", n, ErrInvalidType)
	}
	if off < 0 || off+int64(n) > int64(len(j.data)) {
		return 0, ErrDataTooSmall
	}
	return readUint(j.bo, j.data[off:off+int64(n)]), nil
}

// bits reads a bitfield of size bits at bit offset bitOff of the integer
// at off.
func (j *jsonDumper) bits(off int64, bitOff, size uint8) (uint64, error) {
	if int(bitOff)+int(size) > 64 {
		return 0, fmt.Errorf("btf: a bitfield past 64 bits: %w", ErrInvalidType)
	}
	nb := (int(bitOff) + int(size) + 7) / 8
	v, err := j.uint(off, nb)
	if err != nil {
		return 0, err
	}
	if j.bo == binary.BigEndian {
		v >>= uint(8*nb) - uint(bitOff) - uint(size)
	} else {
		v >>= bitOff
	}
	if size < 64 {
		v &= 1<<size - 1
	}
	return v, nil
}

func signExtend(v uint64, n int) int64 {
	if n >= 8 {
		return int64(v)
	}
	shift := 64 - 8*uint(n)
	return int64(v<<shift) >> shift
}

// orderOr is bo, or little endian when nil.
func orderOr(bo binary.ByteOrder) binary.ByteOrder {
	if bo == nil {
		return binary.LittleEndian
	}
	return bo
}

// readUint reads len(b) <= 8 bytes as an unsigned integer in byte order bo.
func readUint(bo binary.ByteOrder, b []byte) uint64 {
	var v uint64
	if bo == binary.BigEndian {
		for _, c := range b {
			v = v<<8 | uint64(c)
		}
		return v
	}
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
