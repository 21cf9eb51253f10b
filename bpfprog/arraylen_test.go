package bpfprog

import (
	"encoding/json"
	"testing"
)

// arrayLen must count what encoding/json decodes, for every valid array.
func FuzzArrayLen(f *testing.F) {
	for _, s := range []string{
		`[]`, ` [ ] `, `[1]`, `[1,2,3]`, " [\n1 ,\t2\r] ",
		`["a,b", "c\"]", "\\", "\\\""]`, `[{"a":[1,2],"b":{"c":","}}, [[],[]], null]`,
		`[{}]`, `[[]]`, `["]"]`, `["["]`, `[true,false,"}"]`,
		`null`, `{}`, `"[1,2]"`, `5`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) != nil {
			return
		}
		n, ok := arrayLen(b)
		switch {
		case elems == nil && ok:
			t.Fatalf("arrayLen(%q) = %d, true: it is null", b, n)
		case elems != nil && (!ok || n != len(elems)):
			t.Fatalf("arrayLen(%q) = %d, %v; encoding/json decodes %d elements", b, n, ok, len(elems))
		}
	})
}
