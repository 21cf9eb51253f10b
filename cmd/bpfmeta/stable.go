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
