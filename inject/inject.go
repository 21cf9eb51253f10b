// Package inject adds PERF_RECORD_BPF_METADATA records to a recording, one
// per JITed function of every BPF program that has metadata, where perf
// record >= 6.16 would have written them:
//
//   - for a program perf found loaded when the recording started (perf
//     synthesized its KSYMBOLs and BPF_EVENT), right after its BPF_EVENT, as
//     perf_event__synthesize_one_bpf_prog() does;
//   - for a program loaded while recording (the kernel emitted its KSYMBOLs
//     and BPF_EVENT, possibly inside compressed records), at the end, in
//     ascending program id, as perf_event__synthesize_final_bpf_metadata() does.
//
// Programs are looked up in a bpfprog.Source by the id of their BPF_EVENT
// and matched by tag and by the addresses of their KSYMBOLs, so a reused id
// or a program from another boot gets no metadata. Records the recording
// already has are kept and not duplicated, so injecting twice is injecting
// once. Every other record passes through unchanged.
//
// The package decides which records to write and where; reading, framing
// and offsets are the reader's and the writer's.
package inject

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Options change how records are named.
type Options struct {
	// PerfNames gives each record the prog_name perf record >= 6.16 writes
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
	return [...]string{"injected", "already present", "no metadata", "not found", "mismatch", "failed"}[o]
}

// Resolved reports whether the outcome is a definite answer (metadata
// written, present, or known not to exist).
func (o Outcome) Resolved() bool { return o <= NoMetadata }

// Program is what inject did for one BPF program loaded in the recording.
type Program struct {
	ID      uint32
	Tag     perfdata.BPFTag
	Name    string // the name of its first KSYMBOL in the recording, if any
	Outcome Outcome
	Records int   // BPF_METADATA records written for it
	Err     error // why, for NotFound, Mismatch and Failed
	// Synthesized: perf found the program loaded at the start of the
	// recording (its records follow its BPF_EVENT); otherwise it was loaded
	// during the recording (its records are at the end).
	Synthesized bool
	// Unloaded: the recording saw the program unloaded (PROG_UNLOAD).
	Unloaded bool
	// ksyms are the names of the KSYMBOLs right before its BPF_EVENT.
	ksyms []string
	// present are the names of the recording's records that stand for
	// this program's.
	present []string
}

// Summary is what an injection did.
type Summary struct {
	Programs []Program // one per PROG_LOAD BPF_EVENT, in recording order
	Injected int       // BPF_METADATA records written
	Kept     int       // BPF_METADATA records the recording already had
	// Trailing is the number of bytes after the last record of a pipe
	// stream that are not a record (see reader.Reader.Trailing). They are
	// copied to a pipe output and dropped from a file output, whose data
	// section can only hold records; TrailingDropped says which.
	Trailing        int
	TrailingDropped bool
}

// Unresolved returns the programs whose metadata could not be determined.
func (s *Summary) Unresolved() []Program {
	var u []Program
	for _, p := range s.Programs {
		if !p.Outcome.Resolved() {
			u = append(u, p)
		}
	}
	return u
}

// WriteError is an error of the output, as opposed to one of the input.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// rawWriter is a writer that can also write bytes that are not records.
type rawWriter interface {
	WriteRaw([]byte) error
}

// Run copies every record of r to w, adding BPF_METADATA records for the
// programs src knows. r must decompress (reader.Options.Decompress) to see
// programs loaded during a compressed recording. w is closed by the caller.
func Run(r *reader.Reader, w writer.RecordWriter, src bpfprog.Source, opts Options) (*Summary, error) {
	j := &injector{
		r:     r,
		w:     w,
		src:   src,
		opts:  opts,
		ksyms: map[uint64]string{},
		sum:   &Summary{},
		cur:   -1,
	}
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
	if _, tr := r.Trailing(); len(tr) > 0 {
		j.sum.Trailing = len(tr)
		rw, ok := w.(rawWriter)
		if !ok {
			j.sum.TrailingDropped = true
			return j.sum, nil
		}
		if err := rw.WriteRaw(tr); err != nil {
			return j.sum, &WriteError{err}
		}
	}
	return j.sum, nil
}

