package annotate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/bpfmeta/bpfmeta/annotate"
)

// Whatever the text, annotate adds labels and nothing else, and the
// folder and the profiler take it without failing (the profile one that
// package profile reads).
func FuzzAnnotate(f *testing.F) {
	text, err := os.ReadFile(filepath.Join("testdata", "busy.perf61.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for _, chunk := range bytes.SplitAfter(text, []byte("\n\n"))[:20] {
		f.Add(chunk)
	}
	f.Add([]byte("\tffffffffc0000bf0 [unknown] (" + mainSym + ")\n"))
	f.Add([]byte(" 1 " + subSym + "+0x2"))
	f.Add([]byte(":-1    -1 [000]     2.000000:     500000 cpu-clock:ppp: \n\tffffffffc0000bf0 " + mainSym + "+0x1c (" + mainSym + ")\n\n"))
	tab := annotate.NewTable([]string{"version"})
	tab.Add(mainSym, entries("version", `"1"`))
	tab.Add(subSym, entries("version", `"2"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		st, err := annotate.Run(bytes.NewReader(in), &out, tab)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.ReplaceAll(strings.ReplaceAll(out.String(), "[version=1]", ""), "[version=2]", "")
		want := strings.ReplaceAll(strings.ReplaceAll(string(in), "[version=1]", ""), "[version=2]", "")
		if got != want {
			t.Errorf("output %q of %q is more than the input and labels", out.Bytes(), in)
		}
		if int64(out.Len()-len(in)) != st.Annotated*int64(len("[version=1]")) {
			t.Errorf("%d bytes added for %d labels", out.Len()-len(in), st.Annotated)
		}
		fold := annotate.NewFolder()
		if _, err := annotate.Fold(bytes.NewReader(in), fold, tab); err != nil {
			t.Fatal(err)
		}
		fold.WriteTo(&out)
		p := annotate.NewProfiler()
		if _, err := annotate.Profile(bytes.NewReader(in), p, tab); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := p.Write(&out); err != nil {
			t.Fatal(err)
		}
		if _, err := profile.Parse(&out); err != nil {
			t.Fatalf("profile.Parse of the profile of %q: %v", in, err)
		}
	})
}
