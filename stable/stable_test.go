package stable_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/stable"
)

// versioned is a program with a struct entry, as the kernel or a snapshot
// has it (typed).
func versioned(id uint32, tag, version string, minor int) *bpfprog.Program {
	typed, _ := json.Marshal(map[string]any{"major": 1, "minor": minor, "arch": "x86_64"})
	text := `{1,"x86_64"}`
	if minor != 0 {
		text = `{1,1,"x86_64"}`
	}
	perfName := "bpf_prog_" + tag + "_xdp_main"
	return &bpfprog.Program{ID: id, Name: "xdp_main",
		Funcs: []bpfprog.Func{{BTFName: "xdp_main", PerfName: perfName, KernelName: perfName}},
		Metadata: &bpfprog.Metadata{ProgNames: []string{perfName}, Entries: []bpfprog.Entry{
			{Key: "version", Value: `"` + version + `"`, Typed: json.RawMessage(`"` + version + `"`)},
			{Key: "abi", Value: text, Typed: typed},
		}}}
}

// record is the BPF_METADATA record perf writes for p: the text only.
func record(p *bpfprog.Program) perfdata.BPFMetadata {
	m := perfdata.BPFMetadata{ProgName: p.Metadata.ProgNames[0]}
	for _, e := range p.Metadata.Entries {
		m.Entries = append(m.Entries, perfdata.BPFMetadataEntry{Key: e.Key, Value: e.Value})
	}
	return m
}

