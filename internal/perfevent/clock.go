package perfevent

import (
	"errors"
	"fmt"
	"runtime"
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
	a := attr() // the side band's sample_id (tid, time), comm records only
	a.Bits = unix.PerfBitSampleIDAll | unix.PerfBitComm
	fd, err := unix.PerfEventOpen(a, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return 0, fmt.Errorf("perf_event_open for the clock: %w", err)
	}
	r, err := mapRing(fd, -1, "the clock's event", 1)
	if err != nil {
		return 0, err
	}
	defer r.close()

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
	r.loadHead()
	var rec Record
	buf := make([]byte, perfdata.MaxRecordSize)
	for r.tail != r.head {
		if err := r.read(&rec, buf); err != nil {
			return 0, err
		}
		if rec.Header.Type == perfdata.RecordComm && rec.SampleID.Time != 0 {
			mid := (before.Nano() + after.Nano()) / 2
			return time.Duration(mid - int64(rec.SampleID.Time)), nil
		}
	}
	return 0, errors.New("no COMM record to read perf's clock from")
}
