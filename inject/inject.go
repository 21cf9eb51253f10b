// Package inject adds PERF_RECORD_BPF_METADATA records to a recording, one
// per JITed function of every BPF program that has metadata, where perf
// record >= 6.17 would have written them:
//
//   - for a program perf found loaded when the recording started (perf
//     synthesized its KSYMBOLs and BPF_EVENT), right after its BPF_EVENT, as
//     perf_event__synthesize_one_bpf_prog() does;
//   - for a program loaded while recording (the kernel emitted its KSYMBOLs
//     and BPF_EVENT, possibly inside compressed records), at the end, in
//     ascending program id, as perf_event__synthesize_final_bpf_metadata() does;
//   - for a program loaded while recording that the recording has no record
//     of (a recording of one task sees only the task's own loads; perf's
//     side-band thread sees every load on the machine and writes its
//     metadata all the same), at the end too, in the same id order, when the
//     source can list its programs (bpfprog.Lister) and place their load
//     times on the recording's clock (System.PerfClockOffset), and the
//     recording is of the source's boot (one of its programs is the
//     source's by id, tag and addresses).
//
// Programs are looked up in a bpfprog.Source by the id of their BPF_EVENT
// and matched by tag and by the addresses of their KSYMBOLs, so a reused id
// or a program from another boot gets no metadata. An id gets records
// once, for its first PROG_LOAD: perf keeps one bpf_prog_info per id
// (perf_env__insert_bpf_prog_info() refuses a second, and
// perf_event__synthesize_one_bpf_prog() then writes no metadata). Records the recording
// already has are kept and not duplicated, so injecting twice is injecting
// once. Every other record passes through unchanged.
//
// The package decides which records to write and where; reading, framing
// and offsets are the reader's and the writer's, and which functions belong
// to which program is package bpftrack's.
package inject

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Recording is the recording inject reads, one record at a time.
// *reader.Reader is one (it must decompress, reader.Options.Decompress, to
// see the programs loaded during a compressed recording).
type Recording interface {
	bpftrack.Recording
	Next() bool
	Record() *perfdata.Record
	Err() error
	// IsDirRecording reports a directory recording (perf record
	// --threads), whose records at the end are in its first file but
	// come before the data files that load their programs.
	IsDirRecording() bool
}

// RecordWriter is where the records go. *writer.Writer is one.
type RecordWriter interface {
	WriteRecord(rec *perfdata.Record) error
}

// Options change what inject writes.
type Options struct {
	// RecordedOnly writes metadata only for the programs the recording has
	// a BPF_EVENT of: none for the programs loaded during the recording
	// that only perf's side-band thread saw.
	RecordedOnly bool

	// PerfNames gives each record the prog_name perf record >= 6.17 writes
	// (bpf_metadata_create()'s, which for the main function of a program
	// loaded during the recording is not the name of its KSYMBOL) instead of
	// the name of the KSYMBOL it belongs to.
	PerfNames bool
}

// Outcome is what became of one program of the recording.
type Outcome int

const (
	// Injected: BPF_METADATA records were added.
	Injected Outcome = iota
	// AlreadyPresent: the recording has this program's records already.
	AlreadyPresent
	// NoMetadata: the program has no bpf_metadata_ variables; perf writes
	// nothing for it either.
	NoMetadata
	// Duplicate: an earlier PROG_LOAD of the recording has the program's
	// id; perf writes the records of an id once, for the first.
	Duplicate
	// TooLarge: the program's metadata has more variables than perf writes
	// a record for (perfdata.MaxBPFMetadataEntries); perf writes nothing.
	TooLarge
	// NotFound: the source has no program with this id: it was unloaded
	// before the source was read, or the source is from another boot.
	NotFound
	// Mismatch: the source's program with this id is another program
	// (other tag, or its functions are not the recording's KSYMBOLs).
	Mismatch
	// Failed: the program's metadata could not be read exactly.
	Failed
)

