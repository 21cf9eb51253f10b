package annotate_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/annotate"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

const (
	mainSym = "bpf_prog_5d126c929afd31f7_bpfprogt_multi_function_main"
	subSym  = "bpf_prog_9bf8f7fe4d930906_bpfprogt_sub_mul"
)

func entries(kv ...string) []perfdata.BPFMetadataEntry {
	var es []perfdata.BPFMetadataEntry
	for i := 0; i < len(kv); i += 2 {
		es = append(es, perfdata.BPFMetadataEntry{Key: kv[i], Value: kv[i+1]})
	}
	return es
}

func testTable(keys ...string) *annotate.Table {
	t := annotate.NewTable(keys)
	t.Add(mainSym, entries("version", `"1.4.2"`, "build", `"abc"`, "value", "42"))
	t.Add(subSym, entries("version", `"a b;c(d)'e"`))
	t.Add("bpf_prog_0123456789abcdef_twice", entries("version", `"1"`))
	t.Add("bpf_prog_0123456789abcdef_twice", entries("version", `"2"`))
	return t
}

// The forms perf 6.1 and 7.2 print a frame in (perf script's default with
// and without -g, -F ip,sym[,dso][,symoff], sym without ip, [unknown]),
// and lines that are not frames.
func TestAnnotateForms(t *testing.T) {
	tab := testTable()
	lab := "[version=1.4.2,build=abc,value=42]"
	for _, tc := range []struct{ in, want string }{
		{"\tffffffffc0000bf0 " + mainSym + "+0x1c (" + mainSym + ")\n",
			"\tffffffffc0000bf0 " + mainSym + lab + "+0x1c (" + mainSym + ")\n"},
		{"\tffffffffc0000bf0 " + mainSym + " (" + mainSym + ")\n",
			"\tffffffffc0000bf0 " + mainSym + lab + " (" + mainSym + ")\n"},
		{" ffffffffc0000bf0 " + mainSym + "\n", " ffffffffc0000bf0 " + mainSym + lab + "\n"},
		{" ffffffffc0000bf0 " + mainSym + "+0x5", " ffffffffc0000bf0 " + mainSym + lab + "+0x5"},
		{"\t" + mainSym + "+0x5 (" + mainSym + ")\n", "\t" + mainSym + lab + "+0x5 (" + mainSym + ")\n"},
		{"          a.test 28582 [000]  3474.793322:     250000 cpu-clock:ppp:  ffffffffc0000bd5 " + mainSym + "+0x5 (" + mainSym + ")\n",
			"          a.test 28582 [000]  3474.793322:     250000 cpu-clock:ppp:  ffffffffc0000bd5 " + mainSym + lab + "+0x5 (" + mainSym + ")\n"},
		{"\tffffffffc0000bf0 [unknown] (" + mainSym + ")\n", "\tffffffffc0000bf0 [unknown] (" + mainSym + lab + ")\n"},
		{"\tffffffffc0000bf0 " + subSym + "+0x22 (" + subSym + ")\n",
			"\tffffffffc0000bf0 " + subSym + "[version=a%20b%3Bc%28d%29%27e]+0x22 (" + subSym + ")\n"},
		{"\tffffffffc0000bf0 bpf_prog_0123456789abcdef_twice+0x2 (bpf_prog_0123456789abcdef_twice)\n",
			"\tffffffffc0000bf0 bpf_prog_0123456789abcdef_twice[bpfmeta:ambiguous]+0x2 (bpf_prog_0123456789abcdef_twice)\n"},
		// not annotated: unknown programs, a symbol that only contains the name, not a frame
		{"\tffffffffc0000bf0 bpf_prog_ffffffffffffffff_other+0x2 (bpf_prog_ffffffffffffffff_other)\n", ""},
		{"\tffffffff81546007 __bpf_prog_exit_recur+0x77 ([kernel.kallsyms])\n", ""},
		{"\tffffffffc0000bf0 x" + mainSym + "+0x5\n", ""},
		{"see " + mainSym + " here\n", ""},
		{"\tffffffffc0000bf0 [unknown] ([unknown])\n", ""},
	} {
		got, _ := tab.Annotate(nil, []byte(tc.in))
		want := tc.want
		if want == "" {
			want = tc.in
		}
		if string(got) != want {
			t.Errorf("%q:\n got %q\nwant %q", tc.in, got, want)
		}
	}
	// --keys chooses and orders
	got, _ := testTable("bpf_metadata_build", "version", "nosuch").Annotate(nil, []byte(" 1 "+mainSym+"\n"))
	if want := " 1 " + mainSym + "[build=abc,version=1.4.2]\n"; string(got) != want {
		t.Errorf("--keys: got %q, want %q", got, want)
	}
}