type injector struct {
	r    *reader.Reader
	w    writer.RecordWriter
	src  bpfprog.Source
	opts Options
	sum  *Summary

	// ksyms maps the address of every registered BPF KSYMBOL to its name.
	ksyms map[uint64]string
	// recent are the names of the BPF KSYMBOLs since the last BPF_EVENT:
	// perf and the kernel both write a program's KSYMBOLs right before it.
	recent []string
	// finishedInit: a FINISHED_INIT has gone by: perf's synthesized records
	// come before it (unless perf record --tail-synthesize).
	finishedInit bool
	// after are records to write right after the current BPF_EVENT, once the
	// records that follow it show the recording does not have them already.
	after []pending
	// atEnd are records for programs loaded during the recording.
	atEnd []pending
	// cur is the program whose BPF_EVENT the records since are right
	// after (only BPF_METADATA records came since), or -1.
	cur int
}

// pending is a BPF_METADATA record not yet written.
type pending struct {
	progID uint32
	prog   int      // index in sum.Programs
	names  []string // names that make an existing record the same (KSYMBOL, perf, kernel)
	raw    []byte
}

func (j *injector) record(rec *perfdata.Record) error {
	bo := j.r.ByteOrder()
	t := rec.Header.Type
	if t == perfdata.RecordBPFMetadata && !rec.Compressed() {
		if m, err := perfdata.DecodeBPFMetadata(rec.Raw, bo, j.r.IDHeaderSize()); err == nil {
			j.existing(m.ProgName)
		}
	} else {
		j.cur = -1
		if err := j.flushAfter(); err != nil {
			return err
		}
	}
	if err := j.w.WriteRecord(rec); err != nil {
		return &WriteError{err}
	}
	switch t {
	case perfdata.RecordFinishedInit:
		j.finishedInit = true
	case perfdata.RecordKSymbol:
		k, err := perfdata.DecodeKSymbol(rec.Raw, bo)
		if err != nil || k.Type != perfdata.KSymbolTypeBPF {
			return nil
		}
		switch {
		case k.Unregister():
			if j.ksyms[k.Addr] == k.Name { // not a later symbol at that address
				delete(j.ksyms, k.Addr)
			}
		case strings.HasPrefix(k.Name, "bpf_trampoline_") || strings.HasPrefix(k.Name, "bpf_dispatcher_"):
			// perf synthesizes these after all programs; no BPF_EVENT
			// follows them
		default:
			j.ksyms[k.Addr] = k.Name
			j.recent = append(j.recent, k.Name)
		}
	case perfdata.RecordBPFEvent:
		e, err := perfdata.DecodeBPFEvent(rec.Raw, bo)
		recent := j.recent
		j.recent = nil
		switch {
		case err != nil:
		case e.Type == perfdata.BPFEventProgLoad:
			return j.load(rec, e, recent)
		case e.Type == perfdata.BPFEventProgUnload:
			for i := range j.sum.Programs {
				if p := &j.sum.Programs[i]; p.ID == e.ID && p.Tag == e.Tag {
					p.Unloaded = true
				}
			}
		}
	}
	return nil
}

// existing notes a BPF_METADATA record the recording already has. perf
// writes a program's records right after its BPF_EVENT or at the end, so
// the record stands, by position, for one record inject would add: of the
// program whose BPF_EVENT it follows, or else of a program loaded during
// the recording. Its name alone does not say which program: two loads of
// one object have the same names, and may have other metadata.
func (j *injector) existing(name string) {
	j.sum.Kept++
	if j.cur >= 0 {
		if !j.cancel(&j.after, name) {
			j.claim(j.cur, name)
		}
		return
	}
	if j.cancel(&j.atEnd, name) {
		return
	}
	for i := range j.sum.Programs {
		if p := &j.sum.Programs[i]; !p.Synthesized && j.claim(i, name) {
			return
		}
	}
}

