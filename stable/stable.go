// Package stable is the form of BPF programs' metadata golden files want:
// what is the same on any host and boot, for every load of the same
// object. A function is named without its bpf_prog_<tag>_ (a tag changes
// with any change of the code); nothing of a load is kept (ids, tags,
// addresses, offsets, load times, samples, boot ids); what is kept is
// sorted, and each distinct function or program once, so that the diff
// between two versions of a program is the values that changed.
//
// show --stable and programs --stable print it, and package bpfmetatest
// checks it against golden files.
package stable

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Func is one function's metadata, from a BPF_METADATA record: perf's
// text of each value, and its typed form where Funcs.Typed knows it.
type Func struct {
	Function string          `json:"function"`
	Entries  []bpfprog.Entry `json:"entries"`
}

// Funcs gathers the functions of a recording's records, each distinct one
// once.
type Funcs struct {
	seen map[string]bool
	list []Func
	// Max bounds the distinct functions kept (0: no bound).
	Max int
	// Typed, if not nil, gives the typed form of an entry of function
	// (named as in Func), or nil: perf's record holds only the text, the
	// program's BTF (a snapshot's, the kernel's) the rest (TypedIndex).
	Typed func(function string, e perfdata.BPFMetadataEntry) json.RawMessage
}

// Add adds the function of a BPF_METADATA record.
func (s *Funcs) Add(m perfdata.BPFMetadata) error {
	name := FuncName(m.ProgName)
	f := Func{Function: name, Entries: make([]bpfprog.Entry, len(m.Entries))}
	for i, e := range m.Entries {
		f.Entries[i] = bpfprog.Entry{Key: e.Key, Value: e.Value}
		if s.Typed != nil {
			f.Entries[i].Typed = s.Typed(name, e)
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[string(b)] {
		return nil
	}
	if s.Max > 0 && len(s.list) >= s.Max {
		return fmt.Errorf("more than %d distinct functions and metadata", s.Max)
	}
	s.seen[string(b)] = true
	s.list = append(s.list, f)
	return nil
}

// FuncName is the stable name of a function named name in a record or a
// KSYMBOL: without bpf_prog_<tag>_, which changes with any change of the
// code.
func FuncName(name string) string {
	if _, fn, ok := perfdata.ParseBPFProgName(name); ok {
		return fn
	}
	return name
}

// Sorted returns the functions by name, then entries.
func (s *Funcs) Sorted() []Func { return once(s.list, func(f Func) string { return f.Function }) }

// once returns items sorted by name, then by their JSON form (what follows
// the name: functions, entries), each distinct one once.
func once[T any](items []T, name func(T) string) []T {
	type keyed struct {
		name, json string
		v          T
	}
	ks := make([]keyed, 0, len(items))
	for _, v := range items {
		b, _ := json.Marshal(v)
		ks = append(ks, keyed{name(v), string(b), v})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.json, b.json)) })
	ks = slices.CompactFunc(ks, func(a, b keyed) bool { return a.json == b.json })
	out := make([]T, len(ks))
	for i, k := range ks {
		out[i] = k.v
	}
	return out
}

