package bpftrack

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Records is a recording read record by record: *reader.Reader is one.
type Records interface {
	Recording
	Next() bool
	Record() *perfdata.Record
	Err() error
}

// MetadataRecord is a BPF_METADATA record of a recording, and what it
// belongs to.
type MetadataRecord struct {
	Offset int64 // of the record
	// File is the data file of a directory recording (perf record
	// --threads) Offset is in, "" for one file.
	File     string
	Metadata perfdata.BPFMetadata
	// Funcs are the BPF functions (KSYMBOLs) the record belongs to
	// (RecordFuncs), the first of them the one unless they are several
	// loads of one function or Matched is MatchAmbiguous, at most
	// MaxRecordFuncs; MoreFuncs counts the others. Matched says how they
	// were found.
	Funcs     []*Func
	MoreFuncs int
	Matched   Match
	// Samples counts the samples in all of them.
	Samples int
}

// MaxRecordFuncs bounds the functions a MetadataRecord lists: a function
// is loaded a few times in a recording, and a recording that claims
// thousands of loads of one would have every record list them all.
const MaxRecordFuncs = 16

// MaxMetadataRecords and MaxMetadataBytes bound the records ReadMetadata
// keeps, in number and in the bytes of their decoded names, keys and
// values: perf writes one per BPF function, a few thousand on a machine,
// of a few hundred bytes each (a record may hold 64 KiB). With MaxFuncs
// functions kept beside them, and what each record keeps to be matched,
// more would take a process past 64 MiB.
const (
	MaxMetadataRecords = 1 << 15
	MaxMetadataBytes   = 16 << 20
)

// ErrTooManyRecords is returned (wrapped, with the offset) by ReadMetadata
// for a recording with more BPF_METADATA records than it keeps.
var ErrTooManyRecords = fmt.Errorf("more than %d BPF_METADATA records, or %d MiB of them: they are kept until the end, to count their samples", MaxMetadataRecords, MaxMetadataBytes>>20)

// Metadata is what ReadMetadata found in a recording.
type Metadata struct {
	// Records are its BPF_METADATA records, in the recording's order.
	Records []MetadataRecord
	// Loads counts its PROG_LOAD BPF_EVENT records: the programs whose
	// metadata a recording without records could get (bpfmeta inject).
	Loads int
}

// OfProgram returns the records of the program prog names: by id (of a
// program the recording has a BPF_EVENT of), or by the name of its
// function, with or without perf's bpf_prog_<tag>_ (bpfmeta show --prog).
// It keeps them in m.Records' array.
func (m *Metadata) OfProgram(prog string) []MetadataRecord {
	id, err := strconv.ParseUint(prog, 10, 32)
	byID := err == nil
	return slices.DeleteFunc(m.Records, func(r MetadataRecord) bool {
		if byID {
			p := r.Program()
			return p == nil || p.ID != uint32(id)
		}
		_, fn, _ := perfdata.ParseBPFProgName(r.Metadata.ProgName)
		return r.Metadata.ProgName != prog && fn != prog
	})
}

