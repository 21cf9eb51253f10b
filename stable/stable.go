// Package stable is the form of BPF programs' metadata golden files want.
//
// It is what is the same on any host and boot, for every load of the same
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
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Func is one function's metadata, from a BPF_METADATA record: perf's
// text of each value, and its typed form where Funcs.Typed knows it. It is
// an element of show --stable --json's document (doc.ShowStable).
type Func = doc.StableFunc

// Funcs gathers the functions of a recording's records, each distinct one
// once. Each distinct set of entries is kept once, with the names of the
// functions that have it (a recording holds a program's entries once per
// function, and many programs of one object), and what it keeps is
// charged to the process's memory budget (internal/budget): Close gives it
// back.
type Funcs struct {
	sets  map[[sha256.Size]byte]*entrySet
	count int
	size  int64 // charged to mem
	mem   budget.Meter
	// Max bounds the distinct functions kept; 0 is
	// bpftrack.MaxMetadataRecords, the bound of show --stable and
	// bpfmetatest (what a recording may hold, whatever it claims).
	Max int
	// Typed, if not nil, gives the typed form of an entry of function
	// (named as in Func), or nil: perf's record holds only the text, the
	// program's BTF (a snapshot's, the kernel's) the rest (TypedIndex).
	Typed func(function string, e perfdata.BPFMetadataEntry) json.RawMessage
}

// entrySet is one set of entries and the functions that have it.
type entrySet struct {
	entries []bpfprog.Entry
	names   map[string]bool
}

// Costs charged to the budget beside the strings: an entry, a set, and a
// function's name in a set (map and slice room, headers).
const (
	entryCost = 96
	setCost   = 160
	nameCost  = 64
)

// AddRecord adds the function of a BPF_METADATA record of a recording,
// named after the function it was matched to (RecordFunction).
func (s *Funcs) AddRecord(r *bpftrack.MetadataRecord) error {
	return s.AddAs(RecordFunction(r), r.Metadata)
}

// Add adds the function of a BPF_METADATA record, named as the record
// names it (FuncName).
func (s *Funcs) Add(m perfdata.BPFMetadata) error { return s.AddAs(FuncName(m.ProgName), m) }

