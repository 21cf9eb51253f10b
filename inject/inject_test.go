package inject_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

var le = binary.LittleEndian

// stream is a recording built record by record (testkit.Stream).
type stream struct{ *testkit.Stream }

func newStream() *stream { return newStreamOrder(le) }

// newStreamOrder is newStream as a machine of byte order bo writes it.
func newStreamOrder(bo binary.ByteOrder) *stream { return &stream{testkit.NewStream(bo)} }

func (s *stream) rec(t perfdata.RecordType, body []byte) { s.Record(t, body) }

func (s *stream) trailer(kernel bool) []byte { return s.Trailer(kernel) }

func (s *stream) ksym(addr uint64, name string, unregister, kernel bool) {
	s.KSymbol(addr, 40, name, unregister, kernel)
}

func (s *stream) bpfEvent(typ perfdata.BPFEventType, id uint32, tag perfdata.BPFTag, kernel bool) {
	s.BPFEvent(typ, id, tag, kernel)
}

func (s *stream) sample() { s.Sample(0) }

// fakeSource is a bpfprog.Source over a fixed set of programs.
type fakeSource map[uint32]*bpfprog.Program

func (f fakeSource) Lookup(id uint32, tag perfdata.BPFTag) (*bpfprog.Program, error) {
	p, ok := f[id]
	if !ok {
		return nil, fmt.Errorf("program %d: %w", id, bpfprog.ErrNotFound)
	}
	if p.Tag != tag {
		return nil, &bpfprog.TagMismatchError{ID: id, Want: tag, Got: p.Tag}
	}
	return p, nil
}

func (f fakeSource) System() bpfprog.System { return bpfprog.System{} }

func tag(b byte) perfdata.BPFTag { return perfdata.BPFTag{b, b, b, b, b, b, b, b} }

// prog is a program with a main function and nsub subprograms at
// base, base+0x100, ...; the main function's kernel name uses the
// program tag, its perf name the function tag, as real ones do.
func prog(id uint32, t byte, base uint64, nsub int, meta bool) *bpfprog.Program {
	p := &bpfprog.Program{ID: id, Tag: tag(t), Name: fmt.Sprintf("p%d", id)}
	for i := 0; i <= nsub; i++ {
		ft := tag(t + byte(i) + 1)
		fn := fmt.Sprintf("f%d_%d", id, i)
		f := bpfprog.Func{Tag: ft, BTFName: fn, Addr: base + uint64(i)*0x100, Len: 40,
			PerfName: fmt.Sprintf("bpf_prog_%v_%s", ft, fn), KernelName: fmt.Sprintf("bpf_prog_%v_%s", ft, fn)}
		if i == 0 && nsub > 0 {
			f.KernelName = fmt.Sprintf("bpf_prog_%v_%s", p.Tag, fn)
		}
		p.Funcs = append(p.Funcs, f)
	}
	if meta {
		m := &bpfprog.Metadata{Entries: []bpfprog.Entry{{Key: "version", Value: fmt.Sprintf(`"%d.0"`, id)}}}
		for _, f := range p.Funcs {
			m.ProgNames = append(m.ProgNames, f.PerfName)
		}
		p.Metadata = m
	}
	return p
}

// modernRecording is what perf >= 6.17 records: before, loaded before
// the recording, synthesized with its BPF_METADATA records; then during,
// loaded while recording (without its records, which perf writes at the
// end), and a sample.
func modernRecording(before, during *bpfprog.Program) *stream {
	in := newStream()
	in.synth(before)
	for _, f := range before.Funcs {
		in.metadataOf(f.PerfName, before)
	}
	in.rec(perfdata.RecordFinishedInit, nil)
	in.kernelLoad(during)
	in.sample()
	return in
}

// synth writes what perf writes for a program loaded before the recording.
func (s *stream) synth(p *bpfprog.Program) {
	for _, f := range p.Funcs {
		s.ksym(f.Addr, f.PerfName, false, false)
	}
	s.bpfEvent(perfdata.BPFEventProgLoad, p.ID, p.Tag, false)
}

// kernelLoad writes what the kernel emits for a program loaded while recording.
func (s *stream) kernelLoad(p *bpfprog.Program) {
	for _, f := range p.Funcs {
		s.ksym(f.Addr, f.KernelName, false, true)
	}
	s.bpfEvent(perfdata.BPFEventProgLoad, p.ID, p.Tag, true)
}

func (s *stream) metadataOf(name string, p *bpfprog.Program) {
	m := perfdata.BPFMetadata{ProgName: name}
	for _, e := range p.Metadata.Entries {
		m.Entries = append(m.Entries, perfdata.BPFMetadataEntry{Key: e.Key, Value: e.Value})
	}
	s.Metadata(m)
}

