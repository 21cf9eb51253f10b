package annotate

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// MaxKSymbols bounds the BPF functions' KSYMBOLs Fill keeps the address
// of, to tell loads of one name apart by a frame's address: a machine
// loads a few thousand; a recording with more is read as if it had none
// (its ambiguous names stay ambiguous).
const MaxKSymbols = 1 << 14

// MaxLoads bounds the loads of one name told apart by address, each
// frame of the name looked for among them: a program is reloaded a few
// times in a recording; a name with more, not all of one metadata, is
// ambiguous.
const MaxLoads = 256

// ksymbolCost is what a KSYMBOL kept costs beside its name.
const ksymbolCost = 96

// ksymbols passes a recording's records on to bpftrack and keeps where
// each BPF function was loaded, and which BPF_METADATA record was placed
// on each, for Table.SetLoads.
type ksymbols struct {
	bpftrack.Records
	byName map[string][]ksymbol
	n      int
	full   bool // more than MaxKSymbols: none is used
	// placed is the metadata of the records bpftrack placed on one
	// function alone (the program whose BPF_EVENT they follow, or the one
	// load of their name), by the function's KSYMBOL: at most one a
	// KSYMBOL kept.
	placed map[ksymbolAt][]perfdata.BPFMetadataEntry
	// doubted are the functions a record not placed on one alone may be
	// of, or two records of other metadata were placed on.
	doubted map[ksymbolAt]bool
	// unplaced names a record that lists none or not all of the functions
	// it may be of has: any of the name's.
	unplaced map[string]bool
	// gone are the unregistering KSYMBOLs of each name, to end the
	// lifetimes of the loads (lifetimes); last is the latest time of a
	// record, where the lifetime of a load still loaded at the end ends.
	gone map[string][]ksymbol
	last uint64
	size int64
	mem  budget.Meter
}

type ksymbolAt struct {
	part   int
	offset int64
}

type ksymbol struct {
	at   ksymbolAt
	addr uint64
	len  uint32
	// time is the record's (perf's clock, ns); 0 where it has none, as
	// perf's perf_event__synthesize_one_bpf_prog() writes none for a
	// program loaded before it records.
	time uint64
}

func newKSymbols(r bpftrack.Records) *ksymbols {
	return &ksymbols{Records: r, byName: map[string][]ksymbol{}, placed: map[ksymbolAt][]perfdata.BPFMetadataEntry{},
		doubted: map[ksymbolAt]bool{}, unplaced: map[string]bool{}, gone: map[string][]ksymbol{}, mem: budget.Meter{What: "annotate's BPF function addresses"}}
}

// Next moves to the next record, keeping a BPF function's KSYMBOL.
func (k *ksymbols) Next() bool {
	if !k.Records.Next() {
		return false
	}
	rec := k.Record()
	if k.full {
		return true
	}
	if rec.Header.Type != perfdata.RecordKSymbol {
		if ts, ok := k.Events().Time(rec.Raw); ok {
			k.last = max(k.last, ts)
		}
		return true
	}
	sym, err := perfdata.DecodeKSymbol(rec.Raw, k.ByteOrder())
	if err != nil || !sym.BPF() {
		return true // bpftrack reports a record it cannot decode
	}
	if k.n++; k.n > MaxKSymbols {
		k.giveUp()
		return true
	}
	ks := ksymbol{at: ksymbolAt{rec.Part, rec.Offset}, addr: sym.Addr, len: sym.Len, time: k.ksymbolTime(rec)}
	k.last = max(k.last, ks.time)
	if sym.Unregister() {
		k.gone[sym.Name] = append(k.gone[sym.Name], ks)
	} else {
		k.byName[sym.Name] = append(k.byName[sym.Name], ks)
	}
	k.size += int64(len(sym.Name)) + ksymbolCost
	if k.mem.Set(k.size) != nil {
		// past the memory budget: read on as if none were kept, as
		// the table's own labels draw on the budget and report it
		k.giveUp()
	}
	return true
}

// ksymbolTime is the time in a KSYMBOL's sample_id, which follows its
// name NUL-padded to 8 bytes, as the kernel's perf_event_ksymbol() and
// perf's perf_event__synthesize_one_bpf_prog() write it (the kernel may
// leave bytes after it: bpftrack's synthesized); 0 without one.
func (k *ksymbols) ksymbolTime(rec *perfdata.Record) uint64 {
	const fields = perfdata.EventHeaderSize + 16
	if len(rec.Raw) < fields {
		return 0
	}
	n := bytes.IndexByte(rec.Raw[fields:], 0)
	if n < 0 {
		return 0
	}
	ts, _ := k.Events().TimeAfter(rec.Raw, fields+(n+8)&^7)
	return ts
}

