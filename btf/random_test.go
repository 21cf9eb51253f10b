package btf

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// randomTypes makes types a compiler could have written and the kernel
// would load (the BTF perf reads comes from the kernel): ints, chars and
// bools of the kernel's sizes, floats libbpf prints, enums of both
// signs and every size, char arrays and other arrays, structs with
// bitfields and anonymous members, unions, pointers, typedefs and
// qualifiers, nested up to depth levels.
type randomTypes struct {
	r     *rand.Rand
	names int
}

func (g *randomTypes) name(prefix string) string {
	g.names++
	return fmt.Sprintf("%s%d", prefix, g.names)
}

// scalar is an int, char, bool, float or enum.
func (g *randomTypes) scalar() btf.Type {
	r := g.r
	switch r.IntN(8) {
	case 0:
		return &btf.Int{Name: "char", Size: 1, Encoding: btf.Char | btf.IntEncoding(r.IntN(2))*btf.Signed}
	case 1:
		return &btf.Int{Name: "_Bool", Size: 1, Encoding: btf.Bool}
	case 2:
		return &btf.Float{Name: g.name("f"), Size: []uint32{4, 8, 16}[r.IntN(3)]}
	case 3, 4:
		e := &btf.Enum{Name: g.name("e"), Size: []uint32{1, 2, 4, 8}[r.IntN(4)], Signed: r.IntN(2) == 0}
		for i := range r.IntN(5) {
			v := r.Uint64() >> r.IntN(64)
			if e.Size < 8 {
				v &= 1<<(8*e.Size) - 1
				if e.Signed && v>>(8*e.Size-1) != 0 {
					v |= ^uint64(0) << (8 * e.Size) // sign-extended, as BTF holds it
				}
			}
			if r.IntN(3) == 0 {
				v = uint64(i) // small values, the usual case
			}
			e.Values = append(e.Values, btf.EnumValue{Name: g.name("E"), Value: v})
		}
		return e
	}
	return &btf.Int{Name: g.name("int"), Size: []uint32{1, 2, 4, 8, 16}[r.IntN(5)], Encoding: btf.IntEncoding(r.IntN(2)) * btf.Signed}
}

func (g *randomTypes) typ(depth int) btf.Type {
	r := g.r
	if depth == 0 {
		return g.scalar()
	}
	switch r.IntN(10) {
	case 0, 1:
		return g.scalar()
	case 2:
		elem := g.typ(depth - 1)
		if r.IntN(2) == 0 {
			elem = &btf.Int{Name: "char", Size: 1, Encoding: btf.Char | btf.Signed*btf.IntEncoding(r.IntN(2))}
		}
		return &btf.Array{Index: &btf.Int{Name: "int", Size: 4}, Type: elem, Nelems: uint32(r.IntN(7))}
	case 3:
		return &btf.Pointer{Target: g.typ(depth - 1)}
	case 4:
		return &btf.Typedef{Name: g.name("t"), Type: g.typ(depth - 1)}
	case 5:
		return []func(btf.Type) btf.Type{
			func(t btf.Type) btf.Type { return &btf.Const{Type: t} },
			func(t btf.Type) btf.Type { return &btf.Volatile{Type: t} },
			func(t btf.Type) btf.Type { return &btf.Restrict{Type: t} },
		}[r.IntN(3)](g.typ(depth - 1))
	case 6:
		return g.union(depth)
	}
	return g.strct(depth)
}

func (g *randomTypes) strct(depth int) btf.Type {
	r := g.r
	s := &btf.Struct{Name: g.name("s")}
	if r.IntN(4) == 0 {
		s.Name = ""
	}
	var bit, align int64 = 0, 1
	for range r.IntN(6) {
		m := btf.Member{Name: g.name("m"), Type: g.typ(depth - 1)}
		size := resolveSize(m.Type, defaultPtrSize)
		a := alignOf(m.Type)
		if isInt(m.Type) && size <= 8 && r.IntN(3) == 0 {
			// a bitfield, packed after the previous bits
			m.BitfieldSize = btf.Bits(1 + r.IntN(int(size*8)))
			m.Offset = btf.Bits(bit)
			bit += int64(m.BitfieldSize)
		} else {
			bit = (bit + 8*a - 1) / (8 * a) * (8 * a)
			m.Offset = btf.Bits(bit)
			bit += 8 * size
		}
		if _, ok := btf.UnderlyingType(m.Type).(*btf.Struct); ok && r.IntN(3) == 0 {
			m.Name = "" // an anonymous struct member
		}
		align = max(align, a)
		s.Members = append(s.Members, m)
	}
	bytes := (bit + 7) / 8
	s.Size = uint32((bytes + align - 1) / align * align)
	return s
}

func (g *randomTypes) union(depth int) btf.Type {
	r := g.r
	u := &btf.Union{Name: g.name("u")}
	var size, align int64 = 0, 1
	for range 1 + r.IntN(4) {
		m := btf.Member{Name: g.name("m"), Type: g.typ(depth - 1)}
		size = max(size, resolveSize(m.Type, defaultPtrSize))
		align = max(align, alignOf(m.Type))
		u.Members = append(u.Members, m)
	}
	u.Size = uint32((size + align - 1) / align * align)
	return u
}

func isInt(t btf.Type) bool {
	switch btf.UnderlyingType(t).(type) {
	case *btf.Int, *btf.Enum:
		return true
	}
	return false
}

// alignOf is t's alignment on x86-64, as a compiler lays out a struct.
func alignOf(t btf.Type) int64 {
	switch t := btf.UnderlyingType(t).(type) {
	case *btf.Array:
		return alignOf(t.Type)
	case *btf.Struct:
		return membersAlign(t.Members)
	case *btf.Union:
		return membersAlign(t.Members)
	}
	return min(max(resolveSize(t, defaultPtrSize), 1), 16)
}

// membersAlign is the alignment of a struct or union of ms.
func membersAlign(ms []btf.Member) int64 {
	a := int64(1)
	for _, m := range ms {
		a = max(a, alignOf(m.Type))
	}
	return a
}

// TestLibbpfRandom is TestLibbpf over types no fixture has: a few hundred
// random ones a compiler could have written (randomTypes), each dumped from
// random data with every option set, here and by both libbpfs.
func TestLibbpfRandom(t *testing.T) {
	builds := buildOracles(t)
	const types, values = 300, 4
	r := rand.New(rand.NewPCG(3, 4))
	g := &randomTypes{r: r}
	b, err := btf.NewBuilder(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var typs []btf.Type
	var ids []btf.TypeID
	for range types {
		typ := g.typ(3)
		id, err := b.Add(typ)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		typs, ids = append(typs, typ), append(ids, id)
	}
	raw, err := b.Marshal(nil, &btf.MarshalOptions{Order: binary.LittleEndian})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "random.btf")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	o := startOracles(t, builds, path)
	for i, typ := range typs {
		for range values {
			compare(t, o, ids[i], typ, nil, randomData(r, resolveSize(typ, defaultPtrSize)))
		}
		if t.Failed() {
			return // the first type that differs says enough
		}
	}
}
