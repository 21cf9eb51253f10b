package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

var boot0 = time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)

func system(host, boot string) bpfprog.System {
	return bpfprog.System{KernelRelease: "6.18.0", BootID: boot, Hostname: host, BootTime: boot0, PerfClockOffset: time.Second}
}

// program is program id of a boot, loaded at boottime load, with
// functions at addresses that follow from id and salt (another boot's
// KASLR).
func program(id uint32, salt uint64, load time.Duration) *bpfprog.Program {
	tag := perfdata.BPFTag{byte(id), byte(id >> 8), byte(id >> 16), 1, 2, 3, 4, 5}
	addr := 0xffffffffc0000000 + salt<<24 + uint64(id)*0x100
	return &bpfprog.Program{ID: id, Tag: tag, Name: fmt.Sprintf("prog%d", id), LoadTime: load, LoadedAt: boot0.Add(load),
		Funcs: []bpfprog.Func{{Tag: tag, Addr: addr, Len: 64, PerfName: fmt.Sprintf("bpf_prog_%v_prog%d", tag, id), KernelName: fmt.Sprintf("bpf_prog_%v_prog%d", tag, id)}},
		Metadata: &bpfprog.Metadata{MapID: id, MapName: ".rodata", ProgNames: []string{fmt.Sprintf("bpf_prog_%v_", tag)},
			Entries: []bpfprog.Entry{{Key: "version", Value: `"1.2.3"`}, {Key: "build", Value: fmt.Sprint(id)}}}}
}

func loadOf(p *bpfprog.Program, host string, t uint64) bpfprog.Load {
	l := bpfprog.Load{ID: p.ID, Tag: p.Tag, Host: host, Time: t}
	for _, f := range p.Funcs {
		l.Addrs = append(l.Addrs, f.Addr)
	}
	return l
}

func mustCreate(t testing.TB, dir string, sys bpfprog.System, opts Options) *Writer {
	t.Helper()
	w, err := Create(dir, sys, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWriteReadFind(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "j")
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{})
	p1, p2, p3 := program(10, 1, 5*time.Second), program(11, 1, 6*time.Second), program(13, 1, 3*time.Minute)
	for _, err := range []error{w.Load(p1), w.Load(p2), w.Unload(10, p1.Tag, 7*time.Second), w.Load(p3)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "alpha"): 0o700, filepath.Join(dir, "alpha", segmentName(1)): 0o600} {
		st, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), want)
		}
	}
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if hs := j.Hosts(); !slices.Equal(hs, []string{"alpha"}) {
		t.Fatalf("hosts %v", hs)
	}
	var kinds []string
	for e, err := range j.Host("alpha").Records() {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Program != nil:
			kinds = append(kinds, fmt.Sprint("load ", e.Program.ID))
		case e.Unload != nil:
			kinds = append(kinds, fmt.Sprint("unload ", e.Unload.ID))
		}
	}
	if want := []string{"load 10", "load 11", "unload 10", "load 13"}; !slices.Equal(kinds, want) {
		t.Errorf("records %v, want %v", kinds, want)
	}
	// The recording's clock is boottime - 1 s (PerfClockOffset).
	got, err := j.Find(loadOf(p1, "alpha", uint64(5500*time.Millisecond)), "")
	if err != nil || got.ID != 10 || got.Metadata.Entries[1].Value != "10" {
		t.Fatalf("Find: %v, %v", got, err)
	}
	for name, l := range map[string]bpfprog.Load{
		"another host":          loadOf(p1, "beta", 0),
		"no host":               loadOf(p1, "", 0),
		"other addresses":       loadOf(program(10, 2, 0), "alpha", 0),
		"unloaded before":       loadOf(p1, "alpha", uint64(6*time.Second+clockSlack+time.Millisecond)),
		"loaded after":          loadOf(p3, "alpha", uint64(time.Minute)),
		"an id it never loaded": loadOf(program(12, 1, 0), "alpha", 0),
	} {
		if p, err := j.Find(l, ""); !errors.Is(err, bpfprog.ErrNotFound) {
			t.Errorf("%s: Find gave %v, %v; want ErrNotFound", name, p, err)
		}
	}
	// The directory of one host reads as well as the tree.
	j1, err := Open(filepath.Join(dir, "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if hs := j1.Hosts(); !slices.Equal(hs, []string{"alpha"}) {
		t.Fatalf("one host's directory: hosts %v", hs)
	}
	if _, err := j1.Find(loadOf(p2, "alpha", 0), ""); err != nil {
		t.Error(err)
	}
}

