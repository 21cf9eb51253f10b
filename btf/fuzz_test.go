package btf

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// FuzzFormat formats random bytes as the fixture's types (and the hand-built
// ones of TestFormat): no panic, FormatN fits perf's buffer and is a prefix
// of Format.
func FuzzFormat(f *testing.F) {
	vars, rodata := fixtureVars(f)
	var types []btf.Type
	for _, v := range vars {
		typ := v.Type.(*btf.Var).Type
		types = append(types, typ)
		f.Add(uint16(len(types)-1), rodata[v.Offset:int64(v.Offset)+resolveSize(typ)])
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
		full, err := Format(typ, data)
		got, errN := FormatN(typ, data, ValueLen)
		if len(got) > ValueLen-1 {
			t.Fatalf("FormatN wrote %d bytes", len(got))
		}
		if errors.Is(err, ErrLimit) {
			return
		}
		if want := full[:min(len(full), ValueLen-1)]; got != want {
			t.Fatalf("FormatN = %q, Format = %q", got, full)
		}
		if (err == nil) != (errN == nil) && len(full) < ValueLen {
			t.Fatalf("Format error %v, FormatN error %v", err, errN)
		}
	})
}
