package annotate_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/bpfmeta/bpfmeta/annotate"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// profileOf is the profile annotate makes of text, read back with
// profile.Parse, and what was read.
func profileOf(t testing.TB, text []byte, tab *annotate.Table) (*profile.Profile, annotate.Stats, annotate.ProfileStats) {
	t.Helper()
	p := annotate.NewProfiler()
	st, err := annotate.Profile(bytes.NewReader(text), p, tab)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Parse(&out)
	if err != nil {
		t.Fatalf("profile.Parse: %v", err)
	}
	return prof, st, p.Stats()
}

// The checked-in cases: samples with and without callchains, pid/tid or
// one number, a BPF function's frame named by its label and its metadata
// the sample's labels (an [unknown] symbol's from its dso's label), an
// ambiguous frame without, samples alike summed, source lines skipped, a
// frame of no sample and a line of no perf script counted, a dso's own
// parentheses kept, a sample of no known thread (comm ":-1", pid -1)
// with its period.
func TestProfileCases(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "pprof-cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tab := annotate.NewTable(nil)
	tab.Add("bpf_prog_5d126c929afd31f7_main", []perfdata.BPFMetadataEntry{
		{Key: "bpf_metadata_version", Value: `"1.4.2"`}, {Key: "bpf_metadata_build", Value: "abc"}, {Key: "bpf_metadata_note", Value: `"a b,c=d%]"`}})
	tab.Add("bpf_prog_0123456789abcdef_other", []perfdata.BPFMetadataEntry{{Key: "bpf_metadata_version", Value: "2.0"}})
	tab.SetAmbiguous("bpf_prog_fedcba9876543210_amb")
	prof, st, ps := profileOf(t, text, tab)

	if got, want := sampleTypes(prof), "samples/count cpu-clock/nanoseconds cycles/count"; got != want {
		t.Errorf("sample types %q, want %q", got, want)
	}
	if ps.Samples != 7 || ps.Dropped != 1 || st.Unparsed != 1 {
		t.Errorf("%+v, %d unparsed: want 7 samples, 1 line dropped, 1 unparsed", ps, st.Unparsed)
	}
	const mainFn = "bpf_prog_5d126c929afd31f7_main[version=1.4.2,build=abc,note=a%20b%2Cc%3Dd%25%5D]"
	want := []struct {
		comm   string
		values []int64
		frames string // leaf first: function@mapping, 0xaddress@mapping without one
		labels string
		num    string
	}{
		{"a.test", []int64{2, 2000, 0}, mainFn + "@bpf_prog_5d126c929afd31f7_main entry_SYSCALL_64@[kernel.kallsyms] main.run@/tmp/a.out 0xc000@[unknown]",
			"bpf_build=abc bpf_note=a b,c=d%] bpf_version=1.4.2 comm=a.test", "pid=100 tid=101"},
		{"other", []int64{1, 2000, 0}, "bpf_prog_0123456789abcdef_other[version=2.0]@bpf_prog_0123456789abcdef_other bpf_prog_fedcba9876543210_amb[bpfmeta:ambiguous]@bpf_prog_fedcba9876543210_amb",
			"bpf_version=2.0 comm=other", "pid=200 tid=200"},
		{"nonchain", []int64{1, 500, 0}, mainFn + "@bpf_prog_5d126c929afd31f7_main",
			"bpf_build=abc bpf_note=a b,c=d%] bpf_version=1.4.2 comm=nonchain", "thread=300"},
		{"nonchain", []int64{1, 0, 12345}, "__memcpy@/usr/lib/libc.so.6", "comm=nonchain", "thread=300"},
		// a dso with parentheses of its own; a symbol with spaces
		{"xx", []int64{1, 1, 0}, "0x7f00@/memfd:sealed-9 (deleted) foo(int) const@/a b (c)", "comm=xx", "thread=5"},
		// a sample of no known thread: perf's comm ":-1", pid -1
		{":-1", []int64{1, 500000, 0}, "entry_SYSCALL_64@[kernel.kallsyms]", "comm=:-1", "thread=-1"},
	}
	if len(prof.Sample) != len(want) {
		t.Fatalf("%d samples, want %d", len(prof.Sample), len(want))
	}
	for i, s := range prof.Sample {
		w := want[i]
		if !slices.Equal(s.Value, w.values) || frames(s) != w.frames || labels(s.Label) != w.labels || numLabels(s.NumLabel) != w.num {
			t.Errorf("sample %d: %v %s [%s] [%s]\nwant %v %s [%s] [%s]", i, s.Value, frames(s), labels(s.Label), numLabels(s.NumLabel), w.values, w.frames, w.labels, w.num)
		}
	}
	if a := prof.Sample[0].Location[0].Address; a != 0xffffffffc0000bf0 {
		t.Errorf("leaf address %#x", a)
	}
}

