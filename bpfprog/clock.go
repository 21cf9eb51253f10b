package bpfprog

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// RecordingClock is the clock of a recording's timestamps, as the
// recording says it: perf's own clock (local_clock(), perf_clock()) unless
// perf record -k set the events' use_clockid; then the clock_gettime(2)
// clock of attr.clockid, and, since perf 5.10, a reading of it taken with
// the time of day (HEADER_CLOCK_DATA).
type RecordingClock struct {
	// UseClockID is the events' attr.use_clockid, ID their attr.clockid.
	UseClockID bool
	ID         perfdata.ClockID
	// Data is the recording's HEADER_CLOCK_DATA; Version 0 if it has none.
	Data perfdata.ClockData
}

// String names the clock as perf record -k does, or "perf's clock".
func (c RecordingClock) String() string {
	if !c.UseClockID {
		return "perf's clock"
	}
	return c.ID.String()
}

// ErrClockUnplaced is what the error ClockOf returns is (errors.Is), for
// a recording whose clock a source's load times cannot be placed on.
var ErrClockUnplaced = errors.New("the recording's clock cannot be tied to the programs' load times")

// ClockError says why a source's load times cannot be placed on a
// recording's clock.
type ClockError struct {
	Clock  RecordingClock
	Reason string
}

func (e *ClockError) Error() string        { return e.Reason }
func (e *ClockError) Is(target error) bool { return target == ErrClockUnplaced }

// LoadClock places a source's load times (bpf_prog_info.load_time,
// CLOCK_BOOTTIME) on the clock of one recording: the one rule by which
// inject finds the programs loaded while a recording was made.
type LoadClock struct {
	// offset is the recording's clock minus CLOCK_BOOTTIME.
	offset time.Duration
}

// ClockOf returns how s's load times map onto the clock c of a recording
// of the same boot. BOOTTIME is the load times' own clock. Perf's clock is
// s.PerfClockOffset away from it, as measured when s was read. The other
// clocks are tied to the time of day by the recording's CLOCK_DATA (clock
// minus wall clock, as perf's process_clock_data() reads it, the reading
// perf record__init_clock() took when it started), and the time of day to
// CLOCK_BOOTTIME by s.BootTime; those two differences change only when the
// time of day is set or a leap second is inserted, not by the rate
// corrections of NTP, and CLOCK_REALTIME needs no CLOCK_DATA. The error
// is a *ClockError (ErrClockUnplaced) that says why.
func (s System) ClockOf(c RecordingClock) (LoadClock, error) {
	unplaced := func(format string, args ...any) (LoadClock, error) {
		return LoadClock{}, &ClockError{Clock: c, Reason: fmt.Sprintf(format, args...)}
	}
	if !c.UseClockID {
		if s.PerfClockOffset == 0 {
			return unplaced("the source does not say how its clock relates to perf's (a portable snapshot, or one of an older bpfmeta)")
		}
		return LoadClock{-s.PerfClockOffset}, nil
	}
	switch c.ID {
	case perfdata.ClockBoottime:
		return LoadClock{0}, nil
	case perfdata.ClockRealtime, perfdata.ClockTAI, perfdata.ClockMonotonic, perfdata.ClockMonotonicRaw:
	default:
		return unplaced("the recording's clock is %v, which no perf event uses", c.ID)
	}
	if s.BootTime.IsZero() {
		return unplaced("the recording's clock is %v, and the source does not say when its machine booted", c.ID)
	}
	boot := s.BootTime.UnixNano() // CLOCK_REALTIME minus CLOCK_BOOTTIME
	switch {
	case c.Data.Version != 0 && c.Data.ClockID != c.ID:
		return unplaced("the recording's events are of %v, its CLOCK_DATA of %v", c.ID, c.Data.ClockID)
	case c.Data.Version != 0:
		d := int64(c.Data.ClockNs - c.Data.WallNs) // the clock minus the time of day, wrapped
		if off, ok := add(boot, d); ok {
			return LoadClock{time.Duration(off)}, nil
		}
		return unplaced("the recording's CLOCK_DATA says %v is %d ns from the time of day", c.ID, d)
	case c.ID == perfdata.ClockRealtime:
		return LoadClock{time.Duration(boot)}, nil
	}
	return unplaced("the recording's clock is %v, and it has no CLOCK_DATA to tie that to the time of day (perf record before 5.10 wrote none)", c.ID)
}

// add is a+b, and whether it did not overflow.
func add(a, b int64) (int64, bool) {
	c := a + b
	return c, (c > a) == (b > 0)
}

// LoadedAt is when p was loaded on the recording's clock, and whether
// that is known (a load time of 0 is none) and not before its epoch.
func (c LoadClock) LoadedAt(p *Program) (uint64, bool) {
	t, ok := add(int64(p.LoadTime), int64(c.offset))
	if p.LoadTime <= 0 || !ok || t < 0 {
		return 0, false
	}
	return uint64(t), true
}

// Span is the span of LoadTime of the programs loaded between the
// recording's times first and last, both included: LoadedAt the other way
// round. false where it does not fit a time.Duration.
func (c LoadClock) Span(first, last uint64) (from, to time.Duration, ok bool) {
	if first > last || last > math.MaxInt64 {
		return 0, 0, false
	}
	f, ok1 := add(int64(first), -int64(c.offset))
	l, ok2 := add(int64(last), -int64(c.offset))
	if !ok1 || !ok2 || c.offset == math.MinInt64 {
		return 0, 0, false
	}
	return time.Duration(f), time.Duration(l), true
}
