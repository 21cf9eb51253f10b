package inject_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestShowBeforeAndDuring: one object loaded before a recording and again
// during it. perf 7.2 (and inject --perf-names) names the during-load's
// main-function record at the end bpf_prog_<function tag>_<name>, which is
// also the name of the earlier load's KSYMBOL, and the records of its
// subprograms have the names of the earlier load's too. bpftrack.ReadMetadata
// (bpfmeta show) must give each record to its own load: those after the
// earlier load's BPF_EVENT to its functions, those at the end to the
// during-load's, never to the earlier load's.
//
// perf 7.2's side-band thread also writes, at the end, records for loads of
// the same object by other processes on the shared machine, which a
// recording of one command has no KSYMBOL of: then the records of that name
// cannot be told apart, and must say so (ambiguous) rather than name a
// load. The injected perf 6.1 recording (--recorded-only) has only this
// test's records: each must name exactly its function.
func TestShowBeforeAndDuring(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	before := loadFixtures(t, filepath.Join(bpffs, "before"), "meta")
	dir := t.TempDir()
	record := func(perf, who string) *oracleRun {
		pin := filepath.Join(bpffs, who)
		r := startRecord(t, perf, testkit.RecordFile, filepath.Join(dir, who+".data"), loadCommand(t, pin, "meta")+" && sleep 0.2")
		r.Wait(t)
		return &oracleRun{PerfRun: r, pin: pin, during: pinnedIDs(t, pin)}
	}
	stock := record(perfStock, "stock")
	modern := record(perfModern, "modern")
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	injected, _ := mustInject(t, stock.Out, dir, live, inject.Options{PerfNames: true, RecordedOnly: true})
	for _, c := range []struct {
		name, path string
		during     []uint32
		alone      bool // the recording has no other loads' records
	}{
		{"perf 7.2", modern.Out, modern.during, false},
		{"perf 6.1 injected with perf's names", injected, stock.during, true},
	} {
		t.Run(c.name, func(t *testing.T) { checkAttribution(t, live, c.path, before, c.during, c.alone) })
	}
}