// Text that is not perf script output passes through byte for byte, and
// is counted.
func TestAnnotatePassThrough(t *testing.T) {
	in := "hello " + mainSym + "\n\n# comment\r\n\x00\xff binary\tline\n" + strings.Repeat("x", annotate.MaxLine+10) + "\nno newline at the end"
	var out bytes.Buffer
	st, err := annotate.Run(strings.NewReader(in), &out, testTable())
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("output differs from the input")
	}
	if st.Lines != 6 || st.Unparsed != 4 || st.Annotated != 0 {
		t.Errorf("stats %+v, want 6 lines, 4 unparsed, none annotated", st)
	}
}

// busyTable is the table of testdata/busy.meta.data's records.
func busyTable(t testing.TB, keys ...string) *annotate.Table {
	r, err := reader.Open(filepath.Join("testdata", "busy.meta.data"), reader.Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tab := annotate.NewTable(keys)
	if _, err := annotate.Fill(tab, r); err != nil {
		t.Fatal(err)
	}
	return tab
}

// A real recording's perf script text (perf 6.1), annotated from its
// records: only BPF frames change, and --folded is what
// stackcollapse-perf.pl makes of the annotated text, and its golden file.
func TestAnnotateRecorded(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "busy.perf61.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tab := busyTable(t, "version", "build")
	var out bytes.Buffer
	st, err := annotate.Run(bytes.NewReader(text), &out, tab)
	if err != nil {
		t.Fatal(err)
	}
	if st.Annotated == 0 || st.Unparsed != 0 {
		t.Errorf("stats %+v: want frames annotated, every line parsed", st)
	}
	checkOnlyLabels(t, text, out.Bytes(), "[version=3.14159,build=abc]")
	f := annotate.NewFolder()
	if _, err := annotate.Fold(bytes.NewReader(text), f, tab); err != nil {
		t.Fatal(err)
	}
	var folded bytes.Buffer
	f.WriteTo(&folded)
	if !bytes.Contains(folded.Bytes(), []byte(mainSym+"[version=3.14159,build=abc]")) {
		t.Errorf("no labelled frame in the folded stacks")
	}
	testkit.Golden(t, filepath.Join("testdata", "busy.folded"), folded.Bytes())
	compareStackcollapse(t, out.Bytes(), folded.Bytes())
}

// checkOnlyLabels checks that out is in with label after the symbol of
// every BPF function frame, and nothing else changed.
func checkOnlyLabels(t testing.TB, in, out []byte, label string) {
	t.Helper()
	il, ol := bytes.SplitAfter(in, []byte("\n")), bytes.SplitAfter(out, []byte("\n"))
	if len(il) != len(ol) {
		t.Fatalf("%d lines in, %d out", len(il), len(ol))
	}
	n := 0
	for i := range il {
		if bytes.Equal(il[i], ol[i]) {
			if bytes.Contains(il[i], []byte(" bpf_prog_")) {
				t.Errorf("line %d: a BPF frame without a label: %q", i+1, il[i])
			}
			continue
		}
		n++
		if !bytes.Equal(bytes.Replace(ol[i], []byte(label), nil, 1), il[i]) {
			t.Errorf("line %d: %q became %q: more than the label %s", i+1, il[i], ol[i], label)
		}
	}
	if n == 0 {
		t.Errorf("no frame labelled")
	}
}

// compareStackcollapse runs FlameGraph's stackcollapse-perf.pl on the
// annotated text and compares its output with folded.
func compareStackcollapse(t testing.TB, annotated, folded []byte) {
	t.Helper()
	perl := testkit.Command(t, "perl")
	cmd := exec.Command(perl, filepath.Join("testdata", "stackcollapse-perf.pl"))
	cmd.Stdin = bytes.NewReader(annotated)
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("stackcollapse-perf.pl: %v", err)
	}
	if !bytes.Equal(folded, want) {
		t.Errorf("--folded differs from stackcollapse-perf.pl's:\n%s", testkit.Diff(want, folded))
	}
}

// A recording's records of two loads of a function with other metadata:
// ambiguous; a table keeps one label per function.
func TestTableAmbiguous(t *testing.T) {
	tab := annotate.NewTable(nil)
	tab.Add("f", entries("version", `"1"`))
	tab.Add("f", entries("version", `"1"`))
	if got := tab.Label("f"); got != "[version=1]" {
		t.Errorf("same metadata twice: %q", got)
	}
	tab.Add("f", entries("version", `"2"`))
	tab.Add("f", entries("version", `"1"`))
	if got := tab.Label("f"); got != annotate.Ambiguous {
		t.Errorf("other metadata: %q, want %s", got, annotate.Ambiguous)
	}
	if tab.Len() != 1 {
		t.Errorf("%d labels", tab.Len())
	}
}

