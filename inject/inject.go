// Package inject adds PERF_RECORD_BPF_METADATA records to a recording, as perf would have.
//
// It adds PERF_RECORD_BPF_METADATA records to a recording, one per JITed
// function of every BPF program that has metadata, where perf record >= 6.17
// would have written them:
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
//     times on the recording's clock (System.ClockOf: perf's, or any that
//     perf record -k takes), and the recording is of the source's boot
//     (one of its programs is the source's by id, tag and addresses).
//
// Programs are looked up in a bpfprog.Source by the id of their BPF_EVENT
// and matched by tag and by the addresses of their KSYMBOLs, so a reused id
// or a program from another boot gets no metadata. A source that keeps
// loads of several boots or hosts (a journal, bpfprog.Finder) is asked by
// the whole load: id, tag, addresses, the recording's host and the time of
// the record that names it. An id gets records
// once, for its first PROG_LOAD: perf keeps one bpf_prog_info per id
// (perf_env__insert_bpf_prog_info() refuses a second, and
// perf_event__synthesize_one_bpf_prog() then writes no metadata). Records the recording
// already has are kept and not duplicated, so injecting twice is injecting
// once. Every other record passes through unchanged. Strip is the
// opposite rule (bpfmeta strip), for writer.Copy.
//
// A caller shows progress, and warns about a recording of another machine
// (OtherMachine), through Options: Run reads the recording and writes the
// records itself.
//
// Run returns a Summary: what became of each program (Program), which of
// them lack the metadata perf would have written (Missing), and why, in
// words that a list naming the programs can print (Program.Why).
//
// The package decides which records to write and where; reading, framing
// and offsets are the reader's and the writer's, and which functions belong
// to which program is package bpftrack's.
package inject

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Recording is the recording inject reads, one record at a time
// (perfdata.Records), with what bpftrack and inject ask of it besides.
// *reader.Reader is one (it must decompress, reader.Options.Decompress, to
// see the programs loaded during a compressed recording).
type Recording interface {
	bpftrack.Records
	// IsDirRecording reports a directory recording (perf record
	// --threads), whose records at the end are in its first file but
	// come before the data files that load their programs.
	IsDirRecording() bool
	// Origin is what the recording says of the machine it was made on,
	// and whether that is known yet (a pipe stream says it in its first
	// records): see Options.OtherMachine.
	Origin() (reader.Origin, bool)
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

	// Progress, if not nil, is called after every ProgressEvery records
	// written (a progress line reads how far r is).
	Progress func()

	// OtherMachine, if not nil, is called once, as soon as the recording
	// says where it was made, if that is another machine or kernel than
	// the one src's programs are of. Programs are matched by id, tag and
	// addresses all the same, which another machine's programs almost
	// never share: it says why none matched.
	OtherMachine func(*OtherMachine)
}

// ProgressEvery is how many records written make Options.Progress called.
const ProgressEvery = 4096

// Write copies every record of r to w with the BPF_METADATA records src
// has for its programs (Run), then finishes the output (w's Close): the
// one place a recording is read, injected and written, as bpfmeta
// inject, bpfmetatest and the tests write one. After an error w is
// aborted (writer.Writer.Abort), and what it wrote is for the caller to
// remove. An error of Run is as Run returns it (a *writer.WriteError of
// the output, else r's); an error of Close is a *CloseError, its Err a
// *writer.InputError if it is the input's (a header section read as the
// output is finished), else the output's.
func Write(w *writer.Writer, r Recording, src bpfprog.Source, opts Options) (*Summary, error) {
	sum, err := Run(r, w, src, opts)
	if err == nil {
		if cerr := w.Close(); cerr != nil {
			err = &CloseError{Err: cerr}
		}
	}
	if err != nil {
		w.Abort()
	}
	return sum, err
}

// CloseError is an error of the writer's Close in Write, after every
// record was written: its message is Err's. A caller that names the
// output in its messages tells it from an error of a record written
// (a *writer.WriteError, whose message is the record's).
type CloseError struct{ Err error }

func (e *CloseError) Error() string { return e.Err.Error() }
func (e *CloseError) Unwrap() error { return e.Err }