// ReadMetadata reads the whole recording: its BPF_METADATA records, each
// with the functions it belongs to and their samples, as perf's placement
// of the records says. perf writes the records of a program it found
// loaded right after its BPF_EVENT (perf_event__synthesize_one_bpf_prog()),
// and those of the programs loaded during the recording at the end, a
// program's records one after the other in the order of its functions,
// main function first (perf_event__synthesize_final_bpf_metadata()). So a
// record belongs to the function of its name of the program whose
// BPF_EVENT it follows, or else of its tag (MatchTag: perf may name the
// function from another BTF); else to the next function of the program of the
// record right before it, when that has its name; else to the functions
// RecordFuncs finds once the whole recording is read, of programs loaded
// during the recording, or else those of its tag. When more such records
// have a name (or a tag) than there
// are functions for them, some are of loads the recording has no KSYMBOL
// of (perf's side-band thread sees every load on the machine), and which
// cannot be told: they are MatchAmbiguous. Errors name the offset of the
// record.
func ReadMetadata(r Records) (*Metadata, error) {
	t := New(r, Options{Samples: true, History: true})
	var recs []MetadataRecord
	loads := 0
	var afters []*Program
	// after is the program whose BPF_EVENT the records since follow (only
	// BPF_METADATA records came since).
	var after *Program
	// follows: record i comes right after record i-1.
	var follows []bool
	lastMetadata := false
	kept := 0 // bytes of the records kept, headers of strings included
	for r.Next() {
		rec := r.Record()
		if rec.Header.Type == perfdata.RecordBPFMetadata {
			m, err := perfdata.DecodeBPFMetadata(rec.Raw, r.ByteOrder())
			if err != nil {
				return nil, fmt.Errorf("BPF_METADATA record at %#x: %w", rec.Offset, err)
			}
			kept += len(m.ProgName) + 64
			for _, e := range m.Entries {
				kept += len(e.Key) + len(e.Value) + 32
			}
			if len(recs) == MaxMetadataRecords || kept > MaxMetadataBytes {
				return nil, fmt.Errorf("%w (at %#x)", ErrTooManyRecords, rec.Offset)
			}
			recs = append(recs, MetadataRecord{Offset: rec.Offset, File: partName(r, rec.Part), Metadata: m})
			afters = append(afters, after)
			follows = append(follows, lastMetadata)
			lastMetadata = true
			continue
		}
		lastMetadata = false
		u, err := t.Feed(rec)
		switch {
		case errors.Is(err, ErrTooMany):
			return nil, err
		case err != nil:
			continue // perf skips a record it cannot decode
		}
		after = u.Loaded
		if u.Loaded != nil {
			loads++
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	// The records of a program perf found loaded follow its BPF_EVENT,
	// one per function in order, found by name or else by tag; the others
	// are counted by name.
	own := make([]*Func, len(recs))
	ownMatch := make([]Match, len(recs))
	atEnd := map[string]int{}
	pos := 0 // of record i among those after its BPF_EVENT
	for i := range recs {
		name := recs[i].Metadata.ProgName
		if i > 0 && follows[i] && afters[i] == afters[i-1] {
			pos++
		} else {
			pos = 0
		}
		if after := afters[i]; after != nil {
			if k := slices.IndexFunc(after.Funcs, func(f *Func) bool { return f.Name == name }); k >= 0 {
				own[i], ownMatch[i] = after.Funcs[k], MatchName
				continue
			}
			if f := tagFunc(after, name, pos); f != nil {
				own[i], ownMatch[i] = f, MatchTag
				continue
			}
		}
		atEnd[name]++
	}
	// Records of one name that follow no program of theirs belong to the
	// same functions: found, and their samples counted, once per name.
	byName := map[string]*found{}
	// The functions of one function name after the tag are those of every
	// name RecordFuncs finds by it alone: their samples are counted once.
	byFunction := map[string]int{}
	var prev *Func // the one function of the record before
	// Records at the end that no name matches, by their tag: perf named
	// them from another BTF (MatchTag), matched once the loop is done.
	byTag := map[perfdata.BPFTag][]*found{}
	foundOf := make([]*found, len(recs))
	for i := range recs {
		m := &recs[i]
		name := m.Metadata.ProgName
		f := byName[name]
		if next := nextFunc(prev); own[i] == nil && follows[i] && next != nil && next.Name == name {
			own[i], ownMatch[i] = next, MatchName
		}
		switch {
		case own[i] != nil:
			f = &found{funcs: own[i : i+1], match: ownMatch[i], samples: own[i].Samples}
		case f == nil:
			f = &found{}
			f.funcs, f.match = t.RecordFuncs(name, nil)
			if f.match == MatchFunction || f.match == MatchAmbiguous {
				_, fn, _ := perfdata.ParseBPFProgName(name)
				n, counted := byFunction[fn]
				if !counted {
					n = samples(f.funcs)
					byFunction[fn] = n
				}
				f.samples = n
			} else {
				f.samples = samples(f.funcs)
			}
			if len(f.funcs) > 0 && atEnd[name] > len(f.funcs) {
				f.match = MatchAmbiguous
			}
			if tag, _, ok := perfdata.ParseBPFProgName(name); ok && f.match == MatchNone {
				byTag[tag] = append(byTag[tag], f)
			}
			byName[name] = f
		}
		foundOf[i] = f
		f.give(m)
		prev = nil
		if p := m.Program(); p != nil {
			prev = m.Funcs[0]
		}
	}
	if len(byTag) > 0 {
		t.matchByTag(byTag, foundOf)
		for i := range recs {
			if f := foundOf[i]; f.match != MatchNone && len(recs[i].Funcs) == 0 {
				f.give(&recs[i])
			}
		}
	}
	return &Metadata{Records: recs, Loads: loads}, nil
}

// found is what ReadMetadata found for the records of a name (or one
// record), and how.
type found struct {
	funcs   []*Func
	match   Match
	samples int
}

// give gives record m the functions f found.
func (f *found) give(m *MetadataRecord) {
	n := min(len(f.funcs), MaxRecordFuncs)
	m.Funcs, m.MoreFuncs, m.Matched, m.Samples = f.funcs[:n:n], len(f.funcs)-n, f.match, f.samples
}

// matchByTag gives the records at the end that no name matched, byTag
// (foundOf says whose each record is), the functions of programs loaded
// during the recording with their tag: MatchTag, or MatchAmbiguous as by
// name, when more records than functions carry the tag or the functions
// have several names.
func (t *Tracker) matchByTag(byTag map[perfdata.BPFTag][]*found, foundOf []*found) {
	tagged := t.loadedDuringByTag(func(tag perfdata.BPFTag) bool { return byTag[tag] != nil })
	recordsOf := map[*found]int{}
	for _, f := range foundOf {
		recordsOf[f]++
	}
	for tag, fs := range byTag {
		funcs := tagged[tag]
		if len(funcs) == 0 {
			continue
		}
		records := 0
		for _, f := range fs {
			records += recordsOf[f]
		}
		match := MatchTag
		if records > len(funcs) || slices.ContainsFunc(funcs, func(f *Func) bool { return f.Name != funcs[0].Name }) {
			match = MatchAmbiguous
		}
		for _, f := range fs {
			f.funcs, f.match, f.samples = funcs, match, samples(funcs)
		}
	}
}

// tagFunc returns the function of p that a record named name, the pos-th
// right after p's BPF_EVENT, belongs to by its tag alone (MatchTag): the
// one function of p with the tag, or of several (functions of the same
// instructions) the pos-th, as perf writes them; nil if none.
func tagFunc(p *Program, name string, pos int) *Func {
	tag, _, ok := perfdata.ParseBPFProgName(name)
	if !ok {
		return nil
	}
	var one *Func
	n := 0
	for k, f := range p.Funcs {
		if ft, _, ok := perfdata.ParseBPFProgName(f.Name); !ok || ft != tag {
			continue
		}
		if k == pos {
			return f
		}
		one = f
		n++
	}
	if n == 1 {
		return one
	}
	return nil
}

// nextFunc returns the function after f in its program, or nil.
func nextFunc(f *Func) *Func {
	if f == nil || f.Program == nil {
		return nil
	}
	fs := f.Program.Funcs
	if k := slices.Index(fs, f); k >= 0 && k+1 < len(fs) {
		return fs[k+1]
	}
	return nil
}

// samples sums the samples of fs.
func samples(fs []*Func) int {
	n := 0
	for _, f := range fs {
		n += f.Samples
	}
	return n
}

// partName names data file part of r if r is a directory recording
// (*reader.Reader's PartName), "" otherwise.
func partName(r Records, part int) string {
	if d, ok := r.(interface{ PartName(int) string }); ok {
		return d.PartName(part)
	}
	return ""
}
