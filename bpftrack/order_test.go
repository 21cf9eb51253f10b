package bpftrack_test

import (
	"encoding/binary"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Samples are counted in a function as perf report counts them: in time
// order, perf's synthesized records (time 0) at once, the others at the
// FINISHED_ROUND after next or at the end, in every order perf writes
// records.
func TestSamplesInPerfOrder(t *testing.T) {
	for _, c := range perfOrderCases() {
		t.Run(c.name, func(t *testing.T) { testPerfOrder(t, c) })
	}
}

// perfOrderCase is a recording and the samples perf report counts in each
// function of it (by name); during, those the functions of the programs
// loaded during the recording count (show's records, inject's programs),
// by name. backward: the kernel's records are read newest first (perf
// record --overwrite).
type perfOrderCase struct {
	name     string
	backward bool
	write    func(s *testkit.Stream)
	want     map[string]int
	during   map[string]int
}

// perfOrderCases are the orders perf writes records in.
func perfOrderCases() []perfOrderCase {
	a, b := tag(0xa), tag(0xb)
	f, g := name(a, "f"), name(b, "g")
	return []perfOrderCase{{
		// perf record --overwrite: backward ring buffers (newest first),
		// the programs loaded synthesized at the tail, after the samples
		name: "synthesized at the tail",
		write: func(s *testkit.Stream) {
			for _, ts := range []uint64{300, 200, 100} {
				s.SampleAt(0x1004, ts)
			}
			s.Record(perfdata.RecordFinishedRound, nil)
			s.Record(perfdata.RecordFinishedInit, nil)
			s.KSymbol(0x1000, 0x40, f, false, false)
			s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, false)
		},
		want: map[string]int{f: 3},
	}, {
		// a CPU's buffer read before the one with the load
		name: "registered later in the recording, earlier in time",
		write: func(s *testkit.Stream) {
			s.SampleAt(0x1004, 200)
			s.KSymbolAt(0x1000, 0x40, f, false, 100)
			s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, true)
			s.SampleAt(0x1004, 50)
		},
		want: map[string]int{f: 1},
	}, {
		name: "unregistered earlier in the recording, later in time",
		write: func(s *testkit.Stream) {
			s.KSymbol(0x1000, 0x40, f, false, false)
			s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, false)
			s.Record(perfdata.RecordFinishedInit, nil)
			s.KSymbolAt(0x1000, 0x40, f, true, 300)
			s.SampleAt(0x1004, 250)
			s.SampleAt(0x1004, 350)
		},
		want: map[string]int{f: 1},
	}, {
		// perf record --tail-synthesize: the rounds perf delivered before
		// the tail are in no program (perf report: an unknown symbol)
		name: "rounds delivered before a tail synthesis",
		write: func(s *testkit.Stream) {
			s.SampleAt(0x1004, 100)
			s.Record(perfdata.RecordFinishedRound, nil)
			s.SampleAt(0x1004, 200)
			s.Record(perfdata.RecordFinishedRound, nil) // delivers 100
			s.SampleAt(0x1004, 300)
			s.Record(perfdata.RecordFinishedInit, nil)
			s.KSymbol(0x1000, 0x40, f, false, false)
			s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, false)
		},
		want: map[string]int{f: 2},
	}, {
		// one address, two loads, the samples of both read after both
		name: "an address loaded again",
		write: func(s *testkit.Stream) {
			s.KSymbolAt(0x1000, 0x40, f, false, 100)
			s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, true)
			s.KSymbolAt(0x1000, 0x40, f, true, 200)
			s.BPFEvent(perfdata.BPFEventProgUnload, 3, a, true)
			s.KSymbolAt(0x1000, 0x40, g, false, 300)
			s.BPFEvent(perfdata.BPFEventProgLoad, 4, b, true)
			s.SampleAt(0x1004, 150)
			s.SampleAt(0x1004, 350)
			s.SampleAt(0x1004, 250)
			s.SampleAt(0x1004, 360)
		},
		want: map[string]int{f: 1, g: 2},
	}, {
		// perf adds no map for a KSYMBOL at an address a map holds
		// (machine__process_ksymbol_register(): maps__find()), only a
		// symbol to that map's dso: the samples there stay the map's,
		// and those past its end are in none
		name: "registered inside a map",
		write: func(s *testkit.Stream) {
			s.KSymbolAt(0x1000, 0x40, f, false, 100)
			s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, true)
			s.KSymbolAt(0x1020, 0x40, g, false, 200)
			s.BPFEvent(perfdata.BPFEventProgLoad, 4, b, true)
			s.SampleAt(0x1030, 250)
			s.SampleAt(0x1050, 260)
		},
		want: map[string]int{f: 1, g: 0},
	}, {
		// perf 7.2 (maps__fixup_overlap_and_insert()) takes what a new
		// map covers from a map that starts in it; perf 6.1 finds the
		// older one there
		name: "registered over the start of a map",
		write: func(s *testkit.Stream) {
			s.KSymbolAt(0x1020, 0x40, g, false, 100)
			s.BPFEvent(perfdata.BPFEventProgLoad, 4, b, true)
			s.KSymbolAt(0x1000, 0x30, f, false, 200)
			s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, true)
			s.SampleAt(0x1028, 250)
			s.SampleAt(0x1040, 260)
			s.SampleAt(0x1070, 270)
		},
		want: map[string]int{f: 1, g: 1},
	}, {
		// perf record --overwrite with perf 6.1: program 3 loaded during
		// the recording, synthesized at the tail too, where its main
		// function has the function's tag. perf delivers the synthesized
		// map first: the sample at 100 of an older load at 0x1010 (whose
		// KSYMBOL the ring buffer lost, its unregistering one kept) is in
		// it, as program 3's
		name:     "loaded during, synthesized at the tail",
		backward: true,
		write: func(s *testkit.Stream) {
			overwritten(s, f)
			s.KSymbol(0x1000, 0x40, name(tag(0xf), "f"), false, false)
			s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, false)
		},
		during: map[string]int{f: 3},
	}, {
		// the same with perf 7.2, whose tail has the KSYMBOLs and no
		// BPF_EVENT
		name:     "loaded during, its KSYMBOL synthesized at the tail",
		backward: true,
		write: func(s *testkit.Stream) {
			overwritten(s, f)
			s.KSymbol(0x1000, 0x40, name(tag(0xf), "f"), false, false)
		},
		during: map[string]int{f: 3},
	}, {
		// a backward ring buffer has the KSYMBOL of the load at 0x1000
		// still loaded (300) before the unregistering one of an older
		// load there (200): the one perf synthesized at the tail is that
		// load's, whose samples (350, and 150 in the synthesized map) it
		// counts
		name:     "loaded again, synthesized at the tail",
		backward: true,
		write: func(s *testkit.Stream) {
			reloaded(s, f, false)
			s.KSymbol(0x1000, 0x40, name(tag(0xf), "f"), false, false)
		},
		during: map[string]int{f: 2},
	}, {
		// the same with the older load's KSYMBOL: perf's map of the
		// synthesized one held the sample at 150 when the older load was
		// in it: the older load's, counted once
		name:     "loaded again, both loads kept, synthesized at the tail",
		backward: true,
		write: func(s *testkit.Stream) {
			reloaded(s, f, true)
			s.KSymbol(0x1000, 0x40, name(tag(0xf), "f"), false, false)
		},
		during: map[string]int{f: 2},
	}}
}

