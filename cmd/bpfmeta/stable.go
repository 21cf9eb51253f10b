package main

import (
	"bufio"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/stable"
)

// stablePrinter is show --stable's: it gathers the records' functions and
// entries (package stable) and prints them sorted at the end, at most
// bpftrack.MaxMetadataRecords distinct ones.
type stablePrinter struct {
	w    *bufio.Writer
	json bool
	fns  stable.Funcs
}

func (p *stablePrinter) record(r *bpftrack.MetadataRecord) error { return p.fns.AddRecord(r) }

func (p *stablePrinter) end() error {
	fns := p.fns.Sorted()
	if !p.json {
		return writeErr(stable.WriteFuncs(p.w, fns))
	}
	return writeErr(doc.Encode(p.w, doc.NewShowStable(fns)))
}

// printStablePrograms writes programs --stable's text or JSON.
func printStablePrograms(w *bufio.Writer, progs []*bpfprog.Program, asJSON bool) error {
	sp := stable.Programs(progs)
	if asJSON {
		return doc.Encode(w, doc.NewProgramsStable(sp))
	}
	return stable.WritePrograms(w, sp)
}