// The folder against stackcollapse-perf.pl on the forms its rules are
// for: comm with spaces, pid/tid, events filtered, periods, [unknown],
// inlined frames, Go methods, C++ and Java names, quotes and semicolons,
// a frame without a dso, lines it does not recognize, a stack not ended.
func TestFoldLikeStackcollapse(t *testing.T) {
	text := `# cmdline : /usr/bin/perf record -g ./prog
V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles: 
	ffffffff8103ce3b native_safe_halt+0x2b ([kernel.kallsyms])
	7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)
	4069f5 main+0x935 (/full/path/to/a.out)

java 12688 [002] 6544038.708352: 235 cycles: 
	7f722d142778 Lorg/mozilla/Context;.call(Lorg/mozilla/Action;)V (/tmp/perf-1.map)
	4c1d2 [unknown] (/usr/lib/libc.so.6)
	4c1d3 [unknown] ([unknown])
	4c1d4 net/http.(*Client).Do+0x10 (/bin/go)
	4c1d5 foo(int, char)->bar->baz+0x4 (/bin/cc)
	4c1d6 (anonymous namespace)::f(int) (/bin/cc)
	4c1d7 a"b'c;d (/bin/cc)
	4c1d8 ->x-> (/bin/cc)
	4c1d9 +0x5 (/bin/cc)
	4c1da x +0x5 (/bin/cc)
	4c1db abc (x) y (z)
	abc (x)

prog 1 [000] 1.0: 0 cycles: 
	1 f (/bin/prog)

prog 1 [000] 1.0: 7 instructions: 
	1 notcounted (/bin/prog)

prog 1 [000] 1.0: cycles: 
	1 g (/bin/prog)
	nothing here
	1 noDso

0 2 [000] 1.0: 5 cycles: 
	1 zero (/bin/x)

é 3 [000] 1.0: 4 cycles: 
	1 é名 (/bin/é)

a é 3/4 [000] 1.0: 2 cycles: 
	1 fé (/bin/x)

prog 1 [000] 1.0: 9 cycles: 
	1 g (/bin/prog)
	2 ` + mainSym + "+0x5 (" + mainSym + `)

prog 1 [000] 1.0: 3 cycles: 
	1 unfinished (/bin/prog)`
	tab := testTable()
	var ann bytes.Buffer
	if _, err := annotate.Run(strings.NewReader(text), &ann, tab); err != nil {
		t.Fatal(err)
	}
	f := annotate.NewFolder()
	if _, err := annotate.Fold(strings.NewReader(text), f, tab); err != nil {
		t.Fatal(err)
	}
	var folded bytes.Buffer
	f.WriteTo(&folded)
	compareStackcollapse(t, ann.Bytes(), folded.Bytes())
	t.Logf("folded:\n%s", folded.Bytes())
	if !strings.Contains(folded.String(), "[version=1.4.2,build=abc,value=42]") {
		t.Errorf("no label in\n%s", folded.String())
	}
}

// --folded charges a stack to the memory budget as it reads its frames: a
// stack of millions of frames is refused once the budget is spent, its
// text read no further than that (an operation count, not a time).
func TestFoldDeepStack(t *testing.T) {
	const limit = 8 << 20
	budget.Process().SetLimit(limit)
	defer budget.Process().SetLimit(math.MaxInt64)
	for _, n := range []int{2_000_000, 6_000_000} {
		text := &testkit.DeepStack{N: n}
		f := annotate.NewFolder()
		_, err := annotate.Fold(text, f, annotate.NewTable(nil))
		f.WriteTo(io.Discard)
		if !errors.Is(err, budget.ErrExhausted) {
			t.Fatalf("%d frames: %v, want the budget exhausted", n, err)
		}
		// a frame costs at least its 13 bytes of name and 48 more, of
		// its 56 bytes of text (and what the reader holds ahead)
		if bound := limit/(13+48)*56 + 2*annotate.MaxLine; text.BytesRead > bound {
			t.Errorf("%d frames: %d bytes read before the refusal, want at most %d", n, text.BytesRead, bound)
		}
		t.Logf("%d frames: refused after %d bytes: %v", n, text.BytesRead, err)
	}
}
