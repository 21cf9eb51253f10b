//go:build oracle

// The random differential test against libbpf itself needs a libbpf with
// emit_strings (>= 1.6, newer than Debian 12's) built by hand, so it is
// not part of make test; run it with
//
//	go test -tags oracle ./btf -run Oracle -libbpf-oracle=PATH
//
// where PATH is testdata/btf/oracle/oracle.c built against that libbpf.
package btf

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestFormatOracleRandom compares random values of the fixture's types and of
// TestFormat's with libbpf (-libbpf-oracle only).
func TestFormatOracleRandom(t *testing.T) {
	if *libbpfOracle == "" {
		t.Fatal("-libbpf-oracle=PATH names the built testdata/btf/oracle/oracle.c")
	}
	vars, _ := fixtureVars(t)
	var types []btf.Type
	for _, v := range vars {
		types = append(types, v.Type.(*btf.Var).Type)
	}
	for _, c := range formatCases() {
		if !c.noOracle && !strings.HasPrefix(c.name, "huge") {
			types = append(types, c.typ)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range types {
		size := min(max(resolveSize(typ), 8), 1024)
		for range 40 {
			// the value's size, or shorter, or longer
			n := int(size)
			switch r.IntN(4) {
			case 0:
				n = r.IntN(n + 2)
			case 1:
				n += r.IntN(8)
			}
			data := make([]byte, n)
			for i := range data {
				switch r.IntN(5) {
				case 0:
					data[i] = 0
				case 1:
					data[i] = 0xff
				case 2:
					data[i] = byte(0x20 + r.IntN(95))
				default:
					data[i] = byte(r.Uint32())
				}
			}
			got, err := FormatN(typ, data, ValueLen)
			code, want := runOracle(t, typ, data, ValueLen)
			if got != want || (err != nil) != (code < 0) {
				t.Errorf("%v over %x:\n\tFormatN %q, %v\n\tlibbpf  %q, %d", typ, data, got, err, want, code)
			}
		}
	}
}
