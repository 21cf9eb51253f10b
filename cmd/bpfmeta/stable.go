package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// show --stable: the same text and JSON for the same programs and metadata
// on any host and boot, for golden files. Each function's name without
// its bpf_prog_<tag>_ (a tag changes with any change of the code), and its
// entries; nothing of the load (ids, addresses, offsets, samples); sorted,
// and each function with the same entries once, however often it was
// loaded.

// stableFunc is one function's metadata in show --stable.
type stableFunc struct {
	Function string                      `json:"function"`
	Entries  []perfdata.BPFMetadataEntry `json:"entries"`
}

// stableDoc is show --stable --json's document.
type stableDoc struct {
	bpfprog.Header
	Functions []stableFunc `json:"functions"`
}

// KindShowStable is the kind of show --stable --json's document.
const KindShowStable = "show-stable"

// stablePrinter gathers the records' functions and entries, and prints
// them sorted at the end. What it keeps is one copy of each distinct
// function and entries, at most bpftrack.MaxMetadataRecords.
type stablePrinter struct {
	w    *bufio.Writer
	json bool
	seen map[string]bool
	fns  []stableFunc
}

func (p *stablePrinter) record(r *bpftrack.MetadataRecord) error {
	name := r.Metadata.ProgName
	if _, fn, ok := perfdata.ParseBPFProgName(name); ok {
		name = fn
	}
	f := stableFunc{Function: name, Entries: r.Metadata.Entries}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if p.seen[string(b)] {
		return nil
	}
	if len(p.fns) >= bpftrack.MaxMetadataRecords {
		return fmt.Errorf("--stable: more than %d distinct functions and metadata", bpftrack.MaxMetadataRecords)
	}
	p.seen[string(b)] = true
	p.fns = append(p.fns, f)
	return nil
}

func (p *stablePrinter) end() error {
	slices.SortFunc(p.fns, func(a, b stableFunc) int {
		if c := cmp.Compare(a.Function, b.Function); c != 0 {
			return c
		}
		return slices.CompareFunc(a.Entries, b.Entries, func(x, y perfdata.BPFMetadataEntry) int {
			return cmp.Or(cmp.Compare(x.Key, y.Key), cmp.Compare(x.Value, y.Value))
		})
	})
	if p.json {
		doc := stableDoc{Header: bpfprog.NewHeader(KindShowStable), Functions: p.fns}
		if doc.Functions == nil {
			doc.Functions = []stableFunc{}
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		_, err = p.w.Write(append(safetext.JSON(b), '\n'))
		return writeErr(err)
	}
	var b strings.Builder
	for i, f := range p.fns {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s\n", safetext.Clean(f.Function))
		printRecordEntries(&b, "", f.Entries)
	}
	_, err := p.w.WriteString(b.String())
	return writeErr(err)
}

// programs --stable: a loaded program as golden files want it, the same
// for every load of the same object on any host and boot: its name, its
// functions' names (BTF, else perf's without bpf_prog_<tag>_) and its
// metadata entries (with typed); sorted, each distinct program once.

// stableProgram is one program in programs --stable.
type stableProgram struct {
	Name      string          `json:"name"`
	Functions []string        `json:"functions"`
	Entries   []bpfprog.Entry `json:"entries"` // null: no metadata
}

// stableProgramsDoc is programs --stable --json's document.
type stableProgramsDoc struct {
	bpfprog.Header
	Programs []stableProgram `json:"programs"`
}

// KindProgramsStable is the kind of programs --stable --json's document.
const KindProgramsStable = "programs-stable"

// stablePrograms is progs as programs --stable prints them.
func stablePrograms(progs []*bpfprog.Program) []stableProgram {
	out := []stableProgram{}
	seen := map[string]bool{}
	for _, p := range progs {
		sp := stableProgram{Name: p.Name, Functions: []string{}}
		for _, f := range p.Funcs {
			name := f.BTFName
			if name == "" {
				if _, fn, ok := perfdata.ParseBPFProgName(f.PerfName); ok {
					name = fn
				}
			}
			sp.Functions = append(sp.Functions, name)
		}
		if p.Metadata != nil {
			sp.Entries = p.Metadata.Entries
		}
		b, _ := json.Marshal(sp)
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, sp)
		}
	}
	slices.SortFunc(out, func(a, b stableProgram) int {
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := slices.Compare(a.Functions, b.Functions); c != 0 {
			return c
		}
		return slices.CompareFunc(a.Entries, b.Entries, func(x, y bpfprog.Entry) int {
			return cmp.Or(cmp.Compare(x.Key, y.Key), cmp.Compare(x.Value, y.Value))
		})
	})
	return out
}

// printStablePrograms writes programs --stable's text or JSON.
func printStablePrograms(w *bufio.Writer, progs []*bpfprog.Program, asJSON bool) error {
	sp := stablePrograms(progs)
	if asJSON {
		return printJSON(w, stableProgramsDoc{Header: bpfprog.NewHeader(KindProgramsStable), Programs: sp})
	}
	var b strings.Builder
	for i, p := range sp {
		if i > 0 {
			b.WriteByte('\n')
		}
		fns := make([]string, len(p.Functions))
		for j, f := range p.Functions {
			fns[j] = safetext.Clean(f)
		}
		fmt.Fprintf(&b, "%s\n  functions: %s\n", safetext.Clean(p.Name), strings.Join(fns, ", "))
		if p.Entries == nil {
			b.WriteString("  no metadata\n")
		}
		printProgramEntries(&b, "", p.Entries)
	}
	_, err := w.WriteString(b.String())
	return err
}
