package bpftrack_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// feed reads the recording s and feeds every record to a new tracker,
// calling each with the tracker and the update after every record.
func feed(t testing.TB, s *testkit.Stream, opts bpftrack.Options, each func(*bpftrack.Tracker, *perfdata.Record, bpftrack.Update)) *bpftrack.Tracker {
	t.Helper()
	r := rectest.Stream(t, s.Bytes(), reader.Options{})
	tr := bpftrack.New(r, opts)
	for r.Next() {
		u, err := tr.Feed(r.Record())
		if err != nil {
			t.Fatalf("record at %d: %v", r.Record().Offset, err)
		}
		if each != nil {
			each(tr, r.Record(), u)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	tr.End()
	return tr
}

// feedErr feeds the recording s to a new tracker until Feed fails, and
// returns that error (nil if none did).
func feedErr(t testing.TB, s *testkit.Stream, opts bpftrack.Options) error {
	t.Helper()
	r := rectest.Stream(t, s.Bytes(), reader.Options{})
	tr := bpftrack.New(r, opts)
	var ferr error
	for r.Next() && ferr == nil {
		_, ferr = tr.Feed(r.Record())
	}
	return ferr
}

// readMetadata is bpftrack.ReadMetadata of the recording s.
func readMetadata(t *testing.T, s *testkit.Stream) []bpftrack.MetadataRecord {
	t.Helper()
	r := rectest.Stream(t, s.Bytes(), reader.Options{})
	m, err := bpftrack.ReadMetadata(r)
	if err != nil {
		t.Fatal(err)
	}
	return m.Records
}

func tag(b byte) perfdata.BPFTag { return perfdata.BPFTag{b, 1, 2, 3, 4, 5, 6, 7} }

func name(tg perfdata.BPFTag, fn string) string { return perfdata.BPFProgName(tg, fn) }

// loadedF starts a stream in which program 3 (tag a) is loaded, with its
// function f at 0x1000.
func loadedF() (s *testkit.Stream, a perfdata.BPFTag) {
	s, a = testkit.NewStream(binary.LittleEndian), tag(0xa)
	s.KSymbol(0x1000, 0x40, name(a, "f"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 3, a, true)
	return s, a
}

// A program's functions are the KSYMBOLs before its PROG_LOAD, main first;
// trampolines belong to none; records perf synthesized are told from the
// kernel's by their zero sample_id.
func TestPrograms(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(bo.String(), func(t *testing.T) {
			s := testkit.NewStream(bo)
			a, b := tag(0xa), tag(0xb)
			s.KSymbol(0x1000, 0x40, name(a, "main_a"), false, false)
			s.KSymbol(0x2000, 0x40, name(a, "sub_a"), false, false)
			s.BPFEvent(perfdata.BPFEventProgLoad, 7, a, false)
			s.KSymbol(0x3000, 0x40, "bpf_trampoline_12", false, false)
			s.KSymbol(0x4000, 0x40, name(b, "main_b"), false, true)
			s.BPFEvent(perfdata.BPFEventProgLoad, 8, b, true)

			var loads []*bpftrack.Program
			tr := feed(t, s, bpftrack.Options{}, func(_ *bpftrack.Tracker, _ *perfdata.Record, u bpftrack.Update) {
				if u.Loaded != nil {
					loads = append(loads, u.Loaded)
				}
			})
			if len(loads) != 2 {
				t.Fatalf("%d loads, want 2", len(loads))
			}
			pa, pb := loads[0], loads[1]
			if pa.ID != 7 || pa.Tag != a || !pa.Synthesized || len(pa.Funcs) != 2 ||
				pa.Funcs[0].Name != name(a, "main_a") || pa.Funcs[1].Name != name(a, "sub_a") {
				t.Errorf("first program: %+v", pa)
			}
			if pb.ID != 8 || pb.Synthesized || len(pb.Funcs) != 1 || pb.Funcs[0].Addr != 0x4000 {
				t.Errorf("second program: %+v", pb)
			}
			if f := tr.FuncAt(0x3010); f == nil || f.Program != nil {
				t.Errorf("trampoline: %+v, want a function of no program", f)
			}
			if tr.Loaded(7) != pa || tr.Loaded(8) != pb || tr.Loaded(9) != nil {
				t.Errorf("Loaded(7, 8, 9) = %p %p %p", tr.Loaded(7), tr.Loaded(8), tr.Loaded(9))
			}
		})
	}
}

// FuncAt finds the function an address is in, at both ends.
func TestFuncAt(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	s.KSymbol(0x1000, 0x10, name(tag(1), "f"), false, false)
	s.KSymbol(0x1010, 0x10, name(tag(1), "g"), false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, tag(1), false)
	tr := feed(t, s, bpftrack.Options{}, nil)
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{0xfff, ""},
		{0x1000, name(tag(1), "f")},
		{0x100f, name(tag(1), "f")},
		{0x1010, name(tag(1), "g")},
		{0x101f, name(tag(1), "g")},
		{0x1020, ""},
		{^uint64(0), ""},
	} {
		got := ""
		if f := tr.FuncAt(c.addr); f != nil {
			got = f.Name
		}
		if got != c.want {
			t.Errorf("FuncAt(%#x) = %q, want %q", c.addr, got, c.want)
		}
	}
	if tr.Func(0x1008) != nil || tr.Func(0x1010) == nil {
		t.Errorf("Func finds functions by their start address only")
	}
}

// An unregistering KSYMBOL removes the function: later samples there are no
// longer counted in it; a PROG_UNLOAD marks its program unloaded.
func TestUnload(t *testing.T) {
	s, a := loadedF()
	s.Sample(0x1004)
	s.Sample(0x1008)
	s.Sample(0x9000)
	s.KSymbol(0x1000, 0x40, name(a, "f"), true, true)
	s.BPFEvent(perfdata.BPFEventProgUnload, 3, a, true)
	s.Sample(0x1004)

	var unloaded *bpftrack.Program
	var unregistered *bpftrack.Func
	tr := feed(t, s, bpftrack.Options{Samples: true}, func(_ *bpftrack.Tracker, rec *perfdata.Record, u bpftrack.Update) {
		if u.Unloaded != nil {
			unloaded = u.Unloaded
		}
		if rec.Header.Type == perfdata.RecordKSymbol && u.Func != nil && u.Func.Unregistered {
			unregistered = u.Func
		}
	})
	if unregistered == nil || unregistered.Samples != 2 {
		t.Fatalf("unregistered function %+v, want one with 2 samples", unregistered)
	}
	if unloaded == nil || unloaded.ID != 3 || !unloaded.Unloaded || unloaded.Funcs[0] != unregistered {
		t.Errorf("unloaded program %+v", unloaded)
	}
	if tr.FuncAt(0x1004) != nil || tr.Loaded(3) != nil {
		t.Errorf("the function or program is still there after unloading")
	}
}

// A PROG_UNLOAD of another load of the id (another tag) leaves the loaded
// program alone; an unregistering KSYMBOL of another name leaves the
// function at the address alone.
func TestUnloadMismatch(t *testing.T) {
	s, a := loadedF()
	s.KSymbol(0x1000, 0x40, name(a, "other"), true, true)
	s.BPFEvent(perfdata.BPFEventProgUnload, 3, tag(0xb), true)
	tr := feed(t, s, bpftrack.Options{}, nil)
	if tr.FuncAt(0x1000) == nil || tr.Loaded(3) == nil {
		t.Errorf("a mismatched unload removed the function (%v) or the program (%v)", tr.FuncAt(0x1000), tr.Loaded(3))
	}
}

// Interleaved CPUs: each stream's KSYMBOLs go to the BPF_EVENT of the same
// stream.
func TestStreams(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	a, b := tag(0xa), tag(0xb)
	s.KSymbol(0x1000, 0x40, name(a, "fa"), false, true) // CPU 0
	s.KSymbol(0x2000, 0x40, name(b, "fb"), false, true) // CPU 1
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, a, true)   // CPU 0
	s.BPFEvent(perfdata.BPFEventProgLoad, 2, b, true)   // CPU 1
	streams := []int{-1, 0, 1, 0, 1}                    // the HEADER_ATTR first

	r := rectest.Stream(t, s.Bytes(), reader.Options{})
	tr := bpftrack.New(r, bpftrack.Options{})
	for i := 0; r.Next(); i++ {
		if _, err := tr.FeedStream(r.Record(), streams[i]); err != nil {
			t.Fatal(err)
		}
	}
	p1, p2 := tr.Loaded(1), tr.Loaded(2)
	if p1 == nil || len(p1.Funcs) != 1 || p1.Funcs[0].Addr != 0x1000 {
		t.Errorf("program 1: %+v", p1)
	}
	if p2 == nil || len(p2.Funcs) != 1 || p2.Funcs[0].Addr != 0x2000 {
		t.Errorf("program 2: %+v", p2)
	}
}

