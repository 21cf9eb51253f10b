package btf

import "github.com/cilium/ebpf/btf"

// kind is a BTF_KIND_* number. libbpf prints it in "<unsupported kind:%u>".
type kind int

const (
	kindUnknown   kind = -1 // a btf.Type this package does not know
	kindUnkn      kind = 0  // BTF_KIND_UNKN, that is void
	kindInt       kind = 1
	kindPtr       kind = 2
	kindArray     kind = 3
	kindStruct    kind = 4
	kindUnion     kind = 5
	kindEnum      kind = 6
	kindFwd       kind = 7
	kindTypedef   kind = 8
	kindVolatile  kind = 9
	kindConst     kind = 10
	kindRestrict  kind = 11
	kindFunc      kind = 12
	kindFuncProto kind = 13
	kindVar       kind = 14
	kindDatasec   kind = 15
	kindFloat     kind = 16
	kindDeclTag   kind = 17
	kindTypeTag   kind = 18
	kindEnum64    kind = 19
)

const (
	// defaultPtrSize is libbpf's d->ptr_sz for BPF programs:
	// btf__pointer_size() guesses it from the size of "long" in the BTF
	// and falls back to sizeof(void *); both are 8 on a 64-bit host.
	defaultPtrSize = 8

	// maxResolveDepth is libbpf's MAX_RESOLVE_DEPTH in btf.c: the longest
	// modifier/typedef/array chain btf__resolve_size() follows.
	maxResolveDepth = 32

	// maxSkipChain bounds skip_mods_and_typedefs(), which libbpf runs
	// unbounded (the kernel rejects cyclic BTF; a hand-built btf.Type graph
	// may still have a cycle).
	maxSkipChain = 4096
)

// kindOf maps a cilium/ebpf type to its BTF kind. cilium/ebpf has one Enum
// type for both kinds: an 8-byte Enum is marshalled as BTF_KIND_ENUM64, so it
// is one here too, unless the dumper's EnumKinds says otherwise (see
// dumper.isEnum64).
func kindOf(t btf.Type) kind {
	switch t := t.(type) {
	case nil, *btf.Void:
		return kindUnkn
	case *btf.Int:
		return kindInt
	case *btf.Pointer:
		return kindPtr
	case *btf.Array:
		return kindArray
	case *btf.Struct:
		return kindStruct
	case *btf.Union:
		return kindUnion
	case *btf.Enum:
		if t.Size == 8 {
			return kindEnum64
		}
		return kindEnum
	case *btf.Fwd:
		return kindFwd
	case *btf.Typedef:
		return kindTypedef
	case *btf.Volatile:
		return kindVolatile
	case *btf.Const:
		return kindConst
	case *btf.Restrict:
		return kindRestrict
	case *btf.Func:
		return kindFunc
	case *btf.FuncProto:
		return kindFuncProto
	case *btf.Var:
		return kindVar
	case *btf.Datasec:
		return kindDatasec
	case *btf.Float:
		return kindFloat
	case *btf.TypeTag:
		return kindTypeTag
	default:
		return kindUnknown
	}
}

// isMod is libbpf's btf_is_mod(): volatile, const, restrict and type_tag.
func isMod(t btf.Type) bool {
	switch t.(type) {
	case *btf.Volatile, *btf.Const, *btf.Restrict, *btf.TypeTag:
		return true
	}
	return false
}

// next returns the type a modifier, typedef, var or pointer refers to.
func next(t btf.Type) btf.Type {
	switch t := t.(type) {
	case *btf.Volatile:
		return t.Type
	case *btf.Const:
		return t.Type
	case *btf.Restrict:
		return t.Type
	case *btf.TypeTag:
		return t.Type
	case *btf.Typedef:
		return t.Type
	case *btf.Var:
		return t.Type
	case *btf.Pointer:
		return t.Target
	case *btf.Func:
		return t.Type
	}
	return nil
}

// skipModsAndTypedefs is libbpf's skip_mods_and_typedefs(). It returns nil
// (libbpf: a NULL type) only for a chain longer than maxSkipChain.
func skipModsAndTypedefs(t btf.Type) btf.Type {
	for i := 0; i < maxSkipChain; i++ {
		if _, ok := t.(*btf.Typedef); !ok && !isMod(t) {
			return t
		}
		t = next(t)
	}
	return nil
}

