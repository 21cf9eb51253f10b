package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Watch tests name their programs bpfwatcht_* (at most 15 bytes: the
// kernel's bpf_prog_info.name keeps no more).
const watchProgPrefix = "bpfwatcht_"

// The watch tests' programs' version is a char[12] (testkit.MetadataRodata).
const watchVersionLen = 12

// watchProg is a program a watch test loaded in-process, with its own
// .rodata map carrying bpf_metadata_version and bpf_metadata_build.
type watchProg struct {
	name    string
	version string
	build   int
	prog    *ebpf.Program
	rodata  *ebpf.Map
	id      uint32
	tag     perfdata.BPFTag
	loaded  time.Time
}

// wantEntries is the metadata perf records for p.
func (p *watchProg) wantEntries() []bpfprog.Entry {
	return []bpfprog.Entry{{Key: "version", Value: `"` + p.version + `"`}, {Key: "build", Value: fmt.Sprint(p.build)}}
}

func (p *watchProg) unload() {
	p.prog.Close()
	p.rodata.Close()
}

// loadWatchProg loads a program with a .rodata metadata map. With
// useRodata the program references the map (it is in used_maps at load
// time, as for clang programs that read a metadata variable); without it the
// map is bound only by bindRodata (as libbpf does after loading). The program
// is unloaded at cleanup at the latest.
func loadWatchProg(t *testing.T, name, version string, build int, useRodata bool) *watchProg {
	t.Helper()
	m := testkit.MetadataRodata(t, watchVersionLen, version, "build", build)
	// Distinct instructions give each program its own tag.
	insns := asm.Instructions{asm.Mov.Imm(asm.R0, int32(build)), asm.Return()}
	if useRodata {
		insns = append(asm.Instructions{asm.LoadMapPtr(asm.R1, m.FD())}, insns...)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: name, Type: ebpf.SocketFilter, License: "GPL", Instructions: insns})
	if err != nil {
		m.Close()
		t.Fatalf("cilium/ebpf: program %s: %v", name, err)
	}
	p := &watchProg{name: name, version: version, build: build, prog: prog, rodata: m, loaded: time.Now()}
	t.Cleanup(p.unload)
	id, info := testkit.ProgramInfo(t, prog)
	p.id = id
	p.tag = testkit.Tag(t, info.Tag)
	return p
}

// bindRodata binds the program's .rodata as libbpf does after loading.
func (p *watchProg) bindRodata(t *testing.T) {
	if err := p.prog.BindMap(p.rodata); err != nil {
		t.Errorf("BPF_PROG_BIND_MAP %s: %v", p.name, err)
	}
}

// watched collects what a Watcher emits.
type emitted struct {
	emitted map[uint32]*bpfprog.Program // by Emit
	progs   map[uint32]*watched         // the final reads during Run
}