// reloaded writes what a backward ring buffer keeps of f loaded at 0x1000
// as program 3 at 100 (its KSYMBOL if older) and unloaded at 200, then
// as program 4 at 300, newest first, a sample of each load, and
// FINISHED_INIT.
func reloaded(s *testkit.Stream, f string, older bool) {
	s.SampleAt(0x1004, 350)
	s.BPFEvent(perfdata.BPFEventProgLoad, 4, tag(0xa), true)
	s.KSymbolAt(0x1000, 0x40, f, false, 300)
	s.KSymbolAt(0x1000, 0x40, f, true, 200)
	s.SampleAt(0x1004, 150)
	if older {
		s.BPFEvent(perfdata.BPFEventProgLoad, 3, tag(0xa), true)
		s.KSymbolAt(0x1000, 0x40, f, false, 100)
	}
	s.Record(perfdata.RecordFinishedRound, nil)
	s.Record(perfdata.RecordFinishedInit, nil)
}

// overwritten writes what a backward ring buffer (perf record
// --overwrite) keeps of program 3 (tag a, its function f at 0x1000)
// loaded at 200 and an older load of f at 0x1010 unloaded at 150, newest
// first, a sample of each load, and FINISHED_INIT: perf's tail follows.
func overwritten(s *testkit.Stream, f string) {
	s.SampleAt(0x1004, 300)
	s.SampleAt(0x1008, 250)
	s.BPFEvent(perfdata.BPFEventProgLoad, 3, tag(0xa), true)
	s.KSymbolAt(0x1000, 0x40, f, false, 200)
	s.KSymbolAt(0x1010, 0x40, f, true, 150)
	s.SampleAt(0x1018, 100)
	s.Record(perfdata.RecordFinishedRound, nil)
	s.Record(perfdata.RecordFinishedInit, nil)
}

