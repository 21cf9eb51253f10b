// Package watch follows BPF program loads as they happen, into a snapshot or a journal.
//
// It follows BPF program loads as they happen, the way perf record's
// side-band thread does (a dummy perf event with attr.bpf_event on every
// CPU, internal/perfevent), and reads each new program at once, so that
// programs unloaded before a recording is injected can still be labelled,
// from a snapshot of what was read.
//
// A Watcher hands every program it reads to its caller as soon as the read
// is final (Options.Emit), and keeps only what it needs to go on: the
// programs it holds or will read again, and the ids of the programs read
// that are still loaded. Its memory follows what is loaded at one time, not
// how long it runs. StartSnapshot writes what it reads into a snapshot as
// it goes (bpfmeta watch).
//
// It does not read a program itself (bpfprog/live does, once a load is
// seen), nor define the snapshot file (bpfprog/snapshot), nor open the
// events and their ring buffers (internal/perfevent); which functions a
// load announced is told by package bpftrack, fed each CPU's records.
package watch

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/perfevent"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Options configure a Watcher.
type Options struct {
	// RingPages is the size of each CPU's ring buffer in pages, a power of
	// two; 0 means 64 (perfevent's default).
	RingPages int
	// Emit gets every program read, once its read is final (after the
	// re-reads of the bind race), from the goroutine that runs the Watcher.
	// An error stops the Watcher.
	Emit func(*bpfprog.Program) error
	// Unload, if not nil, gets the PROG_UNLOAD of every program Emit got
	// (or will get: a program held is not unloaded before it is emitted),
	// with the time of its BPF_EVENT on perfevent.Clock. An error stops
	// the Watcher.
	Unload func(id uint32, tag perfdata.BPFTag, time uint64) error
	// Lost, if not nil, gets every program the Watcher saw load and could
	// not read (m), and every count of records the kernel dropped
	// (records: PERF_RECORD_LOST, loads that may be unknown), as they
	// happen. An error stops the Watcher.
	Lost func(m *MissedProgram, records uint64) error
}

// Re-reading a program that shows no metadata yet (the libbpf bind race, see
// Watcher).
const (
	rereadFirstDelay = time.Millisecond
	// maxRereads re-reads come 1, 2, 4, ... 128 ms after each other: the
	// last one 255 ms after the first read.
	maxRereads = 8
	// bindWindow: a program loaded longer ago than this is not re-read;
	// its loader has bound what it binds (libbpf does right after loading).
	bindWindow = time.Second
)

// MaxMissedListed is how many missed programs Stats lists; the count is
// exact.
const MaxMissedListed = 100

// Watcher follows program loads.
//
// New opens the events, enabled, and then reads every program already
// loaded: once it returns no load can be missed, and the caller can start
// the workload. Run follows the PROG_LOAD BPF_EVENTs: for each it takes a
// reference to the program at once (BPF_PROG_GET_FD_BY_ID, about 0.1 ms after
// the load; every PROG_LOAD in the buffers is held before any program is
// read), which keeps the program loaded while it is read, and reads it with
// live.Kernel.Lookup (by id and the event's tag). A program that is gone before it
// is held is reported in Stats.Missed, never guessed.
//
// The libbpf bind race. libbpf binds .rodata to a program
// (BPF_PROG_BIND_MAP) only after BPF_PROG_LOAD has returned, and the kernel
// emits the PROG_LOAD event inside BPF_PROG_LOAD. A program that does not
// reference its .rodata itself therefore shows no metadata when it is read
// at its event, and perf's side-band thread, which reads it at that moment,
// usually records none: perf 7.2 wrote BPF_METADATA for 1 of 20 such
// programs loaded by bpftool during a recording on the development machine.
// The Watcher re-reads a program loaded less than a second ago that shows no
// exact metadata, while holding it, after 1, 2, 4, ... 128 ms (at most 8
// times, 255 ms in all), and keeps the best answer: exact metadata, else
// metadata with an error (MetadataErr), else none; between equals, the
// first. That is the metadata the program carries for the rest of its life,
// what bpftool prog show prints, and what perf records for it when perf
// record starts after the bind; it differs from what perf records during a
// recording only where perf read too early, and there perf's answer is a
// matter of scheduling. Programs whose metadata came on a re-read are
// counted in Stats.LateMetadata.
//
// Lost records. When a ring buffer is full the kernel drops records and says
// so with PERF_RECORD_LOST, but only with the next record it writes into
// that buffer. On a PERF_RECORD_LOST, on a buffer found nearly full
// (perfevent's Overrun), and once more when Run stops, the Watcher walks
// the loaded programs again and reads those it does not know, so that every
// program still loaded is read; a program loaded and unloaded within the
// lost records cannot be known, and Stats.LostRecords says that there may
// be some.
//
// Holding a program delays its unload (its PROG_UNLOAD BPF_EVENT, the removal
// of its kallsyms) by the time of the read, or of the re-reads. Programs
// loaded on a CPU that comes online after New are not seen: perf's side-band
// has the same limit.
//
// A Watcher is used by one goroutine: New, Run, then Stats, then Close.
type Watcher struct {
	live   *live.Kernel
	sb     *perfevent.SideBand
	emit   func(*bpfprog.Program) error
	unload func(uint32, perfdata.BPFTag, uint64) error
	lost   func(*MissedProgram, uint64) error
	track  *bpftrack.Tracker

	// known are the programs read (or being read) that are still loaded,
	// by id, with their tag: a walk does not read them again.
	known   map[uint32]perfdata.BPFTag
	unread  []*watched // held after their PROG_LOAD, not read yet
	pending []*watched // read, awaiting a re-read
	missed  []MissedProgram
	rewalk  bool // records were lost: walk the loaded programs again
	stats   Stats
	ran     bool
	// onDone, for tests, sees every program whose read is final.
	onDone func(*watched)
}