// cancel drops one pending record that the recording's record named name
// stands for.
func (j *injector) cancel(ps *[]pending, name string) bool {
	for k, p := range *ps {
		if slices.Contains(p.names, name) {
			j.sum.Programs[p.prog].Outcome = AlreadyPresent
			j.sum.Programs[p.prog].present = append(j.sum.Programs[p.prog].present, name)
			*ps = slices.Delete(*ps, k, k+1)
			return true
		}
	}
	return false
}

// claim takes the recording's record named name for program i, which the
// source could not resolve, if it is one of that program's KSYMBOLs not
// claimed yet: the recording resolves the program.
func (j *injector) claim(i int, name string) bool {
	p := &j.sum.Programs[i]
	if !slices.Contains(p.ksyms, name) || slices.Contains(p.present, name) {
		return false
	}
	switch {
	case !p.Outcome.Resolved():
		p.Outcome, p.Err = AlreadyPresent, nil
	case p.Outcome != AlreadyPresent:
		return false
	}
	p.present = append(p.present, name)
	return true
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

func (j *injector) write(p pending) error {
	rec := perfdata.Record{
		Offset: -1,
		Outer:  -1,
		Header: perfdata.DecodeEventHeader(p.raw, j.r.ByteOrder()),
		Raw:    p.raw,
	}
	if err := j.w.WriteRecord(&rec); err != nil {
		return &WriteError{err}
	}
	j.sum.Injected++
	j.sum.Programs[p.prog].Records++
	if o := &j.sum.Programs[p.prog].Outcome; *o == AlreadyPresent {
		*o = Injected // some of its records were there, the others are new
	}
	return nil
}

// finish writes the records of programs loaded during the recording, in
// ascending program id as perf walks its bpf_prog_info tree.
func (j *injector) finish() error {
	if err := j.flushAfter(); err != nil {
		return err
	}
	slices.SortStableFunc(j.atEnd, func(a, b pending) int {
		return int(int64(a.progID) - int64(b.progID))
	})
	for _, p := range j.atEnd {
		if err := j.write(p); err != nil {
			return err
		}
	}
	j.atEnd = nil
	return nil
}

// load handles a PROG_LOAD BPF_EVENT.
func (j *injector) load(rec *perfdata.Record, e perfdata.BPFEvent, ksyms []string) error {
	synth := j.synthesized(rec)
	j.sum.Programs = append(j.sum.Programs, Program{ID: e.ID, Tag: e.Tag, Synthesized: synth, ksyms: ksyms})
	if len(ksyms) > 0 {
		j.sum.Programs[len(j.sum.Programs)-1].Name = ksyms[0]
	}
	idx := len(j.sum.Programs) - 1
	j.cur = idx
	sp := &j.sum.Programs[idx]
	recs, err := j.records(e, sp)
	if err != nil {
		sp.Err = err
		return nil
	}
	if recs == nil {
		return nil
	}
	sp.Outcome = Injected
	var ps []pending
	for _, r := range recs {
		ps = append(ps, pending{progID: e.ID, prog: idx, names: r.names, raw: r.raw})
	}
	if synth {
		j.after = append(j.after, ps...)
	} else {
		j.atEnd = append(j.atEnd, ps...)
	}
	return nil
}

// synthesized tells a BPF_EVENT perf synthesized for a program it found
// loaded from one the kernel emitted for a program loaded while recording.
// perf appends machine->id_hdr_size zero bytes to what it synthesizes; the
// kernel's sample_id carries the loader's pid and a time. Kernel records are
// also the only ones inside compressed records. Without a sample_id
// trailer, perf's FINISHED_INIT (perf >= 5.19) separates the two.
func (j *injector) synthesized(rec *perfdata.Record) bool {
	if rec.Compressed() {
		return false
	}
	n := j.r.IDHeaderSize()
	if n == 0 {
		return !j.finishedInit
	}
	// The sample_id follows the record's fields; it is not always at the
	// end. The kernel's perf_event_bpf_output() (as perf_event_ksymbol_output())
	// adds each listening event's id_header_size to the size of the one
	// record it shares between them and never restores it, so while other
	// perf sessions listen, a recording gets records that are longer than
	// their fields and sample_id and end in bytes the kernel never wrote.
	if bpfEventFieldsSize+n > len(rec.Raw) {
		return false
	}
	for _, b := range rec.Raw[bpfEventFieldsSize : bpfEventFieldsSize+n] {
		if b != 0 {
			return false
		}
	}
	return true
}

// bpfEventFieldsSize is the size of a BPF_EVENT before its sample_id:
// header, u16 type, u16 flags, u32 id, u8 tag[8].
const bpfEventFieldsSize = perfdata.EventHeaderSize + 16

type newRecord struct {
	names []string
	raw   []byte
}

// records builds the BPF_METADATA records for the program of BPF_EVENT e,
// or says in sp why there are none.
func (j *injector) records(e perfdata.BPFEvent, sp *Program) ([]newRecord, error) {
	p, err := j.src.Lookup(e.ID, bpfprog.Tag(e.Tag))
	switch {
	case errors.Is(err, bpfprog.ErrNotFound):
		sp.Outcome = NotFound
		return nil, err
	case errors.Is(err, bpfprog.ErrTagMismatch):
		sp.Outcome = Mismatch
		return nil, err
	case err != nil:
		sp.Outcome = Failed
		return nil, err
	}
	// The program's functions must be the recording's KSYMBOLs: same
	// address (where the source knows it) and one of the two names perf
	// and the kernel give them.
	names := make([]string, len(p.Funcs))
	for i, f := range p.Funcs {
		if f.Addr == 0 {
			// Names alone are the same in every boot; without its
			// addresses the program cannot be told from another boot's.
			sp.Outcome = Failed
			return nil, fmt.Errorf("program %d: the source has no addresses for its functions (read without root, or with kernel.kptr_restrict): it cannot be matched to the recording's KSYMBOLs", e.ID)
		}
		n, ok := j.ksymFor(f)
		if !ok {
			sp.Outcome = Mismatch
			return nil, fmt.Errorf("program %d: no KSYMBOL for its function %d (%s at %#x) in the recording: another boot?", e.ID, i, f.KernelName, f.Addr)
		}
		names[i] = n
	}
	if len(names) > 0 {
		sp.Name = names[0]
	}
	m, err := p.BPFMetadata()
	switch {
	case errors.Is(err, bpfprog.ErrNoMetadata):
		sp.Outcome = NoMetadata
		return nil, nil
	case err != nil:
		sp.Outcome = Failed
		return nil, err
	}
	if len(m.ProgNames) != len(p.Funcs) {
		sp.Outcome = Failed
		return nil, fmt.Errorf("program %d: %d functions but %d metadata names", e.ID, len(p.Funcs), len(m.ProgNames))
	}
	entries := make([]perfdata.BPFMetadataEntry, len(m.Entries))
	for i, en := range m.Entries {
		entries[i] = perfdata.BPFMetadataEntry{Key: en.Key, Value: en.Value}
	}
	var out []newRecord
	for i, f := range p.Funcs {
		name := names[i]
		if j.opts.PerfNames {
			name = m.ProgNames[i]
		}
		bm := perfdata.BPFMetadata{ProgName: name, Entries: entries}
		raw, err := bm.Encode(j.r.ByteOrder(), j.r.IDHeaderSize())
		if err != nil {
			sp.Outcome = Failed
			return nil, err
		}
		out = append(out, newRecord{names: uniq(names[i], m.ProgNames[i], f.PerfName, f.KernelName), raw: raw})
	}
	return out, nil
}

// ksymFor finds the recording's KSYMBOL for function f: the one at its
// address, if it has one of the two names perf and the kernel give f.
func (j *injector) ksymFor(f bpfprog.Func) (string, bool) {
	n, found := j.ksyms[f.Addr]
	return n, found && (n == f.PerfName || n == f.KernelName)
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