// Run copies every record of r to w, adding BPF_METADATA records for the
// programs src knows. The caller closes w (Write runs and closes). An
// error of w is a *writer.WriteError; one of r is r's.
func Run(r Recording, w RecordWriter, src bpfprog.Source, opts Options) (*Summary, error) {
	j := &injector{
		r:      r,
		events: r.Events(),
		w:      w,
		src:    src,
		opts:   opts,
		track:  bpftrack.New(r, bpftrack.Options{Samples: true}),
		sum:    &Summary{src: src},
		progs: programs{
			byTP:      map[*bpftrack.Program]*program{},
			claimable: map[string][]*program{},
			known:     map[uint32]bool{},
		},
		pend: pendingLoads{awaited: map[uint64]awaitedFunc{}},
		end:  atEndRecords{byName: map[string][]int{}, orphans: map[uint64]int{}, seed: maphash.MakeSeed()},
		mem:  budget.Meter{What: "programs to inject"},
	}
	if _, ok := src.(bpfprog.Lister); ok && !opts.RecordedOnly {
		j.span.on = true
	}
	j.dir = r.IsDirRecording()
	if rr, rw := recrun.SourceOf(r), recrun.SinkOf(w); rr != nil && rw != nil {
		j.runs, j.runW = rr, rw
	}
	if opts.Progress != nil {
		j.progress = &progressWriter{RecordWriter: w, progress: opts.Progress}
		j.w = j.progress
	}
	err := j.run()
	j.track.Close()
	j.mem.Close()
	// The summary is what became of the programs so far, on an error too.
	j.sum.Programs = make([]Program, len(j.progs.listed))
	for i, p := range j.progs.listed {
		j.sum.Programs[i] = p.entry()
	}
	return j.sum, err
}

func (j *injector) run() error {
	for {
		// The records only passed through go a run at a time, when
		// nothing is pending that record does first.
		if j.runs != nil && j.pend.cur == nil && len(j.pend.after) == 0 && j.pend.loading == nil && len(j.tail.held) == 0 && (j.originChecked || j.opts.OtherMachine == nil) {
			if err := j.passRun(); err != nil {
				return err
			}
		}
		if !j.r.Next() {
			break
		}
		j.checkOrigin()
		if err := j.record(j.r.Record()); err != nil {
			return err
		}
	}
	j.checkOrigin()
	if err := j.r.Err(); err != nil {
		return err
	}
	j.track.End()
	j.sum.EarlyFlushes = j.track.EarlyFlushes()
	if err := j.settleLoad(); err != nil {
		return err
	}
	if err := j.releaseInit(); err != nil {
		return err
	}
	return j.finish()
}

type injector struct {
	r      Recording
	events *perfdata.Events // r's: read for every SAMPLE
	w      RecordWriter
	// runs and runW are r and w, if they pass records on a run at a
	// time (passRun); progress is w, if it counts for Options.Progress.
	runs     runRecording
	runW     runWriter
	progress *progressWriter
	src      bpfprog.Source
	opts     Options
	sum      *Summary
	track    *bpftrack.Tracker
	// part is the file of a directory recording the current record is in.
	part int
	// dir: the recording is a directory recording (perf record --threads),
	// whose records at the end are in its first file, read before the
	// data files with the loads they are for (atEndRecords.deferred).
	dir bool
	// originChecked: Options.OtherMachine had its answer.
	originChecked bool

	progs programs
	pend  pendingLoads
	unrec unrecorded
	end   atEndRecords
	tail  tailHold
	span  timeSpan
	// uncounted are the SAMPLEs passed without going to the tracker
	// (counting() false) in this round and the one before, which perf had
	// not delivered yet: a program loaded now may have samples among them.
	uncounted [2]int

	// mem is what the above takes of the process's memory budget
	// (internal/budget), the tracker's aside.
	mem budget.Meter
}