func run(t *testing.T, in []byte, src bpfprog.Source, opts inject.Options) ([]byte, *inject.Summary) {
	t.Helper()
	r := rectest.Stream(t, in, reader.Options{Decompress: true})
	var out bytes.Buffer
	w, err := writer.New(&out, r, writer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := inject.Write(w, r, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), sum
}

func TestPlacement(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(fmt.Sprint(bo), func(t *testing.T) { testPlacement(t, bo) })
	}
}

// testPlacement is TestPlacement for a recording in byte order bo.
func testPlacement(t *testing.T, bo binary.ByteOrder) {
	a := prog(10, 0xa0, 0xffff0000, 2, true) // three functions, loaded before
	b := prog(11, 0xb0, 0xffff1000, 0, false)
	c := prog(30, 0xc0, 0xffff2000, 1, true) // loaded during
	d := prog(25, 0xd0, 0xffff3000, 0, true) // loaded during, lower id
	src := fakeSource{10: a, 11: b, 30: c, 25: d}

	// what perf writes while recording, the same in the input and the output
	recording := func(s *stream) {
		s.rec(perfdata.RecordFinishedInit, nil)
		s.sample()
		s.kernelLoad(c)
		s.sample()
		s.kernelLoad(d)
		s.rec(perfdata.RecordFinishedRound, nil)
	}
	in := newStreamOrder(bo)
	in.synth(a)
	in.synth(b)
	recording(in)

	want := newStreamOrder(bo)
	want.synth(a)
	for _, f := range a.Funcs {
		want.metadataOf(f.PerfName, a)
	}
	want.synth(b)
	recording(want)
	// at the end, ascending id, named after the kernel's KSYMBOLs
	want.metadataOf(d.Funcs[0].KernelName, d)
	for _, f := range c.Funcs {
		want.metadataOf(f.KernelName, c)
	}

	got, sum := run(t, in.Bytes(), src, inject.Options{})
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("output differs from the expected recording")
	}
	if sum.Injected != 3+1+2 {
		t.Errorf("injected %d records, want 6", sum.Injected)
	}
	outcomes := map[uint32]inject.Outcome{}
	for _, p := range sum.Programs {
		outcomes[p.ID] = p.Outcome
	}
	wantOut := map[uint32]inject.Outcome{10: inject.Injected, 11: inject.NoMetadata, 30: inject.Injected, 25: inject.Injected}
	for id, o := range wantOut {
		if outcomes[id] != o {
			t.Errorf("program %d: %v, want %v", id, outcomes[id], o)
		}
	}

	// Injecting again changes nothing.
	again, sum2 := run(t, got, src, inject.Options{})
	if !bytes.Equal(again, got) || sum2.Injected != 0 {
		t.Errorf("second injection added %d records", sum2.Injected)
	}

	// --perf-names: the main function of c is named as perf names it.
	pn, _ := run(t, in.Bytes(), src, inject.Options{PerfNames: true})
	if !bytes.Contains(pn, []byte(c.Funcs[0].PerfName)) || bytes.Count(pn, []byte(c.Funcs[0].KernelName)) != 1 {
		t.Errorf("--perf-names: main function of a program loaded during the recording not named %s", c.Funcs[0].PerfName)
	}
	// and the file it made counts as already injected, under either name.
	if _, s := run(t, pn, src, inject.Options{}); s.Injected != 0 {
		t.Errorf("records named the perf way were duplicated: %d added", s.Injected)
	}
}

func TestNeverMislabel(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true)
	reused := prog(10, 0xee, 0xffff0000, 1, true) // same id, another program
	moved := prog(10, 0xa0, 0xfffe0000, 1, true)  // same id and tag, other addresses: another boot
	for _, tc := range []struct {
		name string
		src  fakeSource
		want inject.Outcome
		is   error
		why  string // the start of the reason, which does not name the program again
	}{
		{"unknown id", fakeSource{}, inject.NotFound, bpfprog.ErrNotFound, "no such BPF program"},
		{"reused id", fakeSource{10: reused}, inject.Mismatch, bpfprog.ErrTagMismatch, "program 10 has tag eeeeeeeeeeeeeeee"},
		{"other boot", fakeSource{10: moved}, inject.Mismatch, nil, "no KSYMBOL for its function 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newStream()
			in.synth(a)
			in.sample()
			in.Sample(a.Funcs[0].Addr + 4)
			got, sum := run(t, in.Bytes(), tc.src, inject.Options{})
			if !bytes.Equal(got, in.Bytes()) {
				t.Errorf("output changed")
			}
			if len(sum.Programs) != 1 || sum.Programs[0].Outcome != tc.want {
				t.Fatalf("programs %+v, want one %v", sum.Programs, tc.want)
			}
			p := sum.Programs[0]
			if tc.is != nil && !errors.Is(p.Err, tc.is) {
				t.Errorf("error %v, want %v", p.Err, tc.is)
			}
			if !strings.HasPrefix(p.Why(), tc.why) || !strings.HasPrefix(p.Err.Error(), "program 10") {
				t.Errorf("reason %q, error %q; want a reason %q..., an error that names the program", p.Why(), p.Err, tc.why)
			}
			if p.Samples != 1 || p.Missing != inject.MissingWithSamples || len(sum.Missing(inject.MissingWithSamples)) != 1 {
				t.Errorf("%d samples, %v; want 1, %v", p.Samples, p.Missing, inject.MissingWithSamples)
			}
			if len(sum.Unresolved()) != 1 {
				t.Errorf("unresolved %d, want 1", len(sum.Unresolved()))
			}
		})
	}
}