// typeSize is t->size for the kinds that have one.
func typeSize(t btf.Type) int64 {
	switch t := t.(type) {
	case *btf.Int:
		return int64(t.Size)
	case *btf.Struct:
		return int64(t.Size)
	case *btf.Union:
		return int64(t.Size)
	case *btf.Enum:
		return int64(t.Size)
	case *btf.Datasec:
		return int64(t.Size)
	case *btf.Float:
		return int64(t.Size)
	}
	return 0
}

// resolveSize is libbpf's btf__resolve_size(): the size of t in bytes, or
// errInval / errTooBig. Like libbpf it gives up after maxResolveDepth links
// and rejects results above UINT32_MAX.
func resolveSize(t btf.Type, ptrSize int64) int64 {
	const u32max = 1<<32 - 1
	nelems := int64(1)
	size := int64(-1)
resolve:
	for i := 0; i < maxResolveDepth; i++ {
		switch kindOf(t) {
		case kindUnkn, kindFwd: // btf_type_is_void_or_null()
			return errInval
		case kindInt, kindStruct, kindUnion, kindEnum, kindEnum64, kindDatasec, kindFloat:
			size = typeSize(t)
		case kindPtr:
			size = ptrSize
		case kindTypedef, kindVolatile, kindConst, kindRestrict, kindVar, kindDeclTag, kindTypeTag:
			t = next(t)
			continue
		case kindArray:
			a := t.(*btf.Array)
			if nelems != 0 && int64(a.Nelems) > u32max/nelems {
				return errTooBig
			}
			nelems *= int64(a.Nelems)
			t = a.Type
			continue
		default:
			return errInval
		}
		break resolve
	}
	if size < 0 {
		return errInval
	}
	if nelems != 0 && size > u32max/nelems {
		return errTooBig
	}
	return nelems * size
}

// alignOf is libbpf's btf__align_of(), memoised: a struct's alignment looks
// at every member, and a DAG of structs would otherwise cost exponential time.
// It returns 0 where libbpf fails.
func (d *dumper) alignOf(t btf.Type) int64 {
	if a, ok := d.aligns[t]; ok {
		return a
	}
	if !d.enter() {
		return 0
	}
	defer d.leave()
	a := d.alignOfUncached(t)
	if d.aligns == nil {
		d.aligns = make(map[btf.Type]int64)
	}
	d.aligns[t] = a
	return a
}

func (d *dumper) alignOfUncached(t btf.Type) int64 {
	switch kindOf(t) {
	case kindInt, kindEnum, kindEnum64, kindFloat:
		return min(d.ptrSize, typeSize(t))
	case kindPtr:
		return d.ptrSize
	case kindTypedef, kindVolatile, kindConst, kindRestrict, kindTypeTag:
		return d.alignOf(next(t))
	case kindArray:
		return d.alignOf(t.(*btf.Array).Type)
	case kindStruct, kindUnion:
		maxAlign := int64(1)
		size, members := composite(t)
		for _, m := range members {
			align := d.alignOf(m.Type)
			if align <= 0 {
				return align
			}
			maxAlign = max(maxAlign, align)
			// a member that is not aligned for its type: the struct is packed
			if m.BitfieldSize == 0 && int64(m.Offset)%(8*align) != 0 {
				return 1
			}
		}
		if size%maxAlign != 0 {
			return 1
		}
		return maxAlign
	default:
		return 0
	}
}

// composite returns the size and members of a struct or union.
func composite(t btf.Type) (int64, []btf.Member) {
	switch t := t.(type) {
	case *btf.Struct:
		return int64(t.Size), t.Members
	case *btf.Union:
		return int64(t.Size), t.Members
	}
	return 0, nil
}

// memberBitfieldSize is btf_member_bitfield_size(). cilium/ebpf folds legacy
// (non-kflag) bitfields into BitfieldSize too, so a non-zero BitfieldSize is
// taken to be a kflag bitfield, which is what clang emits. libbpf keeps it in
// 8 bits (BTF_MEMBER_BITFIELD_SIZE).
func memberBitfieldSize(m btf.Member) uint8 {
	return uint8(m.BitfieldSize)
}
