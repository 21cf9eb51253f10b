package annotate

import (
	"errors"
	"iter"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Fill adds to t the metadata of the BPF_METADATA records of r, each under
// the name of the function (KSYMBOL) it belongs to, as bpftrack matches
// them (what bpfmeta show prints): that name is the symbol perf script
// prints for the function's samples, perf's machine__process_ksymbol()
// naming its map and symbol after the KSYMBOL. A record that
// bpftrack cannot tell between functions of several names makes each of
// them ambiguous; so does a name several loads share when fewer records
// than loads have it (a load without metadata, or whose record is
// missing, is never given another's). A name several KSYMBOLs have gets
// each load's address and metadata (SetLoads), unless a record of it may
// be of any of them: a frame's address tells the loads with a record
// placed on them alone apart, and makes a frame in any other load
// ambiguous.
func Fill(t *Table, r bpftrack.Records) (bpftrack.MetadataSummary, error) {
	records := map[string]int{} // records per name
	loads := map[string]int{}   // the most loads of the name a record lists
	ks := newKSymbols(r)
	defer ks.mem.Close()
	sum, err := bpftrack.WalkMetadata(ks, func(m *bpftrack.MetadataRecord) error {
		if err := ks.place(m); err != nil {
			return err
		}
		if len(m.Funcs) == 0 {
			// no KSYMBOL of it: perf script names no frame after it
			// but, were it the recording's, its own name
			return add(t, records, loads, m.Metadata.ProgName, 1, m.Metadata.Entries)
		}
		n := len(m.Funcs) + m.MoreFuncs
		if m.Matched == bpftrack.MatchAmbiguous {
			for _, f := range m.Funcs {
				if err := t.SetAmbiguous(f.Name); err != nil {
					return err
				}
			}
			return nil
		}
		seen := ""
		for _, f := range m.Funcs {
			if f.Name != seen {
				if err := add(t, records, loads, f.Name, n, m.Metadata.Entries); err != nil {
					return err
				}
				seen = f.Name
			}
		}
		return nil
	})
	for name, n := range loads {
		if records[name] < n && err == nil {
			err = t.SetAmbiguous(name)
		}
	}
	if err == nil {
		err = ks.setLoads(t)
	}
	return sum, err
}

func add(t *Table, records, loads map[string]int, name string, n int, entries []perfdata.BPFMetadataEntry) error {
	records[name]++
	loads[name] = max(loads[name], n)
	return t.Add(name, entries)
}

// Injected is a recording read as inject.Run writes it: r's records with
// the BPF_METADATA records src has for its programs, exactly those bpfmeta
// inject would write, handed out one at a time as inject passes them on
// (nothing is written or kept). It is what Fill reads for a recording
// without the records.
//
// inject.Run pushes records (into an inject.RecordWriter) and Fill pulls
// them (perfdata.Records: Next, Record, Err); Injected is the one place a
// push is turned into a pull, by running inject.Run as an iterator that
// iter.Pull steps through. Anything else that hands out records is a
// perfdata.Records of its own, or embeds one.
type Injected struct {
	inject.Recording
	next func() (*perfdata.Record, bool)
	stop func()
	rec  *perfdata.Record
	err  error
	Sum  *inject.Summary // inject's summary, once Next returned false
}

// errStopped ends inject.Run when the reader of Injected stops.
var errStopped = errors.New("annotate: stopped")

type yieldWriter func(*perfdata.Record) bool

func (y yieldWriter) WriteRecord(rec *perfdata.Record) error {
	if !y(rec) {
		return errStopped
	}
	return nil
}

// NewInjected returns r as inject.Run would write it from src. Close it.
func NewInjected(r inject.Recording, src bpfprog.Source, opts inject.Options) *Injected {
	in := &Injected{Recording: r}
	seq := iter.Seq[*perfdata.Record](func(yield func(*perfdata.Record) bool) {
		sum, err := inject.Run(r, yieldWriter(yield), src, opts)
		in.Sum = sum
		if err != nil && !errors.Is(err, errStopped) {
			in.err = err
		}
	})
	in.next, in.stop = iter.Pull(seq)
	return in
}

// Next moves to the next record.
func (in *Injected) Next() bool {
	rec, ok := in.next()
	in.rec = rec
	return ok
}

// Record is the current record, valid until Next.
func (in *Injected) Record() *perfdata.Record { return in.rec }

// Err is the error that ended the records, r's or inject's.
func (in *Injected) Err() error { return in.err }

// Close ends inject.Run if it has not ended.
func (in *Injected) Close() { in.stop() }
