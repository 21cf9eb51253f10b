package journal

import (
	"fmt"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
)

// TestSelected: of a host's entries in order, programs --journal ID|NAME
// lists the loads picked, the unloads and lost loads of the ids named or
// of loads picked before, the kernel's lost records and dropped segments
// only unfiltered, and a torn end or a damaged record always.
func TestSelected(t *testing.T) {
	entries := []struct {
		name string
		e    Entry
	}{
		{"load 5 a", Entry{Record: Record{Program: &bpfprog.Program{ID: 5, Name: "a"}}}},
		{"unload 6", Entry{Record: Record{Unload: &Unload{ID: 6}}}},
		{"unload 5", Entry{Record: Record{Unload: &Unload{ID: 5}}}},
		{"lost 5", Entry{Record: Record{Lost: &Lost{ID: 5, Why: "gone"}}}},
		{"lost 7", Entry{Record: Record{Lost: &Lost{ID: 7, Why: "gone"}}}},
		{"lost records", Entry{Record: Record{Lost: &Lost{Records: 3}}}},
		{"dropped", Entry{Record: Record{Dropped: &Dropped{Seq: 1}}}},
		{"damaged", Entry{Record: Record{Damaged: "checksum"}}},
		{"load 6 b", Entry{Record: Record{Program: &bpfprog.Program{ID: 6, Name: "b"}}}},
		{"unload 6 again", Entry{Record: Record{Unload: &Unload{ID: 6}}}},
		{"torn", Entry{Torn: "cut at 0x40"}},
		{"nothing", Entry{}},
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "[load 5 a unload 6 unload 5 lost 5 lost 7 lost records dropped damaged load 6 b unload 6 again torn]"},
		{[]string{"5"}, "[load 5 a unload 5 lost 5 damaged torn]"},
		{[]string{"a"}, "[load 5 a unload 5 lost 5 damaged torn]"},
		// a name picks the unloads after its load, not before
		{[]string{"b"}, "[damaged load 6 b unload 6 again torn]"},
		{[]string{"6"}, "[unload 6 damaged load 6 b unload 6 again torn]"},
		{[]string{"7", "nope"}, "[lost 7 damaged torn]"},
	} {
		sel := bpfprog.Select(c.args)
		var got []string
		for _, e := range entries {
			if e.e.Selected(sel) {
				got = append(got, e.name)
			}
		}
		if s := fmt.Sprint(got); s != c.want {
			t.Errorf("programs --journal %q: %s, want %s", c.args, s, c.want)
		}
	}
}
