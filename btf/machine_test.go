package btf

import (
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestMachine: the data's byte order and pointer size, which libbpf takes
// from the machine it runs on. The expected values are worked out from the
// C the data stands for.
func TestMachine(t *testing.T) {
	bits := &btf.Struct{Name: "bits", Size: 4, Members: []btf.Member{
		{Name: "a", Type: tUint, Offset: 0, BitfieldSize: 4},
		{Name: "b", Type: tUint, Offset: 4, BitfieldSize: 12},
	}}
	ptrs := &btf.Struct{Name: "p", Size: 8, Members: []btf.Member{
		{Name: "x", Type: tVoidP, Offset: 0},
		{Name: "y", Type: tVoidP, Offset: 32},
	}}
	be := binary.BigEndian
	for _, c := range []struct {
		name string
		d    Dumper
		typ  btf.Type
		data []byte
		want string
	}{
		{"int, big-endian", Dumper{ByteOrder: be}, tInt, []byte{0xff, 0xff, 0xff, 0xfe}, "(int)-2"},
		{"u64, big-endian", Dumper{ByteOrder: be}, tU64, []byte{0, 0, 0, 0, 0, 0, 1, 2}, "(unsigned long long)258"},
		{"__int128, big-endian: the high half first", Dumper{ByteOrder: be, SkipNames: true}, tU128,
			[]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2}, "0x10000000000000002"},
		{"__int128, little-endian", Dumper{SkipNames: true}, tU128,
			[]byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, "0x10000000000000002"},
		// a big-endian compiler puts the first bitfield in the high bits
		{"bitfields, big-endian", Dumper{ByteOrder: be, Compact: true}, bits, []byte{0xa1, 0x23, 0, 0},
			"(struct bits){.a = (unsigned int)0xa,.b = (unsigned int)0x123,}"},
		{"bitfields, little-endian", Dumper{Compact: true}, bits, []byte{0x3a, 0x12, 0, 0},
			"(struct bits){.a = (unsigned int)0xa,.b = (unsigned int)0x123,}"},
		{"double, big-endian", Dumper{ByteOrder: be, SkipNames: true}, &btf.Float{Name: "double", Size: 8},
			[]byte{0x3f, 0xf8, 0, 0, 0, 0, 0, 0}, "1.500000"},
		{"4-byte pointers", Dumper{PointerSize: 4, Compact: true, SkipNames: true}, ptrs,
			[]byte{0x10, 0, 0, 0, 0x20, 0, 0, 0}, "{0x10,0x20,}"},
		{"4-byte pointers, big-endian", Dumper{PointerSize: 4, ByteOrder: be, Compact: true, SkipNames: true}, ptrs,
			[]byte{0, 0, 0, 0x10, 0, 0, 0, 0x20}, "{0x10,0x20,}"},
	} {
		got, err := c.d.Dump(c.typ, c.data)
		if got != c.want || err != nil {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}