// TestNamedForm: a record's struct gets its named form from the program's
// types (TypedIndex), on a line of its own under perf's text; the text of
// two versions differs in the changed values only, whatever the tags; a
// record whose program is not indexed has perf's text alone.
func TestNamedForm(t *testing.T) {
	text := func(p *bpfprog.Program, index bool) string {
		var ix stable.TypedIndex
		if err := ix.Add(p); err != nil {
			t.Fatal(err)
		}
		fns := stable.Funcs{}
		if index {
			fns.Typed = ix.Typed
		}
		if err := fns.Add(record(p)); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := stable.WriteFuncs(&b, fns.Sorted()); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	v100, v110 := text(versioned(7, "aaaaaaaaaaaaaaaa", "1.0.0", 0), true), text(versioned(9, "bbbbbbbbbbbbbbbb", "1.1.0", 1), true)
	want := `xdp_main
  entry:              version = "1.0.0"
  entry:                  abi = {1,"x86_64"}
  named:                  abi = {"arch":"x86_64","major":1,"minor":0}
`
	if v100 != want {
		t.Errorf("got\n%s\nwant\n%s", v100, want)
	}
	changed := strings.NewReplacer(`"1.0.0"`, `"1.1.0"`, `{1,"x86_64"}`, `{1,1,"x86_64"}`, `"minor":0`, `"minor":1`).Replace(v100)
	if changed != v110 {
		t.Errorf("1.0.0 -> 1.1.0 changes more than its values:\n%s\n%s", v100, v110)
	}
	if plain := text(versioned(7, "aaaaaaaaaaaaaaaa", "1.0.0", 0), false); strings.Contains(plain, "named:") {
		t.Errorf("a record without types has a named form:\n%s", plain)
	}
}

// TestNamedFormClean: a named form is printed without raw control bytes,
// and a TypedIndex holds at most MaxTyped entries, MaxTypedBytes of them.
func TestNamedFormClean(t *testing.T) {
	p := versioned(7, "aaaaaaaaaaaaaaaa", "1.0.0", 0)
	p.Metadata.Entries[1].Typed = json.RawMessage("{\"a\":\"x\x1b[2Jy\"}")
	var b bytes.Buffer
	if err := stable.WritePrograms(&b, stable.Programs([]*bpfprog.Program{p})); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(b.String(), 0x1b) || !strings.Contains(b.String(), "named:") {
		t.Errorf("the named form:\n%q", b.String())
	}
	var ix stable.TypedIndex
	big := &bpfprog.Program{ID: 1, Funcs: []bpfprog.Func{{BTFName: "f"}}, Metadata: &bpfprog.Metadata{}}
	for i := 0; i <= stable.MaxTyped; i++ {
		big.Metadata.Entries = append(big.Metadata.Entries, bpfprog.Entry{Key: "k", Value: strconv.Itoa(i), Typed: json.RawMessage("1")})
	}
	if err := ix.Add(big); err == nil {
		t.Errorf("a TypedIndex took more than %d entries", stable.MaxTyped)
	}
	var bix stable.TypedIndex
	long := &bpfprog.Program{ID: 2, Funcs: []bpfprog.Func{{BTFName: "f"}}, Metadata: &bpfprog.Metadata{}}
	huge := json.RawMessage(`"` + strings.Repeat("x", 4<<20) + `"`)
	for i := range stable.MaxTypedBytes/len(huge) + 1 {
		long.Metadata.Entries = append(long.Metadata.Entries, bpfprog.Entry{Key: "k", Value: strconv.Itoa(i), Typed: huge})
	}
	if err := bix.Add(long); err == nil {
		t.Errorf("a TypedIndex took more than %d MiB", stable.MaxTypedBytes>>20)
	}
}

// funcsText is the stable text of records.
func funcsText(t *testing.T, records ...perfdata.BPFMetadata) string {
	t.Helper()
	var fns stable.Funcs
	defer fns.Close()
	for _, m := range records {
		if err := fns.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := stable.WriteFuncs(&b, fns.Sorted()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func entries(kv ...string) []perfdata.BPFMetadataEntry {
	var es []perfdata.BPFMetadataEntry
	for i := 0; i < len(kv); i += 2 {
		es = append(es, perfdata.BPFMetadataEntry{Key: kv[i], Value: kv[i+1]})
	}
	return es
}

// TestGroups: functions with the same entries are printed once, names
// first; entries carry no index, so that a variable removed changes its
// line only; a function without a name is visible.
func TestGroups(t *testing.T) {
	v1 := entries("version", `"1"`, "build", `"abc"`, "api", "3")
	got := funcsText(t,
		perfdata.BPFMetadata{ProgName: "bpf_prog_aaaaaaaaaaaaaaaa_main", Entries: v1},
		perfdata.BPFMetadata{ProgName: "bpf_prog_bbbbbbbbbbbbbbbb_sub", Entries: v1},
		perfdata.BPFMetadata{ProgName: "bpf_prog_cccccccccccccccc_", Entries: v1},
		perfdata.BPFMetadata{ProgName: "bpf_prog_dddddddddddddddd_other", Entries: entries("version", `"2"`)},
		perfdata.BPFMetadata{ProgName: "bpf_prog_bbbbbbbbbbbbbbbb_sub", Entries: v1},
	)
	want := `(no name)
main
sub
  entry:              version = "1"
  entry:                build = "abc"
  entry:                  api = 3

other
  entry:              version = "2"
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// build removed: one line less, no other line changes
	v2 := entries("version", `"1"`, "api", "3")
	removed := funcsText(t, perfdata.BPFMetadata{ProgName: "bpf_prog_aaaaaaaaaaaaaaaa_main", Entries: v2},
		perfdata.BPFMetadata{ProgName: "bpf_prog_bbbbbbbbbbbbbbbb_sub", Entries: v2},
		perfdata.BPFMetadata{ProgName: "bpf_prog_cccccccccccccccc_", Entries: v2},
		perfdata.BPFMetadata{ProgName: "bpf_prog_dddddddddddddddd_other", Entries: entries("version", `"2"`)})
	if want := strings.Replace(want, "  entry:                build = \"abc\"\n", "", 1); removed != want {
		t.Errorf("a variable removed:\n%s\nwant\n%s", removed, want)
	}
}

// TestFuncsBudget: show --stable keeps each distinct set of entries once
// and charges it to the memory budget (issue 47: 1,000 programs of one
// 202-entry record each took 263 MiB outside it): 1,000 functions of one
// set take little, 1,000 distinct sets of 202 entries are refused past
// the budget's limit.
func TestFuncsBudget(t *testing.T) {
	b := budget.Process()
	defer b.SetLimit(b.Limit())
	b.SetLimit(b.Used() + 32<<20)
	record := func(i, set int) perfdata.BPFMetadata {
		m := perfdata.BPFMetadata{ProgName: fmt.Sprintf("bpf_prog_aaaaaaaaaaaaaaaa_prog%d", i)}
		for k := range perfdata.MaxBPFMetadataEntries {
			m.Entries = append(m.Entries, perfdata.BPFMetadataEntry{Key: fmt.Sprintf("key%d", k), Value: fmt.Sprintf("%q", strings.Repeat("v", 240)+strconv.Itoa(set))})
		}
		return m
	}
	var same stable.Funcs
	before := b.Used()
	for i := range 1000 {
		if err := same.Add(record(i, 0)); err != nil {
			t.Fatalf("1,000 functions of one set of entries: %v", err)
		}
	}
	if used := b.Used() - before; used > 1<<20 {
		t.Errorf("1,000 functions of one set of entries take %d bytes of the budget", used)
	}
	if n := len(same.Sorted()); n != 1000 {
		t.Errorf("%d functions, want 1000", n)
	}
	same.Close()
	var distinct stable.Funcs
	defer distinct.Close()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		err = distinct.Add(record(i, i))
	}
	if !errors.Is(err, budget.ErrExhausted) {
		t.Errorf("1,000 distinct sets of 202 entries (60 MB) within 32 MiB: %v, want the budget exhausted", err)
	}
}

// TestFuncsBound: Funcs keeps at most bpftrack.MaxMetadataRecords distinct
// functions unless Max says another bound: a zero Funcs is bounded too.
func TestFuncsBound(t *testing.T) {
	var fns stable.Funcs
	defer fns.Close()
	var err error
	n := 0
	for ; n <= bpftrack.MaxMetadataRecords && err == nil; n++ {
		err = fns.Add(perfdata.BPFMetadata{ProgName: fmt.Sprintf("bpf_prog_0123456789abcdef_f%d", n),
			Entries: []perfdata.BPFMetadataEntry{{Key: "bpf_metadata_v", Value: "1"}}})
	}
	if err == nil || n != bpftrack.MaxMetadataRecords+1 {
		t.Errorf("took %d functions (%v), want an error after %d", n, err, bpftrack.MaxMetadataRecords)
	}
	small := stable.Funcs{Max: 2}
	defer small.Close()
	for i := range 3 {
		err = small.Add(perfdata.BPFMetadata{ProgName: fmt.Sprintf("f%d", i)})
	}
	if err == nil {
		t.Error("Max 2 took 3 functions")
	}
}
