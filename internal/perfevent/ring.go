package perfevent

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// ring is one CPU's event and its mmap'ed ring buffer: a control page
// (struct perf_event_mmap_page) followed by 2^n data pages.
//
// The protocol is the one documented in perf_event.h and used by perf's
// perf_mmap__read_event(): the kernel writes records at data_head and never
// overwrites bytes between data_tail and data_head; the reader loads
// data_head with acquire semantics (the kernel's smp_wmb() pairs with it),
// copies records out, and stores data_tail with release semantics (the
// kernel's smp_mb() pairs with it) to free the space. sync/atomic's loads and
// stores are sequentially consistent, which includes both. Records are
// 8-byte aligned and never bigger than the buffer, but one may wrap around
// its end.
type ring struct {
	cpu  int
	name string // "CPU 3", for errors
	fd   int
	mem  []byte                  // the whole mapping
	meta *unix.PerfEventMmapPage // mem's first page
	data []byte                  // the data pages
	mask uint64                  // len(data) - 1

	head uint64 // data_head as last loaded
	tail uint64 // the next record; stored to data_tail as records are consumed

	wrapped int // records that wrapped around the end of data (for the tests)
}

func openRing(cpu, pages int) (*ring, error) {
	fd, err := unix.PerfEventOpen(attr(), -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, openError(cpu, err)
	}
	return mapRing(fd, cpu, fmt.Sprintf("CPU %d", cpu), pages)
}

// mapRing maps the ring buffer of event fd (of CPU cpu, named name in
// errors), 2^n data pages, and takes fd: closing the ring closes it.
func mapRing(fd, cpu int, name string, pages int) (_ *ring, err error) {
	r := &ring{cpu: cpu, name: name, fd: fd}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	pageSize := os.Getpagesize()
	// PROT_WRITE makes this a non-overwriting buffer: the kernel respects
	// data_tail and counts what it cannot write in PERF_RECORD_LOST.
	r.mem, err = unix.Mmap(fd, 0, (1+pages)*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("%s: mmap of %d pages: %w (over kernel.perf_event_mlock_kb? run as root)", name, 1+pages, err)
		}
		return nil, fmt.Errorf("%s: mmap of %d pages: %w", name, 1+pages, err)
	}
	r.meta = (*unix.PerfEventMmapPage)(unsafe.Pointer(&r.mem[0]))
	off, size := r.meta.Data_offset, r.meta.Data_size
	if size == 0 { // kernels before 4.1 do not fill these in
		off, size = uint64(pageSize), uint64(pages*pageSize)
	}
	if off+size > uint64(len(r.mem)) || size&(size-1) != 0 {
		return nil, fmt.Errorf("%s: kernel reports data at %d+%d in a %d-byte mapping", name, off, size, len(r.mem))
	}
	r.data = r.mem[off : off+size]
	r.mask = size - 1
	r.tail = atomic.LoadUint64(&r.meta.Data_tail)
	r.head = r.tail
	return r, nil
}

// openError explains the usual reasons perf_event_open fails here.
func openError(cpu int, err error) error {
	hint := ""
	switch {
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		// Both errnos are os.ErrPermission to errors.Is.
		hint = " (CPU-wide events need root, CAP_PERFMON, or kernel.perf_event_paranoid <= 0)"
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.E2BIG):
		hint = " (attr.bpf_event and attr.ksymbol need Linux >= 5.1)"
	}
	return fmt.Errorf("perf_event_open on CPU %d: %w%s", cpu, err, hint)
}

// overrunSlack is free space below which the kernel may have dropped a
// record: more than the largest record these events get (a KSYMBOL with a
// KSYM_NAME_LEN name: 552 bytes). The kernel drops a record that does not fit
// (__perf_output_begin), and free space only shrinks until the reader
// consumes, so a ring found with this much free space has dropped nothing
// since it was last read.
const overrunSlack = 1024

// loadHead loads data_head: everything before it is written. It reports
// whether the buffer is so full that records may have been dropped.
func (r *ring) loadHead() (overrun bool) {
	r.head = atomic.LoadUint64(&r.meta.Data_head)
	return uint64(len(r.data))-(r.head-r.tail) < overrunSlack
}

// read copies the record at tail into buf (which holds any record), hands it
// out in rec, and gives its space back to the kernel.
func (r *ring) read(rec *Record, buf []byte) error {
	avail := r.head - r.tail
	if avail < perfdata.EventHeaderSize || avail > uint64(len(r.data)) {
		return r.corrupt(fmt.Sprintf("%d bytes between data_tail and data_head", avail))
	}
	r.copyOut(buf[:perfdata.EventHeaderSize])
	h := perfdata.DecodeEventHeader(buf, binary.NativeEndian)
	size := uint64(h.Size)
	if size < perfdata.EventHeaderSize || size > avail || size%8 != 0 {
		return r.corrupt(fmt.Sprintf("%v record of %d bytes with %d available", h.Type, size, avail))
	}
	raw := buf[:size]
	if r.copyOut(raw) {
		r.wrapped++
	}
	r.tail += size
	atomic.StoreUint64(&r.meta.Data_tail, r.tail)

	*rec = Record{CPU: r.cpu, Header: h, Raw: raw}
	if at := sampleIDOffset(h.Type, raw); at >= 0 && at+sampleIDSize <= len(raw) {
		id := raw[at : at+sampleIDSize]
		rec.SampleID = SampleID{
			PID:  binary.NativeEndian.Uint32(id),
			TID:  binary.NativeEndian.Uint32(id[4:]),
			Time: binary.NativeEndian.Uint64(id[8:]),
		}
	}
	return nil
}

// sampleIDOffset is where the sample_id of a record is: right after its
// fields. It is not always at the end: while several events listen, the
// kernel's perf_event_bpf_output() and perf_event_ksymbol_output() grow the
// one header they share by each event's id_header_size and never shrink it
// back, so such records can end in bytes nobody wrote.
func sampleIDOffset(t perfdata.RecordType, raw []byte) int {
	switch t {
	case perfdata.RecordSample:
		return -1
	case perfdata.RecordBPFEvent:
		return perfdata.EventHeaderSize + 16 // u16 type, u16 flags, u32 id, u8 tag[8]
	case perfdata.RecordKSymbol:
		// u64 addr, u32 len, u16 ksym_type, u16 flags, then the name,
		// NUL-terminated and padded to 8
		const fixed = perfdata.EventHeaderSize + 16
		if len(raw) <= fixed {
			return -1
		}
		n := bytes.IndexByte(raw[fixed:], 0)
		if n < 0 {
			return -1
		}
		return fixed + (n+1+7)&^7
	}
	return len(raw) - sampleIDSize
}

// copyOut copies len(dst) bytes from tail, across the end of the buffer if
// need be, and reports whether it had to.
func (r *ring) copyOut(dst []byte) bool {
	start := r.tail & r.mask
	n := copy(dst, r.data[start:])
	if n == len(dst) {
		return false
	}
	copy(dst[n:], r.data)
	return true
}

func (r *ring) corrupt(what string) error {
	return fmt.Errorf("%s: ring buffer at %d (data_head %d): %s", r.name, r.tail, r.head, what)
}

func (r *ring) close() error {
	var err error
	if r.mem != nil {
		err = unix.Munmap(r.mem)
		r.mem, r.meta, r.data = nil, nil, nil
	}
	if r.fd >= 0 {
		if cerr := unix.Close(r.fd); err == nil {
			err = cerr
		}
		r.fd = -1
	}
	return err
}
