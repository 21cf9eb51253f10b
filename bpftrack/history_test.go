package bpftrack_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// loadUnload writes n programs loaded during the recording and unloaded
// again, one at a time, as the kernel writes them (KSYMBOL, PROG_LOAD;
// KSYMBOL unregister, PROG_UNLOAD), each with a sample; program i has tag
// tg(i) and its function is named nm(i).
func loadUnload(s *testkit.Stream, n int, tg func(i int) perfdata.BPFTag, nm func(i int) string) {
	for i := range n {
		addr := 0xffffffffc0000000 + uint64(i%64)*0x1000
		s.KSymbol(addr, 0x40, nm(i), false, true)
		s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tg(i), true)
		s.Sample(addr + 4)
		s.KSymbol(addr, 0x40, nm(i), true, true)
		s.BPFEvent(perfdata.BPFEventProgUnload, uint32(i+1), tg(i), true)
	}
}

// tagOf is a tag of its own for each i.
func tagOf(i int) perfdata.BPFTag { return perfdata.BPFTag{byte(i), byte(i >> 8), byte(i >> 16), 0xee} }

// A recording in which 70,000 programs are loaded and unloaded, few at
// once, is read (issue 36): History bounds the gone it keeps, not what was
// loaded in all. Of one name it keeps MaxRecordFuncs and counts the
// others, so that a record at the end names them all, with their samples;
// of 70,000 names, the last MaxHistory, and a record of a forgotten one
// finds none (Forgotten says how many were).
func TestHistoryBounded(t *testing.T) {
	const n = 70000
	for _, c := range []struct {
		what      string
		tg        func(int) perfdata.BPFTag
		nm        func(int) string
		forgotten int
	}{
		{"one name", func(int) perfdata.BPFTag { return tag(1) }, func(int) string { return name(tag(1), "same") }, 0},
		{"70,000 names", tagOf, func(i int) string { return name(tagOf(i), fmt.Sprintf("f%d", i)) }, n - bpftrack.MaxHistory},
	} {
		s := testkit.NewStream(binary.LittleEndian)
		loadUnload(s, n, c.tg, c.nm)
		s.Record(perfdata.RecordFinishedRound, nil)
		for _, nm := range []string{c.nm(0), c.nm(n - 1)} {
			s.Metadata(perfdata.BPFMetadata{ProgName: nm, Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: "1"}}})
		}
		m, err := bpftrack.ReadMetadata(rectest.Stream(t, s.Bytes(), reader.Options{}))
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if m.Loads != n || m.Forgotten != c.forgotten || len(m.Records) != 2 {
			t.Fatalf("%s: %d loads, %d forgotten, %d records; want %d, %d, 2", c.what, m.Loads, m.Forgotten, len(m.Records), n, c.forgotten)
		}
		for i, r := range m.Records {
			funcs := len(r.Funcs) + r.MoreFuncs
			want := 1 // the functions of the name, each with its sample
			switch {
			case c.forgotten == 0:
				want = n
			case i == 0:
				want = 0 // forgotten
			}
			if funcs != want || r.Samples != want || len(r.Funcs) > bpftrack.MaxRecordFuncs {
				t.Errorf("%s: %s: %d functions listed, %d more, %d samples; want %d of each", c.what, r.Metadata.ProgName, len(r.Funcs), r.MoreFuncs, r.Samples, want)
			}
		}
	}
}

// countingRecords counts the records read.
type countingRecords struct {
	bpftrack.Records
	n int
}

func (c *countingRecords) Next() bool { c.n++; return c.Records.Next() }

// WalkMetadata hands a record out as soon as its samples are counted (its
// function's unregistering KSYMBOL delivered, as perf delivers it: at the
// FINISHED_ROUND after next), before the rest of the recording is read;
// the records after one that waits, wait with it, so that they come in
// order.
func TestWalkMetadataStreams(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	a, b := tag(0xa), tag(0xb)
	md := func(nm string) {
		s.Metadata(perfdata.BPFMetadata{ProgName: nm, Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: "1"}}})
	}
	s.KSymbol(0x1000, 0x40, name(a, "f"), false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, a, false)
	md(name(a, "f"))
	s.KSymbol(0x2000, 0x40, name(b, "g"), false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 2, b, false)
	md(name(b, "g"))
	s.Record(perfdata.RecordFinishedInit, nil)
	s.Sample(0x1004)
	s.Sample(0x2004)
	s.KSymbol(0x1000, 0x40, name(a, "f"), true, true) // f: final
	s.BPFEvent(perfdata.BPFEventProgUnload, 1, a, true)
	s.Sample(0x1004) // in no function
	s.Sample(0x2004)
	for range 100 {
		s.Record(perfdata.RecordFinishedRound, nil)
	}
	r := &countingRecords{Records: rectest.Stream(t, s.Bytes(), reader.Options{})}
	var at []int
	var got []string
	sum, err := bpftrack.WalkMetadata(r, func(m *bpftrack.MetadataRecord) error {
		at = append(at, r.n)
		got = append(got, fmt.Sprintf("%s %d", m.Metadata.ProgName, m.Samples))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{name(a, "f") + " 1", name(b, "g") + " 2"}
	if fmt.Sprint(got) != fmt.Sprint(want) || sum.Records != 2 {
		t.Fatalf("records %q, want %q", got, want)
	}
	if at[0] > 16 || at[1] < 100 {
		t.Errorf("handed out after %v records read: want the first once its function is unregistered (the 16th, the second FINISHED_ROUND), the second at the end", at)
	}
}

// A gone function History keeps keeps its program, and the program every
// function it has: the bound counts them. 1,100 programs of 64 functions,
// 63 of names every program has (kept 16 times, the others counted) and
// one of its own, keep at most MaxHistory functions, so of the 1,100
// functions of their own names some are forgotten; none would be if only
// the functions kept by name counted (16*63 + 1,100).
func TestHistoryBoundsPrograms(t *testing.T) {
	const progs, funcs = 1100, 64
	s := testkit.NewStream(binary.LittleEndian)
	for i := range progs {
		base := 0xffffffffc0000000 + uint64(i%4)*funcs*0x100
		nm := func(j int) string {
			if j == 0 {
				return name(tagOf(i), fmt.Sprintf("own%d", i))
			}
			return name(tag(1), fmt.Sprintf("s%d", j))
		}
		for j := range funcs {
			s.KSymbol(base+uint64(j)*0x100, 0x40, nm(j), false, true)
		}
		s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tagOf(i), true)
		for j := range funcs {
			s.KSymbol(base+uint64(j)*0x100, 0x40, nm(j), true, true)
		}
		s.BPFEvent(perfdata.BPFEventProgUnload, uint32(i+1), tagOf(i), true)
	}
	tr := feed(t, s, bpftrack.Options{History: true}, nil)
	if min := progs - bpftrack.MaxHistory/funcs; tr.Forgotten() < min {
		t.Errorf("%d functions forgotten, want at least %d: the programs the kept functions keep are not counted", tr.Forgotten(), min)
	}
	// the functions of the names every program has are all counted
	s.Record(perfdata.RecordFinishedRound, nil)
	s.Metadata(perfdata.BPFMetadata{ProgName: name(tag(1), "s5"), Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: "1"}}})
	m, err := bpftrack.ReadMetadata(rectest.Stream(t, s.Bytes(), reader.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Records[0]; len(r.Funcs)+r.MoreFuncs != progs {
		t.Errorf("a record of a name every program has: %d functions listed, %d more; want %d in all", len(r.Funcs), r.MoreFuncs, progs)
	}
}