// TestExistingRecords: a recording written by perf >= 6.17 keeps its
// records, gets no duplicates, and its programs count as resolved even when
// the source no longer knows them.
func TestExistingRecords(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true)
	c := prog(30, 0xc0, 0xffff2000, 1, true)
	in := modernRecording(a, c)
	for _, f := range c.Funcs { // as perf 7.2 names them: perf names
		in.metadataOf(f.PerfName, c)
	}
	for _, src := range []fakeSource{{10: a, 30: c}, {}} {
		got, sum := run(t, in.Bytes(), src, inject.Options{})
		if !bytes.Equal(got, in.Bytes()) {
			t.Errorf("source of %d programs: output changed", len(src))
		}
		if sum.Injected != 0 || sum.Kept != 4 || len(sum.Unresolved()) != 0 {
			t.Errorf("source of %d programs: injected %d, kept %d, unresolved %d; want 0, 4, 0", len(src), sum.Injected, sum.Kept, len(sum.Unresolved()))
		}
	}
}

// TestTrailingBytes: bytes after a pipe stream's last record stay last.
func TestTrailingBytes(t *testing.T) {
	c := prog(30, 0xc0, 0xffff2000, 0, true)
	in := newStream()
	in.rec(perfdata.RecordFinishedInit, nil)
	in.kernelLoad(c)
	junk := []byte("[ perf record: Woken up 1 times ]\n")
	want := newStream()
	want.rec(perfdata.RecordFinishedInit, nil)
	want.kernelLoad(c)
	want.metadataOf(c.Funcs[0].KernelName, c)
	in.Write(junk)
	want.Write(junk)
	got, _ := run(t, in.Bytes(), fakeSource{30: c}, inject.Options{})
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("metadata not written before the trailing bytes")
	}
}

// TestAtEndAfterLastEvent: when the recording's last BPF_EVENT is one perf
// synthesized, the records inject writes at the end follow that program's
// right after its BPF_EVENT, and a second inject must tell them apart: the
// records right after a BPF_EVENT end at the first that is not its
// program's. (FuzzInject found it: a damaged sample_id made a synthesized
// BPF_EVENT a kernel's, the stream cut short after the next one.)
func TestAtEndAfterLastEvent(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true)
	c := prog(30, 0xc0, 0xffff2000, 0, true)
	in := newStream()
	in.kernelLoad(c)
	in.synth(a)
	src := fakeSource{10: a, 30: c}

	want := &stream{&testkit.Stream{Order: le}}
	want.Write(in.Bytes())
	for _, f := range a.Funcs { // right after a's BPF_EVENT
		want.metadataOf(f.PerfName, a)
	}
	want.metadataOf(c.Funcs[0].KernelName, c) // at the end
	once, sum := run(t, in.Bytes(), src, inject.Options{})
	if !bytes.Equal(once, want.Bytes()) || sum.Injected != 3 {
		t.Fatalf("injected %d records, or not where perf writes them; want 3", sum.Injected)
	}
	twice, sum := run(t, once, src, inject.Options{})
	if !bytes.Equal(twice, once) {
		t.Errorf("injecting twice is not injecting once: %s", testkit.FirstDiff(twice, once))
	}
	if sum.Injected != 0 || sum.Kept != 3 {
		t.Errorf("second inject: injected %d, kept %d; want 0, 3", sum.Injected, sum.Kept)
	}

	// The last BPF_EVENT's program the source does not have, and of the
	// same object as c (its functions have c's names): c's record at the
	// end is c's, not one the recording has for that program.
	u := prog(30, 0xc0, 0xffff6000, 0, false)
	u.ID = 40
	in = newStream()
	in.kernelLoad(c)
	in.synth(u)
	src = fakeSource{30: c}
	once, _ = run(t, in.Bytes(), src, inject.Options{})
	twice, sum = run(t, once, src, inject.Options{})
	if !bytes.Equal(twice, once) || sum.Injected != 0 {
		t.Errorf("the other program's: injecting twice is not injecting once (%d records injected again)", sum.Injected)
	}
}