// newWatcher makes a Watcher whose final reads the test sees.
func newWatcher(t *testing.T, opts Options) (*Watcher, *emitted) {
	t.Helper()
	testkit.BPF(t)
	k, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	e := &emitted{progs: map[uint32]*watched{}, emitted: map[uint32]*bpfprog.Program{}}
	var w *Watcher
	opts.Emit = func(p *bpfprog.Program) error {
		if e.emitted[p.ID] != nil {
			t.Errorf("program %d emitted twice", p.ID)
		}
		e.emitted[p.ID] = p
		return nil
	}
	w, err = New(k, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, e
}

// runWatcher starts a Watcher and runs it until the returned stop is called,
// which returns Run's error.
func runWatcher(t *testing.T, opts Options) (*Watcher, *emitted, func() error) {
	t.Helper()
	w, e := newWatcher(t, opts)
	return w, e, startWatcher(w, e)
}

func startWatcher(w *Watcher, e *emitted) func() error {
	w.onDone = func(wp *watched) { e.progs[wp.id] = wp }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// watchSnapshot writes the programs a Watcher emitted into a snapshot and
// reads it back.
func watchSnapshot(t *testing.T, w *Watcher, e *emitted) *snapshot.File {
	t.Helper()
	var b bytes.Buffer
	sw, err := snapshot.NewWriter(&b, w.live.System(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range e.emitted {
		if err := sw.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Close(snapshot.End{Until: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Read(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkWatched compares a watched program with what the test loaded.
func checkWatched(t *testing.T, got *bpfprog.Program, want *watchProg) {
	t.Helper()
	if got.Tag != want.tag || got.Name != want.name[:min(len(want.name), 15)] {
		t.Errorf("%s (id %d): read as %s tag %s, want tag %s", want.name, want.id, got.Name, got.Tag, want.tag)
	}
	md, err := got.BPFMetadata()
	if err != nil {
		t.Errorf("%s (id %d): %v", want.name, want.id, err)
		return
	}
	if !slices.EqualFunc(md.Entries, want.wantEntries(), func(a, b bpfprog.Entry) bool { return a.Key == b.Key && a.Value == b.Value }) {
		t.Errorf("%s (id %d): metadata %q, want %q", want.name, want.id, md.Entries, want.wantEntries())
	}
	if len(got.Funcs) != 1 || len(md.ProgNames) != 1 || md.ProgNames[0] != got.Funcs[0].PerfName {
		t.Errorf("%s (id %d): prog_names %q for functions %+v", want.name, want.id, md.ProgNames, got.Funcs)
	}
}

// TestWatchBurst loads 100 programs in about a second while a Watcher runs:
// a quarter unloaded right after loading, a quarter 10 ms after, the rest
// kept. Every program that stayed loaded for 10 ms must be read with its
// exact metadata, and be in the snapshot; every other one must be read or
// reported as lost. (The Watcher holds a program about 0.1 ms after its load,
// 6 ms at worst seen with two CPU hogs on a busy two-CPU machine.)
func TestWatchBurst(t *testing.T) {
	w, e, stop := runWatcher(t, Options{})
	const n = 100
	const pace = 10 * time.Millisecond
	const keepBriefly = 10 * time.Millisecond
	start := time.Now()
	progs := make([]*watchProg, n)
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * pace)))
		p := loadWatchProg(t, fmt.Sprintf("%sb%03d", watchProgPrefix, i), fmt.Sprintf("burst-%03d", i), i, true)
		progs[i] = p
		switch i % 4 {
		case 0:
			p.unload()
		case 1:
			time.AfterFunc(keepBriefly, p.unload)
		}
	}
	loadTime := time.Since(start)
	time.Sleep(100 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	runTime := time.Since(start)

	// What bpfmeta watch writes, read back.
	snap := watchSnapshot(t, w, e)
	read := map[uint32]*bpfprog.Program{}
	for _, want := range progs {
		p, err := snap.Lookup(want.id, want.tag)
		switch {
		case err == nil:
			read[want.id] = p
		case !errors.Is(err, bpfprog.ErrNotFound):
			t.Errorf("%s (id %d): snapshot: %v", want.name, want.id, err)
		}
	}
	st := w.Stats()
	lost := map[uint32]MissedProgram{}
	for _, m := range st.Missed {
		lost[m.ID] = m
	}
	captured, caughtEarly, lostEarly := 0, 0, 0
	for i, want := range progs {
		got := read[want.id]
		if got != nil {
			captured++
			checkWatched(t, got, want)
		}
		if i%4 != 0 {
			if got == nil {
				t.Errorf("%s (id %d, kept %s): not read; missed: %+v", want.name, want.id,
					map[bool]string{true: keepBriefly.String(), false: "to the end"}[i%4 == 1], lost[want.id])
			}
			continue
		}
		m, isLost := lost[want.id]
		switch {
		case got != nil && isLost:
			t.Errorf("%s (id %d): both read and missed", want.name, want.id)
		case got != nil:
			caughtEarly++
		case !isLost:
			t.Errorf("%s (id %d, unloaded at once): neither read nor reported missed", want.name, want.id)
		case !m.Unloaded() || m.Tag != want.tag || m.Name != want.name || m.PID == 0:
			t.Errorf("%s (id %d): missed as %+v, want unloaded, its tag %s, name and pid", want.name, want.id, m, want.tag)
		default:
			lostEarly++
		}
	}
	t.Logf("%d programs loaded in %v (watch ran %v): %d read with their metadata, %d reported lost "+
		"(of the %d unloaded at once: %d read, %d lost); longest PROG_LOAD to hold: %v; "+
		"records lost %d, re-walks %d, re-reads %d; all programs seen: %d at start, %d loaded, %d unloaded",
		n, loadTime.Round(time.Millisecond), runTime.Round(time.Millisecond), captured, lostEarly,
		n/4, caughtEarly, lostEarly, st.MaxReadDelay, st.LostRecords, st.Rewalks, st.Rereads,
		st.AtStart, st.Loaded, st.Unloaded)
	if captured+lostEarly != n {
		t.Errorf("%d read + %d lost = %d, want the %d loaded", captured, lostEarly, captured+lostEarly, n)
	}
	if st.LostRecords != 0 && st.Rewalks == 0 {
		t.Errorf("%d records lost and no re-walk", st.LostRecords)
	}
	if st.LostRecords != 0 {
		t.Logf("records were lost: the re-walk recovered %d programs", st.Recovered)
	}
	if st.Loaded < captured {
		t.Errorf("stats: %d loaded while watching, but %d of the test's were read", st.Loaded, captured)
	}
	// Every program unloaded after it was read had its PROG_UNLOAD seen.
	if wantUnloaded := captured - (n - n/2); st.Unloaded < wantUnloaded {
		t.Errorf("stats: %d unloaded, want at least %d", st.Unloaded, wantUnloaded)
	}
}

// TestWatchBindRace loads programs whose .rodata is bound only after
// loading, as libbpf binds it: one loaded before the Watcher starts and
// bound after, one bound 3 ms after its load, and one never bound. The
// first two must get their metadata from a re-read; the re-reads of the
// third must stop.
func TestWatchBindRace(t *testing.T) {
	testkit.BPF(t)
	before := loadWatchProg(t, watchProgPrefix+"rb", "race-0", 1, false)
	w, e := newWatcher(t, Options{})
	before.bindRodata(t)
	stop := startWatcher(w, e)

	late := loadWatchProg(t, watchProgPrefix+"rl", "race-1", 2, false)
	time.Sleep(3 * time.Millisecond)
	late.bindRodata(t)
	never := loadWatchProg(t, watchProgPrefix+"rn", "race-2", 3, false)
	// The last re-read comes 255 ms after the first read.
	time.Sleep(500 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		p    *watchProg
		from origin
	}{{before, fromStart}, {late, fromEvent}} {
		wp := e.progs[c.p.id]
		if wp == nil {
			t.Errorf("%s (id %d): not read", c.p.name, c.p.id)
			continue
		}
		checkWatched(t, wp.p, c.p)
		if !wp.late || wp.from != c.from || wp.rereads == 0 || wp.rereads > maxRereads || wp.hold != nil {
			t.Errorf("%s: late %v from %v after %d re-reads, held %v; want late, from %v, 1..%d re-reads, released",
				c.p.name, wp.late, wp.from, wp.rereads, wp.hold != nil, c.from, maxRereads)
		}
		t.Logf("%s: metadata on re-read %d", c.p.name, wp.rereads)
	}
	wp := e.progs[never.id]
	switch {
	case wp == nil:
		t.Errorf("%s (id %d): not read", never.name, never.id)
	case wp.p.Metadata != nil || wp.p.MetadataErr != nil:
		t.Errorf("%s: metadata %+v (%v), want none: its .rodata was never bound", never.name, wp.p.Metadata, wp.p.MetadataErr)
	case wp.rereads != maxRereads || wp.hold != nil:
		t.Errorf("%s: %d re-reads, held %v; want exactly %d, released", never.name, wp.rereads, wp.hold != nil, maxRereads)
	}
	if st := w.Stats(); st.LateMetadata < 2 {
		t.Errorf("stats: %d with late metadata, want at least 2", st.LateMetadata)
	}
}

// TestWatchLostRecords overflows one-page ring buffers by loading programs
// while the Watcher does not read: the kernel drops records, and the
// re-walk must find every program still loaded.
func TestWatchLostRecords(t *testing.T) {
	w, e := newWatcher(t, Options{RingPages: 1})
	// About 120 bytes of records per load: 100 per CPU overflow 4 KiB.
	n := 100 * len(w.sb.CPUs())
	progs := make([]*watchProg, n)
	for i := range progs {
		progs[i] = loadWatchProg(t, fmt.Sprintf("%sl%03d", watchProgPrefix, i), fmt.Sprintf("lost-%03d", i), i, true)
	}
	cpus := w.sb.CPUs()
	stop := startWatcher(w, e)
	time.Sleep(100 * time.Millisecond)
	// The kernel reports the records it dropped with the next record it
	// writes into the buffer: load a program on every CPU.
	for i, cpu := range cpus {
		progs = append(progs, testkit.OnCPU(t, cpu, func() *watchProg {
			return loadWatchProg(t, fmt.Sprintf("%sm%03d", watchProgPrefix, i), fmt.Sprintf("more-%03d", i), i, true)
		}))
	}
	time.Sleep(100 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		wp := e.progs[p.id]
		if wp == nil {
			t.Errorf("%s (id %d): not read", p.name, p.id)
			continue
		}
		checkWatched(t, wp.p, p)
	}
	st := w.Stats()
	t.Logf("%d programs loaded into 1-page buffers: records lost %d, re-walks %d, recovered by them %d", n, st.LostRecords, st.Rewalks, st.Recovered)
	if st.LostRecords == 0 || st.Rewalks == 0 || st.Recovered == 0 {
		t.Errorf("stats %+v: want lost records, and re-walks that recovered programs", st)
	}
}
