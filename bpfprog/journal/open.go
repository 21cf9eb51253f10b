package journal

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io/fs"
	"iter"
	"math"
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
// that Find indexes, 32 bytes a load and 16 a dropped load (16 MiB at
// most): a journal of DefaultMaxSize holds about 100,000 loads of
// programs with metadata, and at most about 400,000 of the smallest
// loads and dropped loads its writer records (TestIndexBound).
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
	// reads counts the records read for lookups (tests).
	reads int
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
			sr := newSegmentReader(f)
			ok := true
			for sr.Next() {
				hd, r := sr.Header(), sr.Record()
				if r.Damaged != "" {
					r.Damaged = f.Name() + ": " + r.Damaged
				}
				if !yield(Entry{Seq: seq, System: hd.System, Started: hd.Started, DroppedSegments: hd.DroppedSegments, DroppedLoads: hd.DroppedLoads, Record: r}, nil) {
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
// programs: per load (loadRef) where it is, what it matches (a hash of its
// tag and addresses) and what its metadata is (a hash of it), so that a
// lookup reads the one record it returns, however many loads of an id the
// journal holds.
type index struct {
	loads   []loadRef // by id, then in journal order
	segs    []segRef  // loadRef.seg indexes them
	dropped []droppedRef
	dropAt  []time.Time // when each dropped record's loads were dropped
	boots   []string    // boot ids
	// droppedLoads counts what the size limit dropped, per the newest
	// segment's header.
	droppedLoads uint64
	torn         []string
	// damaged names the first maxDamagedListed records skipped as
	// damaged (file: offset and why); nDamaged counts them, and
	// damagedBoots by the boot of their segment.
	damaged      []string
	nDamaged     int
	damagedBoots map[uint16]int
	// lost are the loads the writer could not journal (Writer.Lost),
	// by id; lostBoots counts by boot those it knows not the id of
	// (kernel records lost).
	lost      []lostRef
	lostBoots map[uint16]uint64
	// lostSize is what lost keeps, for the memory budget
	lostSize int64
}

// lostRef is a Lost record of one program: its id, the boot of its
// segment and why it was not journaled.
type lostRef struct {
	id   uint32
	boot uint16
	why  string
}

// maxDamagedListed is how many damaged records an index names; it counts
// them all.
const maxDamagedListed = 20

// loadRef is a load of the index: 32 bytes.
type loadRef struct {
	id  uint32
	seg uint32 // in index.segs
	off uint32 // of its frame in the segment
	// key is matchKey of its tag and addresses; md a hash of its
	// metadata as written (metadataKey).
	key, md uint32
	// unload is CLOCK_BOOTTIME at its unload in seconds, rounded up (a
	// load is matched within clockSlack of it); 0 if not seen.
	unload uint32
	load   time.Duration
}

// segRef is a segment of the index.
type segRef struct {
	seq  uint64
	sys  bpfprog.System // its writer's: its clocks
	boot uint16
	// started is CLOCK_BOOTTIME when it was begun: a load its writer
	// found loaded then (a writer started again records them) was read
	// then, not when it was loaded.
	started time.Duration
}

// droppedRef is a load a dropped record names: 16 bytes.
type droppedRef struct {
	id   uint32
	key  uint32 // droppedKey of its tag and main function's address
	at   uint32 // in index.dropAt
	boot uint16
}

// What an index keeps, in bytes, for the memory budget: a load, the map
// entry of a load not yet unloaded while it is read, a dropped load, and
// a lost one (beside its why).
const (
	loadCost    = 32
	liveCost    = 48
	droppedCost = 16
	lostCost    = 32
)

// matchKey hashes what a journal's load must share with a recording's to
// be it: its tag and its functions' addresses. A load whose key is l's is
// read to check them.
func matchKey(tag perfdata.BPFTag, addrs []uint64) uint32 {
	h := fnv.New32a()
	h.Write(tag[:])
	for _, a := range addrs {
		h.Write(binary.LittleEndian.AppendUint64(nil, a))
	}
	return h.Sum32()
}

// droppedKey is matchKey for a dropped load, of which only the main
// function's address is kept.
func droppedKey(tag perfdata.BPFTag, addr uint64) uint32 { return matchKey(tag, []uint64{addr}) }

// indexedLoad is what the index reads of a load's JSON.
type indexedLoad struct {
	ID       uint32          `json:"id"`
	Tag      perfdata.BPFTag `json:"tag"`
	LoadTime time.Duration   `json:"load_time_ns"`
	Funcs    []struct {
		Addr hexAddr `json:"addr"`
	} `json:"funcs"`
	Metadata    json.RawMessage `json:"metadata"`
	MetadataErr json.RawMessage `json:"metadata_error"`
	TooLarge    json.RawMessage `json:"metadata_too_large"`
}

// metadataKey hashes a load's metadata as written: two records of one load
// with the same key have the same metadata.
func (p *indexedLoad) metadataKey() uint32 {
	h := fnv.New32a()
	for _, b := range [][]byte{p.Metadata, p.MetadataErr, p.TooLarge} {
		h.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(b))))
		h.Write(b)
	}
	return h.Sum32()
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
	slices.SortStableFunc(x.loads, x.compareLoads)
	slices.SortStableFunc(x.dropped, func(a, b droppedRef) int { return cmp.Compare(a.id, b.id) })
	h.index = x
	return x, h.charge(x, 0)
}