// TestTwoLoadsOfOneObject: two loads of one object have the same KSYMBOL
// names (and tags), but may have other metadata. A record the recording has
// for the first says nothing about the second.
func TestTwoLoadsOfOneObject(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true)
	b := prog(11, 0xa0, 0xffff4000, 1, true) // same code, same names, other addresses
	b.Metadata.Entries = []bpfprog.Entry{{Key: "version", Value: `"2.0"`}}
	in := modernRecording(a, b)

	want := &stream{&testkit.Stream{Order: le}}
	want.Write(in.Bytes()) // everything, then b's records at the end
	for _, f := range b.Funcs {
		want.metadataOf(f.KernelName, b)
	}
	got, sum := run(t, in.Bytes(), fakeSource{10: a, 11: b}, inject.Options{})
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the second load did not get its own records at the end")
	}
	if sum.Injected != 2 || sum.Kept != 2 {
		t.Errorf("injected %d, kept %d; want 2, 2", sum.Injected, sum.Kept)
	}
	for _, p := range sum.Programs {
		if want := map[uint32]inject.Outcome{10: inject.AlreadyPresent, 11: inject.Injected}[p.ID]; p.Outcome != want {
			t.Errorf("program %d: %v, want %v", p.ID, p.Outcome, want)
		}
	}
	// and the second program unknown to the source stays unresolved: the
	// first's records do not stand for it
	_, sum = run(t, in.Bytes(), fakeSource{10: a}, inject.Options{})
	if u := sum.Unresolved(); len(u) != 1 || u[0].ID != 11 {
		t.Errorf("unresolved %+v, want program 11", u)
	}
}

// TestHiddenAddresses: a source without addresses (read without root)
// cannot tell a program from another boot's, so it gets nothing.
func TestHiddenAddresses(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true)
	hidden := prog(10, 0xa0, 0xffff0000, 1, true)
	for i := range hidden.Funcs {
		hidden.Funcs[i].Addr = 0
	}
	in := newStream()
	in.synth(a)
	got, sum := run(t, in.Bytes(), fakeSource{10: hidden}, inject.Options{})
	if !bytes.Equal(got, in.Bytes()) || len(sum.Programs) != 1 || sum.Programs[0].Outcome != inject.Failed {
		t.Errorf("programs %+v, want one that failed and nothing added", sum.Programs)
	}
}

// TestSamplesOfMissing: the samples in a program whose metadata is not in
// the output are counted (the summary and --strict go by them); a
// program's samples after its unload are not its.
func TestSamplesOfMissing(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true) // in the source
	b := prog(11, 0xb0, 0xffff1000, 1, true) // not in the source
	c := prog(12, 0xc0, 0xffff2000, 0, true) // not in the source, no sample
	in := newStream()
	in.synth(a)
	in.synth(b)
	in.synth(c)
	in.rec(perfdata.RecordFinishedInit, nil)
	in.Sample(a.Funcs[0].Addr + 4)
	in.Sample(b.Funcs[1].Addr + 4)
	in.Sample(b.Funcs[0].Addr)
	in.Sample(0xffffffff00000000) // nobody's
	for _, f := range b.Funcs {
		in.ksym(f.Addr, f.PerfName, true, true)
	}
	in.bpfEvent(perfdata.BPFEventProgUnload, b.ID, b.Tag, true)
	in.Sample(b.Funcs[0].Addr) // after the unload: not b's
	_, sum := run(t, in.Bytes(), fakeSource{10: a}, inject.Options{})
	want := map[uint32]struct {
		o inject.Outcome
		n int
	}{10: {inject.Injected, 0}, 11: {inject.NotFound, 2}, 12: {inject.NotFound, 0}}
	for _, p := range sum.Programs {
		if w := want[p.ID]; p.Outcome != w.o || p.Samples != w.n {
			t.Errorf("program %d: %v with %d samples, want %v with %d", p.ID, p.Outcome, p.Samples, w.o, w.n)
		}
	}
	if p := sum.Programs[1]; !p.Unloaded {
		t.Errorf("program 11: unload not seen")
	}
}

// TestSamplesOfMissingAtTail: in a recording whose programs perf
// synthesized at its tail (perf record --tail-synthesize, implied by
// --overwrite), a program's samples come before it; they are counted as
// perf report counts them: those still waiting for their round when the
// tail came (the last two rounds), not those delivered before.
func TestSamplesOfMissingAtTail(t *testing.T) {
	b := prog(11, 0xb0, 0xffff1000, 1, true) // not in the source
	in := newStream()
	in.SampleAt(b.Funcs[0].Addr, 100) // delivered before the tail: perf counts it nowhere
	in.rec(perfdata.RecordFinishedRound, nil)
	in.SampleAt(b.Funcs[0].Addr, 200)
	in.rec(perfdata.RecordFinishedRound, nil)
	in.SampleAt(b.Funcs[1].Addr+4, 300)
	in.SampleAt(b.Funcs[0].Addr, 250)
	in.rec(perfdata.RecordFinishedInit, nil)
	in.synth(b)
	_, sum := run(t, in.Bytes(), fakeSource{}, inject.Options{})
	if len(sum.Programs) != 1 || sum.Programs[0].Samples != 3 || sum.Programs[0].Missing != inject.MissingWithSamples {
		t.Errorf("programs %+v; want program 11 missing, with 3 samples", sum.Programs)
	}
}

