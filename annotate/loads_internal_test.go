package annotate

import (
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Which names setLoads gives their loads: never one whose loads are not
// all known to it (too many KSYMBOLs, a record it could not place), and a
// name with too many loads, or one without a record, is ambiguous rather
// than any load's.
func TestSetLoads(t *testing.T) {
	v := func(s string) []perfdata.BPFMetadataEntry {
		return []perfdata.BPFMetadataEntry{{Key: "version", Value: s}}
	}
	syms := func(n int) []ksymbol {
		var s []ksymbol
		for i := range n {
			s = append(s, ksymbol{at: ksymbolAt{0, int64(i)}, addr: uint64(0x1000 * (i + 1)), len: 0x10})
		}
		return s
	}
	for _, tc := range []struct {
		what     string
		loads    int
		placed   []string // the record placed on each load, "" for none
		doubted  []int    // loads a record not placed alone may be of
		unplaced bool
		full     bool
		want     map[uint64]string // a frame's address, its label
	}{
		{"one metadata", 2, []string{"1", "1"}, nil, false, false, map[uint64]string{0x1004: "[version=1]", 0x2004: "[version=1]", 0x9000: NotInRecording}},
		{"told apart", 2, []string{"1", "2"}, nil, false, false, map[uint64]string{0x1004: "[version=1]", 0x2004: "[version=2]", 0x9000: NotInRecording}},
		{"a load without a record", 2, []string{"1", ""}, nil, false, false, map[uint64]string{0x1004: "[version=1]", 0x2004: Ambiguous, 0x9000: NotInRecording}},
		{"a record among loads", 3, []string{"1", "2", ""}, []int{1, 2}, false, false, map[uint64]string{0x1004: "[version=1]", 0x2004: Ambiguous, 0x3004: Ambiguous}},
		{"a record not placed", 2, []string{"1", "2"}, nil, true, false, map[uint64]string{0x1004: Ambiguous}},
		{"too many KSYMBOLs", 2, []string{"1", "2"}, nil, false, true, map[uint64]string{0x1004: Ambiguous}},
		{"too many loads", MaxLoads + 1, []string{"1"}, nil, false, false, map[uint64]string{0x1004: Ambiguous}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			const name = "bpf_prog_0123456789abcdef_f"
			tab := NewTable(nil)
			defer tab.Close()
			k := newKSymbols(nil)
			defer k.mem.Close()
			k.byName[name] = syms(tc.loads)
			for i, p := range tc.placed {
				if p != "" {
					k.placed[ksymbolAt{0, int64(i)}] = v(p)
					tab.Add(name, v(p))
				}
			}
			for _, i := range tc.doubted {
				k.doubt(ksymbolAt{0, int64(i)})
			}
			if tc.unplaced {
				k.unplace(name)
				tab.SetAmbiguous(name) // as Fill's count of records finds it
			}
			if tc.full {
				k.giveUp()
				tab.SetAmbiguous(name)
			}
			if err := k.setLoads(tab); err != nil {
				t.Fatal(err)
			}
			for ip, want := range tc.want {
				if got := tab.labelAt([]byte(name), ip, true, textTime{}); got != want {
					t.Errorf("at %#x: %q, want %q", ip, got, want)
				}
			}
		})
	}
}
