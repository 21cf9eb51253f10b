package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Options configure a Writer.
type Options struct {
	// MaxSize bounds the bytes of the host's segments together; 0 means
	// DefaultMaxSize. Within [MinMaxSize, MaxMaxSize].
	MaxSize int64
	// SegmentSize is the size a segment is rotated at; 0 means MaxSize/16,
	// within [64 KiB, 16 MiB]. At most MaxSize/4, at least MaxSize/4096.
	SegmentSize int64
	// SyncEvery is the most time a record waits to be synced; 0 means a
	// second.
	SyncEvery time.Duration
	// Now is the clock records are dated by; nil means time.Now (tests).
	Now func() time.Time
}

// MinMaxSize and MaxMaxSize bound Options.MaxSize. The smallest leaves
// room for a new segment with a record of MaxRecord bytes (rotate keeps
// SegmentSize+MaxRecord free) and older segments that hold twice as much
// again. The largest is the default: the most a reader reads of a host's
// journal (MaxHostBytes), whose index is sure to stay within its bound
// (MaxIndexed; TestIndexBound: 9.3 MiB for 128 MiB of the smallest loads
// and unloads, of inject's 40 MiB budget).
const (
	MinMaxSize = 4 << 20
	MaxMaxSize = DefaultMaxSize
	// maxSegmentsKept bounds MaxSize/SegmentSize: a quarter of what a
	// reader reads (MaxSegments), the rest left to segments begun by
	// writers started again.
	maxSegmentsKept = MaxSegments / 4
)

// Stats say what a Writer did.
type Stats struct {
	Loads, Unloads  uint64 // records written
	Lost            uint64 // lost records written (Writer.Lost)
	Segments        int    // segments now in the journal
	Bytes           int64  // their bytes
	DroppedSegments uint64 // segments dropped by the size limit, since the journal began
	DroppedLoads    uint64 // loads in them
	Syncs           uint64
}

// Writer appends to one host's journal. Its methods may be called from
// several goroutines; a timer syncs what a burst left unsynced.
type Writer struct {
	mu     sync.Mutex
	dir    *os.File // DIR/HOST
	sys    bpfprog.System
	opts   Options
	f      *os.File // the current segment
	seq    uint64
	size   int64 // of the current segment
	segs   []segInfo
	buf    []byte
	dirty  bool
	synced time.Time
	timer  *time.Timer
	stats  Stats
	err    error // sticks
	said   bool  // err was returned to a caller of append: Close does not again
	closed bool
}

// segInfo is one segment of the journal, oldest first.
type segInfo struct {
	seq  uint64
	size int64
}

// Create opens the journal of sys.Hostname under dir (dir/HOST, both made
// mode 0700 if missing; see outfile.JournalDir), and begins a new segment
// after those it has: a writer started again continues the journal.
func Create(dir string, sys bpfprog.System, opts Options) (*Writer, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if err := checkHost(sys.Hostname); err != nil {
		return nil, err
	}
	top, err := outfile.JournalDir(dir)
	if err != nil {
		return nil, err
	}
	hd, err := outfile.SubDir(top, sys.Hostname, top.Name()+"/"+sys.Hostname)
	top.Close()
	if err != nil {
		return nil, err
	}
	w := &Writer{dir: hd, sys: sys, opts: opts}
	if err := w.resume(); err != nil {
		hd.Close()
		return nil, err
	}
	if err := w.rotate(); err != nil {
		w.closeFiles()
		return nil, err
	}
	return w, nil
}

// checkHost refuses a hostname that is no directory name.
func checkHost(h string) error {
	if h == "" || h == "." || h == ".." || strings.ContainsAny(h, "/\x00") {
		return fmt.Errorf("journal: the hostname %q cannot name a directory", h)
	}
	return nil
}

