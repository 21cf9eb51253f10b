package journal

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// MaxIndexed bounds the loads (and dropped loads) of one host's journal
// that Find indexes, 40 bytes each (20 MiB at most): a journal of
// DefaultMaxSize holds about 130,000.
const MaxIndexed = 1 << 19

// Journal is a journal directory read (Open): one host's, or a tree of
// hosts' (DIR/HOST/...). Close closes it.
type Journal struct {
	Path  string
	dir   *os.File // Path, opened by the rules (dir.go)
	hosts map[string]*Host
}

// Host is one host's journal.
type Host struct {
	Name string // the directory's name: the hostname its writer had
	Dir  string
	// parent and sub are where its directory is: sub of the journal's
	// tree, or "" (the journal's directory itself, dir). dir is open once
	// it is read, and listing what its listing found (dir.go).
	parent  *os.File
	sub     string
	dir     *os.File
	listing *listing
	// boot is the boot of the loads Find found, once it found one: the
	// recording's, which all its programs share.
	boot  string
	index *index
	err   error
	// mem is what the index takes of the process's memory budget
	// (internal/budget).
	mem budget.Meter
}

// newHost is the host name whose directory is sub of the tree parent ("":
// parent itself).
func newHost(name string, parent *os.File, sub string) *Host {
	h := &Host{Name: name, Dir: parent.Name(), parent: parent, sub: sub, mem: budget.Meter{What: "journal index"}}
	if sub != "" {
		h.Dir = hostPath(parent.Name(), sub)
	} else {
		h.dir = parent
	}
	return h
}

// What an index keeps, in bytes, for the memory budget: a load (and its
// place in the map of the loads not yet unloaded while it is read), and a
// dropped load.
const (
	loadCost    = 96
	droppedCost = 64
)

// Open reads the directory of a journal: one host's (it holds segment
// files), or a tree with a directory per host, by the rules and within
// the bounds of dir.go. Only names are read here; a host's segments are
// indexed when a program is first looked for in them.
func Open(dir string) (*Journal, error) {
	d, err := outfile.ReadJournalDir(dir)
	if err != nil {
		return nil, err
	}
	j := &Journal{Path: dir, dir: d, hosts: map[string]*Host{}}
	if err := j.open(); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// open finds the journal's hosts.
func (j *Journal) open() error {
	one, dirs, links, err := treeEntries(j.dir)
	if err != nil {
		return err
	}
	if !one {
		return j.openTree(dirs, links)
	}
	// one host's directory: its name is the hostname of its segments
	h := newHost("", j.dir, "")
	for e, err := range h.Records() {
		if err != nil {
			return err
		}
		if h.Name = e.System.Hostname; h.Name != "" {
			break
		}
	}
	if h.Name == "" {
		// no segment has a header yet: the directory's name is the
		// writer's hostname
		h.Name = filepath.Base(j.Path)
	}
	j.hosts[h.Name] = h
	return nil
}

// Hosts are the names of the hosts the journal has, sorted.
func (j *Journal) Hosts() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for n := range j.hosts {
			if !yield(n) {
				return
			}
		}
	})
}

// Host is the journal of host, nil if it has none.
func (j *Journal) Host(name string) *Host { return j.hosts[name] }

// segments are the host's segment files to read, oldest first
// (listSegments).
func (h *Host) segments() ([]uint64, error) {
	l, err := h.listed()
	if err != nil {
		return nil, err
	}
	seqs := make([]uint64, len(l.segs))
	for i, s := range l.segs {
		seqs[i] = s.seq
	}
	return seqs, nil
}

// open opens segment seq by the rules (outfile.ReadJournalFile).
func (h *Host) open(seq uint64) (*os.File, error) {
	d, err := h.openDir()
	if err != nil {
		return nil, err
	}
	return outfile.ReadJournalFile(d, segmentName(seq))
}

// Entry is one record of a host's journal (Host.Records), with the
// segment it is in.
type Entry struct {
	Seq     uint64
	System  bpfprog.System // of the segment's writer
	Started time.Time      // when the segment was begun
	// DroppedSegments and DroppedLoads count what the size limit had
	// dropped when the segment was begun.
	DroppedSegments, DroppedLoads uint64
	Record
	// Torn, in the last entry of a segment that stops before its end,
	// says where (the record is then empty).
	Torn string
}

