package perfdata

import (
	"encoding/binary"
	"fmt"

	"github.com/bpfmeta/bpfmeta/internal/enum"
)

// ClockID is a clock_gettime(2) clock id, as perf_event_attr.clockid and
// HEADER_CLOCK_DATA hold it (perf record -k).
type ClockID int32

// The clocks the kernel lets a perf event use (perf_event_set_clock():
// any other id is EINVAL), which are those perf record -k accepts.
const (
	ClockRealtime     ClockID = 0
	ClockMonotonic    ClockID = 1
	ClockMonotonicRaw ClockID = 4
	ClockBoottime     ClockID = 7
	ClockTAI          ClockID = 11
)

var clockNames = []string{
	ClockRealtime: "CLOCK_REALTIME", ClockMonotonic: "CLOCK_MONOTONIC",
	ClockMonotonicRaw: "CLOCK_MONOTONIC_RAW", ClockBoottime: "CLOCK_BOOTTIME", ClockTAI: "CLOCK_TAI",
}

// String returns the clock's name in <time.h>, as perf record -k takes it.
func (c ClockID) String() string { return enum.String(clockNames, c, "ClockID") }

// ClockData is the HEADER_CLOCK_DATA feature perf record -k writes
// (record__init_clock(), write_clock_data()): the recording's clock and
// one reading of it taken together with the wall clock, which ties the
// recording's timestamps to the time of day.
type ClockData struct {
	Version uint32  // 1: the only one perf reads (process_clock_data())
	ClockID ClockID // the clock of the recording's timestamps
	// WallNs is gettimeofday() in ns since the epoch (µs resolution);
	// ClockNs is clock_gettime(ClockID) read right after it.
	WallNs, ClockNs uint64
}

// ClockDataSize is the size of a HEADER_CLOCK_DATA section.
const ClockDataSize = 24

// DecodeClockData decodes a HEADER_CLOCK_DATA section, as perf's
// process_clock_data() reads it: a version other than 1 is refused.
func DecodeClockData(b []byte, bo binary.ByteOrder) (ClockData, error) {
	if len(b) < ClockDataSize {
		return ClockData{}, fmt.Errorf("CLOCK_DATA of %d bytes, want %d", len(b), ClockDataSize)
	}
	d := ClockData{Version: bo.Uint32(b), ClockID: ClockID(int32(bo.Uint32(b[4:]))), WallNs: bo.Uint64(b[8:]), ClockNs: bo.Uint64(b[16:])}
	if d.Version != 1 {
		return ClockData{}, fmt.Errorf("CLOCK_DATA version %d, perf reads 1 only", d.Version)
	}
	return d, nil
}