func sampleTypes(p *profile.Profile) string {
	var s []string
	for _, st := range p.SampleType {
		s = append(s, st.Type+"/"+st.Unit)
	}
	return strings.Join(s, " ")
}

func frames(s *profile.Sample) string {
	var f []string
	for _, l := range s.Location {
		m := ""
		if l.Mapping != nil {
			m = "@" + l.Mapping.File
		}
		if len(l.Line) == 0 {
			f = append(f, fmt.Sprintf("%#x%s", l.Address, m))
			continue
		}
		f = append(f, l.Line[0].Function.Name+m)
	}
	return strings.Join(f, " ")
}

func labels(m map[string][]string) string {
	var s []string
	for k, vs := range m {
		for _, v := range vs {
			s = append(s, k+"="+v)
		}
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

func numLabels(m map[string][]int64) string {
	var s []string
	for k, vs := range m {
		for _, v := range vs {
			s = append(s, k+"="+strconv.FormatInt(v, 10))
		}
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

// A real recording's perf script text (perf 6.1, -g): the profile's
// stacks and totals are --folded's, stack by stack (a location without a
// function named [dso] as stackcollapse-perf.pl names an [unknown]
// frame), one sample per perf script sample, and the samples in the BPF
// program carry its metadata.
func TestProfileRecorded(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "busy.perf61.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tab := busyTable(t, "version", "build")
	prof, st, ps := profileOf(t, text, tab)
	headers := int64(bytes.Count(text, []byte("cpu-clock:ppp: \n")))
	if ps.Samples != headers || ps.Dropped != 0 || st.Unparsed != 0 {
		t.Errorf("%+v, %d unparsed: want %d samples, none dropped", ps, st.Unparsed, headers)
	}
	f := annotate.NewFolder()
	if _, err := annotate.Fold(bytes.NewReader(text), f, tab); err != nil {
		t.Fatal(err)
	}
	var folded bytes.Buffer
	f.WriteTo(&folded)
	checkFolded(t, prof, folded.Bytes())
	bpf := 0
	for _, s := range prof.Sample {
		if !strings.Contains(frames(s), "bpfprogt_multi_function_main[version=3.14159,build=abc]") {
			if len(s.Label) != 1 {
				t.Errorf("a sample of no BPF function has labels %s", labels(s.Label))
			}
			continue
		}
		bpf++
		if got := labels(s.Label); got != "bpf_build=abc bpf_version=3.14159 comm=a.test" {
			t.Errorf("a sample in the filter has labels %s", got)
		}
	}
	if bpf == 0 {
		t.Error("no sample in the filter")
	}
}

// checkFolded checks that prof has the stacks and counts of folded (the
// last sample type's, as the folded count is the period).
func checkFolded(t testing.TB, prof *profile.Profile, folded []byte) {
	t.Helper()
	want := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(folded))
	for sc.Scan() {
		i := bytes.LastIndexByte(sc.Bytes(), ' ')
		n, _ := strconv.ParseInt(string(sc.Bytes()[i+1:]), 10, 64)
		want[string(sc.Bytes()[:i])] += n
	}
	got := map[string]int64{}
	v := len(prof.SampleType) - 1
	var total, count int64
	for _, s := range prof.Sample {
		stack := []string{strings.ReplaceAll(s.Label["comm"][0], " ", "_")}
		for i := len(s.Location) - 1; i >= 0; i-- {
			l := s.Location[i]
			if len(l.Line) == 0 {
				stack = append(stack, "["+path.Base(l.Mapping.File)+"]")
				continue
			}
			stack = append(stack, l.Line[0].Function.Name)
		}
		got[strings.Join(stack, ";")] += s.Value[v]
		total += s.Value[v]
		count += s.Value[0]
	}
	var wantTotal int64
	for k, n := range want {
		wantTotal += n
		if got[k] != n {
			t.Errorf("stack %s: %d in the profile, %d folded", k, got[k], n)
		}
	}
	if len(got) != len(want) || total != wantTotal || count == 0 {
		t.Errorf("%d stacks in the profile, %d folded; total %d, folded %d", len(got), len(want), total, wantTotal)
	}
}

// Distinct stacks past the memory budget: the profile is refused, with
// the budget's error, rather than growing.
func TestProfileBudget(t *testing.T) {
	b := budget.Process()
	b.SetLimit(budget.Chunk * 4)
	defer b.SetLimit(math.MaxInt64)
	var text bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&text, "a 1 1.0: 1 cpu-clock:\n\t%x f%d (/a)\n\n", i, i)
	}
	p := annotate.NewProfiler()
	_, err := annotate.Profile(&text, p, annotate.NewTable(nil))
	if !errors.Is(err, budget.ErrExhausted) {
		t.Fatalf("%v, want the budget exhausted", err)
	}
	p.Write(&bytes.Buffer{}) // gives its memory back
}

// TestProfileStackBudget: one sample's stack of a million frames of one
// location (a few distinct locations, so only the stack grows) is
// charged as it is read and refused before its sample ends, not built
// whole first.
func TestProfileStackBudget(t *testing.T) {
	b := budget.Process()
	b.SetLimit(budget.Chunk * 4)
	defer b.SetLimit(math.MaxInt64)
	const frames = 1 << 20
	text := "a 1 1.0: 1 cpu-clock:\n" + strings.Repeat("\tffffffff81000130 f+0x1 ([kernel.kallsyms])\n", frames)
	p := annotate.NewProfiler()
	_, err := annotate.Profile(strings.NewReader(text), p, annotate.NewTable(nil))
	if !errors.Is(err, budget.ErrExhausted) {
		t.Fatalf("%v, want the budget exhausted", err)
	}
	if ps := p.Stats(); ps.Samples != 0 {
		t.Errorf("%d samples ended, want the stack refused before its end", ps.Samples)
	}
	p.Write(&bytes.Buffer{}) // gives its memory back
}

// Events of one name with other modifiers are sample types of their own:
// the first named without its modifiers, the next as perf script names
// it; perf's clocks in nanoseconds, any other event a count.
func TestProfileEvents(t *testing.T) {
	text := "aa 1 1.0: 3 cycles:u: \n\t1 f (/a)\n\naa 1 1.1: 5 cycles:k: \n\t1 f (/a)\n\naa 1 1.2: 7 task-clock: \n\t1 f (/a)\n\n"
	prof, _, _ := profileOf(t, []byte(text), annotate.NewTable(nil))
	if got, want := sampleTypes(prof), "samples/count cycles/count cycles:k/count task-clock/nanoseconds"; got != want {
		t.Errorf("sample types %q, want %q", got, want)
	}
	var got []string
	for _, s := range prof.Sample {
		got = append(got, fmt.Sprint(s.Value))
	}
	if want := "[1 3 0 0] [1 0 5 0] [1 0 0 7]"; strings.Join(got, " ") != want {
		t.Errorf("values %s, want %s", strings.Join(got, " "), want)
	}
}