// TestSamplesShort: a program loaded while none lacked metadata, whose
// round had SAMPLEs inject passed without counting them (perf had not
// delivered them, and may count them in it), has a count that may be
// short, and says so; one loaded after those rounds were delivered does
// not.
func TestSamplesShort(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 0, true) // in the source
	b := prog(11, 0xb0, 0xffff1000, 0, true) // not in the source
	for _, delivered := range []bool{false, true} {
		in := newStream()
		in.synth(a)
		in.rec(perfdata.RecordFinishedInit, nil)
		in.SampleAt(b.Funcs[0].Addr+4, 123456790) // after b's load, read before it
		if delivered {
			in.rec(perfdata.RecordFinishedRound, nil)
			in.rec(perfdata.RecordFinishedRound, nil)
		}
		in.ksym(b.Funcs[0].Addr, b.Funcs[0].PerfName, false, true)
		in.bpfEvent(perfdata.BPFEventProgLoad, b.ID, b.Tag, true)
		_, sum := run(t, in.Bytes(), fakeSource{10: a}, inject.Options{})
		if len(sum.Programs) != 2 || sum.Programs[1].SamplesShort == delivered {
			t.Errorf("rounds delivered %v: programs %+v; want program 11 SamplesShort %v", delivered, sum.Programs, !delivered)
		}
	}
}

// TestSamplesEarlyFlush: past bpftrack.MaxQueuedSamples waiting for their
// round, the older half is counted early (in no program, the tail not yet
// read), and the summary says so.
func TestSamplesEarlyFlush(t *testing.T) {
	if testing.Short() {
		t.Skip("a recording of MaxQueuedSamples samples")
	}
	b := prog(11, 0xb0, 0xffff1000, 1, true) // not in the source
	in := newStream()
	n := uint64(bpftrack.MaxQueuedSamples)
	for ts := uint64(1); ts <= n+1; ts++ {
		in.SampleAt(b.Funcs[0].Addr, ts)
	}
	in.rec(perfdata.RecordFinishedInit, nil)
	in.synth(b)
	_, sum := run(t, in.Bytes(), fakeSource{}, inject.Options{})
	if want := int(n + 1 - (1 + (n-1)/2)); sum.EarlyFlushes != 1 || len(sum.Programs) != 1 || sum.Programs[0].Samples != want {
		t.Errorf("%d early flushes, programs %+v; want 1, program 11 with %d samples", sum.EarlyFlushes, sum.Programs, want)
	}
}

// TestUnlisted: a recording that loads more than MaxListed programs has
// the ones past it counted, not listed, and every one is still injected:
// the summary's memory does not follow the length of the recording.
func TestUnlisted(t *testing.T) {
	const churn = inject.MaxListed + 100
	in := newStream()
	for i := range churn { // loaded and unloaded: not in the source
		id := uint32(1000 + i)
		in.bpfEvent(perfdata.BPFEventProgLoad, id, tag(1), true)
		in.bpfEvent(perfdata.BPFEventProgUnload, id, tag(1), true)
	}
	a := prog(10, 0xa0, 0xffff0000, 1, true) // past the list, in the source
	b := prog(11, 0xb0, 0xffff1000, 0, true) // past the list, not in it, with a sample
	in.kernelLoad(a)
	in.kernelLoad(b)
	in.Sample(b.Funcs[0].Addr + 4)
	got, sum := run(t, in.Bytes(), fakeSource{10: a}, inject.Options{})
	if len(sum.Programs) != inject.MaxListed {
		t.Errorf("%d programs listed, want %d", len(sum.Programs), inject.MaxListed)
	}
	tl := sum.Tally()
	if tl.Programs != churn+2 || tl.Missing[inject.MissingTransient] != churn || tl.Missing[inject.MissingWithSamples] != 1 || tl.Outcomes[inject.Injected] != 1 || tl.Outcomes[inject.NotFound] != churn+1 {
		t.Errorf("tally %+v", tl)
	}
	if sum.Injected != 2 {
		t.Errorf("%d records injected for the unlisted program, want 2", sum.Injected)
	}
	r := rectest.Stream(t, got, reader.Options{})
	n := 0
	for r.Next() {
		if r.Record().Header.Type == perfdata.RecordBPFMetadata {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d BPF_METADATA records in the output, want 2", n)
	}
}

// TestTooLarge: a program whose metadata has more variables than perf
// writes a record for gets no record, and says why.
func TestTooLarge(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 0, false)
	a.TooLarge = &bpfprog.TooLargeError{MapID: 7, Variables: 203}
	in := newStream()
	in.synth(a)
	got, sum := run(t, in.Bytes(), fakeSource{10: a}, inject.Options{})
	if !bytes.Equal(got, in.Bytes()) {
		t.Errorf("records were added")
	}
	if p := sum.Programs[0]; p.Outcome != inject.TooLarge || !strings.Contains(fmt.Sprint(p.Err), "203") || p.Outcome.Resolved() != true {
		t.Errorf("%v: %v", p.Outcome, p.Err)
	}
}

