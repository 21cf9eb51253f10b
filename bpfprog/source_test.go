package bpfprog

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Span is LoadedAt the other way round: every program LoadedAt places in
// [first, last] has its LoadTime in the span, and no other with a
// LoadTime it can place; where the span does not fit a Duration, there is
// none (and a caller reads every program).
func TestLoadClockSpan(t *testing.T) {
	const maxD = time.Duration(math.MaxInt64)
	for _, c := range []struct {
		off         time.Duration // the recording's clock minus CLOCK_BOOTTIME
		first, last uint64
		ok          bool
	}{
		{-1000, 5000, 9000, true},
		{1442231, 5000000, 9000000, true},
		{1442231, 5, 9, true}, // the span starts before boot
		{0, 5000, 9000, true}, // CLOCK_BOOTTIME
		{-1000, 9000, 5000, false},
		{-1000, 5000, math.MaxInt64 + 1, false},
		{-1000, 5000, math.MaxInt64 - 999, false}, // last - off overflows
		{-1000, 5000, math.MaxInt64 - 1000, true},
		{math.MaxInt64, 0, math.MaxInt64, true},
		{math.MinInt64, 0, 5, false},
		// CLOCK_REALTIME of 2026: the load times of this boot are 1.8e18 before
		{1796427090287551195, 1796427090287551195 + 1e9, 1796427090287551195 + 3e9, true},
	} {
		lc := LoadClock{c.off}
		from, to, ok := lc.Span(c.first, c.last)
		if ok != c.ok {
			t.Errorf("offset %d, [%d, %d]: ok %v, want %v", c.off, c.first, c.last, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		for _, lt := range []time.Duration{1, from - 1, from, from + 1, to - 1, to, to + 1, maxD} {
			if lt <= 0 {
				continue
			}
			pt, placed := lc.LoadedAt(&Program{LoadTime: lt})
			inRecording := placed && pt >= c.first && pt <= c.last
			if inSpan := lt >= from && lt <= to; inRecording != inSpan {
				t.Errorf("offset %d, [%d, %d]: load time %d: in the recording %v, in the span [%d, %d] %v", c.off, c.first, c.last, lt, inRecording, from, to, inSpan)
			}
		}
	}
}

// ClockOf places a load time on every clock perf record -k takes, from
// the values a real recording and system had, and says why it cannot
// where it cannot.
func TestClockOf(t *testing.T) {
	// a machine booted at 1796400000.5 s of the epoch, whose CLOCK_TAI is
	// 37 s ahead of its time of day, CLOCK_MONOTONIC 2 s behind
	// CLOCK_BOOTTIME (it suspended), and perf's clock 2.2 ms behind it
	boot := time.Unix(1796400000, 500000000)
	sys := System{BootTime: boot, PerfClockOffset: 2211889}
	const load = 27000 * time.Second // ns since boot
	wall := uint64(boot.Add(load).UnixNano())
	data := func(id perfdata.ClockID, clockMinusWall int64) perfdata.ClockData {
		// perf's reading, taken 100 s before the load
		w := wall - 100e9
		return perfdata.ClockData{Version: 1, ClockID: id, WallNs: w, ClockNs: uint64(int64(w) + clockMinusWall)}
	}
	mono := int64(load) - 2e9 - int64(wall) // CLOCK_MONOTONIC minus the time of day
	for _, c := range []struct {
		clock RecordingClock
		want  uint64 // 0: cannot be placed
	}{
		{RecordingClock{}, uint64(load - 2211889)},
		{RecordingClock{UseClockID: true, ID: perfdata.ClockBoottime}, uint64(load)},
		{RecordingClock{UseClockID: true, ID: perfdata.ClockRealtime, Data: data(perfdata.ClockRealtime, 3)}, wall + 3},
		{RecordingClock{UseClockID: true, ID: perfdata.ClockRealtime}, wall},
		{RecordingClock{UseClockID: true, ID: perfdata.ClockTAI, Data: data(perfdata.ClockTAI, 37e9)}, wall + 37e9},
		{RecordingClock{UseClockID: true, ID: perfdata.ClockMonotonic, Data: data(perfdata.ClockMonotonic, mono)}, uint64(load - 2e9)},
		{RecordingClock{UseClockID: true, ID: perfdata.ClockMonotonicRaw, Data: data(perfdata.ClockMonotonicRaw, mono+5000)}, uint64(load - 2e9 + 5000)},
		// no CLOCK_DATA: only the time of day is known
		{RecordingClock{UseClockID: true, ID: perfdata.ClockTAI}, 0},
		{RecordingClock{UseClockID: true, ID: perfdata.ClockMonotonic}, 0},
		// CLOCK_DATA of another clock than the events'
		{RecordingClock{UseClockID: true, ID: perfdata.ClockTAI, Data: data(perfdata.ClockRealtime, 0)}, 0},
		{RecordingClock{UseClockID: true, ID: 6}, 0}, // CLOCK_MONOTONIC_COARSE: no perf event's
		{RecordingClock{UseClockID: true, ID: -1}, 0},
		{RecordingClock{UseClockID: true, ID: perfdata.ClockTAI, Data: data(perfdata.ClockTAI, math.MaxInt64)}, 0},
	} {
		lc, err := sys.ClockOf(c.clock)
		if c.want == 0 {
			if !errors.Is(err, ErrClockUnplaced) {
				t.Errorf("%v (%+v): %v, want ErrClockUnplaced", c.clock, c.clock.Data, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.clock, err)
			continue
		}
		if got, ok := lc.LoadedAt(&Program{LoadTime: load}); !ok || got != c.want {
			t.Errorf("%v: loaded at %d (%v), want %d", c.clock, got, ok, c.want)
		}
	}
	// without what the source must say
	for _, c := range []struct {
		sys   System
		clock RecordingClock
	}{
		{System{BootTime: boot}, RecordingClock{}},
		{System{PerfClockOffset: 1}, RecordingClock{UseClockID: true, ID: perfdata.ClockRealtime}},
	} {
		if _, err := c.sys.ClockOf(c.clock); !errors.Is(err, ErrClockUnplaced) {
			t.Errorf("%+v, %v: %v, want ErrClockUnplaced", c.sys, c.clock, err)
		}
	}
	if _, err := (System{}).ClockOf(RecordingClock{UseClockID: true, ID: perfdata.ClockBoottime}); err != nil {
		t.Errorf("CLOCK_BOOTTIME needs nothing of the source: %v", err)
	}
}