// watched is a program the Watcher holds.
type watched struct {
	id   uint32
	ev   *loadEvent       // its PROG_LOAD; nil if found by a walk
	p    *bpfprog.Program // nil until read
	hold *ebpf.Program    // keeps the program loaded until its last re-read
	from origin
	// late: a re-read found better metadata than the first read.
	late    bool
	rereads int
	due     time.Time // of the next re-read
}

// origin is how the Watcher came to read a program.
type origin int

const (
	fromStart  origin = iota // the walk of New
	fromEvent                // its PROG_LOAD BPF_EVENT
	fromRewalk               // a walk after lost records, or the last walk
)

// loadEvent is what a PROG_LOAD BPF_EVENT says about a program.
type loadEvent struct {
	tag  perfdata.BPFTag
	pid  uint32
	time uint64 // perfevent.Clock ns
	name string // from the program's KSYMBOL, if seen
}

// MissedProgram is a program the Watcher saw load but could not read.
type MissedProgram struct {
	ID  uint32
	Tag perfdata.BPFTag // from its BPF_EVENT; zero if found by a walk
	// Name is the program's main function name from its KSYMBOL (what
	// follows "bpf_prog_<tag>_"), empty if that record was not seen.
	Name string
	PID  uint32 // the process that loaded it; 0 if found by a walk
	// Err wraps ErrNotFound when the program was unloaded before it could be
	// read, or ErrTagMismatch when its id belonged to another program by
	// then; otherwise it says why reading it failed.
	Err error
}

// Unloaded reports whether the program was gone before it could be read.
func (m MissedProgram) Unloaded() bool {
	return errors.Is(m.Err, bpfprog.ErrNotFound) || errors.Is(m.Err, bpfprog.ErrTagMismatch)
}

// Stats says what a Watcher saw.
type Stats struct {
	AtStart int // programs loaded when New walked them
	Loaded  int // programs read after their PROG_LOAD while watching (Recovered included)
	// Recovered counts the programs of Loaded found by a walk after lost
	// records or when Run stopped, not by their BPF_EVENT.
	Recovered int
	// Unloaded counts the programs read whose PROG_UNLOAD came while watching.
	Unloaded     int
	WithMetadata int // programs read with metadata (Program.HasMetadata)
	// LateMetadata counts the programs of WithMetadata whose metadata
	// appeared only on a re-read (bound after load, as libbpf binds .rodata).
	LateMetadata int
	// Lost and Failed count the programs whose load was seen but that
	// could not be read: gone first (MissedProgram.Unloaded), or another
	// error. Missed lists the first MaxMissedListed of them, by id.
	Lost, Failed int
	Missed       []MissedProgram
	// LostRecords is the number of records the kernel dropped
	// (PERF_RECORD_LOST): there may have been program loads the Watcher
	// knows nothing of. Rewalks counts the walks, after lost records or a
	// nearly full ring buffer, that looked for those still loaded (the walk
	// when Run stops is not counted).
	LostRecords uint64
	Rewalks     int
	Rereads     int // re-reads of programs without exact metadata
	// MaxReadDelay is the longest time from a PROG_LOAD to the Watcher
	// holding the program.
	MaxReadDelay time.Duration
}