// A stream of KSYMBOLs with no BPF_EVENT keeps at most BPF_MAX_SUBPROGS
// of them pending; the rest are still registered.
func TestPendingBound(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	a := tag(0xa)
	const n = 1000
	for i := range n {
		s.KSymbol(0x10000+uint64(i)*0x100, 0x40, name(a, "f"), false, true)
	}
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, a, true)
	tr := feed(t, s, bpftrack.Options{}, nil)
	p := tr.Loaded(1)
	if p == nil || len(p.Funcs) != 256 || p.Funcs[255].Addr != 0x10000+(n-1)*0x100 {
		t.Fatalf("program with %d functions, want the last 256", len(p.Funcs))
	}
	if tr.FuncAt(0x10000) == nil {
		t.Errorf("the first function is no longer registered")
	}
}

// History keeps every function registered under a name; FuncsCalled finds
// them by the function name whatever the tag.
func TestHistory(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	for i, tg := range []perfdata.BPFTag{tag(1), tag(2)} {
		s.KSymbol(0x1000, 0x40, name(tg, "handler"), false, true)
		s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tg, true)
		s.KSymbol(0x1000, 0x40, name(tg, "handler"), true, true)
		s.BPFEvent(perfdata.BPFEventProgUnload, uint32(i+1), tg, true)
	}
	tr := feed(t, s, bpftrack.Options{History: true}, nil)
	if got := tr.FuncsNamed(name(tag(2), "handler")); len(got) != 1 || got[0].Program.ID != 2 {
		t.Errorf("FuncsNamed: %v", got)
	}
	got := tr.FuncsCalled("handler")
	if len(got) != 2 || got[0].Program.ID != 1 || got[1].Program.ID != 2 {
		t.Errorf("FuncsCalled: %v", got)
	}
	if tr.FuncsCalled("other") != nil {
		t.Errorf("FuncsCalled of an unknown function is not empty")
	}
}