// CheckMaxSize refuses a size limit outside [MinMaxSize, MaxMaxSize]
// (Options.MaxSize, watch --max-size).
func CheckMaxSize(n int64) error {
	if n < MinMaxSize || n > MaxMaxSize {
		return fmt.Errorf("journal: a size limit of %d bytes: at least %d MiB and at most %d MiB", n, MinMaxSize>>20, MaxMaxSize>>20)
	}
	return nil
}

func (o *Options) fill() error {
	if o.MaxSize == 0 {
		o.MaxSize = DefaultMaxSize
	}
	if err := CheckMaxSize(o.MaxSize); err != nil {
		return err
	}
	if o.SegmentSize == 0 {
		o.SegmentSize = min(max(o.MaxSize/16, 64<<10), 16<<20)
	}
	if o.SegmentSize > o.MaxSize/4 || o.SegmentSize < 4096 || o.SegmentSize < o.MaxSize/maxSegmentsKept {
		return fmt.Errorf("journal: a segment size of %d bytes with a size limit of %d", o.SegmentSize, o.MaxSize)
	}
	if o.SyncEvery == 0 {
		o.SyncEvery = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// segmentName is the file name of segment seq.
func segmentName(seq uint64) string { return fmt.Sprintf("%016x%s", seq, segmentSuffix) }

// parseSegmentName is segmentName the other way round.
func parseSegmentName(name string) (uint64, bool) {
	hex, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(hex) != 16 {
		return 0, false
	}
	seq, err := strconv.ParseUint(hex, 16, 64)
	return seq, err == nil
}

// resume learns the segments the journal has, and the drop counts of the
// last one's header.
func (w *Writer) resume() error {
	names, err := w.dir.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("journal: %s: %w", w.dir.Name(), err)
	}
	for _, n := range names {
		seq, ok := parseSegmentName(n)
		if !ok {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(int(w.dir.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("journal: %s/%s: %w", w.dir.Name(), n, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fmt.Errorf("journal: %s/%s: not a regular file", w.dir.Name(), n)
		}
		w.segs = append(w.segs, segInfo{seq: seq, size: st.Size})
		w.stats.Bytes += st.Size
	}
	slices.SortFunc(w.segs, func(a, b segInfo) int { return compareSeq(a.seq, b.seq) })
	if n := len(w.segs); n > 0 {
		w.seq = w.segs[n-1].seq
	}
	// the counts of the newest header (a segment cut before its header has none)
	for i := len(w.segs) - 1; i >= 0; i-- {
		if h, err := w.readHeader(w.segs[i].seq); err == nil {
			w.stats.DroppedSegments, w.stats.DroppedLoads = h.DroppedSegments, h.DroppedLoads
			break
		}
	}
	return nil
}

func compareSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// openSegment opens segment seq of the writer's directory for reading.
func (w *Writer) openSegment(seq uint64) (*os.File, error) {
	fd, err := unix.Openat(int(w.dir.Fd()), segmentName(seq), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: %s/%s: %w", w.dir.Name(), segmentName(seq), err)
	}
	return os.NewFile(uintptr(fd), w.dir.Name()+"/"+segmentName(seq)), nil
}

func (w *Writer) readHeader(seq uint64) (*segmentHeader, error) {
	f, err := w.openSegment(seq)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sr := newSegmentReader(f)
	if !sr.Next() {
		return nil, fmt.Errorf("journal: %s: no header", f.Name())
	}
	return sr.header, nil
}

// Load appends a program's load.
func (w *Writer) Load(p *bpfprog.Program) error {
	if err := p.Check(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("journal: program %d: %w", p.ID, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.append(record{Load: b}); err != nil {
		return err
	}
	w.stats.Loads++
	return nil
}

// Unload appends a program's unload: its id and tag, and the time of its
// PROG_UNLOAD on CLOCK_BOOTTIME.
func (w *Writer) Unload(id uint32, tag perfdata.BPFTag, bootTime time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	u := &Unload{ID: id, Tag: tag, Time: bootTime, At: w.sys.BootTime.Add(bootTime).UTC()}
	if err := w.append(record{Unload: u}); err != nil {
		return err
	}
	w.stats.Unloads++
	return nil
}

// Lost appends a load the writer's watch could not journal, or a count
// of records the kernel lost (Lost).
func (w *Writer) Lost(l Lost) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	l.At = w.opts.Now().UTC()
	if err := w.append(record{Lost: &l}); err != nil {
		return err
	}
	w.stats.Lost++
	return nil
}

// append writes one record, in one write(2), rotating first if the
// segment is full; and syncs it, or has it synced within SyncEvery.
func (w *Writer) append(r record) error {
	switch {
	case w.closed:
		return errors.New("journal: write after Close")
	case w.err != nil:
		w.said = true
		return w.err
	}
	payload, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if len(payload) > MaxRecord {
		return fmt.Errorf("journal: a record of %d bytes, more than %d", len(payload), MaxRecord)
	}
	if w.size+frameHeader+int64(len(payload)) > w.opts.SegmentSize {
		if err := w.rotate(); err != nil {
			w.err, w.said = err, true
			return err
		}
	}
	if err := w.write(payload); err != nil {
		w.err, w.said = err, true
		return err
	}
	return nil
}

// write writes one frame to the current segment.
func (w *Writer) write(payload []byte) error {
	w.buf = frame(w.buf[:0], payload)
	if _, err := w.f.Write(w.buf); err != nil {
		return fmt.Errorf("journal: writing %s: %w", w.f.Name(), err)
	}
	if cap(w.buf) > 64<<10 {
		w.buf = nil // a large record's buffer is not kept
	}
	n := int64(frameHeader + len(payload))
	w.size += n
	w.stats.Bytes += n
	w.segs[len(w.segs)-1].size = w.size
	w.dirty = true
	return w.syncSoon()
}

// syncSoon syncs the segment if the last sync is SyncEvery ago, or has
// the timer do it then.
func (w *Writer) syncSoon() error {
	if since := w.opts.Now().Sub(w.synced); since >= w.opts.SyncEvery {
		return w.sync()
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(w.opts.SyncEvery-w.opts.Now().Sub(w.synced), w.timed)
	}
	return nil
}

// timed is the timer's sync.
func (w *Writer) timed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.closed || w.err != nil || !w.dirty {
		return
	}
	if err := w.sync(); err != nil {
		w.err = err
	}
}

func (w *Writer) sync() error {
	w.synced = w.opts.Now()
	if !w.dirty {
		return nil
	}
	if err := unix.Fdatasync(int(w.f.Fd())); err != nil {
		return fmt.Errorf("journal: syncing %s: %w", w.f.Name(), err)
	}
	w.dirty = false
	w.stats.Syncs++
	return nil
}

// rotate finishes the current segment, drops the oldest segments until a
// new one fits under MaxSize, and begins it: its header, then what the
// dropped segments' loads were.
func (w *Writer) rotate() error {
	if w.f != nil {
		if err := w.sync(); err != nil {
			return err
		}
		if err := w.f.Close(); err != nil {
			return fmt.Errorf("journal: %s: %w", w.f.Name(), err)
		}
		w.f = nil
	}
	var dropped []*Dropped
	for len(w.segs) > 0 && w.stats.Bytes+w.opts.SegmentSize+MaxRecord > w.opts.MaxSize {
		d, err := w.drop()
		if err != nil {
			return err
		}
		dropped = append(dropped, d...)
	}
	if err := w.begin(); err != nil {
		return err
	}
	for _, d := range dropped {
		b, err := json.Marshal(record{Dropped: d})
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		if err := w.write(b); err != nil {
			return err
		}
	}
	return nil
}

// begin creates the next segment and writes its magic and header. A
// segment it cannot write them to (ENOSPC) is removed: a service
// restarted on a full file system does not leave an empty segment a
// start.
func (w *Writer) begin() error {
	h := &segmentHeader{Header: doc.NewHeader(doc.KindJournal), Seq: w.seq + 1, System: w.sys, Started: w.opts.Now().UTC(),
		DroppedSegments: w.stats.DroppedSegments, DroppedLoads: w.stats.DroppedLoads}
	b, err := json.Marshal(record{Segment: h})
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	f, err := outfile.CreateAt(w.dir, segmentName(h.Seq))
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	w.seq++
	w.f, w.size = f, 0
	w.segs = append(w.segs, segInfo{seq: w.seq})
	if _, err = io.WriteString(f, magic); err == nil {
		w.size += int64(len(magic))
		w.stats.Bytes += int64(len(magic))
		err = w.write(b)
	} else {
		err = fmt.Errorf("journal: writing %s: %w", f.Name(), err)
	}
	if err != nil {
		f.Close()
		w.f = nil
		w.stats.Bytes -= w.size
		w.segs = w.segs[:len(w.segs)-1]
		if uerr := unix.Unlinkat(int(w.dir.Fd()), segmentName(w.seq), 0); uerr != nil {
			return fmt.Errorf("%w; and removing it: %v", err, uerr)
		}
		unix.Fsync(int(w.dir.Fd()))
	}
	return err
}

// drop removes the oldest segment, and returns the records that name its
// loads (at most maxDroppedPerRecord loads each).
func (w *Writer) drop() ([]*Dropped, error) {
	old := w.segs[0]
	var out []*Dropped
	loads := uint64(0)
	if f, err := w.openSegment(old.seq); err == nil {
		sr := newSegmentReader(f)
		sr.raw = true // only what names a load is decoded
		now := w.opts.Now().UTC()
		var cur *Dropped
		for sr.Next() {
			if sr.Record().Program == nil {
				continue
			}
			var p struct {
				DroppedLoad
				Funcs []struct {
					Addr hexAddr `json:"addr"`
				} `json:"funcs"`
			}
			if json.Unmarshal(sr.rawLoad, &p) != nil {
				continue
			}
			loads++
			if cur == nil || len(cur.Loads) == maxDroppedPerRecord {
				cur = &Dropped{At: now, Seq: old.seq, BootID: sr.System().BootID}
				out = append(out, cur)
			}
			if len(p.Funcs) > 0 {
				p.Addr = p.Funcs[0].Addr
			}
			cur.Loads = append(cur.Loads, p.DroppedLoad)
		}
		f.Close()
	}
	// A segment that cannot be read is dropped all the same: the size
	// limit holds whatever is in it.
	if err := unix.Unlinkat(int(w.dir.Fd()), segmentName(old.seq), 0); err != nil && err != unix.ENOENT {
		return nil, fmt.Errorf("journal: removing %s/%s: %w", w.dir.Name(), segmentName(old.seq), err)
	}
	if err := unix.Fsync(int(w.dir.Fd())); err != nil {
		return nil, fmt.Errorf("journal: syncing %s: %w", w.dir.Name(), err)
	}
	w.segs = w.segs[1:]
	w.stats.Bytes -= old.size
	w.stats.DroppedSegments++
	w.stats.DroppedLoads += loads
	return out, nil
}

// Stats says what the writer did.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Segments = len(w.segs)
	return s
}

// Dir is the host's directory the writer writes in.
func (w *Writer) Dir() string { return w.dir.Name() }

// Close syncs and closes the journal. Its error is not the one a write
// already returned.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	var err error
	switch {
	case w.err != nil && !w.said:
		err = w.err // a timed sync's
	case w.err == nil && w.f != nil:
		err = w.sync()
	}
	return errors.Join(err, w.closeFiles())
}

func (w *Writer) closeFiles() error {
	var err error
	if w.f != nil {
		err = w.f.Close()
		w.f = nil
	}
	return errors.Join(err, w.dir.Close())
}
