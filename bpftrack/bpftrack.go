// Package bpftrack tracks a recording's BPF programs from its KSYMBOL and BPF_EVENT records.
//
// It follows the BPF programs of a recording as its PERF_RECORD_KSYMBOL and
// PERF_RECORD_BPF_EVENT records announce them: which programs were loaded
// (by perf, synthesized at the start, or by the kernel while recording),
// which JITed functions each has, when they were unloaded, and which
// function a sample's address is in. Package inject, the show command and
// bpfprog/watch all see programs through it.
//
// The rules, as the kernel and perf write the records:
//
//   - A program's functions are the BPF KSYMBOLs written right before its
//     PROG_LOAD BPF_EVENT, main function first: the kernel's
//     perf_event_bpf_event() emits the KSYMBOLs and then the BPF_EVENT, on
//     one CPU, and perf's perf_event__synthesize_one_bpf_prog() does the same
//     for programs loaded before it started. Records from several CPUs can
//     interleave in a stream; a caller that knows a record's CPU (the
//     watcher does) passes it as the record's stream.
//   - BPF trampolines and dispatchers (bpf_trampoline_<id>,
//     bpf_dispatcher_<name>) have KSYMBOLs and no BPF_EVENT: perf synthesizes
//     them after all programs. They are functions of no program.
//   - An unregistering KSYMBOL removes the symbol at its address, as perf's
//     machine__process_ksymbol_unregister() removes the map: later samples
//     there are no longer the function's. It is part of no program's load.
//   - A PROG_UNLOAD BPF_EVENT marks the loaded program with its id and tag.
//   - perf writes the records it synthesizes with an all-zero sample_id
//     trailer; the kernel's carry the loader's pid and a time, and only the
//     kernel's can be inside COMPRESSED records. Without a sample_id
//     trailer, FINISHED_INIT (perf >= 5.19) separates the two: perf's come
//     before it, or, in a pipe stream synthesized at its tail (perf record
//     --tail-synthesize or --overwrite, whose HEADER_ATTRs come at the
//     tail too), after it.
//   - perf record --overwrite reads the kernel's records newest first
//     (backward ring buffers: its attrs have write_backward): there a
//     program's functions are the KSYMBOLs right after its PROG_LOAD
//     BPF_EVENT, main function last, until the stream's next BPF_EVENT,
//     unregistering KSYMBOL or FINISHED_INIT. A pipe stream's attrs come
//     at its tail then: the tracker cannot tell, and takes them as written
//     forward.
//
// It keeps the programs that are loaded and the functions that are
// registered, so its memory follows what is loaded at one time, not the
// length of the recording, within MaxPrograms, MaxFuncs and MaxNameBytes.
// History keeps, beside those, the functions of programs loaded during the
// recording and gone since (a BPF_METADATA record at the end may be one's):
// MaxRecordFuncs of each name, the others counted; the MaxHistory gone last,
// within MaxNameBytes, and the older ones counted as Forgotten. All of it,
// with the records WalkMetadata keeps waiting, is within the process's
// memory budget (internal/budget), shared with what else the process
// keeps. A name is at most perfdata.KSymNameLen-1 bytes. A KSYMBOL or
// BPF_EVENT too short for its fields is an error: the kernel writes none,
// and a stream of them is no recording (issue 37). WalkMetadata reads a
// whole recording for the BPF_METADATA records it has and what they
// belong to, handing each out as soon as that is known (bpfmeta show,
// whose JSON form of a record is the command's own).
//
// It opens nothing (it is fed records, or reads a Records such as a
// *reader.Reader) and knows a program only by its records: what a program
// is and its metadata are package bpfprog's, and which records to add and
// where is package inject's.
package bpftrack

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/enum"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Recording is what the tracker needs to know of the recording it reads.
// *reader.Reader is one.
type Recording interface {
	ByteOrder() binary.ByteOrder
	// IDHeaderSize is the size of the sample_id trailer of the recording's
	// records (the first attr's).
	IDHeaderSize() int
	// Events tells which event a SAMPLE belongs to, for its ip.
	Events() *perfdata.Events
}