// A damaged KSYMBOL or BPF_EVENT is an error, not a panic.
func TestDamaged(t *testing.T) {
	for _, typ := range []perfdata.RecordType{perfdata.RecordKSymbol, perfdata.RecordBPFEvent} {
		s := testkit.NewStream(binary.LittleEndian)
		s.Record(typ, make([]byte, 8))
		r := rectest.Stream(t, s.Bytes(), reader.Options{})
		tr := bpftrack.New(r, bpftrack.Options{})
		var ferr error
		for r.Next() {
			if _, err := tr.Feed(r.Record()); err != nil {
				ferr = err
			}
		}
		if ferr == nil {
			t.Errorf("a %v of 16 bytes: no error", typ)
		}
	}
}

// A recording that registers more than MaxFuncs functions at once is an
// error at the KSYMBOL that goes past it, not memory without end; one that
// registers and unregisters them, with History too, is not: what is
// registered at once is bounded, not what was ever.
func TestTooManyFuncs(t *testing.T) {
	for _, history := range []bool{false, true} {
		for _, unregister := range []bool{false, true} {
			s := testkit.NewStream(binary.LittleEndian)
			for i := range bpftrack.MaxFuncs + 1 {
				addr := 0x10000 + uint64(i)*0x40
				if unregister && i > 0 {
					s.KSymbol(addr-0x40, 0x40, "bpf_prog_0000000000000000_f", true, true) // at most 1 registered
				}
				s.KSymbol(addr, 0x40, "bpf_prog_0000000000000000_f", false, true)
			}
			ferr := feedErr(t, s, bpftrack.Options{History: history})
			if got := errors.Is(ferr, bpftrack.ErrTooMany); got == unregister {
				t.Errorf("History %v, unregistered %v: %d functions: %v", history, unregister, bpftrack.MaxFuncs+1, ferr)
			}
		}
	}
}

// A recording that loads more than MaxPrograms programs at once (none
// unloaded) is an error at the BPF_EVENT that goes past it; loads and
// unloads without end are not.
func TestTooManyPrograms(t *testing.T) {
	for _, unload := range []bool{false, true} {
		s := testkit.NewStream(binary.LittleEndian)
		for i := range bpftrack.MaxPrograms + 1 {
			s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tag(byte(i)), true)
			if unload {
				s.BPFEvent(perfdata.BPFEventProgUnload, uint32(i+1), tag(byte(i)), true)
			}
		}
		ferr := feedErr(t, s, bpftrack.Options{})
		if got := errors.Is(ferr, bpftrack.ErrTooMany); got == unload {
			t.Errorf("unload %v: %d programs: %v", unload, bpftrack.MaxPrograms+1, ferr)
		}
	}
}

