package annotate_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/annotate"
)

// Loads of one function told apart by a frame's address: a frame in one
// load gets its label; in loads of other labels at one address (one
// unloaded, the next put where it was), in a load no record says the
// metadata of, or without an address, ambiguous; outside every load, not
// in the recording.
func TestTableLoads(t *testing.T) {
	const sym = "bpf_prog_0123456789abcdef_f"
	tab := annotate.NewTable(nil)
	tab.Add(sym, entries("version", `"1"`))
	tab.Add(sym, entries("version", `"2"`))
	if err := tab.SetLoads(sym, []annotate.Load{
		{Addr: 0xffffffffc0001000, Len: 0x40, Entries: entries("version", `"1"`)},
		{Addr: 0xffffffffc0002000, Len: 0x40, Entries: entries("version", `"2"`)},
		{Addr: 0xffffffffc0003000, Len: 0x40, Entries: entries("version", `"3"`)}, // the same place, later
		{Addr: 0xffffffffc0003000, Len: 0x40, Entries: entries("version", `"3"`)},
		{Addr: 0xffffffffc0004000, Len: 0x40, Entries: entries("version", `"4"`)},
		{Addr: 0xffffffffc0004020, Len: 0x40, Entries: entries("version", `"5"`)},
		{Addr: 0xffffffffc0005000, Len: 0x40, Unknown: true},
	}); err != nil {
		t.Fatal(err)
	}
	frame := func(ip uint64) string { return fmt.Sprintf("\t%16x %s+0x4 (%s)\n", ip, sym, sym) }
	for _, tc := range []struct{ in, label string }{
		{frame(0xffffffffc0001004), "[version=1]"},
		{frame(0xffffffffc000103f), "[version=1]"},
		{frame(0xffffffffc0002000), "[version=2]"},
		{frame(0xffffffffc0003004), "[version=3]"},
		{frame(0xffffffffc0004004), "[version=4]"},
		{frame(0xffffffffc0004024), annotate.Ambiguous},
		{frame(0xffffffffc0004044), "[version=5]"},
		{frame(0xffffffffc0005004), annotate.Ambiguous},
		{frame(0xffffffffc0001040), annotate.NotInRecording},
		{frame(0xffffffffc0000fff), annotate.NotInRecording},
		{"\t" + sym + "+0x4 (" + sym + ")\n", annotate.Ambiguous},
		{"cmd 1 [000] 1.0: 1 cpu-clock:  ffffffffc0002004 " + sym + "+0x4 (" + sym + ")\n", "[version=2]"},
	} {
		want := tc.in[:len(tc.in)-len("+0x4 ("+sym+")\n")] + tc.label + "+0x4 (" + sym + ")\n"
		if got, _ := tab.Annotate(nil, []byte(tc.in)); string(got) != want {
			t.Errorf("%q: got %q, want %q", tc.in, got, want)
		}
	}
	// the dso of a frame perf has no symbol for, at its address
	in := fmt.Sprintf("\t%16x [unknown] (%s)\n", uint64(0xffffffffc0002004), sym)
	want := fmt.Sprintf("\t%16x [unknown] (%s[version=2])\n", uint64(0xffffffffc0002004), sym)
	if got, _ := tab.Annotate(nil, []byte(in)); string(got) != want {
		t.Errorf("%q: got %q, want %q", in, got, want)
	}
	// a load without the keys chosen has no label
	keyed := annotate.NewTable([]string{"build"})
	keyed.SetLoads(sym, []annotate.Load{
		{Addr: 0x1000, Len: 0x10, Entries: entries("version", `"1"`)},
		{Addr: 0x2000, Len: 0x10, Entries: entries("version", `"2"`, "build", "7")},
	})
	for in, want := range map[string]string{
		"\t1004 " + sym + "\n": "\t1004 " + sym + "\n",
		"\t2004 " + sym + "\n": "\t2004 " + sym + "[build=7]\n",
		"\t3004 " + sym + "\n": "\t3004 " + sym + annotate.NotInRecording + "\n",
	} {
		if got, _ := keyed.Annotate(nil, []byte(in)); string(got) != want {
			t.Errorf("--keys build: %q: got %q, want %q", in, got, want)
		}
	}
}

// Whatever the text, a table with loads told apart by address adds
// labels and nothing else.
func FuzzAnnotateLoads(f *testing.F) {
	const sym = "bpf_prog_0123456789abcdef_f"
	f.Add([]byte(fmt.Sprintf("\t%16x %s+0x4 (%s)\n", uint64(0xffffffffc0001004), sym, sym)))
	f.Add([]byte(fmt.Sprintf("\t%16x [unknown] (%s)\n", uint64(0xffffffffc0002004), sym)))
	f.Add([]byte(fmt.Sprintf("c 1 [000] 1.0: 1 e:  %x %s\n", uint64(0xffffffffc0001004), sym)))
	f.Add([]byte("\tffffffffffffffffff " + sym + "\n\t " + sym + "\n"))
	tab := annotate.NewTable(nil)
	tab.SetLoads(sym, []annotate.Load{
		{Addr: 0xffffffffc0001000, Len: 0x40, Entries: entries("version", "1")},
		{Addr: 0xffffffffc0002000, Len: 0x40, Entries: entries("version", "2")},
	})
	labels := strings.NewReplacer("[version=1]", "", "[version=2]", "", annotate.Ambiguous, "", annotate.NotInRecording, "")
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if _, err := annotate.Run(bytes.NewReader(in), &out, tab); err != nil {
			t.Fatal(err)
		}
		if labels.Replace(out.String()) != labels.Replace(string(in)) {
			t.Errorf("output %q of %q is more than the input and labels", out.Bytes(), in)
		}
	})
}