// programs are the programs of the summary and what is known of them.
type programs struct {
	// listed are the programs Summary.Programs has, in its order.
	listed []*program
	byTP   map[*bpftrack.Program]*program // the summary's entry of a loaded program
	// claimable are the listed programs loaded during the recording, by
	// the names of their functions: a record at the end of the recording
	// may be one of theirs (existing).
	claimable map[string][]*program
	// known are the ids of the listed programs and of every program the
	// source has that the recording loads: unrecorded adds none of them,
	// and a later load of one is a Duplicate.
	known map[uint32]bool
	// matched: the source has one of the recording's programs (the same
	// id, tag and addresses).
	matched bool
	// listedFuncs counts the functions of the listed programs, which
	// they keep (claim).
	listedFuncs int
	// missing counts the loaded programs whose samples are counted: those
	// the output has no metadata for.
	missing int
}

// pendingLoads are the loads at the recording's position that wait on
// the records that follow.
type pendingLoads struct {
	// cur is the program perf found loaded whose BPF_EVENT the records
	// since are right after (only BPF_METADATA records came since), or nil.
	cur *program
	// after are records to write right after the current BPF_EVENT, once the
	// records that follow it show the recording does not have them already.
	after []pending
	// loading is the program of the kernel's PROG_LOAD BPF_EVENT that is
	// the last record: inject matches it to the source's program once the
	// KSYMBOLs that follow have come (settleLoad).
	loading *bpftrack.Program
	// awaited are the functions of kernel loads whose KSYMBOLs have not
	// come yet, by address (awaitFuncs).
	awaited map[uint64]awaitedFunc
}

// unrecorded are the programs the recording has no record of (unrecorded).
type unrecorded struct {
	// progs are those programs, listed once their records are written.
	progs []*program
	// done: they were looked for.
	done bool
}

// atEndRecords are the records at the end of the recording: those inject
// writes there and those the recording has.
type atEndRecords struct {
	// records are records for programs loaded during the recording;
	// byName their indexes by each of their names; bytes the bytes they
	// keep (MaxAtEndBytes).
	records []pending
	byName  map[string][]int
	bytes   int
	// written: they were written, before the tail synthesis.
	written bool
	// orphans count the recording's BPF_METADATA records that stand for
	// no program of its BPF_EVENTs (perf's records of programs it has no
	// record of) by the hash of their name, so that they keep no name;
	// seed is the hash's, unknown to the recording.
	orphans map[uint64]int
	seed    maphash.Seed
	// nOrphans counts them (at most MaxAtEnd are kept).
	nOrphans int
	// deferred are the names of a directory recording's records at the
	// end, which are in its first file, settled at the end, where perf
	// wrote them; deferredBytes their names' bytes, within MaxAtEndBytes.
	deferred      []string
	deferredBytes int
}

// tailHold is what starts a tail synthesis (tailInit) and holds it back.
type tailHold struct {
	// sawData: a record that perf writes only while it records came (a
	// SAMPLE, FINISHED_ROUND, COMPRESSED or the kernel's BPF_EVENT): a
	// FINISHED_INIT after it starts a tail synthesis.
	sawData bool
	// held are the FINISHED_INIT that starts the tail synthesis of a pipe
	// stream and the records after it, held back until the stream's first
	// HEADER_ATTR tells the size of the records' sample_id trailer
	// (holds); bytes their bytes.
	held  []*perfdata.Record
	bytes int
}

// timeSpan is the earliest and latest record times (perf's clock), 0 if
// none; kept only when on (the programs the recording has no record of
// are looked for).
type timeSpan struct {
	first, last uint64
	on          bool
}

// What inject keeps, in bytes, beside the strings it counts (for the
// memory budget): a program of the recording's (its summary entry and its
// place in the maps of them), a record to write at the end, an id known
// and a name of records at the end counted.
const (
	programCost = 384
	pendingCost = 160
	knownCost   = 32
	orphanCost  = 48
)

// charge keeps the injector's reservation of the memory budget in step
// with what it keeps.
func (j *injector) charge() error {
	size := (len(j.progs.byTP)+len(j.progs.listed)+len(j.unrec.progs))*programCost + len(j.end.records)*pendingCost + j.end.bytes +
		(len(j.progs.known)+len(j.progs.claimable)+len(j.pend.awaited))*knownCost + len(j.end.orphans)*orphanCost + j.end.deferredBytes + len(j.end.deferred)*16 +
		j.tail.bytes
	return j.mem.Set(int64(size))
}