// AddAs adds the metadata of a record as that of function name (a stable
// name: FuncName).
func (s *Funcs) AddAs(name string, m perfdata.BPFMetadata) error {
	entries := make([]bpfprog.Entry, len(m.Entries))
	for i, e := range m.Entries {
		entries[i] = bpfprog.Entry{Key: e.Key, Value: e.Value}
		if s.Typed != nil {
			entries[i].Typed = s.Typed(name, e)
		}
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	set := s.sets[sum]
	if set != nil && set.names[name] {
		return nil
	}
	if max := cmp.Or(s.Max, bpftrack.MaxMetadataRecords); s.count >= max {
		return fmt.Errorf("more than %d distinct functions and metadata", max)
	}
	if s.sets == nil {
		s.sets = map[[sha256.Size]byte]*entrySet{}
		s.mem.What = "show --stable's functions"
	}
	grow := len(name) + nameCost
	if set == nil {
		set = &entrySet{entries: entries, names: map[string]bool{}}
		grow += setCost
		for _, e := range entries {
			grow += len(e.Key) + len(e.Value) + len(e.Typed) + entryCost
		}
	}
	if err := s.mem.Set(s.size + int64(grow)); err != nil {
		return err
	}
	s.size += int64(grow)
	s.sets[sum] = set
	set.names[name] = true
	s.count++
	return nil
}

// Close gives back what s holds of the memory budget.
func (s *Funcs) Close() { s.mem.Close() }

// RecordFunction is the stable name of the function a BPF_METADATA record
// belongs to, as show prints it: that of the function bpftrack matched the
// record to, by name, function name or tag; else (no function, or one of
// several that cannot be told) the record's own. perf names a record from
// the BTF of the map its metadata is in (bpf_metadata_create() hands
// synthesize_bpf_prog_name() the map's btf), which for a program loaded by
// cilium/ebpf is not the program's: its records read "bpf_prog_<tag>_" or
// "bpf_prog_<tag>_.rodata" where the KSYMBOL has the function's name.
// So one program gives one stable text, whether perf or bpfmeta inject
// wrote its records.
func RecordFunction(r *bpftrack.MetadataRecord) string {
	switch r.Matched {
	case bpftrack.MatchName, bpftrack.MatchFunction, bpftrack.MatchTag:
		if len(r.Funcs) > 0 {
			return FuncName(r.Funcs[0].Name)
		}
	}
	return FuncName(r.Metadata.ProgName)
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

// Sorted returns the functions by name, then entries. Functions with the
// same entries share their Entries.
func (s *Funcs) Sorted() []Func {
	out := make([]Func, 0, s.count)
	for _, set := range s.sets {
		for name := range set.names {
			out = append(out, Func{Function: name, Entries: set.entries})
		}
	}
	slices.SortFunc(out, func(a, b Func) int {
		return cmp.Or(cmp.Compare(a.Function, b.Function), compareEntries(a.Entries, b.Entries))
	})
	return out
}

// compareEntries orders two lists of entries.
func compareEntries(a, b []bpfprog.Entry) int {
	return slices.CompareFunc(a, b, func(x, y bpfprog.Entry) int {
		return cmp.Or(cmp.Compare(x.Key, y.Key), cmp.Compare(x.Value, y.Value), bytes.Compare(x.Typed, y.Typed))
	})
}

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

// WriteFuncs writes fns as text: the names of the functions with the same
// entries, one a line, then those entries as perf script
// --show-bpf-events prints them, without their index (which a variable
// removed would change for every entry after it); a blank line between
// groups, which come in the order of their first function's name.
func WriteFuncs(w io.Writer, fns []Func) error {
	idx := make([]int, len(fns))
	for i := range idx {
		idx[i] = i
	}
	// by entries, then name: a group's functions side by side, by name
	slices.SortStableFunc(idx, func(a, b int) int { return compareEntries(fns[a].Entries, fns[b].Entries) })
	var groups [][]int
	for k, i := range idx {
		if k == 0 || compareEntries(fns[idx[k-1]].Entries, fns[i].Entries) != 0 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
	}
	for _, g := range groups {
		slices.SortFunc(g, func(a, b int) int { return cmp.Compare(fns[a].Function, fns[b].Function) })
	}
	slices.SortFunc(groups, func(a, b []int) int { return cmp.Compare(fns[a[0]].Function, fns[b[0]].Function) })
	var b strings.Builder
	for k, g := range groups {
		if k > 0 {
			b.WriteByte('\n')
		}
		for _, i := range g {
			fmt.Fprintf(&b, "%s\n", funcLabel(fns[i].Function))
		}
		for _, e := range fns[g[0]].Entries {
			writeEntry(&b, e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// NoName is the text's name of a function without one: perf names the
// records of a program whose map's BTF is not the program's
// "bpf_prog_<tag>_" (RecordFunction), and a program without BTF or name
// is the kernel's "bpf_prog_<tag>".
const NoName = "(no name)"

// funcLabel is function's name in the text: visible when empty.
func funcLabel(function string) string {
	if function == "" {
		return NoName
	}
	return safetext.Clean(function)
}

// writeEntry is perf's entry line without the index
// (doc.WriteUnindexedEntry), and, for a struct, union or
// array whose typed form is known, a line with that form: perf's text
// leaves out the names of the fields and those that are zero, so that
// {1,0,"x86_64"} -> {1,1,"x86_64"} reads as {1,"x86_64"} ->
// {1,1,"x86_64"}; the named form says which field changed.
func writeEntry(b *strings.Builder, e bpfprog.Entry) {
	doc.WriteUnindexedEntry(b, e.Key, e.Value)
	if t := bytes.TrimSpace(e.Typed); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		fmt.Fprintf(b, "  named: %20s = %s\n", safetext.Clean(e.Key), safetext.Clean(string(compact(t))))
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

// Program is one loaded program, an element of programs --stable
// --json's document (doc.ProgramsStable).
type Program = doc.StableProgram

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
			fns[j] = funcLabel(f)
		}
		fmt.Fprintf(&b, "%s\n  functions: %s\n", safetext.Clean(p.Name), strings.Join(fns, ", "))
		if p.Entries == nil {
			b.WriteString("  no metadata\n")
		}
		for _, e := range p.Entries {
			writeEntry(&b, e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
		for _, name := range bpftrack.Names(f.BTFName, FuncName(f.PerfName), FuncName(f.KernelName)) {
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
// A nil TypedIndex types nothing.
func (ix *TypedIndex) Typed(function string, e perfdata.BPFMetadataEntry) json.RawMessage {
	if ix == nil {
		return nil
	}
	return ix.m[typedKey(function, e.Key, e.Value)]
}

// OfRecord is the typed form of entry e of a BPF_METADATA record named
// progName (perf's bpf_prog_<tag>_<function>: its function, FuncName), or
// nil: a doc.TypedFunc, which types show --json's records.
func (ix *TypedIndex) OfRecord(progName string, e perfdata.BPFMetadataEntry) json.RawMessage {
	return ix.Typed(FuncName(progName), e)
}

// SnapshotTypes indexes the typed forms of the entries of the programs of
// the snapshot file at path (package bpfprog/snapshot), which a
// recording's records lack: show --snapshot's, and bpfmetatest's. Its
// errors are snapshot.Open's and TypedIndex.Add's, as they are.
func SnapshotTypes(path string) (*TypedIndex, error) {
	snap, err := snapshot.Open(path)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	ix := new(TypedIndex)
	if err := ix.AddAll(snap); err != nil {
		return nil, err
	}
	return ix, nil
}
