package doc

import "github.com/bpfmeta/bpfmeta/bpfprog"

// Programs is the document of programs --json: the programs of one system,
// each in the JSON form every document shares (bpfprog.Program).
type Programs struct {
	Header
	System   bpfprog.System     `json:"system"`
	Programs []*bpfprog.Program `json:"programs"`
}

// NewPrograms is the document of programs --json for progs, of sys.
func NewPrograms(sys bpfprog.System, progs []*bpfprog.Program) Programs {
	if progs == nil {
		progs = []*bpfprog.Program{} // [], not null: no program is a list of none
	}
	return Programs{Header: NewHeader(KindPrograms), System: sys, Programs: progs}
}