// pending is a BPF_METADATA record not yet written: encoded when written,
// so that the records of a program share its entries.
type pending struct {
	prog  *program
	names []string // names that make an existing record the same (KSYMBOL, perf, kernel)
	md    perfdata.BPFMetadata
	done  bool // the recording has it already (atEndRecords)
	// part is the file of a directory recording it goes to: that of the
	// BPF_EVENT it follows; 0, the file with the header, for the records
	// at the end, where perf record --threads writes them too.
	part int
}

func (j *injector) record(rec *perfdata.Record) error {
	t := rec.Header.Type
	if j.pend.loading != nil && !j.registers(rec) {
		if err := j.settleLoad(); err != nil {
			return err
		}
	}
	if len(j.tail.held) > 0 {
		if j.holds(rec) {
			return nil
		}
		if err := j.releaseInit(); err != nil {
			return err
		}
	}
	j.part = rec.Part
	switch t {
	case perfdata.RecordFinishedRound, perfdata.RecordCompressed, perfdata.RecordCompressed2, perfdata.RecordSample:
		j.tail.sawData = true
	}
	if t == perfdata.RecordBPFMetadata && !rec.Compressed() {
		if m, err := perfdata.DecodeBPFMetadata(rec.Raw, j.r.ByteOrder()); err == nil {
			if err := j.existing(m.ProgName); err != nil {
				return fmt.Errorf("BPF_METADATA at %#x: %w", rec.Offset, err)
			}
		}
	} else {
		j.pend.cur = nil
	}
	if j.pend.cur == nil && len(j.pend.after) > 0 {
		// the records right after the last BPF_EVENT end before this one
		if err := j.flushAfter(); err != nil {
			return err
		}
	}
	if t == perfdata.RecordFinishedInit && j.tail.sawData && !j.end.written && !rec.Compressed() {
		if held, err := j.tailInit(rec); held || err != nil {
			return err
		}
	}
	if err := j.w.WriteRecord(rec); err != nil {
		return writer.Blame(j.r, err)
	}
	if t == perfdata.RecordSample {
		counting := j.counting()
		j.sample(rec.Header.Misc, j.events.Sample(rec.Raw), counting)
		if !counting {
			j.uncounted[0]++
		}
		return nil
	}
	if j.span.on && t < perfdata.UserTypeStart {
		if ts, ok := j.events.Time(rec.Raw); ok {
			j.time(ts)
		}
	}
	if t == perfdata.RecordFinishedRound {
		j.round()
	}
	if recrun.Passes(t) {
		// All that inject does with a record that can be in a run: what
		// passRun does. A record that is to do more does not pass.
		return nil
	}
	switch t {
	case perfdata.RecordKSymbol, perfdata.RecordBPFEvent:
		return j.feed(rec)
	case perfdata.RecordFinishedInit:
		j.track.Feed(rec)
	}
	return nil
}

// feed takes a KSYMBOL or BPF_EVENT: a function registered, a program
// loaded, unloaded or replaced.
func (j *injector) feed(rec *perfdata.Record) error {
	u, err := j.track.Feed(rec)
	if err != nil {
		return err
	}
	if f := u.Func; f != nil && len(j.pend.awaited) > 0 && j.track.Func(f.Addr) == f {
		j.arrived(f)
	}
	if u.Loaded != nil {
		if !u.Loaded.Synthesized {
			// the KSYMBOLs of its functions may follow (settleLoad)
			j.pend.loading, j.tail.sawData = u.Loaded, true
		} else if err := j.load(u.Loaded); err != nil {
			return err
		}
	}
	if p := j.progs.byTP[u.Unloaded]; p != nil {
		p.Unloaded = true
		j.gone(p)
	}
	if p := j.progs.byTP[u.Replaced]; p != nil {
		j.gone(p) // a load of its id replaced it: no sample is its any more
	}
	return nil
}

