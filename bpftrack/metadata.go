package bpftrack

import (
	"errors"
	"fmt"

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
	// loads of one function; ByFunction: matched by the function name
	// after the tag alone.
	Funcs      []*Func
	ByFunction bool
	// Samples counts the samples in Funcs.
	Samples int
}

// MaxMetadataRecords bounds the records ReadMetadata keeps: perf writes
// one per BPF function, and a machine has a few thousand.
const MaxMetadataRecords = 1 << 16

// ErrTooManyRecords is returned (wrapped, with the offset) by ReadMetadata
// for a recording with more than MaxMetadataRecords BPF_METADATA records.
var ErrTooManyRecords = fmt.Errorf("more than %d BPF_METADATA records: they are kept until the end, to count their samples", MaxMetadataRecords)

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
	for r.Next() {
		rec := r.Record()
		if rec.Header.Type == perfdata.RecordBPFMetadata {
			m, err := perfdata.DecodeBPFMetadata(rec.Raw, r.ByteOrder())
			if err != nil {
				return nil, fmt.Errorf("BPF_METADATA record at %#x: %w", rec.Offset, err)
			}
			if len(recs) == MaxMetadataRecords {
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
	for i := range recs {
		m := &recs[i]
		m.Funcs, m.ByFunction = t.RecordFuncs(m.Metadata.ProgName, afters[i])
		for _, f := range m.Funcs {
			m.Samples += f.Samples
		}
	}
	return recs, nil
}