// WriteFuncs writes fns as text: each function's name, then its entries
// as perf script --show-bpf-events prints them; a blank line between.
func WriteFuncs(w io.Writer, fns []Func) error {
	var b strings.Builder
	for i, f := range fns {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s\n", safetext.Clean(f.Function))
		for j, e := range f.Entries {
			writeEntry(&b, j, e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeEntry is perf_event__fprintf_bpf_metadata()'s entry line, and,
// for a struct, union or array whose typed form is known, a line with
// that form: perf's text leaves out the names of the fields and those
// that are zero, so that {1,0,"x86_64"} -> {1,1,"x86_64"} reads as
// {1,"x86_64"} -> {1,1,"x86_64"}; the named form says which field changed.
func writeEntry(b *strings.Builder, i int, e bpfprog.Entry) {
	entry := fmt.Sprintf("  entry %d: ", i)
	fmt.Fprintf(b, "%s%20s = %s\n", entry, safetext.Clean(e.Key), safetext.Clean(e.Value))
	if t := bytes.TrimSpace(e.Typed); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		fmt.Fprintf(b, "%-*s%20s = %s\n", len(entry), "  named:", safetext.Clean(e.Key), safetext.Clean(string(compact(t))))
	}
}

// compact is the typed form on one line.
func compact(typed []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, typed) != nil {
		return typed
	}
	return b.Bytes()
}

// Program is one loaded program.
type Program struct {
	Name      string          `json:"name"`
	Functions []string        `json:"functions"`
	Entries   []bpfprog.Entry `json:"entries"` // null: no metadata
}

// Programs is progs in the stable form: each distinct one once, sorted.
func Programs(progs []*bpfprog.Program) []Program {
	out := make([]Program, 0, len(progs))
	for _, p := range progs {
		sp := Program{Name: p.Name, Functions: []string{}}
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
		out = append(out, sp)
	}
	return once(out, func(p Program) string { return p.Name })
}

// WritePrograms writes progs as text: each program's name, its functions,
// and its entries; a blank line between.
func WritePrograms(w io.Writer, progs []Program) error {
	var b strings.Builder
	for i, p := range progs {
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
		for j, e := range p.Entries {
			writeEntry(&b, j, e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// The kinds of the documents of show --stable --json and programs
// --stable --json.
const (
	KindShow     = "show-stable"
	KindPrograms = "programs-stable"
)

// ShowDoc is show --stable --json's document.
type ShowDoc struct {
	bpfprog.Header
	Functions []Func `json:"functions"`
}

// ProgramsDoc is programs --stable --json's document.
type ProgramsDoc struct {
	bpfprog.Header
	Programs []Program `json:"programs"`
}

// MaxTyped and MaxTypedBytes bound the entries a TypedIndex keeps, and
// their bytes (keys and typed forms): a snapshot's line may hold 4 MiB.
const (
	MaxTyped      = 1 << 16
	MaxTypedBytes = 16 << 20
)

// TypedIndex has the typed forms of programs' entries by function (its
// stable name), key and value: what a recording's BPF_METADATA records,
// which hold perf's text only, lack (Funcs.Typed).
type TypedIndex struct {
	m     map[string]json.RawMessage
	bytes int
}

func typedKey(function, key, value string) string { return function + "\x00" + key + "\x00" + value }

// Add indexes p's entries under each name of each of its functions.
func (ix *TypedIndex) Add(p *bpfprog.Program) error {
	if p.Metadata == nil {
		return nil
	}
	if ix.m == nil {
		ix.m = map[string]json.RawMessage{}
	}
	for _, f := range p.Funcs {
		for _, name := range uniqNames(f.BTFName, FuncName(f.PerfName), FuncName(f.KernelName)) {
			for _, e := range p.Metadata.Entries {
				if len(e.Typed) == 0 {
					continue
				}
				k := typedKey(name, e.Key, e.Value)
				if _, ok := ix.m[k]; ok {
					continue
				}
				switch {
				case len(ix.m) >= MaxTyped:
					return fmt.Errorf("program %d: more than %d typed entries", p.ID, MaxTyped)
				case ix.bytes+len(k)+len(e.Typed) > MaxTypedBytes:
					return fmt.Errorf("program %d: more than %d MiB of typed entries", p.ID, MaxTypedBytes>>20)
				}
				ix.m[k] = e.Typed
				ix.bytes += len(k) + len(e.Typed)
			}
		}
	}
	return nil
}

// uniqNames is names without "" and repeats.
func uniqNames(names ...string) []string {
	var out []string
	for _, n := range names {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// AddAll indexes every program l lists (a snapshot's).
func (ix *TypedIndex) AddAll(l bpfprog.Lister) error {
	for p, err := range l.All() {
		if err == nil {
			err = ix.Add(p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Typed is the typed form of entry e of function, or nil: a Funcs.Typed.
func (ix *TypedIndex) Typed(function string, e perfdata.BPFMetadataEntry) json.RawMessage {
	return ix.m[typedKey(function, e.Key, e.Value)]
}
