package bpfprog

import (
	"math"
	"testing"
	"time"
)

// LoadTimeSpan is LoadedAtPerfTime the other way round: every program
// LoadedAtPerfTime places in [first, last] has its LoadTime in the span,
// and no other with a LoadTime it can place; where the span does not fit
// a Duration, there is none (and a caller reads every program).
func TestLoadTimeSpan(t *testing.T) {
	const maxD = time.Duration(math.MaxInt64)
	for _, c := range []struct {
		off         time.Duration
		first, last uint64
		ok          bool
	}{
		{1000, 5000, 9000, true},
		{-1442231, 5000000, 9000000, true},
		{-1442231, 5, 9, true}, // the span starts before boot
		{0, 5000, 9000, false}, // no offset: not known
		{1000, 9000, 5000, false},
		{1000, 5000, math.MaxInt64 + 1, false},
		{1000, 5000, math.MaxInt64 - 999, false}, // last + off overflows
		{1000, 5000, math.MaxInt64 - 1000, true},
		{math.MinInt64, 0, math.MaxInt64, true},
	} {
		sys := System{PerfClockOffset: c.off}
		from, to, ok := sys.LoadTimeSpan(c.first, c.last)
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
			pt, placed := sys.LoadedAtPerfTime(&Program{LoadTime: lt})
			inRecording := placed && pt >= c.first && pt <= c.last
			if inSpan := lt >= from && lt <= to; inRecording != inSpan {
				t.Errorf("offset %d, [%d, %d]: load time %d: in the recording %v, in the span [%d, %d] %v", c.off, c.first, c.last, lt, inRecording, from, to, inSpan)
			}
		}
	}
}