// checkAttribution checks the functions ReadMetadata gives the records of
// the programs loaded before (ids before) and during (ids during) the
// recording at path.
func checkAttribution(t *testing.T, live *live.Kernel, path string, before, during []uint32, alone bool) {
	t.Helper()
	m, err := bpftrack.ReadMetadata(rectest.Open(t, path, reader.Options{Decompress: true}))
	if err != nil {
		t.Fatal(err)
	}
	recs := m.Records
	beforeFuncs := map[uint64]bool{}
	for _, id := range before {
		p, err := live.Program(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Funcs {
			beforeFuncs[f.Addr] = true
		}
		// its records follow its BPF_EVENT: one for each function
		got := map[uint64]int{}
		for _, m := range recs {
			if p := m.Program(); p != nil && p.ID == id {
				got[m.Funcs[0].Addr]++
			}
		}
		for _, f := range p.Funcs {
			if got[f.Addr] != 1 {
				t.Errorf("program %d (loaded before): %d records give the function %s at %#x, want 1", id, got[f.Addr], f.PerfName, f.Addr)
			}
		}
	}
	for _, m := range recs {
		if m.Program() != nil && beforeFuncs[m.Funcs[0].Addr] {
			continue
		}
		for _, f := range m.Funcs {
			if beforeFuncs[f.Addr] {
				t.Errorf("the record %s at %#x, not after the BPF_EVENT of the program loaded before, is given its function at %#x (%s, %d functions, %d samples)", m.Metadata.ProgName, m.Offset, f.Addr, m.Matched, len(m.Funcs), m.Samples)
			}
		}
	}
	for _, id := range during {
		p, err := live.Program(id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Metadata == nil {
			t.Fatalf("program %d (%s) has no metadata", id, p.Name)
		}
		for i, f := range p.Funcs {
			name := p.Metadata.ProgNames[i]
			var mine []bpftrack.MetadataRecord
			for _, m := range recs {
				if m.Metadata.ProgName == name && slices.ContainsFunc(m.Funcs, func(g *bpftrack.Func) bool { return g.Addr == f.Addr }) {
					mine = append(mine, m)
				}
			}
			if len(mine) == 0 {
				t.Errorf("program %d (loaded during): no record %s is given its function %s at %#x", id, name, f.KernelName, f.Addr)
				continue
			}
			want := bpftrack.MatchName
			if f.KernelName != name {
				want = bpftrack.MatchFunction
			}
			for _, m := range mine {
				switch {
				case len(mine) == 1 && m.Program() != nil && m.Program().ID == id && m.Matched == want:
				case !alone && m.Matched == bpftrack.MatchAmbiguous:
					t.Logf("program %d: the record %s at %#x is ambiguous between %d functions: other loads of the object were recorded", id, name, m.Offset, len(m.Funcs)+m.MoreFuncs)
				default:
					t.Errorf("program %d (loaded during): the record %s at %#x is given %d functions (%s), program %v; want only %s at %#x of program %d (%s)", id, name, m.Offset, len(m.Funcs)+m.MoreFuncs, m.Matched, m.Program(), f.KernelName, f.Addr, id, want)
				}
			}
		}
	}
}

// TestShowCiliumLoaded: perf 7.2 names the BPF_METADATA records of a
// program cilium/ebpf loaded from the BTF of its .rodata map, which
// cilium/ebpf loads as a BTF object of its own, so not after its KSYMBOLs
// (bpf_metadata_create() hands synthesize_bpf_prog_name() the map's btf).
// bpftrack.ReadMetadata (bpfmeta show) must still give each record its
// function, by tag: a program loaded before the recording, after its
// BPF_EVENT, exactly one record a function; one loaded during it, at the
// end (a subprogram two of the object's programs share, each record to its
// loads). Not the main function of a program with subprograms loaded
// during the recording: its KSYMBOL has the program's tag, its record the
// function's, and nothing else joins them.
func TestShowCiliumLoaded(t *testing.T) {
	_, perfModern, _ := requireLive(t)
	before, _ := testkit.LoadCilium(t, "meta")
	// system-wide: the kernel's KSYMBOLs of the loads by this test's
	// process, not perf's workload, are in the recording
	r := testkit.StartPerf(t, perfModern, filepath.Join(t.TempDir(), "modern.data"), testkit.PerfOptions{SystemWide: true, Args: []string{"-F", "999"}})
	r.WaitReady(t)
	time.Sleep(200 * time.Millisecond)
	during, _ := testkit.LoadCilium(t, "meta")
	time.Sleep(200 * time.Millisecond)
	r.Stop(t)
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	m, err := bpftrack.ReadMetadata(rectest.Open(t, r.Out, reader.Options{Decompress: true}))
	if err != nil {
		t.Fatal(err)
	}
	renamed := 0
	for _, c := range []struct {
		loaded []testkit.Loaded
		during bool
	}{{before, false}, {during, true}} {
		for _, l := range c.loaded {
			p, err := live.Program(l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p.Metadata == nil {
				t.Fatalf("%v has no metadata", l)
			}
			for i, f := range p.Funcs {
				name, ksym := p.Metadata.ProgNames[i], f.PerfName
				if c.during {
					ksym = f.KernelName
				}
				if name != ksym {
					renamed++
				}
				tag, _, _ := perfdata.ParseBPFProgName(name)
				ktag, _, _ := perfdata.ParseBPFProgName(ksym)
				if tag != ktag {
					continue // perf's two differences at once
				}
				var got []bpftrack.MetadataRecord
				for _, rec := range m.Records {
					if rec.Metadata.ProgName == name && slices.ContainsFunc(rec.Funcs, func(g *bpftrack.Func) bool { return g.Addr == f.Addr }) {
						got = append(got, rec)
					}
				}
				switch {
				case len(got) == 1 && got[0].Program() != nil && got[0].Program().ID == l.ID:
				case c.during && len(got) > 0 && len(got[0].Funcs) > 1 && got[0].Matched == bpftrack.MatchTag:
					// the object's programs share a subprogram: each of
					// their records at the end is of one of its loads, as
					// for records of one name
					t.Logf("%v: the record %s is of one of %d loads of %s", l, name, len(got[0].Funcs), ksym)
				case c.during && len(got) > 0 && got[0].Matched == bpftrack.MatchAmbiguous:
					t.Logf("%v: the record %s is ambiguous: other loads of the object were recorded", l, name)
				default:
					t.Errorf("%v (loaded during: %v): %d records %s given its function %s at %#x, want one of the program", l, c.during, len(got), name, ksym, f.Addr)
				}
			}
		}
	}
	if renamed == 0 {
		t.Errorf("perf named every record after its KSYMBOL: not the case this test is about (has cilium/ebpf changed how it loads BTF?)")
	}
}
