package bpftrack

import (
	"fmt"
	"slices"

	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Records is a Recording read record by record (perfdata.Records):
// *reader.Reader is one.
type Records interface {
	Recording
	perfdata.Records
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

// MaxMetadataRecords and MaxMetadataBytes bound the records WalkMetadata
// keeps at one time, in number and in the bytes of their decoded names,
// keys and values: a record is kept until its samples are counted (its
// function is unregistered, or the recording ends; the records at the end
// wait for the end). perf writes one per BPF function, a few thousand on a
// machine, of a few hundred bytes each (a record may hold 64 KiB). With
// MaxFuncs functions kept beside them, and what each record keeps to be
// matched, more would take a process past 64 MiB.
const (
	MaxMetadataRecords = 1 << 15
	MaxMetadataBytes   = 16 << 20
)

// ErrTooManyRecords is returned (wrapped, with the offset) by WalkMetadata
// for a recording with more BPF_METADATA records waiting at once than it
// keeps.
var ErrTooManyRecords = fmt.Errorf("more than %d BPF_METADATA records, or %d MiB of them, wait for their samples to be counted (at the end of the recording)", MaxMetadataRecords, MaxMetadataBytes>>20)

// Metadata is what ReadMetadata found in a recording.
type Metadata struct {
	// Records are its BPF_METADATA records, in the recording's order.
	Records []MetadataRecord
	MetadataSummary
}

// MetadataSummary is what WalkMetadata says of a whole recording.
type MetadataSummary struct {
	// Records counts its BPF_METADATA records.
	Records int
	// Loads counts its PROG_LOAD BPF_EVENT records: the programs whose
	// metadata a recording without records could get (bpfmeta inject).
	Loads int
	// Forgotten counts the functions of programs loaded during the
	// recording and gone that were forgotten (MaxHistory): a record at the
	// end that finds no function may be one of theirs.
	Forgotten int
	// EarlyFlushes counts the times samples were counted before perf's
	// order was known (Tracker.EarlyFlushes): the counts may be short.
	EarlyFlushes int
}

// Program is the program the record belongs to, when that is known: it
// belongs to one function, of a program the recording has a BPF_EVENT of.
func (m *MetadataRecord) Program() *Program {
	if len(m.Funcs) == 1 && m.MoreFuncs == 0 && m.Matched != MatchAmbiguous {
		return m.Funcs[0].Program
	}
	return nil
}

// OfProgram returns the records of the program prog names (see
// MetadataRecord.OfProgram). It keeps them in m.Records' array.
func (m *Metadata) OfProgram(prog string) []MetadataRecord {
	return slices.DeleteFunc(m.Records, func(r MetadataRecord) bool { return !r.OfProgram(prog) })
}

// OfProgram reports whether the record is of the program prog names, by
// perfdata.ProgNamed (the rule of every --prog and --require): by id (of a
// program the recording has a BPF_EVENT of), or by a name of its function
// or program, with or without perf's bpf_prog_<tag>_: the record's name,
// the function it was matched to (perf names a record of cilium/ebpf's
// loads from its map's BTF: "bpf_prog_<tag>_", MatchTag), and those of the
// program it belongs to.
func (r *MetadataRecord) OfProgram(prog string) bool {
	names := []string{r.Metadata.ProgName}
	var id uint32
	if r.Matched != MatchAmbiguous {
		for _, f := range r.Funcs {
			names = append(names, f.Name)
		}
	}
	if p := r.Program(); p != nil {
		id = p.ID
		for _, f := range p.Funcs {
			names = append(names, f.Name)
		}
	}
	return perfdata.ProgNamed(prog, id, names...)
}

// ReadMetadata is WalkMetadata keeping every record.
func ReadMetadata(r Records) (*Metadata, error) {
	m := &Metadata{}
	sum, err := WalkMetadata(r, func(rec *MetadataRecord) error {
		m.Records = append(m.Records, *rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.MetadataSummary = sum
	return m, nil
}

// waitingCost is what WalkMetadata keeps of a record beside its strings
// (for the memory budget): a waiting and its place in the queue, and the
// room the queue grows into.
const waitingCost = 192

// waiting is a BPF_METADATA record WalkMetadata has read and not yet
// handed out.
type waiting struct {
	rec MetadataRecord
	// own is the function it belongs to, found when it was read (the
	// program whose BPF_EVENT it follows, or the next function of the
	// record before), and how; nil for a record at the end, matched when
	// the recording has been read.
	own      *Func
	ownMatch Match
	// follows: it comes right after another BPF_METADATA record.
	follows bool
	bytes   int
}

// WalkMetadata reads the whole recording and calls each for its
// BPF_METADATA records, in the recording's order, each with the functions
// it belongs to and their samples, as perf's placement of the records
// says, as soon as they are known. perf writes the records of a program it
// found loaded right after its BPF_EVENT (perf_event__synthesize_one_bpf_prog()),
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
// cannot be told: they are MatchAmbiguous. A record of a function is
// handed out once the function is unregistered (no more samples can be
// its), and the records after it wait for it. Errors name the offset of
// the record; an error of each ends the walk.
func WalkMetadata(r Records, each func(*MetadataRecord) error) (MetadataSummary, error) {
	t := New(r, Options{Samples: true, History: true})
	defer t.Close()
	w := &metadataWalk{t: t, r: r, each: each, atEnd: map[string]int{},
		mem: budget.Meter{What: "BPF_METADATA records"}}
	defer w.mem.Close()
	for r.Next() {
		rec := r.Record()
		var err error
		if rec.Header.Type == perfdata.RecordBPFMetadata {
			err = w.metadata(rec)
		} else {
			err = w.other(rec)
		}
		if err != nil {
			return w.sum, err
		}
	}
	if err := r.Err(); err != nil {
		return w.sum, err
	}
	t.End()
	w.sum.Forgotten = t.Forgotten()
	w.sum.EarlyFlushes = t.EarlyFlushes()
	t.matchAtEnd(w.queue[w.head:], w.atEnd)
	return w.sum, w.emit(true)
}

// metadataWalk is a WalkMetadata under way: the tracker it feeds, and the
// records read and not yet handed out.
type metadataWalk struct {
	t    *Tracker
	r    Records
	each func(*MetadataRecord) error
	sum  MetadataSummary
	// queue[head:] are the records waiting, in the recording's order;
	// kept counts their bytes, headers of strings included.
	queue []*waiting
	head  int
	kept  int
	// mem is what the records waiting and the names counted take of the
	// process's memory budget (internal/budget), the tracker's aside.
	mem budget.Meter
	// after is the program whose BPF_EVENT the records since follow (only
	// BPF_METADATA records came since); pos is the place of the last
	// record among them; last is the record before, if it was one.
	after *Program
	pos   int
	last  *waiting
	// atEnd counts the records by name that follow no program of theirs
	// (of MaxMetadataRecords names at most: those at the end wait for the
	// end, and few come elsewhere); atEndBytes is what the counts take.
	atEnd      map[string]int
	atEndBytes int
}

// other feeds a record other than BPF_METADATA to the tracker, and hands
// out the records waiting for a function it unregisters.
func (w *metadataWalk) other(rec *perfdata.Record) error {
	w.last, w.pos = nil, -1
	u, err := w.t.Feed(rec)
	if err != nil {
		return err
	}
	w.after = u.Loaded
	if u.Loaded != nil {
		w.sum.Loads++
	}
	// only these unregister a function, or deliver its last samples
	if typ := rec.Header.Type; typ == perfdata.RecordKSymbol || typ == perfdata.RecordBPFEvent || typ == perfdata.RecordFinishedRound {
		return w.emit(false)
	}
	return nil
}

// metadata reads a BPF_METADATA record into the queue, with its function
// if that is known already, and hands out the records whose samples are
// counted.
func (w *metadataWalk) metadata(rec *perfdata.Record) error {
	m, err := perfdata.DecodeBPFMetadata(rec.Raw, w.r.ByteOrder())
	if err != nil {
		return fmt.Errorf("BPF_METADATA record at %#x: %w", rec.Offset, err)
	}
	w.sum.Records++
	wr := &waiting{rec: MetadataRecord{Offset: rec.Offset, File: partName(w.r, rec.Part), Metadata: m}, follows: w.last != nil}
	wr.bytes = len(m.ProgName) + 64
	for _, e := range m.Entries {
		wr.bytes += len(e.Key) + len(e.Value) + 32
	}
	w.pos++
	if err := w.own(wr); err != nil {
		return err
	}
	w.last = wr
	if len(w.queue)-w.head == MaxMetadataRecords || w.kept+wr.bytes > MaxMetadataBytes {
		return fmt.Errorf("%w (at %#x)", ErrTooManyRecords, rec.Offset)
	}
	w.kept += wr.bytes
	w.queue = append(w.queue, wr)
	if err := w.charge(); err != nil {
		return fmt.Errorf("BPF_METADATA record at %#x: %w", rec.Offset, err)
	}
	return w.emit(false)
}

// own finds the function record wr belongs to as it is read, if that can
// be told then. The records of a program perf found loaded follow its
// BPF_EVENT, one per function in order, found by name or else by tag; a
// record right after the record of a program's function is its next
// function's, by name. The others are counted by name, for the end.
func (w *metadataWalk) own(wr *waiting) error {
	name := wr.rec.Metadata.ProgName
	if p := w.after; p != nil {
		if k := slices.IndexFunc(p.Funcs, func(f *Func) bool { return f.Name == name }); k >= 0 {
			wr.own, wr.ownMatch = p.Funcs[k], MatchName
		} else if f := tagFunc(p, name, w.pos); f != nil {
			wr.own, wr.ownMatch = f, MatchTag
		}
	}
	if wr.own != nil {
		return nil
	}
	if _, ok := w.atEnd[name]; !ok && len(w.atEnd) == MaxMetadataRecords {
		return fmt.Errorf("%w (at %#x)", ErrTooManyRecords, wr.rec.Offset)
	}
	if w.atEnd[name]++; w.atEnd[name] == 1 {
		w.atEndBytes += len(name) + tallyCost
	}
	if w.last != nil && w.last.own != nil {
		if next := nextFunc(w.last.own); next != nil && next.Name == name {
			wr.own, wr.ownMatch = next, MatchName
		}
	}
	return nil
}

// charge sets what the walk keeps in the memory budget.
func (w *metadataWalk) charge() error {
	return w.mem.Set(int64(w.kept + (len(w.queue)-w.head)*waitingCost + w.atEndBytes))
}

// emit hands out the records at the head of the queue whose samples are
// counted (their function is unregistered), or, all, every record
// waiting.
func (w *metadataWalk) emit(all bool) error {
	for ; w.head < len(w.queue); w.head++ {
		wr := w.queue[w.head]
		if !all && (wr.own == nil || wr.own.live()) {
			break
		}
		if wr.own != nil {
			(&found{funcs: []*Func{wr.own}, n: 1, match: wr.ownMatch, samples: wr.own.Samples}).give(&wr.rec)
		}
		w.kept -= wr.bytes
		w.queue[w.head] = nil
		if err := w.each(&wr.rec); err != nil {
			return err
		}
	}
	if w.head == len(w.queue) {
		w.queue, w.head = w.queue[:0], 0
	}
	return w.charge() // less: it cannot fail
}

// matchAtEnd gives the records that waited for the end of the recording
// their functions: those of programs loaded during the recording that
// RecordFuncs finds, or the next function of the record before, or those
// of its tag.
func (t *Tracker) matchAtEnd(queue []*waiting, atEnd map[string]int) {
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
	foundOf := make([]*found, len(queue))
	for i, w := range queue {
		m := &w.rec
		name := m.Metadata.ProgName
		if w.own != nil {
			prev = w.own
			continue
		}
		if next := nextFunc(prev); w.follows && next != nil && next.Name == name {
			w.own, w.ownMatch, prev = next, MatchName, next
			continue
		}
		f := byName[name]
		if f == nil {
			f = &found{}
			var x goneTally
			f.funcs, f.match, x = t.recordFuncs(name, nil)
			f.n = len(f.funcs) + x.n
			if f.match == MatchFunction || f.match == MatchAmbiguous {
				_, fn, _ := perfdata.ParseBPFProgName(name)
				n, counted := byFunction[fn]
				if !counted {
					n = samples(f.funcs) + x.samples
					byFunction[fn] = n
				}
				f.samples = n
			} else {
				f.samples = samples(f.funcs) + x.samples
			}
			if f.n > 0 && atEnd[name] > f.n {
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
		for i, w := range queue {
			if f := foundOf[i]; f != nil && f.match != MatchNone && len(w.rec.Funcs) == 0 {
				f.give(&w.rec)
			}
		}
	}
}

// found is what ReadMetadata found for the records of a name (or one
// record), and how.
type found struct {
	funcs []*Func
	// n counts the functions: funcs, and those of their names the history
	// counts without keeping them.
	n       int
	match   Match
	samples int
}

// give gives record m the functions f found.
func (f *found) give(m *MetadataRecord) {
	n := min(len(f.funcs), MaxRecordFuncs)
	m.Funcs, m.MoreFuncs, m.Matched, m.Samples = f.funcs[:n:n], f.n-n, f.match, f.samples
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
		if f != nil {
			recordsOf[f]++
		}
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
		x := t.extraOf(funcs)
		match := MatchTag
		if records > len(funcs)+x.n || slices.ContainsFunc(funcs, func(f *Func) bool { return f.Name != funcs[0].Name }) {
			match = MatchAmbiguous
		}
		for _, f := range fs {
			f.funcs, f.n, f.match, f.samples = funcs, len(funcs)+x.n, match, samples(funcs)+x.samples
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
