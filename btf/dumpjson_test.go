package btf_test

import (
	"encoding/json"
	"testing"

	"github.com/bpfmeta/bpfmeta/btf"
)

// TestDumpJSON: the values the text of a BPF_METADATA record tells, read
// back as JSON gives them; what it cannot tell, not at all.
func TestDumpJSON(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`"3.14159"`, `"3.14159"`},
		{`""`, `""`},
		{`"q"x"`, `"q\"x"`},
		{`-7`, `-7`},
		{`4000000000`, `4000000000`},
		{`9007199254740992`, `9007199254740992`},
		{`9007199254740993`, `"9007199254740993"`},
		{`18446744073709551615`, `"18446744073709551615"`},
		{`-9223372036854775808`, `"-9223372036854775808"`},
		{`1.500000`, `1.500000`},
		{`-0.002500`, `-0.002500`},
		{`GREEN`, `"GREEN"`},
		{`0x10000000000000005`, `"0x10000000000000005"`},
		{`"AAAA`, ``},      // cut at 255 bytes
		{`"a\x01b"`, ``},   // escaped, or four bytes?
		{`[1,2,]`, ``},     // an array: no types
		{`{.a = 1,}`, ``},  // a struct
		{`["ab""cd"]`, ``}, // adjacent strings
		{`01`, ``},         // not as libbpf prints a number
	} {
		got, ok := btf.DumpJSON(c.text)
		if string(got) != c.want || ok != (c.want != "") {
			t.Errorf("DumpJSON(%s) = %s, %v; want %s", c.text, got, ok, c.want)
		}
		if ok && !json.Valid(got) {
			t.Errorf("DumpJSON(%s) = %s: not JSON", c.text, got)
		}
	}
}