func (o Outcome) String() string {
	switch o {
	case Injected:
		return "injected"
	case AlreadyPresent:
		return "already present"
	case NoMetadata:
		return "no metadata"
	case Duplicate:
		return "an id loaded before"
	case TooLarge:
		return "too many variables"
	case NotFound:
		return "not found"
	case Mismatch:
		return "mismatch"
	case Failed:
		return "failed"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Resolved reports whether the outcome is a definite answer: the
// metadata perf would have written is in the output, or perf writes none.
func (o Outcome) Resolved() bool { return o <= TooLarge }

// Program is what inject did for one BPF program loaded in the recording.
type Program struct {
	ID      uint32
	Tag     perfdata.BPFTag
	Name    string // the name of its first KSYMBOL in the recording, if any
	Outcome Outcome
	Records int   // BPF_METADATA records written for it
	Err     error // why, for TooLarge, NotFound, Mismatch and Failed
	// Synthesized: perf found the program loaded at the start of the
	// recording (its records follow its BPF_EVENT); otherwise it was loaded
	// during the recording (its records are at the end).
	Synthesized bool
	// Unloaded: the recording saw the program unloaded (PROG_UNLOAD).
	Unloaded bool
	// Unrecorded: the recording has no record of the program; the source
	// says it was loaded while the recording was made (its records are at
	// the end, as perf's side-band thread has them written).
	Unrecorded bool
	// Samples counts the recording's samples in the program's functions,
	// for the programs whose metadata is not in the output (Outcome not
	// Injected or AlreadyPresent); 0 for the others.
	Samples int

	tracked *bpftrack.Program
	// present are the names of the recording's records that stand for
	// this program's.
	present []string
	// listed: in Summary.Programs (else counted in Summary.Unlisted once
	// settled); atEnd: has records to write at the end.
	listed, atEnd bool
}

// MaxListed bounds the programs a Summary lists: a recording that loads
// more (a loader's probe programs, loaded and unloaded again and again, or
// a file made to look so) has the others counted in Summary.Unlisted, so
// that inject's memory follows the programs loaded at one time, not the
// length of the recording. An unlisted program's records are written all
// the same; only a BPF_METADATA record the recording has at its end cannot
// be told to be one of an unlisted program's.
const MaxListed = 1 << 14

// MaxAtEnd and MaxAtEndBytes bound the records inject keeps to write at
// the end: one per function of every program with metadata loaded during
// the recording, each program's entries kept once (a record may hold 64
// KiB of them) and its functions' names. MaxAtEnd also bounds the
// recording's BPF_METADATA records of programs it has no record of that
// inject keeps count of.
const (
	MaxAtEnd      = 1 << 17
	MaxAtEndBytes = 16 << 20
)

// ErrTooMany is returned for a recording that needs more than MaxAtEnd
// records, or MaxAtEndBytes of them, at its end.
var ErrTooMany = errors.New("more BPF_METADATA records to write at the end than inject keeps")

// Summary is what an injection did.
type Summary struct {
	// Programs has one entry per PROG_LOAD BPF_EVENT, in recording order,
	// then one per Unrecorded program, in id order: the first MaxListed.
	Programs []*Program
	// Unlisted counts the programs past the first MaxListed.
	Unlisted Tally
	Injected int // BPF_METADATA records written
	Kept     int // BPF_METADATA records the recording already had
	// UnrecordedSkipped says why the programs loaded during the recording
	// that it has no record of were not looked for ("" if they were).
	UnrecordedSkipped string
}

// Tally counts programs by what became of them.
type Tally struct {
	Programs int
	Outcomes [Failed + 1]int // by Outcome
	// Unrecorded counts the Unrecorded programs; UnrecordedInjected those
	// of them that got records.
	Unrecorded, UnrecordedInjected int
	// WithSamples, Transient and Others count the programs Missing
	// returns, by group.
	WithSamples, Transient, Others int
}

func (t *Tally) add(p *Program) {
	t.Programs++
	if int(p.Outcome) < len(t.Outcomes) {
		t.Outcomes[p.Outcome]++
	}
	if p.Unrecorded {
		t.Unrecorded++
		if p.Outcome == Injected {
			t.UnrecordedInjected++
		}
	}
	switch p.missing() {
	case withSamples:
		t.WithSamples++
	case transient:
		t.Transient++
	case other:
		t.Others++
	}
}

// Tally counts every program of the recording, listed or not.
func (s *Summary) Tally() Tally {
	t := s.Unlisted
	for _, p := range s.Programs {
		t.add(p)
	}
	return t
}

// Unresolved returns the listed programs whose metadata could not be
// determined.
func (s *Summary) Unresolved() []*Program {
	var u []*Program
	for _, p := range s.Programs {
		if !p.Outcome.Resolved() {
			u = append(u, p)
		}
	}
	return u
}

// missingGroup is the group Missing puts a program in.
type missingGroup int

const (
	notMissing missingGroup = iota
	withSamples
	transient
	other
)

func (p *Program) missing() missingGroup {
	switch {
	case p.Outcome.Resolved() && p.Outcome != TooLarge:
		return notMissing
	case p.Samples > 0:
		return withSamples
	case p.Unloaded && p.Outcome == NotFound:
		return transient
	}
	return other
}

// Missing returns the listed programs whose metadata perf would have
// written and the output does not have (or, TooLarge, that perf writes
// none for because it has too many variables), in id order, in three
// groups: withSamples, those with samples in the recording (what --strict
// fails for); transient, those loaded and unloaded during the recording
// without a sample that the source does not know (libbpf's probe programs,
// loaded and unloaded at once by every libbpf loader); and others. Tally
// counts them all.
func (s *Summary) Missing() (withSamples, transient, others []*Program) {
	groups := [...]*[]*Program{nil, &withSamples, &transient, &others}
	for _, p := range s.Programs {
		if g := groups[p.missing()]; g != nil {
			*g = append(*g, p)
		}
	}
	for _, ps := range [][]*Program{withSamples, transient, others} {
		slices.SortStableFunc(ps, func(a, b *Program) int { return cmp.Compare(a.ID, b.ID) })
	}
	return withSamples, transient, others
}

// WriteError is an error of the output, as opposed to one of the input.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Run copies every record of r to w, adding BPF_METADATA records for the
// programs src knows. The caller closes w.
func Run(r Recording, w RecordWriter, src bpfprog.Source, opts Options) (*Summary, error) {
	j := &injector{
		r:      r,
		events: r.Events(),
		w:      w,
		src:    src,
		opts:   opts,
		track:  bpftrack.New(r, bpftrack.Options{}),
		sum:    &Summary{},
		byTP:   map[*bpftrack.Program]*Program{},

		claimable:   map[string][]*Program{},
		known:       map[uint32]bool{},
		atEndByName: map[string][]int{},
		orphans:     map[uint64]int{},
		seed:        maphash.MakeSeed(),
	}
	if _, ok := src.(bpfprog.Lister); ok && !opts.RecordedOnly {
		j.timed = true
	}
	j.dir = r.IsDirRecording()
	for r.Next() {
		if err := j.record(r.Record()); err != nil {
			return j.sum, err
		}
	}
	if err := r.Err(); err != nil {
		return j.sum, err
	}
	if err := j.finish(); err != nil {
		return j.sum, err
	}
	return j.sum, nil
}

type injector struct {
	r      Recording
	events *perfdata.Events // r's: read for every SAMPLE
	w      RecordWriter
	src    bpfprog.Source
	opts   Options
	sum    *Summary
	track  *bpftrack.Tracker
	byTP   map[*bpftrack.Program]*Program // the summary's entry of a loaded program
	// claimable are the listed programs loaded during the recording, by
	// the names of their functions: a record at the end of the recording
	// may be one of theirs (existing).
	claimable map[string][]*Program
	// known are the ids of the listed programs and of every program the
	// source has that the recording loads: unrecorded adds none of them,
	// and a later load of one is a Duplicate.
	known map[uint32]bool
	// matched: the source has one of the recording's programs (the same
	// id, tag and addresses).
	matched bool
	// after are records to write right after the current BPF_EVENT, once the
	// records that follow it show the recording does not have them already.
	after []pending
	// atEnd are records for programs loaded during the recording;
	// atEndByName their indexes by each of their names; atEndBytes the
	// bytes they keep (MaxAtEndBytes).
	atEnd       []pending
	atEndByName map[string][]int
	atEndBytes  int
	// cur is the program perf found loaded whose BPF_EVENT the records
	// since are right after (only BPF_METADATA records came since), or nil.
	cur *Program
	// missing counts the loaded programs whose samples are counted: those
	// the output has no metadata for.
	missing int
	// first and last are the earliest and latest record times (perf's
	// clock), 0 if none; kept only when timed (the programs the recording
	// has no record of are looked for).
	first, last uint64
	timed       bool
	// listedFuncs counts the functions of the listed programs, which
	// they keep (claim).
	listedFuncs int
	// unrecordedProgs are the programs the recording has no record of,
	// listed once their records are written.
	unrecordedProgs []*Program
	// orphans count the recording's BPF_METADATA records that stand for
	// no program of its BPF_EVENTs (perf's records of programs it has no
	// record of) by the hash of their name, so that they keep no name;
	// seed is the hash's, unknown to the recording.
	orphans map[uint64]int
	seed    maphash.Seed
	// nOrphans counts them (at most MaxAtEnd are kept).
	nOrphans int
	// part is the file of a directory recording the current record is in.
	part int
	// dir: the recording is a directory recording (perf record --threads),
	// whose records at the end are in its first file, read before the
	// data files with the loads they are for; deferred are their names,
	// settled at the end, where perf wrote them.
	dir           bool
	deferred      []string
	deferredBytes int // their names' bytes, within MaxAtEndBytes
}

// pending is a BPF_METADATA record not yet written: encoded when written,
// so that the records of a program share its entries.
type pending struct {
	prog  *Program
	names []string // names that make an existing record the same (KSYMBOL, perf, kernel)
	md    perfdata.BPFMetadata
	done  bool // the recording has it already (atEnd)
	// part is the file of a directory recording it goes to: that of the
	// BPF_EVENT it follows; 0, the file with the header, for the records
	// at the end, where perf record --threads writes them too.
	part int
}

func (j *injector) record(rec *perfdata.Record) error {
	t := rec.Header.Type
	j.part = rec.Part
	if t == perfdata.RecordBPFMetadata && !rec.Compressed() {
		if m, err := perfdata.DecodeBPFMetadata(rec.Raw, j.r.ByteOrder()); err == nil {
			if err := j.existing(m.ProgName); err != nil {
				return fmt.Errorf("BPF_METADATA at %#x: %w", rec.Offset, err)
			}
		}
	} else {
		j.cur = nil
		if err := j.flushAfter(); err != nil {
			return err
		}
	}
	if err := j.w.WriteRecord(rec); err != nil {
		if rerr := j.r.Err(); rerr != nil {
			return rerr // the input ended inside the data the record carries
		}
		return &WriteError{err}
	}
	if t == perfdata.RecordSample {
		f := j.events.Sample(rec.Raw)
		if f.HasTime && j.timed {
			j.time(f.Time)
		}
		if f.HasIP && j.missing > 0 {
			j.countSample(f.IP)
		}
		return nil
	}
	if j.timed && t < perfdata.UserTypeStart {
		if ts, ok := j.events.Time(rec.Raw); ok {
			j.time(ts)
		}
	}
	switch t {
	case perfdata.RecordKSymbol, perfdata.RecordBPFEvent:
		u, err := j.track.Feed(rec)
		switch {
		case errors.Is(err, bpftrack.ErrTooMany):
			return err
		case err != nil:
			return nil // perf skips a record it cannot decode; so does inject
		}
		if u.Loaded != nil {
			if err := j.load(u.Loaded); err != nil {
				return err
			}
		}
		if p := j.byTP[u.Unloaded]; p != nil {
			p.Unloaded = true
			j.gone(p)
		}
		if p := j.byTP[u.Replaced]; p != nil {
			j.gone(p) // a load of its id replaced it: no sample is its any more
		}
	case perfdata.RecordFinishedInit:
		j.track.Feed(rec)
	}
	return nil
}

// gone settles a program the tracker no longer keeps: unloaded, or
// replaced by a load of its id.
func (j *injector) gone(p *Program) {
	delete(j.byTP, p.tracked)
	if !p.hasMetadata() {
		j.missing--
	}
	if !p.listed && !p.atEnd {
		j.sum.Unlisted.add(p) // settled
	}
}

// time widens the recording's time span to t (0 is perf's synthesized
// records' time: none).
func (j *injector) time(t uint64) {
	if t == 0 {
		return
	}
	if j.first == 0 || t < j.first {
		j.first = t
	}
	j.last = max(j.last, t)
}

// countSample counts a sample at ip in a program the output has no
// metadata for.
func (j *injector) countSample(ip uint64) {
	if f := j.track.FuncAt(ip); f != nil && f.Program != nil {
		if p := j.byTP[f.Program]; p != nil && !p.hasMetadata() {
			p.Samples++
		}
	}
}

// hasMetadata: the output has the program's metadata, or perf writes none.
func (p *Program) hasMetadata() bool {
	switch p.Outcome {
	case Injected, AlreadyPresent, NoMetadata, Duplicate:
		return true
	}
	return false
}

// existing notes a BPF_METADATA record the recording already has. perf
// writes a program's records right after its BPF_EVENT or at the end, so
// the record stands, by position, for one record inject would add: of the
// program whose BPF_EVENT it follows, or else of a program loaded during
// the recording. Its name alone does not say which program: two loads of
// one object have the same names, and may have other metadata.
//
// In a directory recording the records at the end of its first file come
// before the data files that load their programs, so their names are kept
// until the end; forgetting one would make inject write its record again,
// so past MaxAtEnd of them, or MaxAtEndBytes of names, it is an error.
func (j *injector) existing(name string) error {
	j.sum.Kept++
	if j.cur != nil {
		if k := slices.IndexFunc(j.after, func(p pending) bool { return slices.Contains(p.names, name) }); k >= 0 {
			j.stands(j.after[k].prog, name)
			j.after = slices.Delete(j.after, k, k+1)
		} else {
			j.claim(j.cur, name)
		}
		return nil
	}
	if j.dir && j.part == 0 {
		switch {
		case len(j.deferred) == MaxAtEnd:
			return fmt.Errorf("%w (%d records at the end of a directory recording's first file)", ErrTooMany, MaxAtEnd)
		case j.deferredBytes+len(name) > MaxAtEndBytes:
			return fmt.Errorf("%w (%d MiB of names of records at the end of a directory recording's first file)", ErrTooMany, MaxAtEndBytes>>20)
		}
		j.deferred = append(j.deferred, name)
		j.deferredBytes += len(name)
		return nil
	}
	j.atEndRecord(name)
	return nil
}

// atEndRecord settles a record of the recording's that follows no
// BPF_EVENT: one of those perf writes at the end.
func (j *injector) atEndRecord(name string) {
	if j.cancelAtEnd(name) {
		return
	}
	// A program that cannot claim the name now never can: each is asked
	// once per name.
	for ps := j.claimable[name]; len(ps) > 0; ps = ps[1:] {
		if j.claim(ps[0], name) {
			j.claimable[name] = ps[1:]
			return
		}
	}
	delete(j.claimable, name)
	if j.nOrphans < MaxAtEnd { // more stand for nothing inject would write
		j.orphans[maphash.String(j.seed, name)]++
		j.nOrphans++
	}
}

// cancelAtEnd drops the first record to write at the end that the
// recording's record named name stands for.
func (j *injector) cancelAtEnd(name string) bool {
	idx := j.atEndByName[name]
	for len(idx) > 0 {
		p := &j.atEnd[idx[0]]
		idx = idx[1:]
		if !p.done {
			p.done = true
			j.atEndByName[name] = idx
			j.stands(p.prog, name)
			return true
		}
	}
	delete(j.atEndByName, name)
	return false
}

// queueAtEnd adds a record to write at the end.
func (j *injector) queueAtEnd(pr pending) error {
	n := 0
	for _, s := range pr.names {
		n += len(s) + 16
	}
	if k := len(j.atEnd); k == 0 || j.atEnd[k-1].prog != pr.prog {
		n += entryBytes(pr.md.Entries) // a program's records are queued together, and share them
	}
	switch {
	case len(j.atEnd) == MaxAtEnd:
		return fmt.Errorf("program %d: %w (%d)", pr.prog.ID, ErrTooMany, MaxAtEnd)
	case j.atEndBytes+n > MaxAtEndBytes:
		return fmt.Errorf("program %d: %w (%d MiB)", pr.prog.ID, ErrTooMany, MaxAtEndBytes>>20)
	}
	j.atEndBytes += n
	for _, n := range pr.names {
		j.atEndByName[n] = append(j.atEndByName[n], len(j.atEnd))
	}
	j.atEnd = append(j.atEnd, pr)
	return nil
}

// stands notes that the recording's record named name is one of
// program p's.
func (j *injector) stands(p *Program, name string) {
	p.setOutcome(AlreadyPresent, nil, j)
	p.present = append(p.present, name)
}

// claim takes the recording's record named name for program p, which the
// source could not resolve, if it is one of that program's KSYMBOLs not
// claimed yet: the recording resolves the program.
func (j *injector) claim(p *Program, name string) bool {
	if slices.Contains(p.present, name) || !slices.ContainsFunc(p.tracked.Funcs, func(f *bpftrack.Func) bool { return f.Name == name }) {
		return false
	}
	if p.Outcome.Resolved() && p.Outcome != TooLarge && p.Outcome != AlreadyPresent {
		return false
	}
	j.stands(p, name)
	return true
}

// setOutcome sets p's outcome, keeping the count of loaded programs whose
// samples are counted.
func (p *Program) setOutcome(o Outcome, err error, j *injector) {
	before := p.hasMetadata()
	p.Outcome, p.Err = o, err
	if _, loaded := j.byTP[p.tracked]; loaded && before != p.hasMetadata() {
		if before {
			j.missing++
		} else {
			j.missing--
		}
	}
	if p.hasMetadata() {
		p.Samples = 0
	}
}

func (j *injector) flushAfter() error {
	for _, p := range j.after {
		if err := j.write(p); err != nil {
			return err
		}
	}
	j.after = j.after[:0]
	return nil
}

// entryBytes is what entries keep: their strings and headers.
func entryBytes(entries []perfdata.BPFMetadataEntry) int {
	n := 0
	for _, e := range entries {
		n += len(e.Key) + len(e.Value) + 32
	}
	return n
}

func (j *injector) write(p pending) error {
	raw, err := p.md.Encode(j.r.ByteOrder(), j.r.IDHeaderSize())
	if err != nil {
		return err // records checked it for the program's first record
	}
	rec := perfdata.Record{
		Offset: -1,
		Outer:  -1,
		Header: perfdata.DecodeEventHeader(raw, j.r.ByteOrder()),
		Raw:    raw,
		Part:   p.part,
	}
	if err := j.w.WriteRecord(&rec); err != nil {
		return &WriteError{err}
	}
	j.sum.Injected++
	p.prog.Records++
	if p.prog.Outcome == AlreadyPresent {
		p.prog.Outcome = Injected // some of its records were there, the others are new
	}
	return nil
}

// finish writes the records of programs loaded during the recording, in
// ascending program id as perf walks its bpf_prog_info tree.
func (j *injector) finish() error {
	if err := j.flushAfter(); err != nil {
		return err
	}
	for _, name := range j.deferred {
		j.atEndRecord(name)
	}
	j.deferred, j.deferredBytes = nil, 0
	if err := j.unrecorded(); err != nil {
		return err
	}
	slices.SortStableFunc(j.atEnd, func(a, b pending) int { return cmp.Compare(a.prog.ID, b.prog.ID) })
	j.atEndByName = nil // the indexes are the order's before the sort
	for _, p := range j.atEnd {
		if p.done {
			continue
		}
		if err := j.write(p); err != nil {
			return err
		}
	}
	// Settle the unlisted programs that were not yet: those still loaded,
	// and those with records at the end.
	for _, p := range j.byTP {
		if !p.listed && !p.atEnd {
			j.sum.Unlisted.add(p)
		}
	}
	for i, pr := range j.atEnd {
		if p := pr.prog; !p.listed && !p.Unrecorded && (i == 0 || j.atEnd[i-1].prog != p) {
			j.sum.Unlisted.add(p)
		}
	}
	j.atEnd = nil
	for _, p := range j.unrecordedProgs {
		if len(j.sum.Programs) < MaxListed {
			p.listed = true
			j.sum.Programs = append(j.sum.Programs, p)
		} else {
			j.sum.Unlisted.add(p)
		}
	}
	j.unrecordedProgs = nil
	return nil
}

// load handles a PROG_LOAD BPF_EVENT.
func (j *injector) load(tp *bpftrack.Program) error {
	p := &Program{ID: tp.ID, Tag: tp.Tag, Synthesized: tp.Synthesized, tracked: tp, Outcome: Injected}
	if len(tp.Funcs) > 0 {
		p.Name = tp.Funcs[0].Name
	}
	if j.known[tp.ID] {
		// perf's tree of bpf_prog_info has the id's first load already:
		// perf_env__insert_bpf_prog_info() refuses this one, and perf
		// writes no metadata for it.
		p.Outcome = Duplicate
	}
	// Listed while the list and the functions its programs keep are
	// within bounds.
	if len(j.sum.Programs) < MaxListed && j.listedFuncs+len(tp.Funcs) <= bpftrack.MaxFuncs {
		p.listed = true
		j.listedFuncs += len(tp.Funcs)
		j.sum.Programs = append(j.sum.Programs, p)
		j.known[p.ID] = true
	}
	j.byTP[tp] = p
	if tp.Synthesized {
		// Only perf's own records of a program are followed by its
		// BPF_METADATA: those right after a kernel's BPF_EVENT are at the
		// end (the one before them is the recording's last).
		j.cur = p
	}
	if p.Outcome == Duplicate {
		return nil
	}
	recs, outcome, err := j.records(tp, p)
	p.setOutcome(outcome, err, j)
	switch outcome {
	case Injected, NoMetadata, TooLarge:
		j.matched = true
		fallthrough
	case Mismatch, Failed:
		j.known[p.ID] = true
	}
	// A record at the end may be one of a listed program's the source
	// could not resolve (claim).
	if p.listed && !tp.Synthesized && outcome != Injected && outcome != NoMetadata {
		for _, f := range tp.Funcs {
			j.claimable[f.Name] = append(j.claimable[f.Name], p)
		}
	}
	p.atEnd = !tp.Synthesized && len(recs) > 0
	for _, r := range recs {
		pr := pending{prog: p, names: r.names, md: r.md}
		if tp.Synthesized {
			pr.part = j.part
			j.after = append(j.after, pr)
		} else if err := j.queueAtEnd(pr); err != nil {
			return err
		}
	}
	return nil
}

type newRecord struct {
	names []string
	md    perfdata.BPFMetadata
}

// records builds the BPF_METADATA records for program tp, or says why
// there are none.
func (j *injector) records(tp *bpftrack.Program, p *Program) ([]newRecord, Outcome, error) {
	sp, err := j.src.Lookup(tp.ID, tp.Tag)
	switch {
	case errors.Is(err, bpfprog.ErrNotFound):
		return nil, NotFound, err
	case errors.Is(err, bpfprog.ErrTagMismatch):
		return nil, Mismatch, err
	case err != nil:
		return nil, Failed, err
	}
	// The program's functions must be the recording's KSYMBOLs: same
	// address (where the source knows it) and one of the two names perf
	// and the kernel give them.
	names := make([]string, len(sp.Funcs))
	for i, f := range sp.Funcs {
		if f.Addr == 0 {
			// Names alone are the same in every boot; without its
			// addresses the program cannot be told from another boot's.
			return nil, Failed, fmt.Errorf("program %d: the source has no addresses for its functions (read without CAP_SYSLOG, or with kernel.kptr_restrict): it cannot be matched to the recording's KSYMBOLs", tp.ID)
		}
		k := j.track.Func(f.Addr)
		if k == nil || k.Name != f.PerfName && k.Name != f.KernelName {
			return nil, Mismatch, fmt.Errorf("program %d: no KSYMBOL for its function %d (%s at %#x) in the recording: another boot?", tp.ID, i, f.KernelName, f.Addr)
		}
		names[i] = k.Name
	}
	if len(names) > 0 {
		p.Name = names[0]
	}
	m, entries, outcome, err := metadataOf(sp)
	if outcome != Injected {
		return nil, outcome, err
	}
	var out []newRecord
	for i, f := range sp.Funcs {
		name := names[i]
		if j.opts.PerfNames {
			name = m.ProgNames[i]
		}
		bm := perfdata.BPFMetadata{ProgName: name, Entries: entries}
		if i == 0 {
			// what Encode checks is the same for every record of a program
			if _, err := bm.Encode(j.r.ByteOrder(), j.r.IDHeaderSize()); err != nil {
				return nil, Failed, err
			}
		}
		out = append(out, newRecord{names: uniq(names[i], m.ProgNames[i], f.PerfName, f.KernelName), md: bm})
	}
	return out, Injected, nil
}

// unrecorded adds the programs the source says were loaded while the
// recording was made and that the recording has no record of.
func (j *injector) unrecorded() error {
	lister, ok := j.src.(bpfprog.Lister)
	sys := j.src.System()
	switch {
	case j.opts.RecordedOnly:
		return nil
	case !ok:
		j.sum.UnrecordedSkipped = "the source cannot list its programs"
		return nil
	case sys.PerfClockOffset == 0:
		j.sum.UnrecordedSkipped = "the source does not say how its clock relates to perf's (a snapshot of an older bpfmeta?)"
		return nil
	case j.first == 0:
		j.sum.UnrecordedSkipped = "the recording has no timestamps"
		return nil
	case !j.matched:
		// Load times say nothing across boots: only a program matched by
		// id, tag and addresses shows that the recording is of this boot.
		j.sum.UnrecordedSkipped = "none of the recording's programs is the source's: it may be of another boot"
		return nil
	}
	for sp, err := range lister.All() {
		if err != nil || j.known[sp.ID] {
			continue
		}
		t, ok := sys.LoadedAtPerfTime(sp)
		if !ok || t < j.first || t > j.last {
			continue
		}
		p := &Program{ID: sp.ID, Tag: sp.Tag, Unrecorded: true, Outcome: Injected, atEnd: true}
		if len(sp.Funcs) > 0 {
			p.Name = sp.Funcs[0].PerfName
		}
		j.unrecordedProgs = append(j.unrecordedProgs, p)
		m, entries, outcome, err := metadataOf(sp)
		if outcome != Injected {
			p.Outcome, p.Err = outcome, err
			continue
		}
		for i, f := range sp.Funcs {
			// no KSYMBOL to name it after: perf's name
			names := uniq(m.ProgNames[i], f.PerfName, f.KernelName)
			if k := slices.IndexFunc(names, func(n string) bool { return j.orphans[maphash.String(j.seed, n)] > 0 }); k >= 0 {
				// write() makes it Injected if other records are added
				j.orphans[maphash.String(j.seed, names[k])]--
				p.Outcome = AlreadyPresent
				continue
			}
			bm := perfdata.BPFMetadata{ProgName: m.ProgNames[i], Entries: entries}
			if _, err := bm.Encode(j.r.ByteOrder(), j.r.IDHeaderSize()); err != nil {
				return err
			}
			if err := j.queueAtEnd(pending{prog: p, names: names, md: bm}); err != nil {
				return err
			}
		}
	}
	return nil
}

// metadataOf returns a source program's metadata and its entries as a
// record holds them, with outcome Injected; or the outcome that says why
// perf writes none (NoMetadata, TooLarge) or why it cannot be known
// (Failed), with its error.
func metadataOf(sp *bpfprog.Program) (*bpfprog.Metadata, []perfdata.BPFMetadataEntry, Outcome, error) {
	m, err := sp.BPFMetadata()
	var tl *bpfprog.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, nil, TooLarge, err
	case errors.Is(err, bpfprog.ErrNoMetadata):
		return nil, nil, NoMetadata, nil
	case err != nil:
		return nil, nil, Failed, err
	case len(m.ProgNames) != len(sp.Funcs):
		return nil, nil, Failed, fmt.Errorf("program %d: %d functions but %d metadata names", sp.ID, len(sp.Funcs), len(m.ProgNames))
	}
	entries := make([]perfdata.BPFMetadataEntry, len(m.Entries))
	for i, en := range m.Entries {
		entries[i] = perfdata.BPFMetadataEntry{Key: en.Key, Value: en.Value}
	}
	return m, entries, Injected, nil
}

func uniq(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