// New starts following program loads: it opens the events on every online
// CPU, enabled, then reads every program already loaded and emits them.
// Needs root (CAP_PERFMON and CAP_SYS_ADMIN).
func New(k *live.Kernel, opts Options) (*Watcher, error) {
	sb, err := perfevent.Open(perfevent.Options{RingPages: opts.RingPages})
	if err != nil {
		return nil, fmt.Errorf("following BPF program loads: %w", err)
	}
	emit := opts.Emit
	if emit == nil {
		emit = func(*bpfprog.Program) error { return nil }
	}
	w := &Watcher{
		live:   k,
		sb:     sb,
		emit:   emit,
		unload: opts.Unload,
		lost:   opts.Lost,
		track:  bpftrack.New(nativeRecords{}, bpftrack.Options{}),
		known:  make(map[uint32]perfdata.BPFTag),
	}
	if err := w.walk(fromStart); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// nativeRecords describes the side band's records to the tracker: the
// host's byte order; the tracker needs nothing else of them.
type nativeRecords struct{}

func (nativeRecords) ByteOrder() binary.ByteOrder { return binary.NativeEndian }
func (nativeRecords) IDHeaderSize() int           { return 0 }
func (nativeRecords) Events() *perfdata.Events    { return &perfdata.Events{} }

// Run follows program loads until ctx is done. Then it reads what is left in
// the ring buffers (the events of every load that completed before), walks
// the loaded programs once more, re-reads the programs still awaiting a
// re-read one last time, emits them, and returns. An error means the Watcher
// could not go on (a ring buffer, a permission problem, or Emit's error);
// reading one program failing is not one (see Stats.Missed).
func (w *Watcher) Run(ctx context.Context) error {
	if w.ran {
		return errors.New("watch: Run called twice")
	}
	w.ran = true
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		w.sb.Wake()
		close(woken)
	})
	defer func() {
		if !stop() {
			<-woken // Wake must not run into Close
		}
	}()
	for {
		if err := w.drain(); err != nil {
			return err
		}
		// One re-read at a time, the buffers looked at in between.
		if done, err := w.rereadDue(time.Now()); err != nil {
			return err
		} else if done {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		if err := w.sb.Wait(w.nextReread()); err != nil {
			return fmt.Errorf("following BPF program loads: %w", err)
		}
	}
	if err := w.drain(); err != nil {
		return err
	}
	if err := w.walk(fromRewalk); err != nil {
		return err
	}
	for len(w.pending) > 0 {
		wp := w.pending[0]
		w.pending = w.pending[1:]
		w.reread(wp)
		if err := w.done(wp); err != nil {
			return err
		}
	}
	return nil
}

// drain handles every record in the ring buffers, reads the programs whose
// PROG_LOAD came, and walks the loaded programs again after lost records,
// until there is nothing left to do.
//
// Holding a program is one system call, reading it many (and its BTF): so
// every program whose PROG_LOAD is in the buffers is held first, and the
// buffers are looked at again before each read, which keeps the time from a
// load to its hold short even in a burst of loads.
func (w *Watcher) drain() error {
	for {
		for w.sb.Next() {
			if err := w.handle(w.sb.Record()); err != nil {
				return err
			}
		}
		if err := w.sb.Err(); err != nil {
			return fmt.Errorf("following BPF program loads: %w", err)
		}
		if len(w.unread) > 0 {
			wp := w.unread[0]
			w.unread[0] = nil
			w.unread = w.unread[1:]
			if err := w.read(wp); err != nil {
				return err
			}
			continue
		}
		overrun := w.sb.Overrun()
		if !w.rewalk && !overrun {
			return nil
		}
		w.rewalk = false
		w.stats.Rewalks++
		if err := w.walk(fromRewalk); err != nil {
			return err
		}
	}
}

