package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// progSelection is the programs the arguments of bpfmeta programs name:
// each an id, or a name as show --prog takes it (perfdata.BPFNameIs of a
// function's perf or kernel name), or the program's own name.
type progSelection struct {
	ids   []uint32
	names []string
	// found is what each argument matched (listed ids of the journal's
	// loads named, for their unloads).
	found   map[string]bool
	matched map[uint32]bool
}

func newProgSelection(args []string) *progSelection {
	s := &progSelection{found: map[string]bool{}, matched: map[uint32]bool{}}
	for _, a := range args {
		if id, err := strconv.ParseUint(a, 10, 32); err == nil {
			s.ids = append(s.ids, uint32(id))
		} else {
			s.names = append(s.names, a)
		}
	}
	return s
}

// all reports whether no program was named: every one is listed.
func (s *progSelection) all() bool { return len(s.ids) == 0 && len(s.names) == 0 }

// program reports whether p is selected, and notes what selected it.
func (s *progSelection) program(p *bpfprog.Program) bool {
	if s.all() {
		return true
	}
	ok := false
	for _, id := range s.ids {
		if p.ID == id {
			s.found[strconv.FormatUint(uint64(id), 10)], ok = true, true
		}
	}
	for _, name := range s.names {
		if p.Named(name) {
			s.found[name], ok = true, true
		}
	}
	if ok {
		s.matched[p.ID] = true
	}
	return ok
}

// id reports whether the program of id is selected: named by its id, or
// already selected by program (an unload of a load listed).
func (s *progSelection) id(id uint32) bool {
	if s.all() || s.matched[id] {
		return true
	}
	for _, want := range s.ids {
		if want == id {
			return true
		}
	}
	return false
}

// missingNames is an error naming the names no program matched, or nil.
func (s *progSelection) missingNames(where string) error {
	var missing []string
	for _, n := range s.names {
		if !s.found[n] {
			missing = append(missing, safetext.Quote(n))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("no program named %s %s (bpfmeta programs without names lists them)", strings.Join(missing, ", "), where)
}

// missingIDs is an error naming the ids no program listed has, or nil
// (k.Programs refuses a missing id itself when no name is given).
func (s *progSelection) missingIDs() error {
	for _, id := range s.ids {
		if !s.found[strconv.FormatUint(uint64(id), 10)] {
			return fmt.Errorf("no program of id %d is loaded", id)
		}
	}
	return nil
}
