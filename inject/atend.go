package inject

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

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

// atEndRecord settles a record of the recording's that follows no
// BPF_EVENT: one of those perf writes at the end.
func (j *injector) atEndRecord(name string) error {
	if j.cancelAtEnd(name) {
		return nil
	}
	// A program that cannot claim the name now never can: each is asked
	// once per name.
	for ps := j.progs.claimable[name]; len(ps) > 0; ps = ps[1:] {
		if j.claim(ps[0], name) {
			j.progs.claimable[name] = ps[1:]
			return nil
		}
	}
	delete(j.progs.claimable, name)
	if j.end.nOrphans < MaxAtEnd { // more stand for nothing inject would write
		j.end.orphans[maphash.String(j.end.seed, name)]++
		j.end.nOrphans++
		return j.charge()
	}
	return nil
}

// cancelAtEnd drops the first record to write at the end that the
// recording's record named name stands for.
func (j *injector) cancelAtEnd(name string) bool {
	idx := j.end.byName[name]
	for len(idx) > 0 {
		p := &j.end.records[idx[0]]
		idx = idx[1:]
		if !p.done {
			p.done = true
			j.end.byName[name] = idx
			j.stands(p.prog, name)
			return true
		}
	}
	delete(j.end.byName, name)
	return false
}

// queueAtEnd adds a record to write at the end.
func (j *injector) queueAtEnd(pr pending) error {
	n := 0
	for _, s := range pr.names {
		n += len(s) + 16
	}
	if k := len(j.end.records); k == 0 || j.end.records[k-1].prog != pr.prog {
		n += entryBytes(pr.md.Entries) // a program's records are queued together, and share them
	}
	switch {
	case len(j.end.records) == MaxAtEnd:
		return fmt.Errorf("program %d: %w (%d)", pr.prog.ID, ErrTooMany, MaxAtEnd)
	case j.end.bytes+n > MaxAtEndBytes:
		return fmt.Errorf("program %d: %w (%d MiB)", pr.prog.ID, ErrTooMany, MaxAtEndBytes>>20)
	}
	j.end.bytes += n
	if err := j.charge(); err != nil {
		j.end.bytes -= n
		return fmt.Errorf("program %d: %w", pr.prog.ID, err)
	}
	for _, n := range pr.names {
		j.end.byName[n] = append(j.end.byName[n], len(j.end.records))
	}
	j.end.records = append(j.end.records, pr)
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

// finish writes the records still to write: those right after the last
// BPF_EVENT, and those of the programs loaded during the recording unless
// they were written before its tail synthesis (tailInit).
func (j *injector) finish() error {
	if err := j.flushAfter(); err != nil {
		return err
	}
	if err := j.writeAtEnd(); err != nil {
		return err
	}
	// Settle the unlisted programs that were not yet: those still loaded.
	for _, p := range j.progs.byTP {
		if !p.listed && !p.atEnd {
			j.unlisted(p)
		}
	}
	return nil
}

// writeAtEnd writes the records of programs loaded during the recording,
// in ascending program id as perf walks its bpf_prog_info tree
// (perf_event__synthesize_final_bpf_metadata()): at the end of the
// recording, or before the FINISHED_INIT that starts its tail synthesis.
// A load the recording has after that (none that perf writes) has its
// records at the end.
func (j *injector) writeAtEnd() error {
	for _, name := range j.end.deferred {
		if err := j.atEndRecord(name); err != nil {
			return err
		}
	}
	j.end.deferred, j.end.deferredBytes = nil, 0
	if !j.unrec.done {
		j.unrec.done = true
		if err := j.unrecorded(); err != nil {
			return err
		}
	}
	slices.SortStableFunc(j.end.records, func(a, b pending) int { return cmp.Compare(a.prog.ID, b.prog.ID) })
	j.end.byName = map[string][]int{} // the indexes are the order's before the sort
	for _, p := range j.end.records {
		if p.done || p.waits() {
			continue
		}
		if err := j.write(p); err != nil {
			return err
		}
	}
	// Settle the unlisted programs with records at the end.
	for i, pr := range j.end.records {
		if p := pr.prog; !p.listed && !p.Unrecorded && (i == 0 || j.end.records[i-1].prog != p) {
			j.unlisted(p)
		}
	}
	j.end.records, j.end.bytes = nil, 0
	j.endAwait()
	for _, p := range j.unrec.progs {
		// perf's tree of bpf_prog_info has it: a load of its id in the
		// tail synthesis gets no metadata (Duplicate)
		j.progs.known[p.ID] = true
		if len(j.progs.listed) < MaxListed {
			p.listed = true
			j.progs.listed = append(j.progs.listed, p)
		} else {
			j.unlisted(p)
		}
	}
	j.unrec.progs = nil
	return j.charge()
}

// unrecorded adds the programs the source says were loaded while the
// recording was made and that the recording has no record of: those whose
// load time, on the recording's clock (bpfprog.System.ClockOf), is within
// its first and last timestamp.
func (j *injector) unrecorded() error {
	lister, ok := j.src.(bpfprog.Lister)
	sys := j.src.System()
	switch {
	case j.opts.RecordedOnly:
		return nil
	case !ok:
		j.sum.UnrecordedSkipped = "the source cannot list its programs"
		return nil
	case j.span.first == 0:
		j.sum.UnrecordedSkipped = "the recording has no timestamps"
		return nil
	case !j.progs.matched:
		// Load times say nothing across boots: only a program matched by
		// id, tag and addresses shows that the recording is of this boot.
		j.sum.UnrecordedSkipped = "none of the recording's programs is the source's: it may be of another boot"
		return nil
	}
	rc := j.recordingClock()
	clock, err := sys.ClockOf(rc)
	if err != nil {
		// a clock perf record -k chose is the recording's doing, not the
		// source's: worth a warning
		j.sum.UnrecordedSkipped, j.sum.ClockUnplaced = err.Error(), rc.UseClockID
		return nil
	}
	progs := lister.All()
	if ll, ok := lister.(bpfprog.LoadLister); ok {
		// only those that can be loaded during the recording: a watch's
		// journal may hold thousands of others
		if from, to, ok := clock.Span(j.span.first, j.span.last); ok {
			progs = ll.LoadedBetween(from, to)
		}
	}
	added := map[uint32]bool{} // the ids of j.unrec.progs
	for sp, err := range progs {
		if sp == nil && err != nil {
			// the list ends here: say why
			j.sum.UnrecordedSkipped, j.sum.UnrecordedLimited = err.Error(), errors.Is(err, bpfprog.ErrLimit)
		}
		if sp == nil || j.progs.known[sp.ID] {
			continue
		}
		t, ok := clock.LoadedAt(sp)
		if !ok || t < j.span.first || t > j.span.last {
			continue
		}
		p := &program{Program: Program{ID: sp.ID, Tag: sp.Tag, Unrecorded: true, Outcome: Injected}, atEnd: true}
		if len(sp.Funcs) > 0 {
			p.Name = sp.Funcs[0].PerfName
		}
		j.unrec.progs = append(j.unrec.progs, p)
		if added[sp.ID] {
			// a later load of an id loaded before in the span: perf's
			// tree of bpf_prog_info refuses it, and writes an id's
			// records once (perf_env__insert_bpf_prog_info())
			p.Outcome, p.atEnd = Duplicate, false
			continue
		}
		added[sp.ID] = true
		if err != nil {
			// listed, but the source cannot tell its metadata
			p.setOutcome(Failed, err, j)
			continue
		}
		if err := j.queueUnrecorded(p, sp); err != nil {
			return err
		}
	}
	return nil
}

// queueUnrecorded queues the records at the end of sp (p), a program the
// recording has no record of, but those the recording has already.
func (j *injector) queueUnrecorded(p *program, sp *bpfprog.Program) error {
	m, entries, outcome, err := metadataOf(sp)
	if outcome != Injected {
		p.setOutcome(outcome, err, j)
		return nil
	}
	for i, f := range sp.Funcs {
		// no KSYMBOL to name it after: perf's name
		names := bpftrack.Names(m.ProgNames[i], f.PerfName, f.KernelName)
		if k := slices.IndexFunc(names, func(n string) bool { return j.end.orphans[maphash.String(j.end.seed, n)] > 0 }); k >= 0 {
			// write() makes it Injected if other records are added
			j.end.orphans[maphash.String(j.end.seed, names[k])]--
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
	return nil
}

// recordingClock is the clock of the recording's timestamps: that of its
// events (perf record -k sets use_clockid and clockid on every one), with
// its CLOCK_DATA. Events that disagree (no perf writes them) are of a
// clock no perf event uses.
func (j *injector) recordingClock() bpfprog.RecordingClock {
	var c bpfprog.RecordingClock
	for i, a := range j.events.Attrs() {
		id, use := a.Clock()
		if i == 0 {
			c.ID, c.UseClockID = id, use
		} else if id != c.ID || use != c.UseClockID {
			c.ID, c.UseClockID = -1, true
			break
		}
	}
	o, _ := j.r.Origin()
	c.Data = o.ClockData
	return c
}
