package journal

import "github.com/bpfmeta/bpfmeta/bpfprog"

// Selected reports whether e is listed when sel picks some programs
// (bpfmeta programs --journal ID|NAME...), given the host's entries in
// order: a load of a program sel picks, by id or name; an unload or a
// lost load of an id it picks, or of a load it picked before (a name
// picks the unloads of its loads); a count of the kernel's lost records
// (no id) and a dropped segment only when sel picks every program; a
// segment's torn end and a damaged record always, for a program picked
// may be in them.
func (e *Entry) Selected(sel *bpfprog.Selection) bool {
	switch {
	case e.Torn != "", e.Damaged != "":
		return true
	case e.Program != nil:
		return sel.Program(e.Program) || sel.ID(e.Program.ID)
	case e.Unload != nil:
		return sel.ID(e.Unload.ID)
	case e.Lost != nil:
		return sel.All() || e.Lost.ID != 0 && sel.ID(e.Lost.ID)
	case e.Dropped != nil:
		return sel.All()
	}
	return false
}