// testPerfOrder feeds c's recording to a tracker and checks its counts.
func testPerfOrder(t *testing.T, c perfOrderCase) {
	bo := binary.LittleEndian
	s := testkit.NewStream(bo)
	if c.backward {
		s = &testkit.Stream{Order: bo}
		s.Write(perfdata.PipeHeader(bo))
		attr := testkit.StreamAttr(bo)
		bo.PutUint64(attr[40:], bo.Uint64(attr[40:])|1<<27) // write_backward
		s.Record(perfdata.RecordHeaderAttr, attr)
	}
	c.write(s)
	got, during := map[string]int{}, map[string]int{}
	var funcs []*bpftrack.Func
	tr := feed(t, s, bpftrack.Options{Samples: true}, func(_ *bpftrack.Tracker, _ *perfdata.Record, u bpftrack.Update) {
		if u.Func != nil && !u.Func.Unregistered {
			funcs = append(funcs, u.Func)
		}
	})
	for _, fn := range funcs {
		got[fn.Name] += fn.Samples
		if fn.Program != nil && !fn.Program.Synthesized {
			during[fn.Name] += fn.Samples
		}
	}
	for nm, n := range c.want {
		if got[nm] != n {
			t.Errorf("%s: %d samples, want %d", nm, got[nm], n)
		}
	}
	for nm, n := range c.during {
		if during[nm] != n {
			t.Errorf("%s: %d samples in the loads during the recording, want %d", nm, during[nm], n)
		}
	}
	if tr.EarlyFlushes() != 0 {
		t.Errorf("%d early flushes", tr.EarlyFlushes())
	}
}

// Past MaxQueuedSamples waiting, the older half is delivered, as perf
// report does past its queue size: a program synthesized after them gets
// only the newer half, and EarlyFlushes says so.
func TestSamplesQueueBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a recording of MaxQueuedSamples samples")
	}
	a := tag(0xa)
	s := testkit.NewStream(binary.LittleEndian)
	n := uint64(bpftrack.MaxQueuedSamples)
	for ts := uint64(1); ts <= n+1; ts++ {
		s.SampleAt(0x1004, ts)
	}
	s.Record(perfdata.RecordFinishedInit, nil)
	s.KSymbol(0x1000, 0x40, name(a, "f"), false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, false)
	tr := feed(t, s, bpftrack.Options{Samples: true}, nil)
	p := tr.Loaded(3)
	if p == nil || len(p.Funcs) != 1 {
		t.Fatalf("program 3: %+v", p)
	}
	// the half: up to the first time and half the span to the last
	delivered := 1 + (n-1)/2
	if got, want := p.Funcs[0].Samples, int(n+1-delivered); got != want || tr.EarlyFlushes() != 1 {
		t.Errorf("%d samples, %d early flushes; want %d, 1", got, tr.EarlyFlushes(), want)
	}
	sum, err := bpftrack.WalkMetadata(rectest.Stream(t, s.Bytes(), reader.Options{}), func(*bpftrack.MetadataRecord) error { return nil })
	if err != nil || sum.EarlyFlushes != 1 {
		t.Errorf("WalkMetadata: %+v, %v; want 1 early flush", sum, err)
	}
}