// A writer started again begins a new segment; the programs it records
// again at its start are the same loads, not two.
func TestRestartContinues(t *testing.T) {
	dir := t.TempDir()
	sys := system("alpha", "boot-a")
	p := program(10, 1, 5*time.Second)
	for range 2 {
		w := mustCreate(t, dir, sys, Options{})
		if err := w.Load(p); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	names, _ := filepath.Glob(filepath.Join(dir, "alpha", "*"+segmentSuffix))
	if len(names) != 2 {
		t.Fatalf("segments %v, want 2", names)
	}
	j, _ := Open(dir)
	if _, err := j.Find(loadOf(p, "alpha", 0), ""); err != nil {
		t.Fatal(err)
	}
}

// Two boots with the same load (id, tag, addresses: a boot without KASLR)
// are not guessed between; once one of the recording's programs shows
// which boot, the other programs come from that boot.
func TestAmbiguousBoots(t *testing.T) {
	dir := t.TempDir()
	pa, pb := program(10, 1, 5*time.Second), program(10, 1, 9*time.Second)
	for _, c := range []struct {
		boot string
		p    *bpfprog.Program
	}{{"boot-a", pa}, {"boot-b", pb}} {
		w := mustCreate(t, dir, system("alpha", c.boot), Options{})
		w.Load(c.p)
		w.Close()
	}
	j, _ := Open(dir)
	_, err := j.Find(loadOf(pa, "alpha", 0), "")
	if !errors.Is(err, ErrAmbiguous) || !errors.Is(err, bpfprog.ErrNotFound) {
		t.Fatalf("two boots: %v, want ErrAmbiguous", err)
	}
	if p, err := j.Find(loadOf(pa, "alpha", 0), "boot-b"); err != nil || p.LoadTime != pb.LoadTime {
		t.Fatalf("boot-b's: %v, %v", p, err)
	}
}

// A segment whose last record a SIGKILL or a crash cut reads up to that
// record, which is ignored; a writer started again continues after it.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	sys := system("alpha", "boot-a")
	w := mustCreate(t, dir, sys, Options{})
	for id := uint32(1); id <= 5; id++ {
		w.Load(program(id, 1, time.Duration(id)*time.Second))
	}
	w.Close()
	seg := filepath.Join(dir, "alpha", segmentName(1))
	st, _ := os.Stat(seg)
	for _, cut := range []int64{1, 7, 200} {
		if err := os.Truncate(seg, st.Size()-cut); err != nil {
			t.Fatal(err)
		}
		st, _ = os.Stat(seg)
		var ids []uint32
		torn := ""
		j, _ := Open(dir)
		for e, err := range j.Host("alpha").Records() {
			if err != nil {
				t.Fatal(err)
			}
			if e.Program != nil {
				ids = append(ids, e.Program.ID)
			}
			torn += e.Torn
		}
		if !slices.Equal(ids, []uint32{1, 2, 3, 4}) || !strings.Contains(torn, "cut at offset") {
			t.Errorf("cut by %d: loads %v, torn %q", cut, ids, torn)
		}
		break
	}
	// A damaged byte in the middle: that record only is lost (TestDamagedRecord).
	b, _ := os.ReadFile(seg)
	b[len(b)/2] ^= 0x40
	os.WriteFile(seg, b, 0o600)
	w = mustCreate(t, dir, sys, Options{})
	w.Load(program(6, 1, 6*time.Second))
	w.Close()
	j, _ := Open(dir)
	var ids []uint32
	var damaged []string
	for e, err := range j.Host("alpha").Records() {
		if err != nil {
			t.Fatal(err)
		}
		if e.Program != nil {
			ids = append(ids, e.Program.ID)
		}
		if e.Damaged != "" {
			damaged = append(damaged, e.Damaged)
		}
	}
	if len(damaged) != 1 || !strings.Contains(damaged[0], "checksum") || !strings.Contains(damaged[0], seg) || len(ids) != 4 || !slices.Contains(ids, 6) || !slices.Contains(ids, 1) {
		t.Errorf("damaged: loads %v, damaged %q", ids, damaged)
	}
	if _, err := j.Find(loadOf(program(6, 1, 6*time.Second), "alpha", 0), ""); err != nil {
		t.Error(err)
	}
	// A writer killed as it made a segment leaves it empty (skipped
	// unread), or with part of its magic or header (torn): the journal
	// reads all the same.
	for i, b := range [][]byte{nil, []byte(magic[:3]), []byte(magic + "\x10\x00")} {
		os.WriteFile(filepath.Join(dir, "alpha", segmentName(uint64(100+i))), b, 0o600)
	}
	for _, d := range []string{dir, filepath.Join(dir, "alpha")} {
		j, err := Open(d)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for e, err := range j.Host("alpha").Records() {
			if err != nil {
				t.Fatalf("segments cut before their header: %v", err)
			}
			if e.Torn != "" {
				n++
			}
		}
		if _, err := j.Find(loadOf(program(6, 1, 6*time.Second), "alpha", 0), ""); err != nil || n != 3 {
			t.Errorf("segments cut before their header: %d torn, %v", n, err)
		}
	}
}

