package perfevent

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "0", want: []int{0}},
		{in: "0-1", want: []int{0, 1}},
		{in: "0-3,8,10-11", want: []int{0, 1, 2, 3, 8, 10, 11}},
		{in: "", bad: true},
		{in: "3-1", bad: true},
		{in: "a", bad: true},
		{in: "0-", bad: true},
	} {
		got, err := parseCPUList(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("parseCPUList(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestOpenOptions(t *testing.T) {
	if _, err := Open(Options{RingPages: 3}); err == nil || !strings.Contains(err.Error(), "power of two") {
		t.Errorf("Open with 3 pages: %v, want a power-of-two error", err)
	}
}

// requireRoot ends the test when it cannot open CPU-wide events
// and load programs.
func requireRoot(t *testing.T) {
	t.Helper()
	testkit.BPF(t)
}

// openSet opens the events with opts, closed at the end of the test, or
// ends the test when it cannot open them (requireRoot).
func openSideBand(t *testing.T, opts Options) *SideBand {
	t.Helper()
	requireRoot(t)
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testProgName is what this package's test programs are called (at most
// 15 bytes, as bpf_prog_info.name keeps them).
const testProgName = "bpfwatcht_pe"

// loaded is a program the test loaded.
type loaded struct {
	id  uint32
	tag string
}

// loadProgs loads n tiny socket filters, kept until cleanup.
func loadProgs(t *testing.T, n int) []loaded {
	t.Helper()
	var out []loaded
	for i := range n {
		p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: testProgName, Type: ebpf.SocketFilter, License: "GPL",
			// Distinct instructions give distinct tags.
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, int32(i)), asm.Return()}})
		if err != nil {
			t.Fatalf("loading program %d: %v", i, err)
		}
		t.Cleanup(func() { p.Close() })
		id, info := testkit.ProgramInfo(t, p)
		out = append(out, loaded{id: id, tag: info.Tag})
	}
	return out
}

// drained is what drain saw.
type drained struct {
	loads map[uint32]perfdata.BPFEvent // PROG_LOAD by id
	dup   []uint32                     // ids with two PROG_LOADs
	ksyms []string                     // BPF KSYMBOL (register) names
	lost  uint64
	sids  map[uint32]SampleID // of the PROG_LOADs
	cpus  map[int]bool        // the CPUs records came from
}

func newDrained() *drained {
	return &drained{loads: map[uint32]perfdata.BPFEvent{}, sids: map[uint32]SampleID{}, cpus: map[int]bool{}}
}

