// Package perfevent opens perf's BPF side-band events and reads their ring buffers.
//
// It follows the kernel's BPF program loads the way perf record's side-band
// thread does (tools/perf/util/bpf-event.c, evlist__add_bpf_sb_event()): one
// PERF_TYPE_SOFTWARE/PERF_COUNT_SW_DUMMY event per online CPU (pid -1) with
// attr.bpf_event and attr.ksymbol set, whose mmap'ed ring buffers receive a
// PERF_RECORD_BPF_EVENT and the PERF_RECORD_KSYMBOLs of every BPF program
// loaded or unloaded on the machine, waking the reader for every record.
//
// It is only the perf_event_open(2), mmap and ring-buffer layer: a SideBand
// hands out records as the kernel wrote them, and package perfdata decodes
// them. It knows nothing about the programs themselves (bpfprog/live reads
// those). cilium/ebpf's perf.Reader is not usable for this: it reads
// BPF_MAP_TYPE_PERF_EVENT_ARRAY maps (PERF_COUNT_SW_BPF_OUTPUT samples),
// opens its events itself and treats records other than samples and
// PERF_RECORD_LOST as errors.
//
// Opening the events needs CAP_PERFMON or CAP_SYS_ADMIN (root), or
// kernel.perf_event_paranoid <= 0: they are CPU-wide.
package perfevent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// defaultRingPages is the size of each CPU's ring buffer in pages when
// Options.RingPages is 0: 256 KiB with 4 KiB pages, room for about 2000
// program loads (a BPF_EVENT and a KSYMBOL of ~150 bytes each) before the
// kernel has to drop records for a reader that does not keep up.
const defaultRingPages = 64

// Options configure a SideBand.
type Options struct {
	// RingPages is the number of data pages of each CPU's ring buffer, a
	// power of two; 0 means defaultRingPages.
	RingPages int
}

// Bits of perf_event_attr that golang.org/x/sys/unix has no names for
// (include/uapi/linux/perf_event.h: ksymbol is bit 29, bpf_event bit 30 of
// the flags word).
const (
	attrBitKSymbol  = unix.CBitFieldMaskBit29
	attrBitBPFEvent = unix.CBitFieldMaskBit30
)

// sampleType is the attr.sample_type of the events: with sample_id_all, every
// record ends with the sample_id {u32 pid, tid; u64 time}, in this order
// (perf_event.h, struct sample_id).
const (
	sampleType   = unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME
	sampleIDSize = 16
)

// Clock is the clock of SampleID.Time (attr.use_clockid, attr.clockid), so
// that a reader can tell how long ago a record was written.
const Clock = unix.CLOCK_MONOTONIC

// onlineCPUs lists the CPUs perf opens per-CPU events on.
const onlineCPUs = "/sys/devices/system/cpu/online"

// SampleID is the sample_id trailer of a record.
type SampleID struct {
	PID, TID uint32 // the task the record is about: for a BPF_EVENT, the loader
	Time     uint64 // when the kernel wrote the record, in ns of Clock
}

// Record is one record from a CPU's ring buffer.
type Record struct {
	CPU    int
	Header perfdata.EventHeader
	// Raw is the record, header and sample_id trailer included, in the
	// host's byte order (binary.NativeEndian). It is valid until the next call of Next.
	Raw      []byte
	SampleID SampleID
}

// Lost is PERF_RECORD_LOST: header | u64 id | u64 lost | sample_id. The
// kernel writes it into a ring buffer once there is room again, after it had
// to drop Lost records because the reader did not keep up.
type Lost struct {
	ID   uint64 // the event's id
	Lost uint64 // records dropped
}

// DecodeLost decodes a PERF_RECORD_LOST record (raw includes the header).
func DecodeLost(raw []byte) (Lost, error) {
	if len(raw) < 24 {
		return Lost{}, fmt.Errorf("LOST record of %d bytes, want at least 24", len(raw))
	}
	return Lost{ID: binary.NativeEndian.Uint64(raw[8:]), Lost: binary.NativeEndian.Uint64(raw[16:])}, nil
}

// SideBand is the set of per-CPU events. Records are read with Next and
// Record; Wait blocks until there is something to read. A SideBand is used
// by one goroutine, except for Wake.
type SideBand struct {
	rings  []*ring
	epfd   int
	wakefd int // eventfd: Wake makes Wait return
	events []unix.EpollEvent

	cur        int  // ring Next reads from
	headLoaded bool // cur's data_head was loaded in this pass
	overrun    bool // a ring was found nearly full
	rec        Record
	buf        []byte
	err        error
}