// runRecording is a Recording that hands out runs of records, which
// inject walks in a loop of its own (a *reader.Reader, by
// recrun.SourceOf).
type runRecording = recrun.Source

// runWriter is a RecordWriter that writes a run of records passed through
// in one call (a *writer.Writer, by recrun.SinkOf). A RecordWriter
// without it gets every record by WriteRecord.
type runWriter = recrun.Sink

// passRun passes on the records at the recording's position that inject
// only passes through, as record does with each of them, in one loop over
// the reader's buffer instead of a chain of calls per record (a 317 MB
// recording has 2.8 M of them; most are SAMPLEs): the records that pass
// (recrun.Passes, which the run's Peek asks: every kernel record but
// KSYMBOL and BPF_EVENT, which feed the tracker). A run also ends where
// Options.Progress is due, so that it is called after the same records.
func (j *injector) passRun() error {
	u := j.runs.Run()
	limit := math.MaxInt
	if j.progress != nil {
		limit = j.progress.left()
	}
	// neither changes within a run: only KSYMBOL and BPF_EVENT change them
	timed, counting := j.span.on, j.counting()
	for u.Len() < limit {
		h, ok := u.Peek()
		if !ok {
			break
		}
		raw := u.Take(h)
		switch {
		case h.Type == perfdata.RecordSample:
			j.tail.sawData = true
			if timed || counting {
				j.sample(h.Misc, j.events.Sample(raw), counting)
			}
			if !counting {
				j.uncounted[0]++
			}
		case h.Type == perfdata.RecordFinishedRound:
			j.round()
		case timed:
			if ts, ok := j.events.Time(raw); ok {
				j.time(ts)
			}
		}
	}
	if u.Len() == 0 {
		return nil
	}
	j.runs.Pass(u)
	j.part = u.Part()
	if j.progress != nil {
		j.progress.passed(u.Len())
	}
	if err := j.runW.WriteRun(u); err != nil {
		return writer.Blame(j.r, err)
	}
	return nil
}

// sample takes a SAMPLE record's time, and hands it to the tracker while
// counting (j.counting(), which the caller asks once per run of records),
// which counts it in its function as perf report does (f: Events.Sample's,
// misc: the record header's): a program's samples are its functions'.
func (j *injector) sample(misc uint16, f perfdata.SampleFields, counting bool) {
	if f.HasTime && j.span.on {
		j.time(f.Time)
	}
	if counting {
		j.track.Sample(misc, f)
	}
}

// round takes a FINISHED_ROUND: perf delivers the samples of the round
// before.
func (j *injector) round() {
	j.track.Round()
	j.uncounted = [2]int{0, j.uncounted[0]}
}

// counting tells whether samples go to the tracker: while a loaded
// program has no metadata (the summary and --strict count its samples),
// and until perf's synthesis of the programs it found loaded has come
// (bpftrack's InitFinished): a recording perf record --tail-synthesize
// wrote (as --overwrite implies) has it at the end, after the samples that
// perf report counts in those programs. Otherwise a SAMPLE is not queued
// (BenchmarkInjectWalk of a 12 MB recording of a program without
// metadata: 27 CPU ns a record queued, 18 counted at once as before). A
// program loaded during a recording while none lacked metadata misses the
// samples of its round read before its BPF_EVENT, which perf report may
// count in it: Program.SamplesShort says so.
func (j *injector) counting() bool {
	return j.progs.missing > 0 || !j.track.InitFinished()
}

// gone settles a program the tracker no longer keeps: unloaded, or
// replaced by a load of its id.
func (j *injector) gone(p *program) {
	delete(j.progs.byTP, p.tracked)
	if !p.Outcome.complete() {
		j.progs.missing--
	}
	if !p.listed && !p.atEnd {
		j.unlisted(p) // settled
	}
}

// time widens the recording's time span to t (0 is perf's synthesized
// records' time: none).
func (j *injector) time(t uint64) {
	if t == 0 {
		return
	}
	if j.span.first == 0 || t < j.span.first {
		j.span.first = t
	}
	j.span.last = max(j.span.last, t)
}
