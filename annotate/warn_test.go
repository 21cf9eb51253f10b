package annotate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/annotate"
)

// TestWarnRules: the rules of what makes annotate's output not what was
// meant, each at its edge: more than half the lines not perf script
// output, more than 1% of the labelled frames in no load, samples with no
// stack, chosen keys no record has.
func TestWarnRules(t *testing.T) {
	for _, tc := range []struct {
		st                annotate.Stats
		unparsed, notInRe bool
	}{
		{annotate.Stats{}, false, false},
		{annotate.Stats{Lines: 10, Unparsed: 5}, false, false},
		{annotate.Stats{Lines: 10, Unparsed: 6}, true, false},
		{annotate.Stats{Annotated: 100, NotInRecording: 1}, false, false},
		{annotate.Stats{Annotated: 100, NotInRecording: 2}, false, true},
		{annotate.Stats{Annotated: 0, NotInRecording: 0}, false, false},
	} {
		if got := tc.st.MostlyUnparsed(); got != tc.unparsed {
			t.Errorf("%+v: MostlyUnparsed %v, want %v", tc.st, got, tc.unparsed)
		}
		if got := tc.st.OftenNotInRecording(); got != tc.notInRe {
			t.Errorf("%+v: OftenNotInRecording %v, want %v", tc.st, got, tc.notInRe)
		}
	}

	for _, tc := range []struct {
		text string
		want bool
	}{
		{"", false},
		{"prog 1 [000] 1.0: 9 cycles: \n", true},
		{"prog 1 [000] 1.0: 9 cycles: \n\t1 g (/bin/prog)\n", false},
	} {
		f := annotate.NewFolder()
		if _, err := annotate.Fold(strings.NewReader(tc.text), f, annotate.NewTable(nil)); err != nil {
			t.Fatal(err)
		}
		if got := f.NoCallchains(); got != tc.want {
			t.Errorf("%q: NoCallchains %v, want %v", tc.text, got, tc.want)
		}
	}

	tab := annotate.NewTable([]string{"version", "build", "bpf_metadata_other"})
	defer tab.Close()
	if err := tab.Add(mainSym, entries("bpf_metadata_version", "1", "bpf_metadata_extra", "2")); err != nil {
		t.Fatal(err)
	}
	if got, want := tab.MissingKeys(), []string{"build", "other"}; !slices.Equal(got, want) {
		t.Errorf("MissingKeys %q, want %q", got, want)
	}
}