// Open opens the events on every online CPU, enabled: from its return on,
// every BPF program load is recorded in the ring buffers.
func Open(opts Options) (_ *SideBand, err error) {
	pages := opts.RingPages
	if pages == 0 {
		pages = defaultRingPages
	}
	if pages < 0 || pages&(pages-1) != 0 {
		return nil, fmt.Errorf("ring buffer of %d pages: want a power of two", pages)
	}
	cpus, err := readCPUList(onlineCPUs)
	if err != nil {
		return nil, err
	}
	s := &SideBand{epfd: -1, wakefd: -1, buf: make([]byte, perfdata.MaxRecordSize)}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	if s.wakefd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := s.poll(s.wakefd); err != nil {
		return nil, err
	}
	for _, cpu := range cpus {
		r, err := openRing(cpu, pages)
		if err != nil {
			return nil, err
		}
		s.rings = append(s.rings, r)
		if err := s.poll(r.fd); err != nil {
			return nil, err
		}
	}
	s.events = make([]unix.EpollEvent, len(s.rings)+1)
	return s, nil
}

func (s *SideBand) poll(fd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// attr is the event perf's side-band thread opens, plus ksymbol and the
// sample_id fields.
func attr() *unix.PerfEventAttr {
	a := &unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_SOFTWARE,
		Config:      unix.PERF_COUNT_SW_DUMMY,
		Sample_type: sampleType,
		Bits: unix.PerfBitWatermark | unix.PerfBitSampleIDAll | unix.PerfBitUseClockID |
			attrBitKSymbol | attrBitBPFEvent,
		// With watermark set this is wakeup_watermark: wake the reader as
		// soon as one byte is in the buffer, that is for every record, as
		// perf's side-band event does. (wakeup_events counts samples only,
		// and this event has none.)
		Wakeup:  1,
		Clockid: Clock,
	}
	a.Size = uint32(unsafe.Sizeof(*a))
	return a
}

// CPUs returns the CPUs the SideBand reads, in ring order.
func (s *SideBand) CPUs() []int {
	cpus := make([]int, len(s.rings))
	for i, r := range s.rings {
		cpus[i] = r.cpu
	}
	return cpus
}

// Next reads the next record, going through the rings in turn; it returns
// false when every ring was empty at the time it was looked at, or on an
// error (see Err). A ring's records are handed out up to the data_head seen
// when Next got to it, so a busy CPU does not starve the others; after false,
// call Wait, then Next again.
func (s *SideBand) Next() bool {
	if s.err != nil {
		return false
	}
	for s.cur < len(s.rings) {
		r := s.rings[s.cur]
		if !s.headLoaded {
			if r.loadHead() {
				s.overrun = true
			}
			s.headLoaded = true
		}
		if r.tail != r.head {
			if err := r.read(&s.rec, s.buf); err != nil {
				s.err = err
				return false
			}
			return true
		}
		s.cur++
		s.headLoaded = false
	}
	s.cur = 0
	return false
}

// Overrun reports whether, since its last call, Next found a ring buffer so
// full that the kernel may have dropped records. The kernel says how many
// with a PERF_RECORD_LOST, but only once it writes the next record into that
// buffer, which may be much later, or never; Overrun says it at once.
func (s *SideBand) Overrun() bool {
	o := s.overrun
	s.overrun = false
	return o
}

// Record returns the record Next read.
func (s *SideBand) Record() *Record { return &s.rec }

// Err returns the error that stopped Next. The kernel writes well-formed
// records only, so an error means the ring buffer is not what it should be;
// it sticks.
func (s *SideBand) Err() error { return s.err }

// Wait blocks until a ring buffer has records, Wake is called, or timeout
// passes (timeout < 0: no timeout). It may return early.
func (s *SideBand) Wait(timeout time.Duration) error {
	msec := -1
	if timeout >= 0 {
		msec = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	n, err := unix.EpollWait(s.epfd, s.events, msec)
	if errors.Is(err, unix.EINTR) {
		return nil // Go's preemption signals interrupt system calls
	}
	if err != nil {
		return fmt.Errorf("epoll_wait: %w", err)
	}
	for _, ev := range s.events[:n] {
		fd := int(ev.Fd)
		if fd == s.wakefd {
			var b [8]byte
			unix.Read(s.wakefd, b[:]) // reset the counter; EAGAIN if another Wait took it
			continue
		}
		if ev.Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			// The event is gone (its CPU went offline): stop polling it,
			// or epoll would report it forever. Next still drains it.
			unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		}
	}
	return nil
}

// Wake makes a Wait in another goroutine return (or the next one, if none
// is waiting). It is safe to call concurrently with everything but Close.
func (s *SideBand) Wake() error {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	if _, err := unix.Write(s.wakefd, one[:]); err != nil && !errors.Is(err, unix.EAGAIN) {
		return fmt.Errorf("waking the reader: %w", err)
	}
	return nil
}

// Close disables the events and frees the ring buffers.
func (s *SideBand) Close() error {
	var first error
	for _, r := range s.rings {
		if err := r.close(); err != nil && first == nil {
			first = err
		}
	}
	s.rings = nil
	for _, fd := range []*int{&s.wakefd, &s.epfd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	return first
}

// readCPUList parses a sysfs CPU list such as "0-3,8,10-11".
func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	cpus, err := parseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cpus, nil
}

func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %w", s, err)
			}
		}
		if first < 0 || last < first {
			return nil, fmt.Errorf("CPU list %q: bad range %q", s, part)
		}
		for cpu := first; cpu <= last; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("CPU list %q is empty", s)
	}
	return cpus, nil
}
