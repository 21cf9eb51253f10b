package btf

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// FuzzFormat formats random bytes as the fixture's types (and the hand-built
// ones of TestFormat): no panic, FormatN fits perf's buffer and is a prefix
// of Format.
func FuzzFormat(f *testing.F) {
	vars, rodata, _ := fixtureVars(f, kindsFixture)
	var types []btf.Type
	for _, v := range vars {
		typ := v.Type.(*btf.Var).Type
		types = append(types, typ)
		f.Add(uint16(len(types)-1), rodata[v.Offset:int64(v.Offset)+resolveSize(typ, defaultPtrSize)])
	}
	for _, c := range formatCases() {
		if strings.HasPrefix(c.name, "huge") {
			continue // a fraction of a second each: too slow to fuzz
		}
		types = append(types, c.typ)
		f.Add(uint16(len(types)-1), c.data)
	}
	f.Fuzz(func(t *testing.T, i uint16, data []byte) {
		typ := types[int(i)%len(types)]
		full, err := perfFormat(typ, data)
		got, errN := perfFormatN(typ, data, valueLen)
		if len(got) > valueLen-1 {
			t.Fatalf("FormatN wrote %d bytes", len(got))
		}
		if errors.Is(err, ErrLimit) {
			return
		}
		if want := full[:min(len(full), valueLen-1)]; got != want {
			t.Fatalf("FormatN = %q, Format = %q", got, full)
		}
		if (err == nil) != (errN == nil) && len(full) < valueLen {
			t.Fatalf("Format error %v, FormatN error %v", err, errN)
		}
	})
}

// FuzzTypes builds a type graph from the fuzzer's bytes (any kind, any
// size, members anywhere, cycles through pointers and typedefs) and dumps
// data as it with the options the bytes choose: no panic, no hang, output
// bounded, and errors that are the package's.
func FuzzTypes(f *testing.F) {
	f.Add([]byte{1, 4, 1, 4, 2, 0, 3, 2, 4, 4, 1}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, uint8(0))
	f.Add([]byte{6, 8, 3, 7, 1, 8, 2, 9, 0, 5, 8, 1, 0, 4, 1}, []byte("\xff\xfe\x00abc\x01\x02"), uint8(7))
	f.Fuzz(func(t *testing.T, spec, data []byte, optBits uint8) {
		typ := typeGraph(spec)
		d := Dumper{Compact: optBits&1 != 0, SkipNames: optBits&2 != 0, EmitZeroes: optBits&4 != 0, EmitStrings: optBits&8 != 0}
		if optBits&16 != 0 {
			d.ByteOrder = binary.BigEndian
		}
		if optBits&32 != 0 {
			d.PointerSize = 4
		}
		if optBits&64 != 0 {
			d.Truncate = 255
		}
		out, err := d.Dump(typ, data)
		if len(out) > MaxOutput {
			t.Fatalf("%d bytes of output", len(out))
		}
		var fe *FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error %v is not a *FormatError", err)
		}
		// the typed JSON printer too: valid JSON, or an error
		if b, err := JSON(typ, data, d.ByteOrder); err == nil && !json.Valid(b) {
			t.Fatalf("JSON printed %q", b)
		}
	})
}

// typeGraph decodes spec into types: each type is a kind byte and its
// parameters; references point at other types by index, forwards too.
func typeGraph(spec []byte) btf.Type {
	const maxTypes = 32
	next := func() byte {
		if len(spec) == 0 {
			return 0
		}
		b := spec[0]
		spec = spec[1:]
		return b
	}
	var types []btf.Type
	var fix []func()
	// refTo reads a reference and has set called with the type it points
	// at once every type is made, so that it may point forward.
	refTo := func(set func(btf.Type)) {
		i := int(next())
		fix = append(fix, func() {
			if len(types) == 0 {
				set(&btf.Void{})
				return
			}
			set(types[i%len(types)])
		})
	}
	for len(spec) > 0 && len(types) < maxTypes {
		switch next() % 12 {
		case 0:
			types = append(types, &btf.Void{})
		case 1:
			types = append(types, &btf.Int{Name: "i", Size: uint32(next() % 17), Encoding: btf.IntEncoding(next() % 8)})
		case 2:
			p := &btf.Pointer{}
			refTo(func(t btf.Type) { p.Target = t })
			types = append(types, p)
		case 3:
			a := &btf.Array{Index: &btf.Int{Size: 4}, Nelems: uint32(next()) * uint32(next()+1)}
			refTo(func(t btf.Type) { a.Type = t })
			types = append(types, a)
		case 4, 5:
			n := int(next() % 6)
			s := &btf.Struct{Name: "s", Size: uint32(next())}
			var u *btf.Union
			if spec != nil && len(types)%2 == 1 {
				u = &btf.Union{Name: "u", Size: s.Size}
			}
			ms := make([]btf.Member, n)
			for j := range ms {
				ms[j] = btf.Member{Name: "m", Offset: btf.Bits(next()) * 4, BitfieldSize: btf.Bits(next() % 70)}
				refTo(func(t btf.Type) { ms[j].Type = t })
			}
			if u != nil {
				u.Members = ms
				types = append(types, u)
			} else {
				s.Members = ms
				types = append(types, s)
			}
		case 6:
			e := &btf.Enum{Name: "e", Size: uint32(next() % 9), Signed: next()%2 == 1}
			for range next() % 4 {
				e.Values = append(e.Values, btf.EnumValue{Name: "v", Value: uint64(int64(int8(next())))})
			}
			types = append(types, e)
		case 7:
			td := &btf.Typedef{Name: "t"}
			refTo(func(t btf.Type) { td.Type = t })
			types = append(types, td)
		case 8:
			c := &btf.Const{}
			refTo(func(t btf.Type) { c.Type = t })
			types = append(types, c)
		case 9:
			types = append(types, &btf.Float{Name: "f", Size: uint32(next() % 17)})
		case 10:
			types = append(types, &btf.Fwd{Name: "fwd"})
		case 11:
			v := &btf.Var{Name: "v"}
			refTo(func(t btf.Type) { v.Type = t })
			ds := &btf.Datasec{Name: ".rodata", Size: uint32(next())}
			ds.Vars = []btf.VarSecinfo{{Type: v, Offset: uint32(next()), Size: uint32(next())}}
			types = append(types, ds)
		}
	}
	for _, f := range fix {
		f()
	}
	if len(types) == 0 {
		return &btf.Void{}
	}
	return types[len(types)-1]
}
