package btf

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// EnumKinds records which enums of a btf.Spec were BTF_KIND_ENUM64 and
// which BTF_KIND_ENUM in the raw BTF the spec was loaded from.
// cilium/ebpf's btf.Enum does not say, and libbpf prints them differently:
// clang before 15 emits an enum with 64-bit values as an 8-byte ENUM, whose
// enumerators libbpf compares as 32-bit numbers and whose other values it
// prints as "%u" (the low 32 bits), where an ENUM64's are "...ULL".
type EnumKinds struct {
	is64 map[*btf.Enum]bool
}

// enum64 reports what the raw BTF said of t, if it said anything.
func (k *EnumKinds) enum64(t *btf.Enum) (is64, known bool) {
	if k == nil {
		return false, false
	}
	is64, known = k.is64[t]
	return is64, known
}

// Raw BTF layout (include/uapi/linux/btf.h).
const (
	btfMagic      = 0xeb9f
	btfHeaderLen  = 24 // struct btf_header
	btfTypeLen    = 12 // struct btf_type
	maxRawTypeIDs = 1 << 20
)

// ReadEnumKinds reads the kind of every enum in raw BTF raw (an object's
// .BTF section, or what the kernel returns for a BTF id) and finds the
// enums in spec, which must have been loaded from the same bytes (type
// ids are the raw BTF's). Split BTF is not supported.
func ReadEnumKinds(raw []byte, spec *btf.Spec) (*EnumKinds, error) {
	if len(raw) < btfHeaderLen {
		return nil, errors.New("btf: raw BTF shorter than its header")
	}
	var bo binary.ByteOrder = binary.LittleEndian
	switch {
	case binary.LittleEndian.Uint16(raw) == btfMagic:
	case binary.BigEndian.Uint16(raw) == btfMagic:
		bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("btf: raw BTF has magic %#04x", binary.LittleEndian.Uint16(raw))
	}
	hdrLen := uint64(bo.Uint32(raw[4:]))
	typeOff, typeLen := uint64(bo.Uint32(raw[8:])), uint64(bo.Uint32(raw[12:]))
	start, end := hdrLen+typeOff, hdrLen+typeOff+typeLen
	if hdrLen < btfHeaderLen || end > uint64(len(raw)) {
		return nil, fmt.Errorf("btf: raw BTF's type section [%d, %d) is outside its %d bytes", start, end, len(raw))
	}
	types := raw[start:end]
	k := &EnumKinds{is64: map[*btf.Enum]bool{}}
	for id := btf.TypeID(1); len(types) > 0; id++ {
		if len(types) < btfTypeLen || id > maxRawTypeIDs {
			return nil, fmt.Errorf("btf: raw BTF type %d is cut short", id)
		}
		info := bo.Uint32(types[4:])
		kind, vlen := kind(info>>24&0x1f), int(info&0xffff)
		n := btfTypeLen
		switch kind {
		case kindInt, kindVar, kindDeclTag:
			n += 4
		case kindArray:
			n += 12
		case kindStruct, kindUnion, kindDatasec, kindEnum64:
			n += 12 * vlen
		case kindEnum, kindFuncProto:
			n += 8 * vlen
		case kindPtr, kindFwd, kindTypedef, kindVolatile, kindConst, kindRestrict, kindFunc, kindFloat, kindTypeTag:
		default:
			return nil, fmt.Errorf("btf: raw BTF type %d has unknown kind %d", id, kind)
		}
		if n > len(types) {
			return nil, fmt.Errorf("btf: raw BTF type %d is cut short", id)
		}
		types = types[n:]
		if kind != kindEnum && kind != kindEnum64 {
			continue
		}
		t, err := spec.TypeByID(id)
		if err != nil {
			return nil, fmt.Errorf("btf: raw BTF type %d (an enum) is not in the spec: %w", id, err)
		}
		e, ok := t.(*btf.Enum)
		if !ok {
			return nil, fmt.Errorf("btf: raw BTF type %d is an enum, the spec's is %T: not the same BTF", id, t)
		}
		k.is64[e] = kind == kindEnum64
	}
	return k, nil
}