func (w *Watcher) handle(r *perfevent.Record) error {
	bad := func(err error) error {
		return fmt.Errorf("following BPF program loads: CPU %d: %w", r.CPU, err)
	}
	if r.Header.Type == perfdata.RecordLost {
		l, err := perfevent.DecodeLost(r.Raw)
		if err != nil {
			return bad(err)
		}
		w.stats.LostRecords += l.Lost
		w.rewalk = true
		if w.lost != nil {
			return w.lost(nil, l.Lost)
		}
		return nil
	}
	// The kernel writes a program's KSYMBOLs just before its BPF_EVENT
	// (perf_event_bpf_event()), on the same CPU: one stream per CPU.
	u, err := w.track.FeedStream(&perfdata.Record{Header: r.Header, Raw: r.Raw, Offset: -1, Outer: -1}, r.CPU)
	if err != nil {
		return bad(err)
	}
	switch {
	case u.Loaded != nil:
		p := u.Loaded
		ev := &loadEvent{tag: p.Tag, pid: r.SampleID.PID, time: r.SampleID.Time}
		for _, f := range p.Funcs {
			if tag, fn, ok := perfdata.ParseBPFProgName(f.Name); ok && tag == p.Tag {
				ev.name = fn // the main function: the kernel names it with the program's tag
				break
			}
		}
		if _, known := w.known[p.ID]; known {
			return nil // read by a walk already
		}
		wp, err := w.hold(p.ID, ev, fromEvent)
		if wp != nil {
			w.unread = append(w.unread, wp)
		}
		return err
	case u.Unloaded != nil:
		if tag, ok := w.known[u.Unloaded.ID]; ok && tag == u.Unloaded.Tag {
			delete(w.known, u.Unloaded.ID)
			w.stats.Unloaded++
			if w.unload != nil {
				return w.unload(u.Unloaded.ID, u.Unloaded.Tag, r.SampleID.Time)
			}
		}
	}
	return nil
}

// walk reads the loaded programs it does not know yet, in id order.
func (w *Watcher) walk(from origin) error {
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing BPF programs after id %d: %w", id, err)
		}
		id = next
		if _, known := w.known[uint32(id)]; known {
			continue
		}
		wp, err := w.hold(uint32(id), nil, from)
		if err != nil {
			return err
		}
		if wp != nil {
			if err := w.read(wp); err != nil {
				return err
			}
		}
	}
}

// hold takes a reference to program id, after its PROG_LOAD (ev set) or
// found by a walk, and returns it to be read; nil if the program is gone or
// cannot be held (recorded as missed). Only a permission error is returned:
// the Watcher cannot work without the permission.
func (w *Watcher) hold(id uint32, ev *loadEvent, from origin) (*watched, error) {
	h, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if ev != nil {
		w.noteDelay(ev.time)
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrPermission):
		return nil, fmt.Errorf("BPF program %d: %w (reading BPF programs by id needs CAP_SYS_ADMIN: run as root)", id, err)
	case errors.Is(err, os.ErrNotExist):
		if ev != nil {
			return nil, w.miss(id, ev, fmt.Errorf("program %d: %w", id, bpfprog.ErrNotFound))
		}
		// A walk: unloaded between BPF_PROG_GET_NEXT_ID and now.
		return nil, nil
	default:
		return nil, w.miss(id, ev, fmt.Errorf("program %d: %w", id, err))
	}
	wp := &watched{id: id, ev: ev, hold: h, from: from}
	var tag perfdata.BPFTag
	if ev != nil {
		tag = ev.tag
	}
	w.known[id] = tag
	return wp, nil
}

// read reads a held program (checking the tag of its PROG_LOAD), and emits
// it unless it is to be read again.
func (w *Watcher) read(wp *watched) error {
	var p *bpfprog.Program
	var err error
	if wp.ev != nil {
		p, err = w.live.Lookup(wp.id, wp.ev.tag)
	} else {
		p, err = w.live.Program(wp.id)
	}
	if err != nil {
		w.release(wp)
		delete(w.known, wp.id)
		if errors.Is(err, os.ErrPermission) {
			return err
		}
		return w.miss(wp.id, wp.ev, err)
	}
	if err := live.CheckAddresses(p); err != nil {
		// A snapshot without addresses labels nothing: stop, as a
		// permission error stops.
		w.release(wp)
		return fmt.Errorf("BPF program %d: %w", wp.id, err)
	}
	wp.p = p
	w.known[wp.id] = p.Tag
	if metadataRank(p) == rankExact || !w.recentlyLoaded(p) {
		return w.done(wp)
	}
	wp.due = time.Now().Add(rereadFirstDelay)
	w.pending = append(w.pending, wp)
	return nil
}