// charge sets what the index takes of the memory budget, with live loads
// not yet unloaded while it is read.
func (h *Host) charge(x *index, live int) error {
	if err := h.mem.Set(int64(len(x.loads))*loadCost + int64(live)*liveCost + int64(len(x.dropped))*droppedCost + x.lostSize); err != nil {
		return fmt.Errorf("%s: %w: %w", h.Dir, ErrLimit, err)
	}
	return nil
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
	sr := newSegmentReader(f)
	sr.raw = true
	seg := uint32(len(ix.x.segs))
	ix.x.segs = append(ix.x.segs, segRef{seq: seq})
	for sr.Next() {
		sys := sr.System()
		if sys.Hostname != ix.h.Name {
			break // a segment of another host's, copied here: not used
		}
		hd, s := sr.Header(), &ix.x.segs[seg]
		ix.x.droppedLoads = hd.DroppedLoads
		if s.sys.BootID == "" {
			b, err := ix.boot(sys.BootID)
			if err != nil {
				return err
			}
			s.sys, s.boot, s.started = sys, b, hd.Started.Sub(sys.BootTime)
		}
		if sr.Record().Offset > math.MaxUint32 {
			ix.x.torn = append(ix.x.torn, fmt.Sprintf("%s: more than 4 GiB, not read past", f.Name()))
			break
		}
		if err := ix.record(sr, seg, f.Name()); err != nil {
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

// record indexes the record sr is at, in segment seg (file name): a load,
// an unload (of a load indexed), the loads a size limit dropped, or a
// damaged record.
func (ix *indexer) record(sr *segmentReader, seg uint32, name string) error {
	x, h := ix.x, ix.h
	b := x.segs[seg].boot
	r := sr.Record()
	if r.Damaged != "" {
		// it may have been any record of the segment's boot
		if x.nDamaged++; len(x.damaged) < maxDamagedListed {
			x.damaged = append(x.damaged, name+": "+r.Damaged)
		}
		if x.damagedBoots == nil {
			x.damagedBoots = map[uint16]int{}
		}
		x.damagedBoots[b]++
		return nil
	}
	more := 1
	if r.Dropped != nil {
		more = len(r.Dropped.Loads)
	}
	if len(x.loads)+len(x.dropped)+len(x.lost)+more > MaxIndexed {
		return fmt.Errorf("%s: %w: more than %d loads (bpfmeta indexes at most that many of one host)", h.Dir, ErrLimit, MaxIndexed)
	}
	if (len(x.loads)+len(x.dropped)+len(x.lost))%1024 == 0 || more > 1 {
		if err := h.charge(x, len(ix.live)); err != nil {
			return err
		}
	}
	switch {
	case r.Program != nil:
		var p indexedLoad
		if json.Unmarshal(sr.rawLoad, &p) != nil {
			return nil
		}
		addrs := make([]uint64, len(p.Funcs))
		for i, f := range p.Funcs {
			addrs[i] = uint64(f.Addr)
		}
		ix.live[loadKey{b, p.ID}] = len(x.loads)
		x.loads = append(x.loads, loadRef{id: p.ID, seg: seg, off: uint32(r.Offset), key: matchKey(p.Tag, addrs), md: p.metadataKey(), load: p.LoadTime})
	case r.Unload != nil:
		k := loadKey{b, r.Unload.ID}
		if i, ok := ix.live[k]; ok {
			x.loads[i].unload = uint32(min(max((r.Unload.Time+time.Second-1)/time.Second, 1), math.MaxUint32))
			delete(ix.live, k)
		}
	case r.Lost != nil:
		if r.Lost.ID != 0 {
			why := r.Lost.Why
			if len(why) > 200 {
				why = why[:200] + "..."
			}
			x.lost = append(x.lost, lostRef{id: r.Lost.ID, boot: b, why: why})
			x.lostSize += lostCost + int64(len(why))
		}
		if r.Lost.Records > 0 {
			if x.lostBoots == nil {
				x.lostBoots = map[uint16]uint64{}
			}
			x.lostBoots[b] += r.Lost.Records
		}
	case r.Dropped != nil:
		db, err := ix.boot(r.Dropped.BootID)
		if err != nil {
			return err
		}
		at := uint32(len(x.dropAt))
		x.dropAt = append(x.dropAt, r.Dropped.At)
		for _, l := range r.Dropped.Loads {
			x.dropped = append(x.dropped, droppedRef{id: l.ID, boot: db, key: droppedKey(l.Tag, uint64(l.Addr)), at: at})
		}
	}
	return nil
}

// read reads the program of a load from its segment.
func (h *Host) read(l loadRef) (*bpfprog.Program, error) {
	h.reads++
	f, err := h.open(h.index.segs[l.seg].seq)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var fh [frameHeader]byte
	if _, err := f.ReadAt(fh[:], int64(l.off)); err != nil {
		return nil, fmt.Errorf("%s: reading the record at offset %d: %w", f.Name(), l.off, err)
	}
	n := binary.LittleEndian.Uint32(fh[:4])
	if n > MaxRecord {
		return nil, fmt.Errorf("%s: the record at offset %d changed since it was read", f.Name(), l.off)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, int64(l.off)+frameHeader); err != nil {
		return nil, fmt.Errorf("%s: reading the record at offset %d: %w", f.Name(), l.off, err)
	}
	if crc32.Checksum(b, castagnoli) != binary.LittleEndian.Uint32(fh[4:]) {
		return nil, fmt.Errorf("%s: the record at offset %d changed since it was read", f.Name(), l.off)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil || r.Load == nil {
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
// More than one such load is not guessed between (ErrAmbiguous), nor are
// records of the load with different metadata that l.Time cannot choose
// between (resolve); a load that fell out of the journal is told
// (ErrDropped), and one a damaged record may have been (ErrDamaged). All
// three errors wrap bpfprog.ErrNotFound too. An index over its bounds is
// an error wrapping ErrLimit.
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
	hi := lo
	for hi < len(x.loads) && x.loads[hi].id == l.ID {
		hi++
	}
	key := matchKey(l.Tag, l.Addrs)
	exact := func(run []loadRef) uint32 { return key }
	// A load read from a backward ring buffer (perf record --overwrite,
	// as perf daemon runs it) has its BPF_EVENT before its KSYMBOLs, which
	// a sample can come between: its addresses are some of its functions'
	// (the last ones), or none yet. Where no load has them all, a load of
	// the id, boot and time is it if its tag is l's and l's addresses are
	// among its functions'; the caller then matches the others to the
	// KSYMBOLs as they come (inject's awaitFuncs), as it does a
	// snapshot's. The records of one load have one key.
	some := func(run []loadRef) uint32 { return run[0].key }
	search := func(keyOf func([]loadRef) uint32) (one []loadRef, boots []string, n int) {
		for run := range x.runs(x.loads[lo:hi]) {
			r := run[0]
			if boot != "" && x.boots[x.segs[r.seg].boot] != boot || !x.candidate(run, keyOf(run), l) {
				continue
			}
			if n++; n == 1 {
				one = run
			}
			if b := x.boots[x.segs[r.seg].boot]; len(boots) < 4 && !slices.Contains(boots, b) {
				boots = append(boots, b)
			}
		}
		return one, boots, n
	}
	keyOf := exact
	one, boots, n := search(keyOf)
	if n == 0 {
		keyOf = some
		if one, boots, n = search(keyOf); n != 1 {
			n = 0 // as before: none has its addresses
		}
	}
	switch {
	case n > 1:
		return nil, "", notFound(fmt.Sprintf(": %d loads (of boots %v) could be it", n, boots), ErrAmbiguous)
	case n == 1:
		r, err := x.resolve(one, keyOf(one), l)
		if err != nil {
			return nil, "", notFound(": "+err.Error(), ErrAmbiguous)
		}
		p, err := h.read(r)
		if err != nil {
			return nil, "", err
		}
		if r.key != key {
			switch {
			case p.Tag != l.Tag || !someAddrs(p, l.Addrs):
				return nil, "", x.notFound(l, boot, notFound)
			case len(l.Addrs) == 0:
				// the boot is not told by addresses: not taken for the host's
				return p, boots[0], nil
			}
		} else if p.Tag != l.Tag || !sameAddrs(p, l.Addrs) {
			return nil, "", fmt.Errorf("%s: the record at offset %d: not the load its index says", segmentName(x.segs[r.seg].seq), r.off)
		}
		h.boot = boots[0]
		return p, h.boot, nil
	}
	return nil, "", x.notFound(l, boot, notFound)
}

// notFound is the error for l, which no load of the journal is: it fell
// out of it, a damaged record may have been it, or neither.
func (x *index) notFound(l bpfprog.Load, boot string, notFound func(string, ...error) error) error {
	lo, _ := slices.BinarySearchFunc(x.dropped, l.ID, func(r droppedRef, id uint32) int { return cmp.Compare(r.id, id) })
	if len(l.Addrs) > 0 {
		key := droppedKey(l.Tag, l.Addrs[0])
		for i := lo; i < len(x.dropped) && x.dropped[i].id == l.ID; i++ {
			d := x.dropped[i]
			if d.key == key && (boot == "" || x.boots[d.boot] == boot) {
				return notFound(fmt.Sprintf(": it fell out of the journal (dropped %s to keep it under its size limit)", x.dropAt[d.at].Local().Format(time.DateTime)), ErrDropped)
			}
		}
	}
	for _, r := range x.lost {
		if r.id == l.ID && (boot == "" || x.boots[r.boot] == boot) {
			why := ""
			if r.why != "" {
				why = ": " + safetext.Clean(r.why)
			}
			return notFound(why, ErrLost)
		}
	}
	var lost uint64
	for b, n := range x.lostBoots {
		if boot == "" || x.boots[b] == boot {
			lost += n
		}
	}
	if lost > 0 {
		return notFound(fmt.Sprintf(" (maybe: it lost %d kernel %s of its boot, which could have been its load)", lost, plural(int(min(lost, 1<<30)), "record", "records")), ErrLost)
	}
	damaged := 0
	for b, n := range x.damagedBoots {
		if boot == "" || x.boots[b] == boot {
			damaged += n
		}
	}
	if damaged > 0 {
		return notFound(fmt.Sprintf(" in the journal, but %d damaged %s of it could have been it", damaged, plural(damaged, "record", "records")), ErrDamaged)
	}
	if x.droppedLoads > 0 {
		return notFound(fmt.Sprintf(" in the journal (its size limit has dropped %d older loads)", x.droppedLoads))
	}
	return notFound(" in the journal")
}

// runs yields the runs of loads (all of one id, sorted by boot and load
// time) that are one load: of one boot, with one load time. A writer
// started again records the programs loaded again: the same load.
func (x *index) runs(loads []loadRef) iter.Seq[[]loadRef] {
	return func(yield func([]loadRef) bool) {
		for i := 0; i < len(loads); {
			k := i + 1
			for k < len(loads) && x.sameLoad(loads[i], loads[k]) {
				k++
			}
			if !yield(loads[i:k]) {
				return
			}
			i = k
		}
	}
}

func (x *index) sameLoad(a, b loadRef) bool {
	return a.id == b.id && a.load == b.load && x.segs[a.seg].boot == x.segs[b.seg].boot
}

// compareLoads orders loads by id, boot and load time (then the order
// they were journaled in, by a stable sort).
func (x *index) compareLoads(a, b loadRef) int {
	return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(x.segs[a.seg].boot, x.segs[b.seg].boot), cmp.Compare(a.load, b.load))
}

// candidate reports whether run, one load, may be l: a record of it has
// l's key, and it was there when the record naming l was written: loaded
// before it and not unloaded before it (within clockSlack), its times
// placed on the recording's clock as inject places load times
// (System.ClockOf). Where they cannot be placed, it may have been.
func (x *index) candidate(run []loadRef, key uint32, l bpfprog.Load) bool {
	if !slices.ContainsFunc(run, func(r loadRef) bool { return r.key == key }) {
		return false
	}
	r := run[0]
	c, err := x.segs[r.seg].sys.ClockOf(l.Clock)
	if l.Time == 0 || err != nil {
		return true
	}
	if t, ok := c.LoadedAt(&bpfprog.Program{LoadTime: r.load}); ok && t > l.Time+uint64(clockSlack) {
		return false
	}
	// the unload is journaled once, after the load's last record
	var unload uint32
	for _, r := range run {
		unload = max(unload, r.unload)
	}
	t, ok := c.LoadedAt(&bpfprog.Program{LoadTime: time.Duration(unload) * time.Second})
	return unload == 0 || !ok || t+uint64(clockSlack) >= l.Time
}

// resolve picks, among the records of one load with l's key, the one
// whose metadata was in force when the recording read the program: when
// they all have the same metadata, the last; else by the time of the
// record naming l, its PROG_LOAD (perf's side-band thread reads a program
// loaded during the recording then, bpf_event__sb_cb()): the record a
// writer made at the load (its segment began before it) is what perf
// read; without one, against when each record was read (the start of the
// segment of a writer that found it loaded), the value in force is that
// of the last record read before it (or within clockSlack of it), if
// every record read within clockSlack of it, and the first read after it,
// agree; else, and when all were read after it, the journal cannot tell,
// and says so. Without a time (a program perf found loaded,
// whose records have none: perf read it at the start of the recording,
// or at its end for a tail synthesis) records that disagree cannot be
// told apart.
func (x *index) resolve(run []loadRef, key uint32, l bpfprog.Load) (loadRef, error) {
	var last, atLoad, before, after *loadRef
	differ, n := false, 0
	for i := range run {
		r := &run[i]
		if r.key != key {
			continue
		}
		n++
		differ = differ || last != nil && r.md != last.md
		last = r
		if x.segs[r.seg].started <= r.load && atLoad == nil {
			atLoad = r
		}
	}
	switch {
	case !differ:
		return *last, nil
	case l.Time == 0:
		return loadRef{}, fmt.Errorf("%d records of its load have different metadata, and the recording does not say when perf read it", n)
	case atLoad != nil:
		// l is the program's PROG_LOAD (a record with a time is the
		// kernel's): perf read it then, as a writer running then did
		for _, r := range run {
			if r.key == key && x.segs[r.seg].started <= r.load && r.md != atLoad.md {
				return loadRef{}, fmt.Errorf("%d records of its load made when it was loaded have different metadata", n)
			}
		}
		return *atLoad, nil
	}
	for i := range run {
		r := &run[i]
		switch {
		case r.key != key:
		case x.readWhen(r, l) < 0:
			if before == nil || x.seen(r) >= x.seen(before) {
				before = r
			}
		case x.readWhen(r, l) > 0:
			if after == nil || x.seen(r) < x.seen(after) {
				after = r
			}
		}
	}
	// the last read before it, those read within clockSlack of it and
	// the first read after it must agree; read only after it, what was
	// in force then is not known (the metadata changed at some time)
	var within *loadRef
	for i := range run {
		if r := &run[i]; r.key == key && x.readWhen(r, l) == 0 {
			within = r
		}
	}
	if before == nil && within == nil {
		return loadRef{}, fmt.Errorf("%d records of its load have different metadata, all read after its record", n)
	}
	pick := cmp.Or(before, within)
	for i := range run {
		r := &run[i]
		in := r == before || r == after || x.readWhen(r, l) == 0
		if r.key == key && in && r.md != pick.md {
			return loadRef{}, fmt.Errorf("%d records of its load have different metadata, and the time of its record cannot tell which was in force", n)
		}
	}
	return *pick, nil
}

// seen is when r's metadata was read (CLOCK_BOOTTIME): when it was
// loaded, or when its segment began if it was loaded before (a writer
// started again).
func (x *index) seen(r *loadRef) time.Duration { return max(r.load, x.segs[r.seg].started) }

// readWhen places when r was read against the time of l's record: -1
// before it, 1 after it, 0 within clockSlack of it (or not placed).
func (x *index) readWhen(r *loadRef, l bpfprog.Load) int {
	c, err := x.segs[r.seg].sys.ClockOf(l.Clock)
	if err != nil {
		return 0
	}
	t, ok := c.LoadedAt(&bpfprog.Program{LoadTime: x.seen(r)})
	switch {
	case !ok:
		return 0
	case t+uint64(clockSlack) < l.Time:
		return -1
	case t > l.Time+uint64(clockSlack):
		return 1
	}
	return 0
}

// LoadedBetween yields, in ascending id order, the programs of host's
// journal of boot whose LoadTime is within [from, to]: one per load, as
// it was when it was loaded (perf's side-band thread reads it then); one
// whose records cannot tell that (first) with an error wrapping
// ErrAmbiguous.
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
		for run := range x.runs(x.loads) {
			r := run[0]
			if x.boots[x.segs[r.seg].boot] != boot || r.load < from || r.load > to {
				continue
			}
			first, differ := x.first(run)
			p, err := h.read(first)
			if err == nil && differ != nil {
				// its program, to name it, with the error
				err = fmt.Errorf("program %d: %w: %v", p.ID, ErrAmbiguous, differ)
			}
			if !yield(p, err) {
				return
			}
		}
	}
}

// first is the record of a load read first: the one the side-band
// thread's read at its load is (those a writer started again made are
// later). Records of the load with other metadata are an error, unless
// those a writer made at the load agree: what perf read then is not
// known (resolve's rule for a PROG_LOAD).
func (x *index) first(run []loadRef) (loadRef, error) {
	f := slices.MinFunc(run, func(a, b loadRef) int { return cmp.Compare(x.seen(&a), x.seen(&b)) })
	atLoad := x.segs[f.seg].started <= f.load
	for _, r := range run {
		if r.md != f.md && (!atLoad || x.segs[r.seg].started <= r.load) {
			return f, fmt.Errorf("%d records of its load have different metadata, none made when it was loaded, or those made then disagree", len(run))
		}
	}
	return f, nil
}

// clockSlack is how far a load's times may be from where the recording's
// clock says without making it another load: the offset between the
// clocks was measured when the journal's segment began, perhaps days
// before, and perf's clock (local_clock()) drifts from CLOCK_BOOTTIME by
// NTP's corrections, up to 500 ppm. Within a boot an id names one load,
// so the check guards against a gross mistake, not a fine one.
const clockSlack = time.Minute

// sameAddrs reports whether p's functions are at addrs, in order.
// someAddrs reports whether addrs are among the addresses of p's
// functions.
func someAddrs(p *bpfprog.Program, addrs []uint64) bool {
	for _, a := range addrs {
		if !slices.ContainsFunc(p.Funcs, func(f bpfprog.Func) bool { return f.Addr == a }) {
			return false
		}
	}
	return true
}

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

// Damaged counts the records of the host's journal skipped as damaged,
// and names the first of them (file: offset and why), after Find indexed
// them.
func (h *Host) Damaged() (int, []string) {
	if h.index == nil {
		return 0, nil
	}
	return h.index.nDamaged, h.index.damaged
}
