package doc

import "github.com/bpfmeta/bpfmeta/bpfprog"

// StableFunc is one function's metadata in the stable form (package
// stable: what is the same on any host and boot), from a BPF_METADATA
// record: perf's text of each value, and its typed form where known.
type StableFunc struct {
	// Function is the function's name without bpf_prog_<tag>_.
	Function string          `json:"function"`
	Entries  []bpfprog.Entry `json:"entries"`
}

// StableProgram is one loaded program in the stable form.
type StableProgram struct {
	Name      string          `json:"name"`
	Functions []string        `json:"functions"`
	Entries   []bpfprog.Entry `json:"entries"` // null: no metadata
}

// ShowStable is show --stable --json's document.
type ShowStable struct {
	Header
	Functions []StableFunc `json:"functions"`
}

// NewShowStable is the document of show --stable --json of fns (sorted,
// each once: stable.Funcs.Sorted).
func NewShowStable(fns []StableFunc) ShowStable {
	return ShowStable{Header: NewHeader(KindShowStable), Functions: fns}
}

// ProgramsStable is programs --stable --json's document.
type ProgramsStable struct {
	Header
	Programs []StableProgram `json:"programs"`
}

// NewProgramsStable is the document of programs --stable --json of progs
// (stable.Programs).
func NewProgramsStable(progs []StableProgram) ProgramsStable {
	return ProgramsStable{Header: NewHeader(KindProgramsStable), Programs: progs}
}
