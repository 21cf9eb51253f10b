package perfevent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// PerfClockOffset measures CLOCK_BOOTTIME minus perf's clock: the clock of
// the timestamps in a perf record recording (perf_clock(), the kernel's
// local_clock(), when perf record runs without -k), which is the clock of
// no clock_gettime(2) id. BPF program load times are CLOCK_BOOTTIME; with
// this offset a load time becomes a recording's time, and the other way.
//
// It opens a dummy event on the calling thread with comm records and a
// sample_id time, renames the thread to its own name (a PERF_RECORD_COMM)
// between two readings of CLOCK_BOOTTIME, and takes the record's time as
// their midpoint: exact to the microsecond or two the three steps take.
// The offset is the same for every perf recording of the boot as long as
// the machine does not suspend (CLOCK_BOOTTIME counts suspend, local_clock
// does not). It needs what perf record needs for a task (perf_event_paranoid
// <= 2, the default).
func PerfClockOffset() (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := &unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_SOFTWARE,
		Config:      unix.PERF_COUNT_SW_DUMMY,
		Sample_type: unix.PERF_SAMPLE_TIME,
		Bits:        unix.PerfBitSampleIDAll | unix.PerfBitComm,
	}
	a.Size = uint32(unsafe.Sizeof(*a))
	fd, err := unix.PerfEventOpen(a, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return 0, fmt.Errorf("perf_event_open for the clock: %w", err)
	}
	defer unix.Close(fd)
	page := os.Getpagesize()
	mem, err := unix.Mmap(fd, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return 0, fmt.Errorf("mmap for the clock: %w", err)
	}
	defer unix.Munmap(mem)
	meta := (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))

	var name [16]byte
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0); err != nil {
		return 0, err
	}
	var before, after unix.Timespec
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &before)
	err = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &after)
	if err != nil {
		return 0, err
	}

	head := atomic.LoadUint64(&meta.Data_head)
	data := mem[page:]
	bo := binary.NativeEndian
	for off := uint64(0); off+perfdata.EventHeaderSize <= head && off+perfdata.EventHeaderSize <= uint64(len(data)); {
		h := perfdata.DecodeEventHeader(data[off:], bo)
		if h.Size < perfdata.EventHeaderSize || off+uint64(h.Size) > uint64(len(data)) {
			break
		}
		if h.Type == perfdata.RecordComm && h.Size >= perfdata.EventHeaderSize+8+8 {
			t := bo.Uint64(data[off+uint64(h.Size)-8:])
			mid := (before.Nano() + after.Nano()) / 2
			return time.Duration(mid - int64(t)), nil
		}
		off += uint64(h.Size)
	}
	return 0, errors.New("no COMM record to read perf's clock from")
}