// done lets go of a program whose read is final, counts and emits it.
func (w *Watcher) done(wp *watched) error {
	w.release(wp)
	if w.onDone != nil {
		w.onDone(wp)
	}
	switch wp.from {
	case fromStart:
		w.stats.AtStart++
	case fromRewalk:
		w.stats.Recovered++
		w.stats.Loaded++
	default:
		w.stats.Loaded++
	}
	if wp.p.HasMetadata() {
		w.stats.WithMetadata++
		if wp.late {
			w.stats.LateMetadata++
		}
	}
	return w.emit(wp.p)
}

// miss counts a program that could not be read, and hands it to
// Options.Lost.
func (w *Watcher) miss(id uint32, ev *loadEvent, err error) error {
	m := MissedProgram{ID: id, Err: err}
	if ev != nil {
		m.Tag, m.Name, m.PID = ev.tag, ev.name, ev.pid
	}
	if m.Unloaded() {
		w.stats.Lost++
	} else {
		w.stats.Failed++
	}
	if len(w.missed) < MaxMissedListed {
		w.missed = append(w.missed, m)
	}
	if w.lost != nil {
		return w.lost(&m, 0)
	}
	return nil
}

// noteDelay records how long ago (perfevent.Clock) a PROG_LOAD was written.
func (w *Watcher) noteDelay(at uint64) {
	var ts unix.Timespec
	if unix.ClockGettime(perfevent.Clock, &ts) != nil {
		return
	}
	if now := uint64(ts.Nano()); now > at {
		w.stats.MaxReadDelay = max(w.stats.MaxReadDelay, time.Duration(now-at))
	}
}

// recentlyLoaded reports whether p was loaded less than bindWindow ago
// (bpf_prog_info.load_time is CLOCK_BOOTTIME).
func (w *Watcher) recentlyLoaded(p *bpfprog.Program) bool {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return true
	}
	return time.Duration(ts.Nano())-p.LoadTime < bindWindow
}

// How good a read's metadata is: a re-read replaces a read only if better.
const (
	rankNone  = iota // no metadata
	rankError        // metadata that is not exact, or an error reading it
	rankExact        // exact metadata, or exactly none (too large)
)

func metadataRank(p *bpfprog.Program) int {
	switch {
	case p.Metadata != nil && p.MetadataErr == nil, p.TooLarge != nil:
		return rankExact
	case p.Metadata != nil || p.MetadataErr != nil:
		return rankError
	}
	return rankNone
}

// rereadDue re-reads the first program whose re-read is due, if any, and
// reports whether it did. A program that is done is emitted.
func (w *Watcher) rereadDue(now time.Time) (bool, error) {
	i := slices.IndexFunc(w.pending, func(wp *watched) bool { return !now.Before(wp.due) })
	if i < 0 {
		return false, nil
	}
	if wp := w.pending[i]; !w.reread(wp) {
		w.pending = slices.Delete(w.pending, i, i+1)
		return true, w.done(wp)
	}
	return true, nil
}

// reread reads a held program again, keeps the better answer, and reports
// whether another re-read is to come.
func (w *Watcher) reread(wp *watched) bool {
	wp.rereads++
	w.stats.Rereads++
	p, err := w.live.Lookup(wp.p.ID, wp.p.Tag)
	if err == nil && metadataRank(p) > metadataRank(wp.p) {
		wp.p, wp.late = p, true
	}
	if err != nil || metadataRank(wp.p) == rankExact || wp.rereads >= maxRereads {
		return false
	}
	wp.due = time.Now().Add(rereadFirstDelay << wp.rereads)
	return true
}

// nextReread is how long Wait may sleep: until the next re-read is due, or
// for ever (-1).
func (w *Watcher) nextReread() time.Duration {
	if len(w.pending) == 0 {
		return -1
	}
	next := slices.MinFunc(w.pending, func(a, b *watched) int { return a.due.Compare(b.due) }).due
	return max(time.Until(next), 0)
}

func (w *Watcher) release(wp *watched) {
	if wp.hold != nil {
		wp.hold.Close()
		wp.hold = nil
	}
}

// Stats says what the Watcher saw.
func (w *Watcher) Stats() Stats {
	s := w.stats
	s.Missed = slices.SortedFunc(slices.Values(w.missed), func(a, b MissedProgram) int { return cmp.Compare(a.ID, b.ID) })
	return s
}

// Close stops following program loads and lets go of the programs held.
func (w *Watcher) Close() error {
	for _, wp := range slices.Concat(w.unread, w.pending) {
		w.release(wp)
	}
	w.unread, w.pending = nil, nil
	return w.sb.Close()
}