// The functions of the programs loaded at once count against MaxFuncs
// even once unregistered (the programs keep them): a recording that
// registers and unregisters them to stay under the bound of registered
// functions is an error all the same.
func TestTooManyLoadedFuncs(t *testing.T) {
	const perProgram = 200
	s := testkit.NewStream(binary.LittleEndian)
	for i := range bpftrack.MaxFuncs/perProgram + 1 {
		base := 0xffffffffc0000000 + uint64(i)*perProgram*0x40
		for j := range perProgram {
			s.KSymbol(base+uint64(j)*0x40, 0x40, "bpf_prog_0000000000000000_f", false, true)
		}
		s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tag(1), true)
		for j := range perProgram {
			s.KSymbol(base+uint64(j)*0x40, 0x40, "bpf_prog_0000000000000000_f", true, true)
		}
	}
	ferr := feedErr(t, s, bpftrack.Options{})
	if !errors.Is(ferr, bpftrack.ErrTooMany) {
		t.Errorf("%d programs of %d functions, unregistered: %v, want ErrTooMany", bpftrack.MaxFuncs/perProgram+1, perProgram, ferr)
	}
}

// The names of the functions kept are bounded in bytes, in each of what
// the tracker keeps: registered functions (names of KSYM_NAME_LEN, the
// most a KSYMBOL's name is read as, fill MaxNameBytes long before
// MaxFuncs), and the functions of the loaded programs once unregistered.
// Unregistering gives the bytes back, with History too (it keeps the
// functions of programs loaded during the recording, and drops the oldest
// of those gone: TestHistoryBounded).
func TestTooManyNameBytes(t *testing.T) {
	long := func(i int) string { return fmt.Sprintf("bpf_prog_0000000000000000_%0*d", perfdata.KSymNameLen-1-26, i) }
	const addr = 0xffffffffc0000000
	over := bpftrack.MaxNameBytes/(perfdata.KSymNameLen-1) + 1
	registered := func(unregister bool) *testkit.Stream {
		s := testkit.NewStream(binary.LittleEndian)
		for i := range over {
			s.KSymbol(addr+uint64(i)*0x40, 0x40, long(i), false, true)
			if unregister {
				s.KSymbol(addr+uint64(i)*0x40, 0x40, long(i), true, true)
			}
		}
		return s
	}
	loaded := testkit.NewStream(binary.LittleEndian)
	for i := range over {
		loaded.KSymbol(addr+uint64(i)*0x40, 0x40, long(i), false, true)
		loaded.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tag(1), true)
		loaded.KSymbol(addr+uint64(i)*0x40, 0x40, long(i), true, true)
	}
	for _, tc := range []struct {
		name    string
		s       *testkit.Stream
		history bool
		fail    bool
	}{
		{"registered", registered(false), false, true},
		{"registered and unregistered", registered(true), false, false},
		{"registered and unregistered, History", registered(true), true, false},
		{"the functions of the loaded programs", loaded, false, true},
	} {
		ferr := feedErr(t, tc.s, bpftrack.Options{History: tc.history})
		if got := errors.Is(ferr, bpftrack.ErrTooMany); got != tc.fail {
			t.Errorf("%s: %d names of %d bytes: %v, want ErrTooMany %v", tc.name, over, perfdata.KSymNameLen-1, ferr, tc.fail)
		}
	}
}

// A PROG_LOAD of an id loaded and not unloaded replaces the program: the
// update says which, and the tracker keeps only the new one, so that
// 20,000 loads of one id take the memory of one.
func TestReplaced(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	for range 3 {
		s.KSymbol(0x1000, 0x40, name(tag(1), "f"), false, true)
		s.BPFEvent(perfdata.BPFEventProgLoad, 7, tag(1), true)
	}
	var loads, replaced []*bpftrack.Program
	tr := feed(t, s, bpftrack.Options{}, func(_ *bpftrack.Tracker, _ *perfdata.Record, u bpftrack.Update) {
		if u.Loaded != nil {
			loads = append(loads, u.Loaded)
			replaced = append(replaced, u.Replaced)
		}
	})
	if len(loads) != 3 || replaced[0] != nil || replaced[1] != loads[0] || replaced[2] != loads[1] {
		t.Fatalf("loads %v, replaced %v", loads, replaced)
	}
	if tr.Loaded(7) != loads[2] || tr.Func(0x1000).Program != loads[2] {
		t.Errorf("loaded %v, function's program %v, want the last load", tr.Loaded(7), tr.Func(0x1000).Program)
	}
}

