package bpfprog

import (
	"iter"
	"strconv"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// A Selection is the programs a list of arguments picks, as bpfmeta
// programs ID|NAME... takes them: an argument that is a number is an id
// (perfdata.ProgID), any other a name as Program.Named takes it (the
// program's, or one of its functions'). No argument picks every program. It remembers what
// each argument picked, to name those that picked none, and the ids of
// the programs picked, whose unloads a journal lists with their loads.
type Selection struct {
	IDs   []uint32
	Names []string
	args  []string // as given, for Unmatched
	// found is what each argument matched; matched the ids of the
	// programs Program picked.
	found   map[string]bool
	matched map[uint32]bool
}

// Select is the selection of args.
func Select(args []string) *Selection {
	s := &Selection{args: args, found: map[string]bool{}, matched: map[uint32]bool{}}
	for _, a := range args {
		if id, ok := perfdata.ProgID(a); ok {
			s.IDs = append(s.IDs, id)
		} else {
			s.Names = append(s.Names, a)
		}
	}
	return s
}

// idKey is how found notes an id argument: "7" for "007" too.
func idKey(id uint32) string { return strconv.FormatUint(uint64(id), 10) }

// All reports whether no program was named: every one is picked.
func (s *Selection) All() bool { return len(s.IDs) == 0 && len(s.Names) == 0 }

// Program reports whether p is picked, and notes what picked it.
func (s *Selection) Program(p *Program) bool {
	if s.All() {
		return true
	}
	ok := false
	for _, id := range s.IDs {
		if p.ID == id {
			s.found[idKey(id)], ok = true, true
		}
	}
	for _, name := range s.Names {
		if p.Named(name) {
			s.found[name], ok = true, true
		}
	}
	if ok {
		s.matched[p.ID] = true
	}
	return ok
}

// ID reports whether the program of id is picked: named by its id, or
// already picked by Program (an unload of a load listed).
func (s *Selection) ID(id uint32) bool {
	if s.All() || s.matched[id] {
		return true
	}
	for _, want := range s.IDs {
		if want == id {
			return true
		}
	}
	return false
}

// MissingNames are the names no program Program was given matched, in
// the arguments' order.
func (s *Selection) MissingNames() []string {
	var missing []string
	for _, n := range s.Names {
		if !s.found[n] {
			missing = append(missing, n)
		}
	}
	return missing
}

// MissingIDs are the ids no program Program was given has, in the
// arguments' order.
func (s *Selection) MissingIDs() []uint32 {
	var missing []uint32
	for _, id := range s.IDs {
		if !s.found[idKey(id)] {
			missing = append(missing, id)
		}
	}
	return missing
}

// Unmatched are the arguments that picked no program Program was given,
// in the arguments' order (an id and a name alike).
func (s *Selection) Unmatched() []string {
	var missing []string
	for _, a := range s.args {
		key := a
		if id, ok := perfdata.ProgID(a); ok {
			key = idKey(id)
		}
		if !s.found[key] {
			missing = append(missing, a)
		}
	}
	return missing
}

// Of is the programs of l the selection picks (Program, which notes what
// picked them): what bpfmeta snapshot --prog saves. An error l lists is
// kept, whatever program it is of.
func (s *Selection) Of(l Lister) Lister { return selected{l, s} }

type selected struct {
	Lister
	s *Selection
}

func (o selected) All() iter.Seq2[*Program, error] {
	return func(yield func(*Program, error) bool) {
		for p, err := range o.Lister.All() {
			if (err != nil || o.s.Program(p)) && !yield(p, err) {
				return
			}
		}
	}
}