// Options say what a Tracker keeps.
type Options struct {
	// Samples counts the SAMPLE records whose ip is in each function, as
	// perf report counts them (see sampleOrder): once the recording is
	// fed, End delivers those still waiting.
	Samples bool
	// History keeps the functions of the programs loaded during the
	// recording (FuncsNamed, RecordFuncs), also once they are gone: the
	// MaxHistory gone last, MaxRecordFuncs of a name, the others counted.
	History bool
}

// Func is a JITed function: one BPF KSYMBOL.
type Func struct {
	Addr uint64
	Len  uint32
	Name string
	// Program is the program it belongs to; nil for trampolines,
	// dispatchers and symbols whose BPF_EVENT was not seen.
	Program *Program
	// Samples counts the SAMPLE records perf report counts in it
	// (Options.Samples): in its address range while perf's kernel maps
	// held it, in perf's order (sampleOrder).
	Samples int
	// Offset is the offset of its KSYMBOL record, in file Part of a
	// directory recording (perfdata.Record.Part).
	Offset int64
	Part   int
	// Unregistered: its unregistering KSYMBOL was seen.
	Unregistered bool
	// registered: it is in the tracker's index of registered functions
	// (no unregistering KSYMBOL, no other function at its address since).
	registered bool
	// retired: its program is gone and it is no longer live
	// (History keeps it, or counts it, among the gone).
	retired bool
	// viewed: perf's kernel maps hold it (sampleOrder); queued counts
	// its KSYMBOLs waiting to be delivered there; same are the other
	// functions of its name, address and length its samples count in.
	viewed bool
	queued int
	same   []*Func
	// twin is, for a function perf synthesized, the kernel's KSYMBOL of
	// it that the recording has too (twin); twinOf is the reverse.
	// synth: its KSYMBOL has no time (perf synthesized it).
	twin, twinOf *Func
	synth        bool
	// of is, for a part of a function's range that perf's maps hold
	// after a later KSYMBOL overlapped the rest (sampleOrder), the
	// function.
	of *Func
}