// Records yields every record of the host's journal, oldest first, and
// an entry with Torn for a segment that stops before its end.
func (h *Host) Records() iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		seqs, err := h.segments()
		if err != nil {
			yield(Entry{}, err)
			return
		}
		for _, seq := range seqs {
			f, err := h.open(seq)
			if errors.Is(err, fs.ErrNotExist) {
				continue // dropped meanwhile by a running writer
			}
			if err != nil {
				yield(Entry{}, err)
				return
			}
			sr := NewSegmentReader(f)
			ok := true
			for sr.Next() {
				hd := sr.Header()
				if !yield(Entry{Seq: seq, System: hd.System, Started: hd.Started, DroppedSegments: hd.DroppedSegments, DroppedLoads: hd.DroppedLoads, Record: sr.Record()}, nil) {
					ok = false
					break
				}
			}
			f.Close()
			if !ok {
				return
			}
			if err := sr.Err(); err != nil {
				yield(Entry{}, err)
				return
			}
			if t := sr.Torn(); t != "" {
				e := Entry{Seq: seq, Torn: f.Name() + ": " + t}
				if hd := sr.Header(); hd != nil {
					e.System, e.Started = hd.System, hd.Started
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// index is what Find knows of a host's journal without reading its
// programs.
type index struct {
	loads   []loadRef // by id
	segs    []segRef  // loadRef.seg indexes them
	dropped []droppedRef
	boots   []string // boot ids
	// droppedLoads counts what the size limit dropped, per the newest
	// segment's header.
	droppedLoads uint64
	torn         []string
}

type loadRef struct {
	id     uint32
	boot   uint16
	seg    uint32 // in index.segs
	n      uint32
	off    int64
	load   time.Duration
	unload time.Duration // 0 if not seen
}

// segRef is a segment of the index.
type segRef struct {
	seq uint64
	sys bpfprog.System // its writer's: its clocks
}

type droppedRef struct {
	id   uint32
	boot uint16
	tag  perfdata.BPFTag
	addr uint64
	at   time.Time
}

// indexed indexes the host's journal once.
func (h *Host) indexed() (*index, error) {
	if h.index != nil || h.err != nil {
		return h.index, h.err
	}
	ix := &indexer{h: h, x: &index{}, bootOf: map[string]uint16{}, live: map[loadKey]int{}}
	seqs, err := h.segments()
	if err == nil {
		for _, seq := range seqs {
			if err = ix.segment(seq); err != nil {
				break
			}
		}
	}
	if err != nil {
		h.err = err
		return nil, err
	}
	x := ix.x
	slices.SortStableFunc(x.loads, func(a, b loadRef) int { return cmp.Compare(a.id, b.id) })
	slices.SortStableFunc(x.dropped, func(a, b droppedRef) int { return cmp.Compare(a.id, b.id) })
	h.index = x
	return x, nil
}

// indexer builds a host's index a segment at a time.
type indexer struct {
	h      *Host
	x      *index
	bootOf map[string]uint16
	live   map[loadKey]int // the loads not seen unloaded, by boot and id
}

type loadKey struct {
	boot uint16
	id   uint32
}

// boot is the index of a boot id in x.boots.
func (ix *indexer) boot(id string) (uint16, error) {
	b, ok := ix.bootOf[id]
	if !ok {
		if len(ix.x.boots) > 1<<16-1 {
			return 0, fmt.Errorf("%s: more than %d boots", ix.h.Dir, 1<<16-1)
		}
		b = uint16(len(ix.x.boots))
		ix.x.boots = append(ix.x.boots, id)
		ix.bootOf[id] = b
	}
	return b, nil
}

// segment indexes the records of segment seq (gone meanwhile: none).
func (ix *indexer) segment(seq uint64) error {
	f, err := ix.h.open(seq)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sr := NewSegmentReader(f)
	sr.raw = true
	seg := uint32(len(ix.x.segs))
	ix.x.segs = append(ix.x.segs, segRef{seq: seq})
	for sr.Next() {
		sys := sr.System()
		if sys.Hostname != ix.h.Name {
			break // a segment of another host's, copied here: not used
		}
		ix.x.droppedLoads = sr.Header().DroppedLoads
		ix.x.segs[seg].sys = sys
		if err := ix.record(sr, seg); err != nil {
			return err
		}
	}
	if err := sr.Err(); err != nil {
		return err
	}
	if t := sr.Torn(); t != "" {
		ix.x.torn = append(ix.x.torn, f.Name()+": "+t)
	}
	return nil
}

// record indexes the record sr is at, in segment seg: a load, an unload
// (of a load indexed), or the loads a size limit dropped.
func (ix *indexer) record(sr *SegmentReader, seg uint32) error {
	x, h := ix.x, ix.h
	b, err := ix.boot(sr.System().BootID)
	if err != nil {
		return err
	}
	r := sr.Record()
	if len(x.loads)+len(x.dropped) >= MaxIndexed {
		return fmt.Errorf("%s: more than %d loads (bpfmeta indexes at most that many of one host)", h.Dir, MaxIndexed)
	}
	more := 1
	if r.Dropped != nil {
		more = len(r.Dropped.Loads)
	}
	if err := h.mem.Set(int64(len(x.loads)+more)*loadCost + int64(len(x.dropped)+more)*droppedCost); err != nil {
		return fmt.Errorf("%s: %w", h.Dir, err)
	}
	switch {
	case r.Program != nil:
		var p struct {
			ID       uint32        `json:"id"`
			LoadTime time.Duration `json:"load_time_ns"`
		}
		if json.Unmarshal(sr.rawLoad, &p) != nil {
			return nil
		}
		ix.live[loadKey{b, p.ID}] = len(x.loads)
		x.loads = append(x.loads, loadRef{id: p.ID, boot: b, seg: seg, off: r.Offset, n: uint32(r.Size), load: p.LoadTime})
	case r.Unload != nil:
		k := loadKey{b, r.Unload.ID}
		if i, ok := ix.live[k]; ok {
			x.loads[i].unload = r.Unload.Time
			delete(ix.live, k)
		}
	case r.Dropped != nil:
		db, err := ix.boot(r.Dropped.BootID)
		if err != nil {
			return err
		}
		for _, l := range r.Dropped.Loads {
			x.dropped = append(x.dropped, droppedRef{id: l.ID, boot: db, tag: l.Tag, addr: uint64(l.Addr), at: r.Dropped.At})
		}
	}
	return nil
}

// read reads the program of a load from its segment.
func (h *Host) read(l loadRef) (*bpfprog.Program, error) {
	f, err := h.open(h.index.segs[l.seg].seq)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, l.n)
	if _, err := f.ReadAt(b, l.off); err != nil {
		return nil, fmt.Errorf("%s: reading the record at offset %d: %w", f.Name(), l.off, err)
	}
	n := binary.LittleEndian.Uint32(b[:4])
	if int(n) != len(b)-frameHeader || crc32.Checksum(b[frameHeader:], castagnoli) != binary.LittleEndian.Uint32(b[4:8]) {
		return nil, fmt.Errorf("%s: the record at offset %d changed since it was read", f.Name(), l.off)
	}
	var r record
	if err := json.Unmarshal(b[frameHeader:], &r); err != nil || r.Load == nil {
		return nil, fmt.Errorf("%s: the record at offset %d: %w", f.Name(), l.off, ErrFormat)
	}
	p := new(bpfprog.Program)
	if err := p.UnmarshalJSON(r.Load); err != nil {
		return nil, fmt.Errorf("%s: the record at offset %d: %w: %v", f.Name(), l.off, ErrFormat, bpfprog.JSONError(err))
	}
	return p, p.Check()
}

// Find returns the program of the host's journal that is the load l of a
// recording made on host l.Host: its id, tag and every function's address
// are l's, it was loaded before l.Time and not unloaded before it (when
// the times can be compared), and it is of the boot of the other
// programs Find found for the host, and of boot when that is not ""
// (the running kernel's, when it had some of the recording's programs).
// More than one such load is not guessed between (ErrAmbiguous); a load
// that fell out of the journal is told (ErrDropped). Both errors wrap
// bpfprog.ErrNotFound too.
func (j *Journal) Find(l bpfprog.Load, boot string) (*bpfprog.Program, error) {
	p, _, err := j.find(l, boot)
	return p, err
}

// find is Find, and the boot of the program found.
func (j *Journal) find(l bpfprog.Load, boot string) (*bpfprog.Program, string, error) {
	notFound := func(why string, also ...error) error {
		return fmt.Errorf("program %d: %w%s", l.ID, errors.Join(append([]error{bpfprog.ErrNotFound}, also...)...), why)
	}
	if l.Host == "" {
		return nil, "", notFound(": the recording names no host, so the journal's cannot be told")
	}
	h := j.hosts[l.Host]
	if h == nil {
		return nil, "", notFound(": the journal has no host " + safetext.Quote(l.Host))
	}
	x, err := h.indexed()
	if err != nil {
		return nil, "", err
	}
	if boot == "" {
		boot = h.boot
	}
	lo, _ := slices.BinarySearchFunc(x.loads, l.ID, func(r loadRef, id uint32) int { return cmp.Compare(r.id, id) })
	var found []*bpfprog.Program
	var foundBoot []string
	for i := lo; i < len(x.loads) && x.loads[i].id == l.ID; i++ {
		r := x.loads[i]
		if boot != "" && x.boots[r.boot] != boot {
			continue
		}
		if !r.before(l, x.segs[r.seg].sys) {
			continue
		}
		p, err := h.read(r)
		if err != nil {
			return nil, "", err
		}
		if p.Tag != l.Tag || !sameAddrs(p, l.Addrs) {
			continue
		}
		// the same load written again (a writer started again records
		// the programs loaded) is one load
		if k := slices.IndexFunc(found, func(q *bpfprog.Program) bool { return q.LoadTime == p.LoadTime }); k >= 0 && foundBoot[k] == x.boots[r.boot] {
			continue
		}
		found, foundBoot = append(found, p), append(foundBoot, x.boots[r.boot])
	}
	switch len(found) {
	case 1:
		h.boot = foundBoot[0]
		return found[0], h.boot, nil
	case 0:
	default:
		return nil, "", notFound(fmt.Sprintf(": %d loads of boots %v could be it", len(found), foundBoot), ErrAmbiguous)
	}
	lo, _ = slices.BinarySearchFunc(x.dropped, l.ID, func(r droppedRef, id uint32) int { return cmp.Compare(r.id, id) })
	for i := lo; i < len(x.dropped) && x.dropped[i].id == l.ID; i++ {
		d := x.dropped[i]
		if d.tag == l.Tag && len(l.Addrs) > 0 && d.addr == l.Addrs[0] && (boot == "" || x.boots[d.boot] == boot) {
			return nil, "", notFound(fmt.Sprintf(": it fell out of the journal (dropped %s to keep it under its size limit)", d.at.Local().Format(time.DateTime)), ErrDropped)
		}
	}
	if x.droppedLoads > 0 {
		return nil, "", notFound(fmt.Sprintf(" in the journal (its size limit has dropped %d older loads)", x.droppedLoads))
	}
	return nil, "", notFound(" in the journal")
}

// LoadedBetween yields, in ascending id order, the programs of host's
// journal of boot whose LoadTime is within [from, to]: one per load (a
// load recorded again by a writer started again is yielded once).
func (j *Journal) LoadedBetween(host, boot string, from, to time.Duration) iter.Seq2[*bpfprog.Program, error] {
	return func(yield func(*bpfprog.Program, error) bool) {
		h := j.hosts[host]
		if h == nil {
			return
		}
		x, err := h.indexed()
		if err != nil {
			yield(nil, err)
			return
		}
		var last loadRef
		for i, r := range x.loads {
			if x.boots[r.boot] != boot || r.load < from || r.load > to {
				continue
			}
			if i > 0 && r.id == last.id && r.load == last.load && r.boot == last.boot {
				continue
			}
			last = r
			if !yield(h.read(r)) {
				return
			}
		}
	}
}

// clockSlack is how far a load's times may be from where the recording's
// clock says without making it another load: the offset between the
// clocks was measured when the journal's segment began, perhaps days
// before, and perf's clock (local_clock()) drifts from CLOCK_BOOTTIME by
// NTP's corrections, up to 500 ppm. Within a boot an id names one load,
// so the check guards against a gross mistake, not a fine one.
const clockSlack = time.Minute

// before reports whether the load was there when the record naming l was
// written: loaded before it and not unloaded before it (within
// clockSlack), its times placed on the recording's clock as inject places
// load times (System.ClockOf). Where they cannot be placed, it may have
// been.
func (r loadRef) before(l bpfprog.Load, sys bpfprog.System) bool {
	c, err := sys.ClockOf(l.Clock)
	if l.Time == 0 || err != nil {
		return true
	}
	if t, ok := c.LoadedAt(&bpfprog.Program{LoadTime: r.load}); ok && t > l.Time+uint64(clockSlack) {
		return false
	}
	t, ok := c.LoadedAt(&bpfprog.Program{LoadTime: r.unload})
	return r.unload == 0 || !ok || t+uint64(clockSlack) >= l.Time
}

// sameAddrs reports whether p's functions are at addrs, in order.
func sameAddrs(p *bpfprog.Program, addrs []uint64) bool {
	if len(p.Funcs) != len(addrs) {
		return false
	}
	for i, f := range p.Funcs {
		if f.Addr != addrs[i] {
			return false
		}
	}
	return true
}

// Torn says which of the host's segments stop before their end (after
// Find indexed them).
func (h *Host) Torn() []string {
	if h.index == nil {
		return nil
	}
	return h.index.torn
}
