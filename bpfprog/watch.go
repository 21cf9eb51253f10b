package bpfprog

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/perfevent"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// WatchOptions configure a Watcher; the zero value is what bpfmeta watch uses.
type WatchOptions struct {
	// RingPages is the size of each CPU's ring buffer in pages, a power of
	// two; 0 means perfevent.DefaultRingPages.
	RingPages int
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

// ksymsPerCPU bounds the KSYMBOL names kept per CPU to name a program that is
// gone before it can be read. BPF trampolines and dispatchers have KSYMBOLs
// without a BPF_EVENT, so the list is not always emptied by one.
const ksymsPerCPU = 64

// Watcher follows BPF program loads as they happen, the way perf record's
// side-band thread does (a dummy perf event with attr.bpf_event on every
// CPU, package perfevent), and reads each new program right away, so that
// programs unloaded before a recording is injected can still be labelled,
// from a snapshot of what the Watcher read.
//
// NewWatcher opens the events, enabled, and then reads every program already
// loaded: once it returns no load can be missed, and the caller can start
// the workload. Run follows the PROG_LOAD BPF_EVENTs: for each it takes a
// reference to the program at once (BPF_PROG_GET_FD_BY_ID, about 0.1 ms after
// the load; every PROG_LOAD in the buffers is held before any program is
// read), which keeps the program loaded while it is read, and reads it with
// Live.Lookup (by id and the event's tag). A program that is gone before it
// is held is reported in WatchStats.Missed, never guessed.
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
// counted in WatchStats.LateMetadata.
//
// Lost records. When a ring buffer is full the kernel drops records and says
// so with PERF_RECORD_LOST, but only with the next record it writes into
// that buffer. On a PERF_RECORD_LOST, on a buffer found nearly full
// (perfevent's Overrun), and once more when Run stops, the Watcher walks
// the loaded programs again and reads those it does not know, so that every
// program still loaded is in the result; a program loaded and unloaded within
// the lost records cannot be known, and WatchStats.LostRecords says that
// there may be some.
//
// Holding a program delays its unload (its PROG_UNLOAD BPF_EVENT, the removal
// of its kallsyms) by the time of the read, or of the re-reads. Programs
// loaded on a CPU that comes online after NewWatcher are not seen: perf's
// side-band has the same limit.
//
// A Watcher is used by one goroutine: NewWatcher, Run, then Programs and
// Stats, then Close.
type Watcher struct {
	live *Live
	sb   *perfevent.SideBand

	progs   map[uint32]*watched
	unread  []*watched // held after their PROG_LOAD, not read yet
	pending []*watched // awaiting a re-read
	missed  map[uint32]MissedProgram
	ksyms   map[int][]string // per CPU: BPF KSYMBOL names since its last PROG_LOAD
	rewalk  bool             // records were lost: walk the loaded programs again
	stats   WatchStats       // the counters; the rest is computed by Stats
	ran     bool
}

// watched is a program the Watcher holds or has read.
type watched struct {
	id   uint32
	ev   *loadEvent    // its PROG_LOAD; nil if found by a walk
	p    *Program      // nil until read
	hold *ebpf.Program // keeps the program loaded until its last re-read
	from origin
	// late: a re-read found better metadata than the first read.
	late bool
	// unloaded: its PROG_UNLOAD BPF_EVENT came while watching.
	unloaded bool
	rereads  int
	due      time.Time // of the next re-read
}

// origin is how the Watcher came to read a program.
type origin int

const (
	fromStart  origin = iota // the walk of NewWatcher
	fromEvent                // its PROG_LOAD BPF_EVENT
	fromRewalk               // a walk after lost records, or the last walk
)

// loadEvent is what a PROG_LOAD BPF_EVENT says about a program.
type loadEvent struct {
	tag  Tag
	pid  uint32
	time uint64 // perfevent.Clock ns
	name string // from the program's KSYMBOL, if seen
}

// MissedProgram is a program the Watcher saw load but could not read.
type MissedProgram struct {
	ID  uint32
	Tag Tag // from its BPF_EVENT; zero if found by a walk
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
	return errors.Is(m.Err, ErrNotFound) || errors.Is(m.Err, ErrTagMismatch)
}

// WatchStats says what a Watcher saw.
type WatchStats struct {
	AtStart int // programs loaded when NewWatcher walked them
	Loaded  int // programs read after their PROG_LOAD while watching (Recovered included)
	// Recovered counts the programs of Loaded found by a walk after lost
	// records or when Run stopped, not by their BPF_EVENT.
	Recovered int
	// Unloaded counts the programs read whose PROG_UNLOAD came while watching.
	Unloaded     int
	WithMetadata int // programs read with exact metadata
	// LateMetadata counts the programs of WithMetadata whose metadata
	// appeared only on a re-read (bound after load, as libbpf binds .rodata).
	LateMetadata int
	// Missed lists, by id, the programs whose load was seen but which
	// could not be read (MissedProgram.Unloaded: gone first).
	Missed []MissedProgram
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

// Lost returns the programs of Missed that were gone before they could be read.
func (s *WatchStats) Lost() []MissedProgram {
	var lost []MissedProgram
	for _, m := range s.Missed {
		if m.Unloaded() {
			lost = append(lost, m)
		}
	}
	return lost
}

// NewWatcher starts following program loads: it opens the events on every
// online CPU, enabled, then reads every program already loaded. Needs root.
func NewWatcher(live *Live, opts WatchOptions) (*Watcher, error) {
	sb, err := perfevent.Open(perfevent.Options{RingPages: opts.RingPages})
	if err != nil {
		return nil, fmt.Errorf("bpfprog: following program loads: %w", err)
	}
	w := &Watcher{
		live:   live,
		sb:     sb,
		progs:  make(map[uint32]*watched),
		missed: make(map[uint32]MissedProgram),
		ksyms:  make(map[int][]string),
	}
	if err := w.walk(fromStart); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Run follows program loads until ctx is done. Then it reads what is left in
// the ring buffers (the events of every load that completed before), walks
// the loaded programs once more, re-reads the programs still awaiting a
// re-read one last time, and returns. An error means the Watcher could not
// go on (a ring buffer or a permission problem); reading one program failing
// is not one (see WatchStats.Missed).
func (w *Watcher) Run(ctx context.Context) error {
	if w.ran {
		return errors.New("bpfprog: Watcher.Run called twice")
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
		if w.rereadDue(time.Now()) {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		if err := w.sb.Wait(w.nextReread()); err != nil {
			return fmt.Errorf("bpfprog: following program loads: %w", err)
		}
	}
	if err := w.drain(); err != nil {
		return err
	}
	if err := w.walk(fromRewalk); err != nil {
		return err
	}
	for _, wp := range w.pending {
		w.reread(wp)
		w.release(wp)
	}
	w.pending = nil
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
			return fmt.Errorf("bpfprog: following program loads: %w", err)
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
		return fmt.Errorf("bpfprog: following program loads: CPU %d: %w", r.CPU, err)
	}
	switch r.Header.Type {
	case perfdata.RecordKSymbol:
		k, err := perfdata.DecodeKSymbol(r.Raw, binary.NativeEndian)
		if err != nil {
			return bad(err)
		}
		if k.Type == perfdata.KSymbolTypeBPF && !k.Unregister() {
			names := w.ksyms[r.CPU]
			if len(names) == ksymsPerCPU {
				names = append(names[:0], names[1:]...)
			}
			w.ksyms[r.CPU] = append(names, k.Name)
		}
	case perfdata.RecordBPFEvent:
		e, err := perfdata.DecodeBPFEvent(r.Raw, binary.NativeEndian)
		if err != nil {
			return bad(err)
		}
		switch e.Type {
		case perfdata.BPFEventProgLoad:
			// The kernel writes a program's KSYMBOLs just before its
			// BPF_EVENT (perf_event_bpf_event()), on the same CPU.
			ev := &loadEvent{tag: Tag(e.Tag), pid: r.SampleID.PID, time: r.SampleID.Time,
				name: ksymName(w.ksyms[r.CPU], Tag(e.Tag))}
			w.ksyms[r.CPU] = w.ksyms[r.CPU][:0]
			if _, known := w.progs[e.ID]; known {
				return nil // read by a walk already
			}
			wp, err := w.hold(e.ID, ev, fromEvent)
			if wp != nil {
				w.unread = append(w.unread, wp)
			}
			return err
		case perfdata.BPFEventProgUnload:
			if wp := w.progs[e.ID]; wp != nil && wp.p != nil && wp.p.Tag == Tag(e.Tag) {
				wp.unloaded = true
			}
		}
	case perfdata.RecordLost:
		l, err := perfevent.DecodeLost(r.Raw)
		if err != nil {
			return bad(err)
		}
		w.stats.LostRecords += l.Lost
		w.rewalk = true
	}
	return nil
}

// ksymName finds the main function's name among a CPU's recent KSYMBOLs: the
// kernel names it "bpf_prog_" + the program's tag + "_" + name.
func ksymName(names []string, tag Tag) string {
	prefix := "bpf_prog_" + tag.String() + "_"
	for _, n := range slices.Backward(names) {
		if name, ok := strings.CutPrefix(n, prefix); ok {
			return name
		}
	}
	return ""
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
			return fmt.Errorf("bpfprog: listing programs after id %d: %w", id, withHint(err))
		}
		id = next
		if _, known := w.progs[uint32(id)]; known {
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
// cannot be held (recorded in missed). Only a permission error is returned:
// the Watcher cannot work without the permission.
func (w *Watcher) hold(id uint32, ev *loadEvent, from origin) (*watched, error) {
	h, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if ev != nil {
		w.noteDelay(ev.time)
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrPermission):
		return nil, fmt.Errorf("bpfprog: program %d: %w", id, withHint(err))
	case errors.Is(err, os.ErrNotExist):
		if ev != nil {
			w.miss(id, ev, notFound(id))
		}
		// A walk: unloaded between BPF_PROG_GET_NEXT_ID and now.
		return nil, nil
	default:
		w.miss(id, ev, fmt.Errorf("bpfprog: program %d: %w", id, err))
		return nil, nil
	}
	wp := &watched{id: id, ev: ev, hold: h, from: from}
	w.progs[id] = wp
	return wp, nil
}

// read reads a held program (checking the tag of its PROG_LOAD), and
// releases it unless it is to be read again.
func (w *Watcher) read(wp *watched) error {
	var p *Program
	var err error
	if wp.ev != nil {
		p, err = w.live.Lookup(wp.id, wp.ev.tag)
	} else {
		p, err = w.live.ReadProgram(wp.id)
	}
	if err != nil {
		w.release(wp)
		delete(w.progs, wp.id)
		if errors.Is(err, os.ErrPermission) {
			return err
		}
		w.miss(wp.id, wp.ev, err)
		return nil
	}
	wp.p = p
	delete(w.missed, wp.id)
	if metadataRank(p) == rankExact || !w.recentlyLoaded(p) {
		w.release(wp)
		return nil
	}
	wp.due = time.Now().Add(rereadFirstDelay)
	w.pending = append(w.pending, wp)
	return nil
}

func (w *Watcher) miss(id uint32, ev *loadEvent, err error) {
	m := MissedProgram{ID: id, Err: err}
	if ev != nil {
		m.Tag, m.Name, m.PID = ev.tag, ev.name, ev.pid
	}
	w.missed[id] = m
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
func (w *Watcher) recentlyLoaded(p *Program) bool {
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
	rankExact        // exact metadata
)

func metadataRank(p *Program) int {
	switch {
	case p.Metadata != nil && p.MetadataErr == nil:
		return rankExact
	case p.Metadata != nil || p.MetadataErr != nil:
		return rankError
	}
	return rankNone
}

// rereadDue re-reads the first program whose re-read is due, if any, and
// reports whether it did. A program that is done leaves pending.
func (w *Watcher) rereadDue(now time.Time) bool {
	i := slices.IndexFunc(w.pending, func(wp *watched) bool { return !now.Before(wp.due) })
	if i < 0 {
		return false
	}
	if wp := w.pending[i]; !w.reread(wp) {
		w.release(wp)
		w.pending = slices.Delete(w.pending, i, i+1)
	}
	return true
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

// Programs returns the programs read, in ascending id order: those loaded
// when NewWatcher started and those loaded since, including the ones
// unloaded since, each with the best metadata read.
func (w *Watcher) Programs() []*Program {
	progs := make([]*Program, 0, len(w.progs))
	for _, id := range slices.Sorted(maps.Keys(w.progs)) {
		if p := w.progs[id].p; p != nil {
			progs = append(progs, p)
		}
	}
	return progs
}

// Stats says what the Watcher saw.
func (w *Watcher) Stats() WatchStats {
	s := w.stats
	for _, wp := range w.progs {
		if wp.p == nil {
			continue // held, not read: Run stopped on an error
		}
		switch wp.from {
		case fromStart:
			s.AtStart++
		case fromRewalk:
			s.Recovered++
			s.Loaded++
		default:
			s.Loaded++
		}
		if wp.unloaded {
			s.Unloaded++
		}
		if metadataRank(wp.p) == rankExact {
			s.WithMetadata++
			if wp.late {
				s.LateMetadata++
			}
		}
	}
	s.Missed = slices.SortedFunc(maps.Values(w.missed), func(a, b MissedProgram) int { return cmp.Compare(a.ID, b.ID) })
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
