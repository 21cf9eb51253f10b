package bpfprog

import (
	"slices"
	"testing"
)

// TestSelect: arguments that are numbers are ids, others names as Named
// takes them; no argument picks every program; a program is picked by
// any argument, and what picked none is named; ID picks the ids named and
// those of programs picked before.
func TestSelect(t *testing.T) {
	progs := []*Program{
		{ID: 7, Name: "xdp_prog", Funcs: []Func{{BTFName: "xdp_main", KernelName: "bpf_prog_0102030405060708_xdp_main"}}},
		{ID: 8, Name: "tc_prog", Funcs: []Func{{BTFName: "tc_main", PerfName: "bpf_prog_0807060504030201_F"}}},
		{ID: 9, Name: "xdp_prog"},
	}
	for _, c := range []struct {
		args         []string
		all          bool
		ids          []uint32
		picked       []uint32 // by Program, of progs in order
		id           []uint32 // of 1..10, those ID picks afterwards
		missingNames []string
		missingIDs   []uint32
	}{
		{args: nil, all: true, picked: []uint32{7, 8, 9}, id: []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{args: []string{"8"}, ids: []uint32{8}, picked: []uint32{8}, id: []uint32{8}},
		{args: []string{"8", "10"}, ids: []uint32{8, 10}, picked: []uint32{8}, id: []uint32{8, 10}, missingIDs: []uint32{10}},
		{args: []string{"xdp_prog"}, picked: []uint32{7, 9}, id: []uint32{7, 9}},
		{args: []string{"xdp_main"}, picked: []uint32{7}, id: []uint32{7}},
		{args: []string{"bpf_prog_0102030405060708_xdp_main"}, picked: []uint32{7}, id: []uint32{7}},
		{args: []string{"F", "nope", "1"}, ids: []uint32{1}, picked: []uint32{8}, id: []uint32{1, 8}, missingNames: []string{"nope"}, missingIDs: []uint32{1}},
		{args: []string{"xdp"}, id: nil, missingNames: []string{"xdp"}},      // no prefix
		{args: []string{"4294967296"}, missingNames: []string{"4294967296"}}, // not a uint32: a name
	} {
		s := Select(c.args)
		if s.All() != c.all || !slices.Equal(s.IDs, c.ids) {
			t.Errorf("Select(%q): All %v, IDs %v; want %v, %v", c.args, s.All(), s.IDs, c.all, c.ids)
		}
		var picked, id []uint32
		for _, p := range progs {
			if s.Program(p) {
				picked = append(picked, p.ID)
			}
		}
		for i := uint32(1); i <= 10; i++ {
			if s.ID(i) {
				id = append(id, i)
			}
		}
		if !slices.Equal(picked, c.picked) || !slices.Equal(id, c.id) {
			t.Errorf("Select(%q): Program picks %v, ID %v; want %v, %v", c.args, picked, id, c.picked, c.id)
		}
		if got := s.MissingNames(); !slices.Equal(got, c.missingNames) {
			t.Errorf("Select(%q): MissingNames %q, want %q", c.args, got, c.missingNames)
		}
		if got := s.MissingIDs(); !slices.Equal(got, c.missingIDs) {
			t.Errorf("Select(%q): MissingIDs %v, want %v", c.args, got, c.missingIDs)
		}
	}
}

// TestSelectionOf: Of lists the programs of a Lister the selection picks,
// and an error whatever it is of; Unmatched names, in the arguments'
// order, the ids and names that picked none (snapshot --prog).
func TestSelectionOf(t *testing.T) {
	l := &List{Programs: []*Program{
		{ID: 7, Name: "xdp_prog", Funcs: []Func{{BTFName: "xdp_main"}}},
		{ID: 8, Name: "tc_prog"},
		{ID: 9, Name: "xdp_prog"},
	}}
	for _, c := range []struct {
		args      []string
		listed    []uint32
		unmatched []string
	}{
		{[]string{"nope", "8", "xdp_main", "10", "007"}, []uint32{7, 8}, []string{"nope", "10"}},
		{[]string{"xdp_prog"}, []uint32{7, 9}, nil},
		{[]string{"11", "tc"}, nil, []string{"11", "tc"}},
	} {
		s := Select(c.args)
		var listed []uint32
		for p, err := range s.Of(l).All() {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, p.ID)
		}
		if !slices.Equal(listed, c.listed) || !slices.Equal(s.Unmatched(), c.unmatched) {
			t.Errorf("Select(%q).Of: lists %v, unmatched %q; want %v, %q", c.args, listed, s.Unmatched(), c.listed, c.unmatched)
		}
	}
}