// TestDirAtEndBounded: the BPF_METADATA records at the end of a directory
// recording's first file are read before the data files that load their
// programs, so inject keeps their names until the end. Past
// MaxAtEndBytes of names that is an error naming the record, never a name
// forgotten (which would make inject write that record a second time).
func TestDirAtEndBounded(t *testing.T) {
	in := testkit.ThreadsDir("perf6.1_x86_64_threads_bpf.data")
	dir := t.TempDir()
	name := strings.Repeat("n", perfdata.KSymNameLen-1)
	n := inject.MaxAtEndBytes/len(name) + 1
	src := rectest.Open(t, in, reader.Options{})
	idHdr, order := src.IDHeaderSize(), src.ByteOrder()
	hostile, err := rectest.Through(t, in, dir, reader.Options{Decompress: true}, writer.Options{}, func(r *reader.Reader, w *writer.Writer) error {
		if err := rectest.Copy(r, w, nil); err != nil {
			return err
		}
		for i := range n {
			md := perfdata.BPFMetadata{ProgName: fmt.Sprintf("%s%07d", name[:len(name)-7], i)}
			raw, err := md.Encode(order, idHdr)
			if err != nil {
				return err
			}
			h := perfdata.DecodeEventHeader(raw, order)
			if err := w.WriteRecord(&perfdata.Record{Offset: -1, Outer: -1, Header: h, Raw: raw, Part: 0}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	out, _, err := injectFile(t, hostile, dir, fakeSource{}, inject.Options{})
	if !errors.Is(err, inject.ErrTooMany) || !strings.Contains(err.Error(), "BPF_METADATA at 0x") {
		t.Fatalf("%d records of %d-byte names at the end of data: err %v, want ErrTooMany at the record's offset", n, len(name), err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s exists after a failed inject", out)
	}
}

// listSource is a fakeSource that lists its programs and knows perf's
// clock: CLOCK_BOOTTIME is perf's clock + offset.
type listSource struct {
	fakeSource
	offset time.Duration
}

func (l listSource) System() bpfprog.System { return bpfprog.System{PerfClockOffset: l.offset} }

func (l listSource) All() iter.Seq2[*bpfprog.Program, error] {
	return func(yield func(*bpfprog.Program, error) bool) {
		ids := slices.Sorted(maps.Keys(l.fakeSource))
		for _, id := range ids {
			if !yield(l.fakeSource[id], nil) {
				return
			}
		}
	}
}

// TestUnrecorded: programs the source says were loaded while the recording
// was made, which it has no record of, get their records at the end, in id
// order with the recording's own loaded-during programs, named as perf
// names them; not outside the recording's time, not without a sign that
// the recording is of the source's boot, not twice.
func TestUnrecorded(t *testing.T) {
	const offset = 1000 * time.Nanosecond
	at := func(perfTime time.Duration) time.Duration { return perfTime + offset }
	a := prog(1, 0x10, 0xffff1000, 0, true) // loaded before: synthesized
	a.LoadTime = at(100)
	f := prog(5, 0x50, 0xffff5000, 0, true) // loaded during, recorded
	f.LoadTime = at(6000)
	b := prog(7, 0x70, 0xffff7000, 1, true) // loaded during, not recorded
	b.LoadTime = at(7000)
	c := prog(8, 0x80, 0xffff8000, 0, true) // loaded after the recording
	c.LoadTime = at(20000)
	d := prog(3, 0x30, 0xffff3000, 0, false) // during, too many variables
	d.LoadTime, d.TooLarge = at(8000), &bpfprog.TooLargeError{Variables: 203}
	e := prog(9, 0x90, 0xffff9000, 0, false) // during, no metadata
	e.LoadTime = at(8500)
	g := prog(10, 0xa0, 0xffffa000, 0, true) // at the first sample's time
	g.LoadTime = at(5000)
	h := prog(11, 0xb0, 0xffffb000, 0, true) // at the last sample's time
	h.LoadTime = at(9000)
	src := listSource{fakeSource{1: a, 5: f, 7: b, 8: c, 3: d, 9: e, 10: g, 11: h}, offset}

	in := newStream()
	in.synth(a)
	in.SampleAt(0x1000, 5000)
	in.kernelLoad(f)
	in.SampleAt(0x1000, 9000)
	in.rec(perfdata.RecordFinishedRound, nil)

	got, sum := run(t, in.Bytes(), src, inject.Options{})
	want := newStream()
	want.synth(a)
	want.metadataOf(a.Funcs[0].PerfName, a)
	want.SampleAt(0x1000, 5000)
	want.kernelLoad(f)
	want.SampleAt(0x1000, 9000)
	want.rec(perfdata.RecordFinishedRound, nil)
	want.metadataOf(f.Funcs[0].KernelName, f)
	for _, p := range []*bpfprog.Program{b, g, h} {
		for _, fn := range p.Funcs {
			want.metadataOf(fn.PerfName, p)
		}
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("output differs from the expected recording (%d bytes, want %d)", len(got), len(want.Bytes()))
	}
	outcomes := map[uint32]inject.Outcome{}
	for _, p := range sum.Programs {
		if p.Unrecorded {
			outcomes[p.ID] = p.Outcome
		}
	}
	if !maps.Equal(outcomes, map[uint32]inject.Outcome{7: inject.Injected, 3: inject.TooLarge, 9: inject.NoMetadata, 10: inject.Injected, 11: inject.Injected}) {
		t.Errorf("unrecorded programs in the summary: %v", outcomes)
	}
	// A snapshot of the same programs reads only those loaded during the
	// recording (bpfprog.LoadLister): the same output.
	var sb bytes.Buffer
	if _, err := snapshot.Take(&sb, src); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Read(bytes.NewReader(sb.Bytes()), int64(sb.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := any(snap).(bpfprog.LoadLister); !ok {
		t.Fatal("a snapshot is not a bpfprog.LoadLister")
	}
	if fromSnap, _ := run(t, in.Bytes(), snap, inject.Options{}); !bytes.Equal(fromSnap, want.Bytes()) {
		t.Errorf("from a snapshot of the same programs: output differs from the expected recording (%d bytes, want %d)", len(fromSnap), len(want.Bytes()))
	}

	// Injecting again adds nothing.
	again, sum2 := run(t, got, src, inject.Options{})
	if !bytes.Equal(again, got) || sum2.Injected != 0 {
		t.Errorf("a second inject added %d records", sum2.Injected)
	}
	// Not asked for, not knowable, not of this boot: nothing at the end for b.
	for name, c := range map[string]struct {
		src  bpfprog.Source
		opts inject.Options
	}{
		"RecordedOnly":          {src, inject.Options{RecordedOnly: true}},
		"no clock":              {listSource{src.fakeSource, 0}, inject.Options{}},
		"cannot list":           {src.fakeSource, inject.Options{}},
		"another boot's source": {listSource{fakeSource{7: b}, offset}, inject.Options{}},
	} {
		out, sum := run(t, in.Bytes(), c.src, c.opts)
		if bytes.Contains(out, []byte(b.Funcs[0].PerfName)) {
			t.Errorf("%s: records for an unrecorded program", name)
		}
		if name != "RecordedOnly" && sum.UnrecordedSkipped == "" {
			t.Errorf("%s: the summary does not say why none were looked for", name)
		}
	}
}

// TestReloads: an id loaded again and again (perf's synthesized records or
// the kernel's, unloaded in between or not) gets its records once, for its
// first load, as perf writes them: perf keeps one bpf_prog_info per id
// (perf_env__insert_bpf_prog_info()). The later loads are Duplicate and
// the programs they replace are settled, not kept.
func TestReloads(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true)
	src := fakeSource{10: a}
	for _, tc := range []struct {
		name           string
		kernel, unload bool
	}{
		{"synthesized", false, false},
		{"kernel", true, false},
		{"kernel, unloaded in between", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const loads = 1000
			in, want := newStream(), newStream()
			for i := range loads {
				for _, s := range []*stream{in, want} {
					if tc.kernel {
						s.kernelLoad(a)
					} else {
						s.synth(a)
					}
					if !tc.kernel && i == 0 && s == want {
						for _, f := range a.Funcs {
							want.metadataOf(f.PerfName, a)
						}
					}
					if tc.unload {
						s.bpfEvent(perfdata.BPFEventProgUnload, a.ID, a.Tag, true)
					}
				}
			}
			if tc.kernel {
				for _, f := range a.Funcs {
					want.metadataOf(f.KernelName, a)
				}
			}
			got, sum := run(t, in.Bytes(), src, inject.Options{})
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("output differs from the expected recording")
			}
			tl := sum.Tally()
			if sum.Injected != 2 || tl.Programs != 1 || tl.Outcomes[inject.Injected] != 1 || tl.Outcomes[inject.Duplicate] != loads-1 {
				t.Errorf("%d records injected, tally %+v; want 2 records, 1 program injected, %d duplicates", sum.Injected, tl, loads-1)
			}
			if again, sum2 := run(t, got, src, inject.Options{}); !bytes.Equal(again, got) || sum2.Injected != 0 {
				t.Errorf("second injection added %d records", sum2.Injected)
			}
		})
	}
}

// TestLoadAcrossCPUs: the kernel emits a load's KSYMBOLs and BPF_EVENT
// one by one, each into the ring buffer of the CPU its loader runs on at
// that moment, and perf record writes one CPU's records after another's:
// a loader that moves between CPUs meanwhile leaves some of its KSYMBOLs
// after its BPF_EVENT, and after other records, in the recording, read
// forward or (--overwrite) newest first. The program is the source's all
// the same, and its records are at the end; a KSYMBOL that never comes,
// or comes at the address with another name, leaves it a Mismatch without
// records.
func TestLoadAcrossCPUs(t *testing.T) {
	c := prog(30, 0xc0, 0xffff2000, 2, true) // three functions
	d := prog(31, 0xd0, 0xffff3000, 0, true) // one
	n := prog(32, 0xe0, 0xffff4000, 1, false)
	src := fakeSource{30: c, 31: d, 32: n}
	ksym := func(s *stream, f bpfprog.Func) { s.ksym(f.Addr, f.KernelName, false, true) }
	for _, tc := range []struct {
		name     string
		backward bool
		// loads writes the kernel's records of c, d and n.
		loads func(s *stream)
		want  map[uint32]inject.Outcome
	}{
		{"forward", false, func(s *stream) {
			ksym(s, c.Funcs[1]) // f0 on one CPU, f1, f2 and the BPF_EVENT on another, read first
			ksym(s, c.Funcs[2])
			s.bpfEvent(perfdata.BPFEventProgLoad, c.ID, c.Tag, true)
			s.bpfEvent(perfdata.BPFEventProgLoad, d.ID, d.Tag, true)
			s.bpfEvent(perfdata.BPFEventProgLoad, n.ID, n.Tag, true)
			s.sample()
			ksym(s, c.Funcs[0])
			ksym(s, d.Funcs[0])
			ksym(s, n.Funcs[0])
			ksym(s, n.Funcs[1])
		}, map[uint32]inject.Outcome{30: inject.Injected, 31: inject.Injected, 32: inject.NoMetadata}},
		{"backward", true, func(s *stream) {
			s.bpfEvent(perfdata.BPFEventProgLoad, d.ID, d.Tag, true)
			s.bpfEvent(perfdata.BPFEventProgLoad, c.ID, c.Tag, true)
			ksym(s, c.Funcs[2])
			ksym(s, c.Funcs[1])
			s.sample()
			s.rec(perfdata.RecordFinishedRound, nil)
			ksym(s, d.Funcs[0])
			ksym(s, c.Funcs[0])
		}, map[uint32]inject.Outcome{30: inject.Injected, 31: inject.Injected}},
		{"never", false, func(s *stream) {
			ksym(s, c.Funcs[1])
			ksym(s, c.Funcs[2])
			s.bpfEvent(perfdata.BPFEventProgLoad, c.ID, c.Tag, true)
			s.bpfEvent(perfdata.BPFEventProgLoad, d.ID, d.Tag, true)
			s.sample()
			s.ksym(d.Funcs[0].Addr, "bpf_prog_0000000000000000_other", false, true)
		}, map[uint32]inject.Outcome{30: inject.Mismatch, 31: inject.Mismatch}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newStream()
			if tc.backward {
				in = backwardStream()
			}
			tc.loads(in)
			want := &stream{testkit.NewRecords(le)}
			want.Write(in.Bytes())
			for _, p := range []*bpfprog.Program{c, d} {
				if tc.want[p.ID] == inject.Injected {
					for _, f := range p.Funcs {
						want.metadataOf(f.KernelName, p)
					}
				}
			}
			got, sum := run(t, in.Bytes(), src, inject.Options{RecordedOnly: true})
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("output: %d bytes, want %d (the input and the records of the programs injected, in order)", len(got), len(want.Bytes()))
			}
			for _, p := range sum.Programs {
				if p.Outcome != tc.want[p.ID] {
					t.Errorf("program %d: %v (%v), want %v", p.ID, p.Outcome, p.Err, tc.want[p.ID])
				}
			}
			if len(sum.Programs) != len(tc.want) {
				t.Errorf("%d programs, want %d", len(sum.Programs), len(tc.want))
			}
		})
	}
}

// backwardStream starts a recording whose attr has write_backward, as
// perf record --overwrite's have.
func backwardStream() *stream {
	s := testkit.NewRecords(le)
	s.Write(perfdata.PipeHeader(le))
	attr := testkit.StreamAttr(le)
	le.PutUint64(attr[40:], le.Uint64(attr[40:])|1<<27)
	s.Record(perfdata.RecordHeaderAttr, attr)
	return &stream{s}
}