// RecordFuncs finds a BPF_METADATA record's functions: the program it
// follows; else, for a record at the end, the functions of programs loaded
// during the recording with its name, else with its function name after
// the tag (ambiguous when they have several names); never those of a
// program perf found loaded (synthesized), though they have its name.
func TestRecordFuncs(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	a, b, c, f := tag(0xa), tag(0xb), tag(0xc), tag(0xf)
	// loaded before: perf's names, the function's own tag for main
	s.KSymbol(0x500, 0x40, name(f, "main"), false, false)
	s.KSymbol(0x600, 0x40, name(b, "other"), false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 9, a, false)
	s.KSymbol(0x700, 0x40, name(b, "lone"), false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 8, b, false)
	s.Record(perfdata.RecordFinishedInit, nil)
	// loaded during: the kernel's names, the program's tag for main
	s.KSymbol(0x1000, 0x40, name(a, "main"), false, true)
	s.KSymbol(0x1100, 0x40, name(b, "other"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, a, true)
	s.KSymbol(0x2000, 0x40, name(b, "other"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 2, b, true)
	s.KSymbol(0x3000, 0x40, name(b, "other"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 3, b, true)
	s.KSymbol(0x4000, 0x40, name(c, "twin"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 4, c, true)
	s.KSymbol(0x5000, 0x40, name(b, "twin"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 5, b, true)
	tr := feed(t, s, bpftrack.Options{History: true}, nil)
	addrs := func(fs []*bpftrack.Func) []uint64 {
		var as []uint64
		for _, f := range fs {
			as = append(as, f.Addr)
		}
		return as
	}
	for _, c := range []struct {
		what  string
		name  string
		after *bpftrack.Program
		want  []uint64
		match bpftrack.Match
	}{
		{"after program 3", name(b, "other"), tr.Loaded(3), []uint64{0x3000}, bpftrack.MatchName},
		{"after program 9, loaded before", name(b, "other"), tr.Loaded(9), []uint64{0x600}, bpftrack.MatchName},
		{"at the end: the loads during, not the one before", name(b, "other"), nil, []uint64{0x1100, 0x2000, 0x3000}, bpftrack.MatchName},
		{"after a program without the name", name(b, "other"), tr.Loaded(4), []uint64{0x1100, 0x2000, 0x3000}, bpftrack.MatchName},
		// perf names the main function with its own tag: the name of the
		// load before's KSYMBOL
		{"main at the end: by function name, not the load before", name(f, "main"), nil, []uint64{0x1000}, bpftrack.MatchFunction},
		{"two functions of other names", name(f, "twin"), nil, []uint64{0x4000, 0x5000}, bpftrack.MatchAmbiguous},
		{"the name of a twin", name(b, "twin"), nil, []uint64{0x5000}, bpftrack.MatchName},
		{"only loaded before", name(b, "lone"), nil, nil, bpftrack.MatchNone},
		{"an unknown function", name(c, "nothing"), nil, nil, bpftrack.MatchNone},
		{"not a BPF program's name", "nothing", nil, nil, bpftrack.MatchNone},
	} {
		fs, m := tr.RecordFuncs(c.name, c.after)
		if got := addrs(fs); !slices.Equal(got, c.want) || m != c.match {
			t.Errorf("%s: %s: functions %#x matched by %v, want %#x by %v", c.what, c.name, got, m, c.want, c.match)
		}
	}
}

// BenchmarkRecordFuncsUnknown: looking up a BPF_METADATA record whose name
// no KSYMBOL has, among many functions (show does it per record: it must
// not cost a pass over every function).
func BenchmarkRecordFuncsUnknown(b *testing.B) {
	s := testkit.NewStream(binary.LittleEndian)
	for i := range 50000 {
		s.KSymbol(0xffffffffc0000000+uint64(i)*0x40, 0x40, name(tag(byte(i)), "f"+strconv.Itoa(i)), false, true)
	}
	tr := feed(b, s, bpftrack.Options{History: true}, nil)
	b.ResetTimer()
	for b.Loop() {
		tr.RecordFuncs(name(tag(1), "nosuch"), nil)
	}
}

// ReadMetadata gives each BPF_METADATA record the function it belongs to
// (of the program whose BPF_EVENT it follows, though another program has
// a function of the same name) and the samples in it.
func TestReadMetadata(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	a, b := tag(0xa), tag(0xb)
	fn := name(a, "f")
	s.KSymbol(0x1000, 0x40, fn, false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, a, false)
	s.Metadata(perfdata.BPFMetadata{ProgName: fn, Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: "1"}}})
	s.KSymbol(0x2000, 0x40, fn, false, false) // another load of the same program
	s.BPFEvent(perfdata.BPFEventProgLoad, 2, b, false)
	s.Sample(0x1004)
	s.Sample(0x1008)
	s.Sample(0x2004)
	recs := readMetadata(t, s)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	m := recs[0]
	if len(m.Funcs) != 1 || m.Funcs[0].Addr != 0x1000 || m.Funcs[0].Program.ID != 1 || m.Samples != 2 || m.Matched != bpftrack.MatchName || m.Metadata.Entries[0].Value != "1" {
		t.Errorf("record %+v, funcs %+v: want the function at 0x1000 of program 1, 2 samples", m, m.Funcs)
	}
}

// ReadMetadata gives a record at the end to the program loaded during the
// recording, with its samples, though a program loaded before has a
// function of its name (issue 22: the same object loaded before and during
// a recording), and the records right after it to the program's next
// functions; when more records at the end have a name than functions do,
// the others are of loads the recording has no KSYMBOL of, and which
// record is whose cannot be told: ambiguous.
func TestReadMetadataAtTheEnd(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	prog, fn := tag(0xa), tag(0xf)
	main, sub := name(fn, "main"), name(tag(0xb), "sub")
	md := func(name, v string) {
		s.Metadata(perfdata.BPFMetadata{ProgName: name, Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: v}}})
	}
	// loaded before: perf names main with the function's tag
	s.KSymbol(0x1000, 0x40, main, false, false)
	s.KSymbol(0x1100, 0x40, sub, false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, prog, false)
	md(main, "1")
	md(sub, "1")
	// loaded during: the kernel names main with the program's tag
	s.KSymbol(0x2000, 0x40, name(prog, "main"), false, true)
	s.KSymbol(0x2100, 0x40, sub, false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 2, prog, true)
	s.Sample(0x1004)
	s.Sample(0x2004)
	s.Sample(0x2008)
	s.Sample(0x2104)
	s.Record(perfdata.RecordFinishedRound, nil)
	// at the end, perf's names: program 2's, and sub's of a load by
	// another process
	md(main, "2")
	md(sub, "2")
	md(sub, "3")
	recs := readMetadata(t, s)
	want := []struct {
		addrs   []uint64
		program uint32 // 0: none
		match   bpftrack.Match
		samples int
	}{
		{[]uint64{0x1000}, 1, bpftrack.MatchName, 1},
		{[]uint64{0x1100}, 1, bpftrack.MatchName, 0},
		{[]uint64{0x2000}, 2, bpftrack.MatchFunction, 2},
		// right after the record of program 2's main function: the next
		{[]uint64{0x2100}, 2, bpftrack.MatchName, 1},
		// a program's last function: another load's
		{[]uint64{0x2100}, 0, bpftrack.MatchAmbiguous, 1},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		m := recs[i]
		var addrs []uint64
		for _, f := range m.Funcs {
			addrs = append(addrs, f.Addr)
		}
		var id uint32
		if p := m.Program(); p != nil {
			id = p.ID
		}
		if !slices.Equal(addrs, w.addrs) || id != w.program || m.Matched != w.match || m.Samples != w.samples {
			t.Errorf("record %d (%s, version %s): functions %#x of program %d by %v, %d samples; want %#x of program %d by %v, %d samples",
				i, m.Metadata.ProgName, m.Metadata.Entries[0].Value, addrs, id, m.Matched, m.Samples, w.addrs, w.program, w.match, w.samples)
		}
	}
	// the candidates are listed as ambiguous, with no program (show
	// --json: "matched":"ambiguous", no "program_id")
	if m := recs[4]; m.Matched.String() != "ambiguous" || m.Program() != nil {
		t.Errorf("an ambiguous record: matched %q, program %v", m.Matched, m.Program())
	}
}

// ReadMetadata gives the records right after a program's BPF_EVENT to its
// functions by tag when their names are perf's from another BTF (a reused
// .rodata map's, or the map's own BTF of a program cilium/ebpf loaded):
// bpf_prog_<tag>_<another name>, or a bare bpf_prog_<tag>; of two
// functions with one tag (the same instructions), by position. At the end,
// such a record belongs to the functions of programs loaded during the
// recording with its tag, and of no function's tag to none.
func TestReadMetadataByTag(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	md := func(name string) {
		s.Metadata(perfdata.BPFMetadata{ProgName: name, Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: "1"}}})
	}
	a, b, c := tag(0xa), tag(0xb), tag(0xc)
	s.KSymbol(0x1000, 0x40, name(a, "main"), false, false)
	s.KSymbol(0x1100, 0x40, name(b, "sub"), false, false)
	s.KSymbol(0x1200, 0x40, name(c, "twin1"), false, false)
	s.KSymbol(0x1300, 0x40, name(c, "twin2"), false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, a, false)
	md(name(a, "donor_main"))
	md(perfdata.BPFProgName(b, ""))
	md(name(c, "int"))
	md(name(c, "int"))
	// loaded during the recording: a single-function program, whose
	// KSYMBOL has its function's tag, and one with a subprogram
	e, f, g := tag(0xe), tag(0xf), tag(0x9)
	s.KSymbol(0x2000, 0x40, name(e, "single"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 2, e, true)
	s.KSymbol(0x2100, 0x40, name(f, "main"), false, true)
	s.KSymbol(0x2200, 0x40, name(g, "sub"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 3, f, true)
	s.Sample(0x1104)
	s.Sample(0x1304)
	s.Sample(0x2204)
	s.Record(perfdata.RecordFinishedRound, nil)
	// at the end: of no function's tag, then the two programs', named
	// from another BTF
	md(name(tag(0xd), "int"))
	md(name(e, "int"))
	md(name(g, "int"))
	recs := readMetadata(t, s)
	want := []struct {
		addr    uint64 // 0: none
		match   bpftrack.Match
		samples int
	}{
		{0x1000, bpftrack.MatchTag, 0},
		{0x1100, bpftrack.MatchTag, 1},
		{0x1200, bpftrack.MatchTag, 0},
		{0x1300, bpftrack.MatchTag, 1},
		{0, bpftrack.MatchNone, 0},
		{0x2000, bpftrack.MatchTag, 0},
		{0x2200, bpftrack.MatchTag, 1},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		m := recs[i]
		var addr uint64
		if len(m.Funcs) > 0 {
			addr = m.Funcs[0].Addr
		}
		if addr != w.addr || len(m.Funcs) > 1 || m.Matched != w.match || m.Samples != w.samples {
			t.Errorf("record %d (%s): function %#x of %d by %v, %d samples; want %#x by %v, %d samples",
				i, m.Metadata.ProgName, addr, len(m.Funcs), m.Matched, m.Samples, w.addr, w.match, w.samples)
		}
	}
	// show --json: "matched":"tag", "program_id":1
	if p := recs[0].Program(); recs[0].Matched.String() != "tag" || p == nil || p.ID != 1 {
		t.Errorf("a record found by tag: matched %q, program %v", recs[0].Matched, p)
	}
}

// ReadMetadata counts the programs the recording loads, with records or
// not (a PROG_UNLOAD is none; a BPF_EVENT it cannot decode is an error), and
// OfProgram keeps the records of one by id or by function name.
func TestMetadataLoadsAndOfProgram(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	a, b, c := tag(0xa), tag(0xb), tag(0xc)
	for i, p := range []struct {
		tag  perfdata.BPFTag
		fn   string
		meta bool
	}{{a, "f", true}, {b, "g", true}, {c, "h", false}} {
		addr := uint64(0x1000 * (i + 1))
		s.KSymbol(addr, 0x40, name(p.tag, p.fn), false, false)
		s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), p.tag, false)
		if p.meta {
			s.Metadata(perfdata.BPFMetadata{ProgName: name(p.tag, p.fn), Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: p.fn}}})
		}
	}
	s.BPFEvent(perfdata.BPFEventProgUnload, 3, c, true)
	m, err := bpftrack.ReadMetadata(rectest.Stream(t, s.Bytes(), reader.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	// A BPF_EVENT too short for its fields is refused: a stream of them
	// is no recording, and took minutes to skip (issue 37).
	short := testkit.NewStream(binary.LittleEndian)
	short.Write(s.Bytes()[short.Len():])
	short.Record(perfdata.RecordBPFEvent, []byte{1, 0})
	if _, err := bpftrack.ReadMetadata(rectest.Stream(t, short.Bytes(), reader.Options{})); err == nil || !strings.Contains(err.Error(), "BPF_EVENT record of 10 bytes") {
		t.Errorf("a BPF_EVENT of 10 bytes: %v, want it refused", err)
	}
	if len(m.Records) != 2 || m.Loads != 3 {
		t.Fatalf("%d records, %d loads; want 2 records, 3 loads", len(m.Records), m.Loads)
	}
	for prog, want := range map[string]string{"2": "g", "g": "g", name(a, "f"): "f", "f": "f", "3": "", "h": "", "bpf_prog_g": ""} {
		m, err := bpftrack.ReadMetadata(rectest.Stream(t, s.Bytes(), reader.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		got := m.OfProgram(prog)
		switch {
		case want == "" && len(got) > 0:
			t.Errorf("--prog %s: %d records, want none", prog, len(got))
		case want != "" && (len(got) != 1 || got[0].Metadata.Entries[0].Value != want):
			t.Errorf("--prog %s: %+v, want the one record of %s", prog, got, want)
		}
	}
}

// TestBackward: perf record --overwrite reads the kernel's records newest
// first, from ring buffers written backward (write_backward in its attr):
// a program's functions are the KSYMBOLs right after its PROG_LOAD
// BPF_EVENT, main function last. The KSYMBOLs and BPF_EVENT perf
// synthesizes at the tail, after FINISHED_INIT, come in its own order.
func TestBackward(t *testing.T) {
	bo := binary.LittleEndian
	s := &testkit.Stream{Order: bo}
	s.Write(perfdata.PipeHeader(bo))
	attr := testkit.StreamAttr(bo)
	bo.PutUint64(attr[40:], bo.Uint64(attr[40:])|1<<27) // write_backward
	s.Record(perfdata.RecordHeaderAttr, attr)
	a, b, c := tag(0xa), tag(0xb), tag(0xc)
	// b loaded after a: its records first
	s.BPFEvent(perfdata.BPFEventProgLoad, 8, b, true)
	s.KSymbol(0x4000, 0x40, name(b, "main_b"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 7, a, true)
	s.KSymbol(0x2000, 0x40, name(a, "sub_a"), false, true)
	s.KSymbol(0x1000, 0x40, name(a, "main_a"), false, true)
	s.Sample(0x1010)
	s.Record(perfdata.RecordFinishedRound, nil)
	s.Record(perfdata.RecordFinishedInit, nil)
	s.KSymbol(0x6000, 0x40, name(c, "main_c"), false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 9, c, false)

	var loads []*bpftrack.Program
	tr := feed(t, s, bpftrack.Options{}, func(_ *bpftrack.Tracker, _ *perfdata.Record, u bpftrack.Update) {
		if u.Loaded != nil {
			loads = append(loads, u.Loaded)
		}
	})
	if len(loads) != 3 {
		t.Fatalf("%d loads, want 3", len(loads))
	}
	funcs := func(p *bpftrack.Program) []string {
		var ns []string
		for _, f := range p.Funcs {
			ns = append(ns, f.Name)
		}
		return ns
	}
	for i, want := range [][]string{{name(b, "main_b")}, {name(a, "main_a"), name(a, "sub_a")}, {name(c, "main_c")}} {
		if got := funcs(loads[i]); !slices.Equal(got, want) {
			t.Errorf("program %d: functions %q, want %q", loads[i].ID, got, want)
		}
	}
	if loads[2].Synthesized != true || loads[0].Synthesized || loads[1].Synthesized {
		t.Errorf("synthesized: %v %v %v, want false false true", loads[0].Synthesized, loads[1].Synthesized, loads[2].Synthesized)
	}
	if f := tr.FuncAt(0x2010); f == nil || f.Program != loads[1] {
		t.Errorf("the function at 0x2010 is %+v, want program 7's", f)
	}
}

// TestNames is the one rule for a function's distinct names, which
// inject and stable use.
func TestNames(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{nil, nil},
		{[]string{"", ""}, nil},
		{[]string{"a"}, []string{"a"}},
		{[]string{"b", "a", "b"}, []string{"b", "a"}},
		{[]string{"", "x", "x", "", "y"}, []string{"x", "y"}},
	} {
		if got := bpftrack.Names(tc.in...); !slices.Equal(got, tc.want) {
			t.Errorf("Names(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
