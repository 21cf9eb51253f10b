package bpftrack

import (
	"errors"
	"fmt"
	"slices"

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
	Offset   int64 // of the record
	Metadata perfdata.BPFMetadata
	// Funcs are the BPF functions (KSYMBOLs) the record belongs to
	// (RecordFuncs), the first of them the one unless they are several
	// loads of one function, at most MaxRecordFuncs; MoreFuncs counts the
	// others. ByFunction: matched by the function name after the tag
	// alone.
	Funcs      []*Func
	MoreFuncs  int
	ByFunction bool
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
// of a few hundred bytes each (a record may hold 64 KiB).
const (
	MaxMetadataRecords = 1 << 16
	MaxMetadataBytes   = 16 << 20
)

// ErrTooManyRecords is returned (wrapped, with the offset) by ReadMetadata
// for a recording with more BPF_METADATA records than it keeps.
var ErrTooManyRecords = fmt.Errorf("more than %d BPF_METADATA records, or %d MiB of them: they are kept until the end, to count their samples", MaxMetadataRecords, MaxMetadataBytes>>20)

// ReadMetadata reads the whole recording: its BPF_METADATA records, each
// with the functions it belongs to and their samples. A record belongs
// to a function of the program whose BPF_EVENT it follows (perf writes a
// program's records right after its BPF_EVENT) or, failing that, to the
// functions RecordFuncs finds once the whole recording is read. Errors
// name the offset of the record.
func ReadMetadata(r Records) ([]MetadataRecord, error) {
	t := New(r, Options{Samples: true, History: true})
	var recs []MetadataRecord
	var afters []*Program
	// after is the program whose BPF_EVENT the records since follow (only
	// BPF_METADATA records came since).
	var after *Program
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
			recs = append(recs, MetadataRecord{Offset: rec.Offset, Metadata: m})
			afters = append(afters, after)
			continue
		}
		u, err := t.Feed(rec)
		switch {
		case errors.Is(err, ErrTooMany):
			return nil, err
		case err != nil:
			continue // perf skips a record it cannot decode
		}
		after = u.Loaded
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	// Records of one name that follow no program of theirs belong to the
	// same functions: found, and their samples counted, once per name.
	type found struct {
		funcs      []*Func
		byFunction bool
		samples    int
	}
	byName := map[string]*found{}
	for i := range recs {
		m := &recs[i]
		name := m.Metadata.ProgName
		f, ok := byName[name]
		if after := afters[i]; after != nil {
			if k := slices.IndexFunc(after.Funcs, func(f *Func) bool { return f.Name == name }); k >= 0 {
				f, ok = &found{funcs: after.Funcs[k : k+1], samples: after.Funcs[k].Samples}, true
			}
		}
		if !ok {
			f = &found{}
			f.funcs, f.byFunction = t.RecordFuncs(name, nil)
			for _, g := range f.funcs {
				f.samples += g.Samples
			}
			byName[name] = f
		}
		n := min(len(f.funcs), MaxRecordFuncs)
		m.Funcs, m.MoreFuncs, m.ByFunction, m.Samples = f.funcs[:n:n], len(f.funcs)-n, f.byFunction, f.samples
	}
	return recs, nil
}