// The journal stays under its size limit: the oldest segments go first,
// counted, and the loads they held are named (ErrDropped).
func TestSizeLimit(t *testing.T) {
	dir := t.TempDir()
	sys := system("alpha", "boot-a")
	opts := Options{MaxSize: MinMaxSize, SegmentSize: 256 << 10}
	w := mustCreate(t, dir, sys, opts)
	const n = 20000
	for id := uint32(1); id <= n; id++ {
		if err := w.Load(program(id, 1, time.Duration(id)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if st := w.Stats(); st.Bytes > opts.MaxSize {
			t.Fatalf("after %d loads: %d bytes, over %d", id, st.Bytes, opts.MaxSize)
		}
	}
	st := w.Stats()
	w.Close()
	if st.DroppedSegments == 0 || st.DroppedLoads == 0 {
		t.Fatalf("nothing dropped: %+v", st)
	}
	var onDisk int64
	names, _ := filepath.Glob(filepath.Join(dir, "alpha", "*"))
	for _, n := range names {
		fi, _ := os.Stat(n)
		onDisk += fi.Size()
	}
	if onDisk > opts.MaxSize || onDisk != st.Bytes {
		t.Errorf("%d bytes on disk, the writer counts %d, the limit is %d", onDisk, st.Bytes, opts.MaxSize)
	}
	j, _ := Open(dir)
	oldest := uint32(n)
	for e, err := range j.Host("alpha").Records() {
		if err != nil || e.Torn != "" {
			t.Fatal(err, e.Torn)
		}
		if e.Program != nil {
			oldest = min(oldest, e.Program.ID)
		}
	}
	// The newest load dropped is named; the loads of the segments
	// dropped before are counted (the records that named them fell out
	// too).
	last := oldest - 1
	_, err := j.Find(loadOf(program(last, 1, time.Duration(last)*time.Millisecond), "alpha", 0), "")
	if !errors.Is(err, ErrDropped) || !errors.Is(err, bpfprog.ErrNotFound) {
		t.Errorf("the newest load dropped (%d): %v, want ErrDropped", last, err)
	}
	_, err = j.Find(loadOf(program(1, 1, time.Millisecond), "alpha", 0), "")
	if !errors.Is(err, bpfprog.ErrNotFound) || !strings.Contains(err.Error(), "dropped") {
		t.Errorf("the first load: %v, want one that says loads were dropped", err)
	}
	if _, err := j.Find(loadOf(program(n, 1, n*time.Millisecond), "alpha", 0), ""); err != nil {
		t.Errorf("the last load: %v", err)
	}
	// Started again, the counts go on.
	w = mustCreate(t, dir, sys, opts)
	if st2 := w.Stats(); st2.DroppedLoads < st.DroppedLoads {
		t.Errorf("started again: %d dropped loads, before %d", st2.DroppedLoads, st.DroppedLoads)
	}
	w.Close()
	t.Logf("%d loads: %d segments of %d bytes dropped (%d loads), %d bytes kept", n, st.DroppedSegments, opts.SegmentSize, st.DroppedLoads, st.Bytes)
}

// Records are synced at most once per SyncEvery, and none waits longer.
func TestSyncAtMostEvery(t *testing.T) {
	dir := t.TempDir()
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{SyncEvery: 100 * time.Millisecond})
	start := time.Now()
	for id := uint32(1); id <= 2000; id++ {
		w.Load(program(id, 1, 0))
	}
	burst := time.Since(start)
	time.Sleep(250 * time.Millisecond)
	w.mu.Lock()
	dirty, syncs := w.dirty, w.stats.Syncs
	w.mu.Unlock()
	w.Close()
	if dirty {
		t.Error("records still unsynced 250 ms after a burst")
	}
	if most := uint64((burst+250*time.Millisecond)/(100*time.Millisecond)) + 2; syncs > most {
		t.Errorf("%d syncs in %v, more than one per 100 ms", syncs, burst)
	}
}

func TestRefusesUnsafeDirs(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if _, err := Create(open, system("alpha", "b"), Options{}); err == nil || !strings.Contains(err.Error(), "others can write") {
		t.Errorf("a directory others can write: %v", err)
	}
	os.Mkdir(filepath.Join(base, "real"), 0o700)
	os.Symlink("real", filepath.Join(base, "link"))
	if _, err := Create(filepath.Join(base, "link"), system("alpha", "b"), Options{}); err == nil {
		t.Error("a symlink was followed")
	}
	if _, err := Create(base, system("../x", "b"), Options{}); err == nil {
		t.Error("a hostname with a slash was taken for a directory")
	}
}

// TestSoakMemory writes a million loads through the writer, as a watch of
// a long uptime would, and measures the heap: it follows the journal's
// segment and record sizes, not the number of loads.
func TestSoakMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the soak writes a million loads")
	}
	dir := t.TempDir()
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{MaxSize: 64 << 20})
	const n = 1_000_000
	var peak uint64
	var ms runtime.MemStats
	start := time.Now()
	for i := range n {
		id := uint32(i + 1)
		if err := w.Load(program(id, 1, time.Duration(id)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if err := w.Unload(id, program(id, 1, 0).Tag, time.Duration(id+1)*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if i%50_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse, ms.Sys)
	st := w.Stats()
	w.Close()
	t.Logf("%d loads and unloads in %v: peak heap in use / Sys %d MiB; %d bytes kept in %d segments, %d dropped (%d loads), %d syncs",
		n, time.Since(start).Round(time.Millisecond), peak>>20, st.Bytes, st.Segments, st.DroppedSegments, st.DroppedLoads, st.Syncs)
	if peak > 64<<20 {
		t.Errorf("peak memory %d MiB, over 64 MiB", peak>>20)
	}
	if st.Bytes > 64<<20 {
		t.Errorf("%d bytes kept, over the limit", st.Bytes)
	}
	// And the reader's index of what is kept.
	j, _ := Open(dir)
	runtime.GC()
	if _, err := j.Find(loadOf(program(n, 1, n*time.Millisecond), "alpha", 0), ""); err != nil {
		t.Error(err)
	}
	runtime.ReadMemStats(&ms)
	t.Logf("index: heap in use %d MiB", ms.HeapInuse>>20)
}

// The kernel with the journal: a program the kernel has is the kernel's;
// one gone is the journal's; the programs loaded in a span are both's, in
// id order, once each; and once the journal answered with another boot's
// program, the kernel's are not listed for the recording.
func TestSourceWithKernel(t *testing.T) {
	dir := t.TempDir()
	now, old := system("alpha", "boot-now"), system("alpha", "boot-old")
	kept, gone, other := program(10, 1, 5*time.Second), program(11, 1, 6*time.Second), program(12, 2, 7*time.Second)
	for _, c := range []struct {
		sys   bpfprog.System
		progs []*bpfprog.Program
	}{{old, []*bpfprog.Program{other}}, {now, []*bpfprog.Program{kept, gone}}} {
		w := mustCreate(t, dir, c.sys, Options{})
		for _, p := range c.progs {
			w.Load(p)
		}
		w.Close()
	}
	j, _ := Open(dir)
	k := &bpfprog.List{Sys: now, Programs: []*bpfprog.Program{kept, program(13, 1, 8*time.Second)}}
	s := WithKernel(k, j)
	var ids []uint32
	for p, err := range s.LoadedBetween(0, time.Minute) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	if want := []uint32{10, 11, 13}; !slices.Equal(ids, want) {
		t.Errorf("loaded in the span: %v, want %v (the kernel's and the journal's of its boot)", ids, want)
	}
	if p, err := s.Find(loadOf(gone, "alpha", 0)); err != nil || p.ID != 11 {
		t.Fatalf("a program gone: %v, %v", p, err)
	}
	if rep := s.Report(); len(rep) != 1 || !strings.Contains(rep[0], "1 unloaded program came from the journal") {
		t.Errorf("report %q", rep)
	}
	// a program the journal gives without metadata is not counted as
	// metadata from it (issue 46 item 6)
	none := program(14, 1, 9*time.Second)
	none.Metadata = nil
	w := mustCreate(t, dir, now, Options{})
	w.Load(none)
	w.Close()
	j2, _ := Open(dir)
	s2 := WithKernel(k, j2)
	for _, p := range []*bpfprog.Program{gone, none} {
		if _, err := s2.Find(loadOf(p, "alpha", 0)); err != nil {
			t.Fatal(err)
		}
	}
	if rep := s2.Report(); len(rep) != 1 || !strings.Contains(rep[0], "the metadata of 1 unloaded program came from the journal") || !strings.Contains(rep[0], "1 more found in it have no metadata") {
		t.Errorf("report %q", rep)
	}
	// the journal keeps to the boot it found the recording's programs of
	if p, err := s.Find(loadOf(other, "alpha", 0)); !errors.Is(err, bpfprog.ErrNotFound) {
		t.Fatalf("another boot's program after one of the kernel's boot: %v, %v", p, err)
	}
	j, _ = Open(dir)
	s = WithKernel(k, j)
	if p, err := s.Find(loadOf(other, "alpha", 0)); err != nil || p.ID != 12 {
		t.Fatalf("another boot's program: %v, %v", p, err)
	}
	for p := range s.All() {
		t.Errorf("the journal answered for another boot, and the kernel lists program %d", p.ID)
	}
}

// A load read from a backward ring buffer (perf record --overwrite) has
// at its BPF_EVENT some of its functions' addresses (a sample came
// between its KSYMBOLs), or none: found by id, tag and time if those are
// among its functions', the others left to the caller to match (issue 46,
// make soak's journal check).
func TestFindSomeAddrs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "j")
	w := mustCreate(t, dir, system("alpha", "boot-a"), Options{})
	p := program(14, 1, 4*time.Minute)
	p.Funcs = append(p.Funcs, bpfprog.Func{Tag: p.Tag, Addr: p.Funcs[0].Addr + 64, Len: 32, PerfName: "bpf_prog_sub", KernelName: "bpf_prog_sub"})
	p.Metadata.ProgNames = append(p.Metadata.ProgNames, "bpf_prog_sub")
	if err := w.Load(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := uint64(5 * time.Minute)
	for name, addrs := range map[string][]uint64{"the last": {p.Funcs[1].Addr}, "none": nil} {
		l := loadOf(p, "alpha", at)
		l.Addrs = addrs
		if got, err := j.Find(l, ""); err != nil || got.ID != 14 || len(got.Funcs) != 2 {
			t.Errorf("%s of its addresses: Find gave %v, %v", name, got, err)
		}
	}
	otherTag := loadOf(p, "alpha", at)
	otherTag.Addrs, otherTag.Tag[7] = nil, otherTag.Tag[7]+1
	notIts := loadOf(p, "alpha", at)
	notIts.Addrs = []uint64{p.Funcs[1].Addr + 8}
	loadedAfter := loadOf(p, "alpha", uint64(time.Minute))
	loadedAfter.Addrs = nil
	for name, l := range map[string]bpfprog.Load{"another tag": otherTag, "an address not its": notIts, "loaded after": loadedAfter} {
		if got, err := j.Find(l, ""); !errors.Is(err, bpfprog.ErrNotFound) {
			t.Errorf("%s: Find gave %v, %v; want ErrNotFound", name, got, err)
		}
	}
}