// drain reads every record now in the buffers.
func (d *drained) drain(t *testing.T, s *SideBand) {
	t.Helper()
	for s.Next() {
		r := s.Record()
		if int(r.Header.Size) != len(r.Raw) {
			t.Fatalf("record %v: header size %d, %d bytes", r.Header.Type, r.Header.Size, len(r.Raw))
		}
		d.cpus[r.CPU] = true
		switch r.Header.Type {
		case perfdata.RecordBPFEvent:
			e, err := perfdata.DecodeBPFEvent(r.Raw, binary.NativeEndian)
			if err != nil {
				t.Fatal(err)
			}
			if e.Type != perfdata.BPFEventProgLoad {
				continue
			}
			if _, ok := d.loads[e.ID]; ok {
				d.dup = append(d.dup, e.ID)
			}
			d.loads[e.ID] = e
			d.sids[e.ID] = r.SampleID
		case perfdata.RecordKSymbol:
			k, err := perfdata.DecodeKSymbol(r.Raw, binary.NativeEndian)
			if err != nil {
				t.Fatal(err)
			}
			if k.Type == perfdata.KSymbolTypeBPF && !k.Unregister() {
				d.ksyms = append(d.ksyms, k.Name)
			}
		case perfdata.RecordLost:
			l, err := DecodeLost(r.Raw)
			if err != nil {
				t.Fatal(err)
			}
			d.lost += l.Lost
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
}

func monotonicNow(t *testing.T) uint64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(Clock, &ts); err != nil {
		t.Fatal(err)
	}
	return uint64(ts.Nano())
}

// TestRingWraps loads 400 programs in small batches through one-page ring
// buffers, reading after each batch, so that records wrap around the end of
// the buffer many times: every load must come out once, intact.
func TestRingWraps(t *testing.T) {
	s := openSideBand(t, Options{RingPages: 1})
	const n, batch = 400, 4
	before := monotonicNow(t)
	d := newDrained()
	var progs []loaded
	for len(progs) < n {
		progs = append(progs, loadProgs(t, batch)...)
		d.drain(t, s)
	}
	after := monotonicNow(t)
	wrapped := 0
	for _, r := range s.rings {
		wrapped += r.wrapped
	}
	t.Logf("%d programs loaded; %d PROG_LOAD records read (others' included), %d records wrapped around a %d-byte buffer, %d lost",
		n, len(d.loads), wrapped, len(s.rings[0].data), d.lost)
	if d.lost != 0 {
		t.Fatalf("%d records lost with the reader draining after every %d loads", d.lost, batch)
	}
	if wrapped == 0 {
		t.Error("no record wrapped around the end of the ring buffer: the test does not test that")
	}
	if len(d.dup) > 0 {
		t.Errorf("PROG_LOAD twice for %v", d.dup)
	}
	for _, p := range progs {
		e, ok := d.loads[p.id]
		if !ok {
			t.Errorf("program %d: no PROG_LOAD record", p.id)
			continue
		}
		if e.Tag.String() != p.tag {
			t.Errorf("program %d: PROG_LOAD tag %v, want %s", p.id, e.Tag, p.tag)
		}
		if sid := d.sids[p.id]; sid.PID != uint32(os.Getpid()) || sid.Time < before || sid.Time > after {
			t.Errorf("program %d: sample_id %+v, want pid %d and time in [%d, %d]", p.id, sid, os.Getpid(), before, after)
		}
		if name := "bpf_prog_" + p.tag + "_" + testProgName; !slices.Contains(d.ksyms, name) {
			t.Errorf("program %d: no KSYMBOL %s", p.id, name)
		}
	}
}

// TestRingLost loads programs without reading until the one-page buffers
// overflow: the kernel must say so with PERF_RECORD_LOST, and what was kept
// must still read correctly.
func TestRingLost(t *testing.T) {
	s := openSideBand(t, Options{RingPages: 1})
	// A load writes a KSYMBOL and a BPF_EVENT (~140 bytes): 100 of them do
	// not fit in 4 KiB even spread over all CPUs' buffers.
	const n = 100
	progs := loadProgs(t, n*len(s.rings))
	d := newDrained()
	d.drain(t, s)
	seen := 0
	for _, p := range progs {
		if e, ok := d.loads[p.id]; ok {
			seen++
			if e.Tag.String() != p.tag {
				t.Errorf("program %d: PROG_LOAD tag %v, want %s", p.id, e.Tag, p.tag)
			}
		}
	}
	if !s.Overrun() {
		t.Error("Overrun() false after overflowing the ring buffers")
	}
	if seen == len(progs) {
		t.Fatal("every PROG_LOAD was read although the buffers overflowed")
	}
	if d.lost != 0 {
		t.Logf("PERF_RECORD_LOST already read: %d", d.lost)
	}
	// The kernel writes PERF_RECORD_LOST with the next record it has room
	// for, on each CPU: load programs on every CPU.
	var later []loaded
	for _, cpu := range s.CPUs() {
		later = append(later, testkit.OnCPU(t, cpu, func() []loaded { return loadProgs(t, 1) })...)
	}
	unread := func(l loaded) bool { return d.loads[l.id].ID == 0 }
	for deadline := time.Now().Add(5 * time.Second); slices.ContainsFunc(later, unread) && time.Now().Before(deadline); {
		if err := s.Wait(time.Second); err != nil {
			t.Fatal(err)
		}
		d.drain(t, s)
	}
	for _, l := range later {
		if unread(l) {
			t.Errorf("program %d loaded after the overflow: no PROG_LOAD", l.id)
		}
	}
	t.Logf("%d programs loaded, %d PROG_LOADs read, %d records lost", len(progs), seen, d.lost)
	if d.lost == 0 {
		t.Fatal("no PERF_RECORD_LOST after overflowing the ring buffers")
	}
	// Every load wrote two records; those not read were counted as lost.
	if missing := uint64(len(progs) - seen); d.lost < missing {
		t.Errorf("%d PROG_LOADs missing but only %d records lost", missing, d.lost)
	}
}

// waitReturns waits at most 5 s for the Wait a goroutine sends the error of
// on woke to return, after what.
func waitReturns(t *testing.T, woke <-chan error, what string) {
	t.Helper()
	select {
	case err := <-woke:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Wait did not return within 5 s of %s", what)
	}
}

// TestWait checks that Wait returns for a program load and for Wake, and
// that it waits, not spins.
func TestWait(t *testing.T) {
	s := openSideBand(t, Options{})
	if len(s.CPUs()) == 0 {
		t.Fatal("no CPUs")
	}
	d := newDrained()
	d.drain(t, s)

	woke := make(chan error)
	go func() { woke <- s.Wait(-1) }()
	time.Sleep(50 * time.Millisecond)
	p := loadProgs(t, 1)[0]
	waitReturns(t, woke, "a program load")
	d.drain(t, s)
	if _, ok := d.loads[p.id]; !ok {
		t.Errorf("program %d: no PROG_LOAD after Wait", p.id)
	}

	go func() { woke <- s.Wait(-1) }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := s.Wake(); err != nil {
		t.Fatal(err)
	}
	waitReturns(t, woke, "Wake")
	t.Logf("Wake to Wait's return: %v", time.Since(start))

	// With nothing to read, Wait sleeps (others' program loads on a shared
	// machine may end it early, so only an upper bound is certain).
	d.drain(t, s)
	start = time.Now()
	if err := s.Wait(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Wait(100ms) took %v", el)
	}
}

func TestDecodeLost(t *testing.T) {
	raw := make([]byte, 24+sampleIDSize)
	perfdata.EventHeader{Type: perfdata.RecordLost, Size: uint16(len(raw))}.Encode(raw, binary.NativeEndian)
	binary.NativeEndian.PutUint64(raw[8:], 7)
	binary.NativeEndian.PutUint64(raw[16:], 42)
	l, err := DecodeLost(raw)
	if err != nil || l != (Lost{ID: 7, Lost: 42}) {
		t.Errorf("DecodeLost = %+v, %v", l, err)
	}
	if _, err := DecodeLost(raw[:16]); err == nil {
		t.Error("DecodeLost of 16 bytes: no error")
	}
}

// TestPerfClockOffset: the offset is stable (two readings agree to within
// a millisecond) and matches the time of a record the kernel writes.
func TestPerfClockOffset(t *testing.T) {
	o1, err := PerfClockOffset()
	if err != nil {
		testkit.Missing(t, "perf_event_open on the own thread: %v", err)
	}
	o2, err := PerfClockOffset()
	if err != nil {
		t.Fatal(err)
	}
	if d := o1 - o2; d > time.Millisecond || d < -time.Millisecond {
		t.Errorf("two offsets %v and %v differ by %v", o1, o2, d)
	}
	t.Logf("CLOCK_BOOTTIME - perf clock = %v", o1)
}