// Names is the names a function is known by (its metadata, BTF, perf or
// kernel name), without "" and repeats, in the order given: the order in
// which inject and stable try them.
func Names(names ...string) []string {
	var out []string
	for _, n := range names {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Contains reports whether addr is in the function.
func (f *Func) Contains(addr uint64) bool { return addr >= f.Addr && addr-f.Addr < uint64(f.Len) }

// Program is one load of a BPF program in the recording.
type Program struct {
	ID  uint32
	Tag perfdata.BPFTag
	// Funcs are its functions, main function first: the KSYMBOLs before its
	// PROG_LOAD BPF_EVENT.
	Funcs []*Func
	// Offset is the offset of its PROG_LOAD BPF_EVENT; Outer that of the
	// compressed record it was in, or -1.
	Offset, Outer int64
	// Synthesized: perf found the program loaded when the recording
	// started (it synthesized the records); otherwise the kernel announced
	// a load during the recording.
	Synthesized bool
	// Unloaded: its PROG_UNLOAD BPF_EVENT was seen.
	Unloaded bool
	// Time is the time of its PROG_LOAD BPF_EVENT, on the recording's
	// clock; 0 if the record has none.
	Time uint64
	// gone: the tracker keeps it loaded no longer (unloaded, or replaced
	// by a load of its id); kept counts its functions History keeps since.
	gone bool
	kept int
}

// Update is what a record changed.
type Update struct {
	// Loaded is the program a PROG_LOAD BPF_EVENT announced.
	Loaded *Program
	// Unloaded is the program a PROG_UNLOAD BPF_EVENT announced (nil if it
	// was not seen loading).
	Unloaded *Program
	// Replaced is the program a PROG_LOAD BPF_EVENT of the same id
	// replaced: loaded and never seen unloading. The tracker keeps it no
	// longer.
	Replaced *Program
	// Func is the function a KSYMBOL registered or unregistered.
	Func *Func
}

// MaxFuncs bounds the functions a Tracker keeps, registered at one time
// and, with History, registered in all, and MaxPrograms the programs it
// keeps loaded at one time: far more than any machine has loaded (a few
// thousand), and few enough that a recording that claims more cannot take
// the memory of a process that reads it.
const (
	MaxFuncs    = 1 << 17
	MaxPrograms = 1 << 15
)

// MaxHistory bounds the functions of programs gone (unloaded, or replaced,
// and unregistered) that a Tracker with History keeps, each with its name,
// program (and the program's other functions) and indexes, beside what its caller keeps of the recording
// (show: its BPF_METADATA records). A recording that loads and unloads
// programs all day has more: the oldest are forgotten (Forgotten counts
// them), and a record at the end for one of them finds no function.
const MaxHistory = 1 << 16

// MaxNameBytes bounds the bytes of the names of the functions a Tracker
// keeps, in each of what it keeps: the functions registered at one time,
// those of the programs loaded at one time and, with History, those of the
// programs gone (older ones are forgotten). A machine's few thousand functions have names of a few
// dozen bytes; MaxFuncs names of KSYM_NAME_LEN would take 64 MiB.
const MaxNameBytes = 8 << 20

// ErrTooMany is returned (wrapped, with the record's offset) for a KSYMBOL
// or a PROG_LOAD BPF_EVENT that would make a Tracker keep more than
// MaxFuncs functions, MaxPrograms programs or MaxNameBytes of names.
var ErrTooMany = errors.New("more BPF programs or functions than bpfmeta keeps track of")

// maxPending bounds the KSYMBOLs a stream keeps waiting for their
// BPF_EVENT: BPF_MAX_SUBPROGS, the most functions a program can have.
const maxPending = 256

// Tracker follows the programs of one recording. Feed it every record, in
// order. It is not safe for concurrent use.
type Tracker struct {
	rec  Recording
	opts Options
	// pending are, per stream, the functions registered since the
	// stream's last BPF_EVENT.
	pending map[int][]*Func
	// registered are the registered functions, by address.
	registered addrIndex
	// registeredNames counts the bytes of the registered functions' names.
	registeredNames int
	// loaded are the programs loaded and not unloaded, by id;
	// loadedFuncs counts their functions, loadedNames the bytes of their
	// names.
	loaded      map[uint32]*Program
	loadedFuncs int
	loadedNames int
	// history are the functions of the programs loaded during the
	// recording, by name (History): those loaded or registered, and of the
	// gone ones the first MaxRecordFuncs of each name (goneKept counts
	// them, extra the others). gone are the kept ones, oldest first from
	// goneHead; goneFuncs and goneNames count the functions of their
	// programs and the bytes of their names (pin); forgotten counts those
	// dropped to keep MaxHistory and MaxNameBytes.
	history   map[string][]*Func
	goneKept  map[string]int
	extra     map[string]goneTally
	gone      []*Func
	goneHead  int
	goneFuncs int
	goneNames int
	forgotten int
	dropped   int // functions dropped from the maps since they were made
	// called are the same functions by the function name after the tag
	// (History): RecordFuncs looks them up per BPF_METADATA record.
	called map[string][]*Func
	// calledCache is calledDuring's, dropped by every record that
	// registers a function or loads a program.
	calledCache  map[string]calledFuncs
	finishedInit bool
	// mem is what all of the above takes, from the process's memory
	// budget (internal/budget).
	mem budget.Meter
	// open are, per stream of a recording read newest first (backward),
	// the program the kernel loaded whose BPF_EVENT came last, which the
	// KSYMBOLs that follow are functions of.
	open map[int]*Program
	// order counts samples in perf's order (Options.Samples).
	order sampleOrder
}

// What a Tracker keeps, in bytes, beside the names (for the memory
// budget): a Func and its place in each index that has it, a loaded
// Program and its place in the map of loaded ones, and a name the history
// counts.
const (
	funcCost    = 128
	programCost = 192
	tallyCost   = 64
)

// charge keeps the tracker's reservation of the memory budget in step
// with what it keeps, and adding the functions and programs given: every
// function once per part it is in (registered, loaded, gone), with its
// name, and once more in the history's maps.
func (t *Tracker) charge(registered, programs int) error {
	funcs := t.registered.n + registered + t.loadedFuncs + t.goneFuncs
	if t.opts.History {
		funcs += t.loadedFuncs + t.goneFuncs
	}
	size := funcs*funcCost + t.registeredNames + t.loadedNames + t.goneNames +
		(len(t.loaded)+programs)*programCost + (len(t.goneKept)+len(t.extra))*tallyCost
	return t.mem.Set(int64(size))
}

// Close gives back the memory budget the tracker holds. It may be used no
// more.
func (t *Tracker) Close() {
	t.mem.Close()
	t.order.mem.Close()
}

// New returns a tracker of recording r.
func New(r Recording, opts Options) *Tracker {
	return &Tracker{rec: r, opts: opts, pending: map[int][]*Func{}, loaded: map[uint32]*Program{},
		history: map[string][]*Func{}, called: map[string][]*Func{}, goneKept: map[string]int{}, extra: map[string]goneTally{}, open: map[int]*Program{},
		mem: budget.Meter{What: "BPF functions and programs"}, order: sampleOrder{mem: budget.Meter{What: "samples waiting for perf's order"}}}
}

// Feed takes the next record of the recording.
func (t *Tracker) Feed(rec *perfdata.Record) (Update, error) {
	return t.FeedStream(rec, 0)
}

// FeedStream takes the next record of the recording, read from stream
// (a CPU's ring buffer): a program's KSYMBOLs and BPF_EVENT come in one stream.
func (t *Tracker) FeedStream(rec *perfdata.Record, stream int) (Update, error) {
	switch rec.Header.Type {
	case perfdata.RecordFinishedInit:
		t.finishedInit = true
		// A BPF_EVENT after it is never of the KSYMBOLs before it: perf
		// writes FINISHED_INIT between what it synthesizes and what the
		// kernel writes (write_finished_init()), and in a recording
		// synthesized at its tail (perf record --tail-synthesize, implied
		// by --overwrite) the kernel's records, read newest first from a
		// backward ring buffer, end in KSYMBOLs whose BPF_EVENT came before.
		clear(t.pending)
		clear(t.open)
	case perfdata.RecordSample:
		if t.opts.Samples {
			t.sample(rec.Header.Misc, t.rec.Events().Sample(rec.Raw))
		}
	case perfdata.RecordFinishedRound:
		if t.opts.Samples {
			t.round()
		}
	case perfdata.RecordKSymbol:
		return t.feedKSymbol(rec, stream)
	case perfdata.RecordBPFEvent:
		return t.feedBPFEvent(rec, stream)
	}
	return Update{}, nil
}

// Sample takes a SAMPLE record's fields (Events.Sample's) and its
// header's misc, as Feed does (Options.Samples): for a caller that decoded
// them already.
func (t *Tracker) Sample(misc uint16, f perfdata.SampleFields) {
	if t.opts.Samples {
		t.sample(misc, f)
	}
}

// Round takes a FINISHED_ROUND record, as Feed does.
func (t *Tracker) Round() {
	if t.opts.Samples {
		t.round()
	}
}

// feedKSymbol registers or unregisters a BPF function: of the program
// whose BPF_EVENT came before it in a backward recording (open), or
// pending for the BPF_EVENT that follows.
func (t *Tracker) feedKSymbol(rec *perfdata.Record, stream int) (Update, error) {
	bo := t.rec.ByteOrder()
	k, err := perfdata.DecodeKSymbol(rec.Raw, bo)
	if err != nil {
		return Update{}, fmt.Errorf("%w, at %#x", err, rec.Offset)
	}
	if !k.BPF() {
		return Update{}, nil
	}
	if k.Unregister() {
		delete(t.open, stream)
		if t.opts.Samples {
			t.viewKSymbol(rec, nil, k.Addr)
		}
		f := t.unregister(k)
		t.charge(0, 0) // what moves to the history was counted: no more
		return Update{Func: f}, nil
	}
	f := &Func{Addr: k.Addr, Len: k.Len, Name: k.Name, Offset: rec.Offset, Part: rec.Part}
	p := t.open[stream]
	if p != nil && !isTrampoline(k.Name) {
		// a function of the program whose BPF_EVENT came before
		switch {
		case t.loadedFuncs+1 > MaxFuncs:
			return Update{}, fmt.Errorf("KSYMBOL at %#x: %w (%d functions of the programs loaded at once)", rec.Offset, ErrTooMany, MaxFuncs)
		case t.loadedNames+len(f.Name) > MaxNameBytes:
			return Update{}, fmt.Errorf("KSYMBOL at %#x: %w (%d MiB of names of the functions of the programs loaded at once)", rec.Offset, ErrTooMany, MaxNameBytes>>20)
		case len(p.Funcs) >= maxPending:
			p = nil
		}
	}
	if t.opts.Samples {
		t.twin(rec, f)
	}
	if err := t.register(f); err != nil {
		return Update{}, fmt.Errorf("KSYMBOL at %#x: %w", rec.Offset, err)
	}
	if t.opts.Samples {
		t.viewKSymbol(rec, f, f.Addr)
	}
	if p != nil && !isTrampoline(k.Name) {
		p.Funcs = slices.Insert(p.Funcs, 0, f) // the main function comes last
		f.Program = p
		t.loadedFuncs++
		t.loadedNames += len(f.Name)
		if t.opts.History {
			t.keep(f)
		}
		t.calledCache = nil
		if err := t.charge(0, 0); err != nil {
			return Update{}, fmt.Errorf("KSYMBOL at %#x: %w", rec.Offset, err)
		}
	} else if !isTrampoline(k.Name) {
		p := append(t.pending[stream], f)
		if len(p) > maxPending {
			p = slices.Delete(p, 0, len(p)-maxPending)
		}
		t.pending[stream] = p
	}
	return Update{Func: f}, nil
}

// feedBPFEvent loads or unloads a program, with the KSYMBOLs pending
// before a load.
func (t *Tracker) feedBPFEvent(rec *perfdata.Record, stream int) (Update, error) {
	bo := t.rec.ByteOrder()
	e, err := perfdata.DecodeBPFEvent(rec.Raw, bo)
	if err != nil {
		return Update{}, fmt.Errorf("%w, at %#x", err, rec.Offset)
	}
	funcs := t.pending[stream]
	delete(t.pending, stream)
	delete(t.open, stream)
	backward := !t.synthesized(rec) && t.backward()
	if backward {
		funcs = nil // the KSYMBOLs before are a later load's
	}
	switch e.Type {
	case perfdata.BPFEventProgLoad:
		return t.load(rec, stream, e, funcs, backward)
	case perfdata.BPFEventProgUnload:
		p := t.loaded[e.ID]
		if p == nil || p.Tag != e.Tag {
			return Update{}, nil
		}
		p.Unloaded = true
		t.forget(p)
		t.charge(0, 0)
		return Update{Unloaded: p}, nil
	}
	return Update{}, nil
}

// load is a PROG_LOAD BPF_EVENT of the program e, with funcs.
func (t *Tracker) load(rec *perfdata.Record, stream int, e perfdata.BPFEvent, funcs []*Func, backward bool) (Update, error) {
	old := t.loaded[e.ID] // a load of an id not unloaded replaces it
	if old == nil && len(t.loaded) >= MaxPrograms {
		return Update{}, fmt.Errorf("BPF_EVENT at %#x: %w (%d programs loaded at once)", rec.Offset, ErrTooMany, MaxPrograms)
	}
	// The functions of the loaded programs are kept, registered or
	// not: they count against MaxFuncs and MaxNameBytes too.
	var oldFuncs []*Func
	if old != nil {
		oldFuncs = old.Funcs
	}
	names := nameBytes(funcs)
	switch {
	case t.loadedFuncs-len(oldFuncs)+len(funcs) > MaxFuncs:
		return Update{}, fmt.Errorf("BPF_EVENT at %#x: %w (%d functions of the programs loaded at once)", rec.Offset, ErrTooMany, MaxFuncs)
	case t.loadedNames-nameBytes(oldFuncs)+names > MaxNameBytes:
		return Update{}, fmt.Errorf("BPF_EVENT at %#x: %w (%d MiB of names of the functions of the programs loaded at once)", rec.Offset, ErrTooMany, MaxNameBytes>>20)
	}
	if err := t.charge(0, 1); err != nil {
		return Update{}, fmt.Errorf("BPF_EVENT at %#x: %w", rec.Offset, err)
	}
	t.forget(old)
	t.loadedFuncs += len(funcs)
	t.loadedNames += names
	p := &Program{ID: e.ID, Tag: e.Tag, Funcs: funcs, Offset: rec.Offset, Outer: rec.Outer, Synthesized: t.synthesized(rec), Time: t.time(rec)}
	for _, f := range funcs {
		f.Program = p
	}
	t.loaded[e.ID] = p
	if t.opts.History && !p.Synthesized {
		for _, f := range funcs {
			t.keep(f)
		}
	}
	t.calledCache = nil
	if backward {
		t.open[stream] = p
	}
	return Update{Loaded: p, Replaced: old}, nil
}

// twin links f, a function a KSYMBOL registers, with the kernel's
// KSYMBOL of the same load of it if perf synthesized f: perf record
// --overwrite and --tail-synthesize synthesize the programs loaded at
// the end at the tail, after the kernel's KSYMBOLs of their loads, but
// deliver them first (they have no time: sampleOrder), so that perf's map
// at the address is the synthesized function's, the kernel's KSYMBOL
// adds a symbol to it, and the samples perf counts there are the load's
// (and its show record's, inject's program's). The kernel's is the
// function the latest KSYMBOL at its address, by time, registers
// (latestAt), of its length and function name (perf names a program's
// main function after the function's tag, the kernel after the
// program's; perf 7.2's tail has no BPF_EVENT to tell the program by).
func (t *Tracker) twin(rec *perfdata.Record, f *Func) {
	if ts, _ := t.rec.Events().TrailerTime(rec.Raw); ts != 0 {
		return
	}
	f.synth = true
	g := t.order.latestAt(f.Addr)
	if g == nil || g.synth || g.Len != f.Len || g.twinOf != nil || !sameFunction(g.Name, f.Name) {
		return
	}
	f.twin, g.twinOf = g, f
}

// sameFunction tells two names of one function: the same, or
// bpf_prog_<tag>_<function> of one function name.
func sameFunction(a, b string) bool {
	_, fa, oka := perfdata.ParseBPFProgName(a)
	_, fb, okb := perfdata.ParseBPFProgName(b)
	return a == b || oka && okb && fa != "" && fa == fb
}

// isTrampoline tells the KSYMBOLs that belong to no program: perf
// synthesizes them from /proc/kallsyms after all programs
// (perf_event__synthesize_bpf_events()), the kernel emits them with no
// BPF_EVENT.
func isTrampoline(name string) bool {
	return strings.HasPrefix(name, "bpf_trampoline_") || strings.HasPrefix(name, "bpf_dispatcher_")
}

// forget drops loaded program p (nil: none).
func (t *Tracker) forget(p *Program) {
	if p == nil {
		return
	}
	delete(t.loaded, p.ID)
	p.gone = true
	t.loadedFuncs -= len(p.Funcs)
	t.loadedNames -= nameBytes(p.Funcs)
	for _, f := range p.Funcs {
		t.retire(f)
	}
}

// nameBytes is the bytes of the functions' names.
func nameBytes(funcs []*Func) int {
	n := 0
	for _, f := range funcs {
		n += len(f.Name)
	}
	return n
}

// register adds a function; one at the same address replaces it.
func (t *Tracker) register(f *Func) error {
	old := t.registered.get(f.Addr)
	oldName := 0
	if old != nil {
		oldName = len(old.Name)
	}
	switch {
	case old == nil && t.registered.n >= MaxFuncs:
		return fmt.Errorf("%w (%d)", ErrTooMany, MaxFuncs)
	case t.registeredNames-oldName+len(f.Name) > MaxNameBytes:
		return fmt.Errorf("%w (%d MiB of function names)", ErrTooMany, MaxNameBytes>>20)
	}
	added := 0
	if old == nil {
		added = 1
	}
	t.registeredNames += len(f.Name) - oldName
	err := t.charge(added, 0)
	t.registeredNames -= len(f.Name) - oldName
	if err != nil {
		return err
	}
	t.registered.put(f)
	f.registered = true
	t.registeredNames += len(f.Name) - oldName
	t.calledCache = nil
	if old != nil {
		old.registered = false
		t.retire(old)
	}
	return nil
}

// unregister removes the function registered at k's address with k's name.
func (t *Tracker) unregister(k perfdata.KSymbol) *Func {
	// Not a later symbol at that address.
	f := t.registered.remove(k.Addr, func(f *Func) bool { return f.Name == k.Name })
	if f != nil {
		f.Unregistered, f.registered = true, false
		t.registeredNames -= len(f.Name)
		t.retire(f)
	}
	return f
}

// time is the time of a BPF_EVENT record, 0 if it has none.
func (t *Tracker) time(rec *perfdata.Record) uint64 {
	if rec.Compressed() {
		return 0
	}
	ts, _ := t.rec.Events().TimeAfter(rec.Raw, perfdata.BPFEventFieldsSize)
	return ts
}

// backward tells a recording whose kernel records perf read newest first
// (an event with write_backward: perf record --overwrite).
func (t *Tracker) backward() bool {
	for _, a := range t.rec.Events().Attrs() {
		if a.WriteBackward() {
			return true
		}
	}
	return false
}

// InitFinished reports whether a FINISHED_INIT has come: perf wrote what it
// synthesized of the programs it found loaded (write_finished_init() after
// record__synthesize()), at the start of a recording, or at its end with
// perf record --tail-synthesize or --overwrite.
func (t *Tracker) InitFinished() bool { return t.finishedInit }

// synthesized tells a BPF_EVENT perf synthesized for a program it found
// loaded from one the kernel emitted for a program loaded while recording.
func (t *Tracker) synthesized(rec *perfdata.Record) bool {
	if rec.Compressed() {
		return false
	}
	n := t.rec.IDHeaderSize()
	if n == 0 {
		if len(t.rec.Events().Attrs()) == 0 {
			// A pipe stream whose HEADER_ATTRs have not come: perf record
			// --tail-synthesize writes them with the rest of what it
			// synthesizes (perf_event__synthesize_for_pipe() in
			// record__synthesize(rec, true)), after FINISHED_INIT; what
			// comes before is the kernel's.
			return t.finishedInit
		}
		return !t.finishedInit
	}
	// The sample_id follows the record's fields; it is not always at the
	// end. The kernel's perf_event_bpf_output() (as perf_event_ksymbol_output())
	// adds each listening event's id_header_size to the size of the one
	// record it shares between them and never restores it, so while other
	// perf sessions listen, a recording gets records that are longer than
	// their fields and sample_id and end in bytes the kernel never wrote.
	end := perfdata.BPFEventFieldsSize + n
	if end > len(rec.Raw) {
		return false
	}
	for _, b := range rec.Raw[perfdata.BPFEventFieldsSize:end] {
		if b != 0 {
			return false
		}
	}
	return true
}

// FuncAt returns the registered function that address addr is in, or nil.
func (t *Tracker) FuncAt(addr uint64) *Func {
	if f := t.registered.floor(addr); f != nil && f.Contains(addr) {
		return f
	}
	return nil
}

// Func returns the function registered at addr, or nil.
func (t *Tracker) Func(addr uint64) *Func {
	return t.registered.get(addr)
}

// Forgotten counts the functions of programs gone that History no longer
// keeps (MaxHistory): a BPF_METADATA record at the end may be one's.
func (t *Tracker) Forgotten() int { return t.forgotten }

// Loaded returns the program with id loaded now, or nil.
func (t *Tracker) Loaded(id uint32) *Program { return t.loaded[id] }

// FuncsNamed returns the functions of programs loaded during the
// recording registered under name so far (Options.History): those loaded
// or registered now, and MaxRecordFuncs of those gone, of the last
// MaxHistory gone.
func (t *Tracker) FuncsNamed(name string) []*Func { return t.history[name] }

// FuncsCalled returns the functions FuncsNamed has whose name is
// bpf_prog_<any tag>_fn (Options.History), in recording order.
func (t *Tracker) FuncsCalled(fn string) []*Func {
	out := slices.Clone(t.called[fn])
	slices.SortFunc(out, recordOrder)
	return out
}

// recordOrder orders functions as their KSYMBOL records stand in the
// recording: by data file (a directory recording's offsets start again in
// each), then by offset.
func recordOrder(a, b *Func) int {
	return cmp.Or(cmp.Compare(a.Part, b.Part), cmp.Compare(a.Offset, b.Offset))
}

// Match says how a BPF_METADATA record was given its functions.
type Match int

const (
	// MatchNone: the recording has no function the record can belong to.
	MatchNone Match = iota
	// MatchName: the functions have the record's name.
	MatchName
	// MatchFunction: only the function name after the tag agrees. perf
	// names the main function of a program loaded during a recording with
	// the function's tag, the kernel's KSYMBOL with the program's
	// (bpf_metadata_create() and the kernel's bpf_prog_ksym_set_name()).
	MatchFunction
	// MatchAmbiguous: the record belongs to one of the functions, or to a
	// load the recording has no KSYMBOL of, and which cannot be told:
	// several functions of other names have the function name, or more
	// records at the end have the name than functions do.
	MatchAmbiguous
	// MatchTag: only the tag agrees. perf names a record's function
	// from the BTF of the map the metadata is in (bpf_metadata_create()
	// hands synthesize_bpf_prog_name() the map's btf), which is not the
	// program's when it reuses another object's map or was loaded by
	// cilium/ebpf (whose maps have BTF of their own).
	MatchTag
)

var matchNames = []string{MatchNone: "none", MatchName: "name", MatchFunction: "function", MatchAmbiguous: "ambiguous", MatchTag: "tag"}

func (m Match) String() string { return enum.String(matchNames, m, "Match") }

// RecordFuncs returns the functions a BPF_METADATA record with prog_name
// name belongs to (Options.History), as perf's placement of the record
// says. after is the program whose BPF_EVENT the record follows (only
// BPF_METADATA records between), or nil: perf writes the records of a
// program it found loaded right after its BPF_EVENT
// (perf_event__synthesize_one_bpf_prog()), so a function of that program
// with the name is the one. Any other record perf wrote at the end, for a
// program loaded during the recording
// (perf_event__synthesize_final_bpf_metadata() writes only those the
// side-band thread saw loading): it belongs to the functions of such
// programs with the name (several loads of one function), else to those
// with the same function name after the tag; never to a program perf
// found loaded, whose KSYMBOL can have the same name.
func (t *Tracker) RecordFuncs(name string, after *Program) ([]*Func, Match) {
	fs, m, _ := t.recordFuncs(name, after)
	return fs, m
}

// recordFuncs is RecordFuncs, with the functions of the names found the
// history counts without keeping them.
func (t *Tracker) recordFuncs(name string, after *Program) ([]*Func, Match, goneTally) {
	if after != nil {
		for _, f := range after.Funcs {
			if f.Name == name {
				return []*Func{f}, MatchName, goneTally{}
			}
		}
	}
	var fs []*Func
	for _, f := range t.history[name] {
		if loadedDuring(f) {
			fs = append(fs, f)
		}
	}
	if len(fs) > 0 {
		return fs, MatchName, t.extraOf(fs)
	}
	_, fn, ok := perfdata.ParseBPFProgName(name)
	if !ok {
		return nil, MatchNone, goneTally{}
	}
	c := t.calledDuring(fn)
	return c.funcs, c.match, t.extraOf(c.funcs)
}

// loadedDuringByTag returns the functions of programs loaded during the
// recording whose names carry a tag want wants, by tag, in recording
// order: for the BPF_METADATA records at the end that perf named from
// another BTF than the program's (MatchTag). One pass over every function
// ever registered (History), for the records no name matched.
func (t *Tracker) loadedDuringByTag(want func(perfdata.BPFTag) bool) map[perfdata.BPFTag][]*Func {
	byTag := map[perfdata.BPFTag][]*Func{}
	for name, fs := range t.history {
		tag, _, ok := perfdata.ParseBPFProgName(name)
		if !ok || !want(tag) {
			continue
		}
		for _, f := range fs {
			if loadedDuring(f) {
				byTag[tag] = append(byTag[tag], f)
			}
		}
	}
	for _, fs := range byTag {
		slices.SortFunc(fs, recordOrder)
	}
	return byTag
}

// loadedDuring tells a function of a program the kernel announced loading
// during the recording.
func loadedDuring(f *Func) bool { return f.Program != nil && !f.Program.Synthesized }

// calledFuncs are the functions of programs loaded during the recording
// with one function name after the tag, and how a record of that function
// name and no function's name matches them.
type calledFuncs struct {
	funcs []*Func
	match Match
}

// calledDuring returns the functions of programs loaded during the
// recording whose function name after the tag is fn, in recording order,
// computed once per function name until the next record that registers a
// function or loads a program.
func (t *Tracker) calledDuring(fn string) calledFuncs {
	if c, ok := t.calledCache[fn]; ok {
		return c
	}
	var c calledFuncs
	for _, f := range t.called[fn] {
		if loadedDuring(f) {
			c.funcs = append(c.funcs, f)
		}
	}
	slices.SortFunc(c.funcs, recordOrder)
	if len(c.funcs) > 0 {
		c.match = MatchFunction
		if slices.ContainsFunc(c.funcs, func(f *Func) bool { return f.Name != c.funcs[0].Name }) {
			c.match = MatchAmbiguous
		}
	}
	if t.calledCache == nil {
		t.calledCache = map[string]calledFuncs{}
	}
	t.calledCache[fn] = c
	return c
}
