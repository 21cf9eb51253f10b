package bpftrack

import (
	"cmp"
	"slices"

	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Samples are counted in functions as perf report counts them: perf
// delivers a record with a time through its ordered_events queue, in time
// order, at the FINISHED_ROUND after next (or, for the last, at the end),
// and one without (perf's synthesized records: time 0) at once
// (ordered_events__queue() returns -ETIME); a sample is the function's
// that perf's kernel maps hold its ip in when it is delivered, the maps
// changed by the KSYMBOLs delivered before it
// (machine__process_ksymbol_register(), _unregister()). So in a recording
// perf record --overwrite wrote, whose ring buffers it read newest first
// and whose programs it synthesized at the tail, the samples are the
// programs' that perf synthesized after them; in a --threads directory,
// with no FINISHED_ROUND, every sample waits for the end, as in perf.
//
// The samples waiting are kept as perf keeps them, an ip and a time each,
// within MaxQueuedSamples (and the KSYMBOLs within maxQueuedChanges) and
// the memory budget: past either, the older half is delivered
// (OE_FLUSH__HALF), as perf does past report.queue-size, and EarlyFlushes
// counts it.
type sampleOrder struct {
	// view are the functions perf's kernel maps hold, by address.
	view addrIndex
	// samples and changes wait for their round, each in the order read.
	samples []queuedSample
	changes []viewChange
	seq     uint64
	// nextFlush, maxTime and lastTime are perf's ordered_events'
	// next_flush, max_timestamp and last->timestamp.
	nextFlush, maxTime, lastTime uint64
	early                        int
	mem                          budget.Meter
	// latest is the latest KSYMBOL waiting at each address (latestAt).
	latest map[uint64]viewChange
	// reserved is the samples mem holds room for.
	reserved int
}

// queuedSample is a SAMPLE waiting in the queue.
type queuedSample struct{ time, ip, seq uint64 }

// viewChange is a KSYMBOL waiting in the queue: f registered, or (f nil)
// the function at addr unregistered.
type viewChange struct {
	time, seq uint64
	f         *Func
	addr      uint64
}

// MaxQueuedSamples bounds the samples a Tracker keeps waiting for perf's
// round to deliver them (perf record's rounds are one read of its ring
// buffers: tens of thousands of samples; --overwrite's one round is the
// whole dump, --threads' the whole recording).
const MaxQueuedSamples = 1 << 19

// maxQueuedChanges bounds the KSYMBOLs waiting in the queue: each keeps
// its function (and its program) until it is delivered. A machine loads
// a few thousand programs in a round.
const maxQueuedChanges = 1 << 14

// What the queue keeps, in bytes, for the memory budget: a sample, and a
// KSYMBOL with the function and program it keeps (and its place in
// latest).
const (
	queuedSampleCost = 24
	viewChangeCost   = 48 + funcCost + programCost + 64
)

// A header's cpumode (PERF_RECORD_MISC_CPUMODE_MASK) of a sample in user
// space: perf resolves it in the task's maps, never a BPF function's.
const (
	cpuModeMask   = 7
	cpuModeUser   = 2
	cpuModeGuestU = 5
)

// sample takes a SAMPLE: counted at once without a time, else queued.
func (t *Tracker) sample(misc uint16, f perfdata.SampleFields) {
	if !f.HasIP {
		return
	}
	if m := misc & cpuModeMask; m == cpuModeUser || m == cpuModeGuestU {
		return
	}
	o := &t.order
	if !f.HasTime || f.Time == 0 {
		o.count(f.IP)
		return
	}
	if len(o.samples) >= o.reserved && !o.reserve(len(o.samples)+1) {
		t.flushHalf()
	}
	o.samples = append(o.samples, queuedSample{f.Time, f.IP, o.seq})
	o.queued(f.Time)
}

// reserve makes room for n samples in the budget, in chunks; false when
// there is none (MaxQueuedSamples, or the budget).
func (o *sampleOrder) reserve(n int) bool {
	if n > MaxQueuedSamples {
		return false
	}
	want := min(max(2*o.reserved, 4096), MaxQueuedSamples)
	if o.charge(want, len(o.changes)) != nil {
		return false
	}
	o.reserved = want
	return true
}

// charge sets the queue's reservation of the memory budget to room for
// samples samples and changes KSYMBOLs.
func (o *sampleOrder) charge(samples, changes int) error {
	return o.mem.Set(int64(samples*queuedSampleCost + changes*viewChangeCost))
}

// queued keeps perf's times of a record queued at time ts.
func (o *sampleOrder) queued(ts uint64) {
	o.seq++
	o.maxTime = max(o.maxTime, ts)
	o.lastTime = ts
}

// viewKSymbol takes a BPF KSYMBOL, f the function it registers or nil for
// an unregistering one at addr: applied to perf's maps at once without a
// time, else queued.
func (t *Tracker) viewKSymbol(rec *perfdata.Record, f *Func, addr uint64) {
	ts, _ := t.rec.Events().TrailerTime(rec.Raw)
	if ts == 0 {
		t.apply(viewChange{f: f, addr: addr})
		return
	}
	o := &t.order
	if len(o.changes) >= maxQueuedChanges || o.charge(o.reserved, len(o.changes)+1) != nil {
		t.flushHalf()
	}
	if f != nil {
		f.queued++
	}
	c := viewChange{time: ts, seq: o.seq, f: f, addr: addr}
	o.changes = append(o.changes, c)
	if o.latest == nil {
		o.latest = map[uint64]viewChange{}
	}
	if p, ok := o.latest[addr]; !ok || bySeq(p.time, p.seq, ts, c.seq) < 0 {
		o.latest[addr] = c
	}
	o.queued(ts)
}

// count counts a sample at ip in the function perf's maps hold it in, in
// the other loads of it there (sameMax), and, if none of those is the
// kernel's, in its twin: a sample is counted in one of the kernel's
// KSYMBOLs of a function at most, the one perf's map held it in when
// there is one.
func (o *sampleOrder) count(ip uint64) {
	f := o.view.floor(ip)
	if f == nil || !f.Contains(ip) {
		return
	}
	f = f.whole()
	f.Samples++
	twin := f.twin
	for _, g := range f.same {
		g.Samples++
		if !g.synth {
			twin = nil
		}
	}
	if twin != nil {
		twin.Samples++
	}
}

// latestAt returns the function perf's maps will hold at addr (a
// function's own address) once the KSYMBOLs waiting are delivered, as
// far as those at addr tell: the one the latest of them registers (nil if
// it unregisters), else the one the maps hold there now. In a backward
// ring buffer a load's KSYMBOL comes before the unregistering one of an
// older load at its address.
func (o *sampleOrder) latestAt(addr uint64) *Func {
	if c, ok := o.latest[addr]; ok {
		return c.f
	}
	if f := o.view.get(addr); f != nil && f.of == nil {
		return f
	}
	return nil
}

// sameMax bounds the functions a function in perf's maps counts its
// samples in besides itself: a KSYMBOL of the same function (name, or
// name after the tag: sameFunction), address and length while it is
// there, which perf takes for the same map (the kernel's KSYMBOL of a
// program perf also synthesized at the tail).
const sameMax = 4

// apply changes perf's maps as machine__process_ksymbol_register() and
// _unregister() do. A KSYMBOL registered at an address a map holds
// (maps__find()) adds no map: perf adds a symbol to that map's dso, and
// the samples in the map stay its function's (and, of the same name,
// function, address and length, count in both: same). Otherwise its map is
// inserted, and a perf of 2025 on (perf 7.2 here; commit "perf machine:
// Fix insertion of PERF_RECORD_KSYMBOL related kernel maps":
// maps__fixup_overlap_and_insert()) takes the addresses it covers from
// the maps that start in it: such a map is dropped, or keeps what lies
// past the new one's end. Perf 6.1 (maps__insert()) keeps both, and
// finds either in the overlap as its rbtree has them: the modern perf is
// followed, the one that reads the BPF_METADATA records bpfmeta writes
// (perf 6.1 shows none of them). An unregistering KSYMBOL removes the map
// its address is in, whatever its name.
func (t *Tracker) apply(c viewChange) {
	o := &t.order
	f := c.f
	if f != nil && f.queued > 0 {
		f.queued--
	}
	old := o.view.floor(c.addr)
	if old != nil && !old.Contains(c.addr) {
		old = nil
	}
	switch {
	case f == nil:
		if old != nil {
			t.unview(old)
		}
		return
	case old != nil:
		m := old.whole()
		if f != m && old.Addr == f.Addr && old.Len == f.Len && sameFunction(m.Name, f.Name) && len(m.same) < sameMax && !slices.Contains(m.same, f) {
			m.same = append(m.same, f)
			f.viewed = true
		}
		t.leftView(f)
		return
	}
	end := f.Addr + uint64(f.Len)
	for f.Len > 0 {
		g := o.view.floor(end - 1)
		if g == nil || g.Addr <= f.Addr {
			break
		}
		gEnd := g.Addr + uint64(g.Len)
		m := g.whole()
		t.unview(g)
		if gEnd > end {
			o.view.put(&Func{Addr: end, Len: uint32(gEnd - end), Name: m.Name, of: m})
			m.viewed = true
		}
	}
	o.view.put(f)
	f.viewed = true
}

// whole is the function v is: v, or the function v is what is left of
// (of).
func (v *Func) whole() *Func {
	if v.of != nil {
		return v.of
	}
	return v
}

// unview removes v, a function or part of one, from perf's maps.
func (t *Tracker) unview(v *Func) {
	o := &t.order
	o.view.remove(v.Addr, func(*Func) bool { return true })
	m := v.whole()
	m.viewed = false
	t.leftView(m)
	for _, g := range m.same {
		g.viewed = false
		t.leftView(g)
	}
	m.same = nil
}

// leftView settles f once perf's maps hold it no longer and no KSYMBOL of
// it waits: no sample can be its any more (nor, then, its twin's).
func (t *Tracker) leftView(f *Func) {
	if !f.live() {
		t.retire(f)
	}
	if f.twin != nil && !f.twin.live() {
		t.retire(f.twin)
	}
}

// live tells a function samples may still be counted in: its own, or its
// twin's.
func (f *Func) live() bool {
	return f.registered || f.viewed || f.queued > 0 || (f.twinOf != nil && f.twinOf.live())
}

// flush delivers what waits up to time limit, in time order, and what
// came first among records of one time (queue_event() puts a record after
// those of its time).
func (t *Tracker) flush(limit uint64) {
	o := &t.order
	slices.SortFunc(o.changes, func(a, b viewChange) int { return bySeq(a.time, a.seq, b.time, b.seq) })
	if len(o.changes) == 0 || o.changes[0].time > limit {
		o.countUpTo(limit)
		return
	}
	slices.SortFunc(o.samples, func(a, b queuedSample) int { return bySeq(a.time, a.seq, b.time, b.seq) })
	s, c := 0, 0
	for {
		ds := s < len(o.samples) && o.samples[s].time <= limit
		dc := c < len(o.changes) && o.changes[c].time <= limit
		switch {
		case dc && (!ds || bySeq(o.changes[c].time, o.changes[c].seq, o.samples[s].time, o.samples[s].seq) < 0):
			if l, ok := o.latest[o.changes[c].addr]; ok && l.seq == o.changes[c].seq {
				delete(o.latest, l.addr) // the last waiting there
			}
			t.apply(o.changes[c])
			c++
		case ds:
			o.count(o.samples[s].ip)
			s++
		default:
			o.samples = o.samples[:copy(o.samples, o.samples[s:])]
			clear(o.changes[copy(o.changes, o.changes[c:]):])
			o.changes = o.changes[:len(o.changes)-c]
			return
		}
	}
}

// bySeq orders records queued at time at and bt, the as'th and bs'th
// queued: by time, then in the order queued.
func bySeq(at, as, bt, bs uint64) int { return cmp.Or(cmp.Compare(at, bt), cmp.Compare(as, bs)) }

// countUpTo counts the samples waiting up to time limit, while perf's maps
// do not change before it: in any order, so without sorting them (most
// rounds, where no program loads); the others keep waiting.
func (o *sampleOrder) countUpTo(limit uint64) {
	keep := o.samples[:0]
	for _, s := range o.samples {
		if s.time > limit {
			keep = append(keep, s)
		} else {
			o.count(s.ip)
		}
	}
	o.samples = keep
}

// round is a FINISHED_ROUND: what waits up to the latest time of the
// round before is delivered (process_finished_round(), OE_FLUSH__ROUND).
func (t *Tracker) round() {
	o := &t.order
	if o.nextFlush > 0 {
		t.flush(o.nextFlush)
	}
	o.nextFlush = o.maxTime
}

// flushHalf delivers the older half of what waits, by time, as perf's
// OE_FLUSH__HALF does when its queue is full; all of it, if that is none.
func (t *Tracker) flushHalf() {
	o := &t.order
	o.early++
	first := o.lastTime
	for _, s := range o.samples {
		first = min(first, s.time)
	}
	for _, c := range o.changes {
		first = min(first, c.time)
	}
	o.nextFlush = first + (max(o.lastTime, first)-first)/2
	n := len(o.samples) + len(o.changes)
	t.flush(o.nextFlush)
	if len(o.samples)+len(o.changes) == n {
		t.flush(^uint64(0))
	}
	o.charge(o.reserved, len(o.changes)) // less: it cannot fail
}

// End delivers the samples and KSYMBOLs still waiting, as perf does at
// the end of a recording (OE_FLUSH__FINAL): call it once the last record
// was fed, before reading samples counts.
func (t *Tracker) End() {
	t.flush(^uint64(0))
	t.order.samples = nil
	t.order.reserved = 0
	t.order.charge(0, 0)
}

// EarlyFlushes counts the times the samples waiting for perf's order were
// more than MaxQueuedSamples or the memory budget allowed, and the older
// half was counted then (as perf report with a report.queue-size does;
// without one, perf report keeps them all): the samples of a program whose
// KSYMBOL came later in the recording than their half (perf record
// --overwrite's tail) are not counted in it, though perf report counts
// them.
func (t *Tracker) EarlyFlushes() int { return t.order.early }