// giveUp forgets the KSYMBOLs kept: loads of one name stay ambiguous.
func (k *ksymbols) giveUp() {
	k.full, k.byName, k.placed, k.doubted, k.unplaced, k.gone, k.size = true, nil, nil, nil, nil, nil, 0
	k.mem.Set(0)
}

// place notes where bpftrack placed a BPF_METADATA record: on one
// function alone; among functions it lists (each of them may be its, so
// none is known by it); or where it cannot list them all (every function
// of the name may be its).
func (k *ksymbols) place(m *bpftrack.MetadataRecord) error {
	if k.full {
		return nil
	}
	switch {
	case len(m.Funcs) == 0 || m.MoreFuncs != 0:
		k.unplace(m.Metadata.ProgName)
		for _, f := range m.Funcs {
			k.unplace(f.Name)
		}
	case len(m.Funcs) != 1 || m.Matched == bpftrack.MatchAmbiguous || m.Matched == bpftrack.MatchNone:
		for _, f := range m.Funcs {
			k.doubt(ksymbolAt{f.Part, f.Offset})
		}
	default:
		f := m.Funcs[0]
		at := ksymbolAt{f.Part, f.Offset}
		if e, ok := k.placed[at]; ok {
			if !slices.Equal(e, m.Metadata.Entries) {
				k.doubt(at) // two records of other metadata placed on it
			}
			break
		}
		k.placed[at] = slices.Clone(m.Metadata.Entries)
		for _, e := range m.Metadata.Entries {
			k.size += int64(len(e.Key)+len(e.Value)) + 32
		}
	}
	return k.mem.Set(k.size)
}

func (k *ksymbols) doubt(at ksymbolAt) {
	if !k.doubted[at] {
		k.doubted[at] = true
		k.size += 32
	}
}

func (k *ksymbols) unplace(name string) {
	if !k.unplaced[name] {
		k.unplaced[name] = true
		k.size += int64(len(name)) + 32
	}
}

// setLoads gives t where and when every load of each name it has a label
// of was (spans), and the loads of each name several KSYMBOLs have,
// unless a record of the name may be of any of them: those with other
// metadata are told apart by a frame's address, and a load no record was
// placed on alone (without metadata, whose record is missing, or that a
// record bpftrack could not tell between it and others may be of) makes
// the frames in it ambiguous, never another load's.
func (k *ksymbols) setLoads(t *Table) error {
	if k.full {
		return nil
	}
	t.recorded = true
	for name, syms := range k.byName {
		l, ok := t.labels[name]
		if !ok {
			continue
		}
		spans := k.spans(name)
		if err := t.setSpans(name, spans); err != nil {
			return err
		}
		if len(syms) < 2 || k.unplaced[name] {
			// one load; or records bpftrack could not place, counted
			// by Fill
			continue
		}
		loads := make([]Load, 0, len(syms))
		known := 0
		for i, s := range syms {
			e, ok := k.placed[s.at]
			if ok = ok && !k.doubted[s.at]; ok {
				known++
			}
			loads = append(loads, Load{Addr: s.addr, Len: s.len, Entries: e, Unknown: !ok, from: spans[i].from, to: spans[i].to})
		}
		if known == len(syms) && !l.ambiguous {
			continue // every load has the same metadata
		}
		if len(syms) > MaxLoads {
			if err := t.SetAmbiguous(name); err != nil {
				return err
			}
			continue
		}
		if err := t.SetLoads(name, loads); err != nil {
			return err
		}
	}
	return nil
}

// spans are where and when each load of name was, in the order of its
// KSYMBOLs: from its KSYMBOL's time to the first unregistering of its
// address and name at or after it, or to the recording's last time. A
// KSYMBOL without a time (perf's own, of a program loaded before it
// records) is from the start; in a recording without times (no
// sample_id_all) a span is of any time.
func (k *ksymbols) spans(name string) []span {
	gone := k.gone[name]
	slices.SortFunc(gone, func(a, b ksymbol) int { return cmp.Or(cmp.Compare(a.addr, b.addr), cmp.Compare(a.time, b.time)) })
	spans := make([]span, 0, len(k.byName[name]))
	for _, s := range k.byName[name] {
		sp := span{addr: s.addr, end: s.addr + uint64(s.len), from: s.time, to: k.last}
		// the first unregistering of the address at or after it
		i, _ := slices.BinarySearchFunc(gone, s, func(g, s ksymbol) int {
			return cmp.Or(cmp.Compare(g.addr, s.addr), cmp.Compare(g.time, max(s.time, 1)))
		})
		if i < len(gone) && gone[i].addr == s.addr {
			sp.to = gone[i].time
		}
		spans = append(spans, sp)
	}
	return spans
}

// PartName names a directory recording's data file, as the records'
// reader does (bpftrack names the file a record is in with it).
func (k *ksymbols) PartName(part int) string {
	if d, ok := k.Records.(interface{ PartName(int) string }); ok {
		return d.PartName(part)
	}
	return ""
}
