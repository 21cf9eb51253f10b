package annotate

import (
	"os"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestProgSymbol: progSymbol is perfdata.ParseBPFProgName of the symbol
// perf script prints, ended by what perf script writes after it, for every
// name of perfdata's table of the forms (perfdata/testdata/bpf_prog_names.txt):
// a symbol with an offset, before a blank or its dso, a dso of [unknown]
// (bpf_prog_<tag>), the end of the line.
func TestProgSymbol(t *testing.T) {
	b, err := os.ReadFile("../perfdata/testdata/bpf_prog_names.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		name, _, want := strings.Cut(line, "\t") // a tab: a name of the form
		if _, _, ok := perfdata.ParseBPFProgName(name); ok != want {
			t.Fatalf("ParseBPFProgName(%q): %v; the table says %v", name, ok, want)
		}
		for _, end := range []string{"", "+0x1c", "+0x1c (bpf_prog_e21be2de8fc54252_main)", " ([kernel.kallsyms])", "\t", ")", ") bpf_prog_e21be2de8fc54252_main"} {
			if got := progSymbol([]byte(name + end)); got != want {
				t.Errorf("progSymbol(%q) = %v, want %v", name+end, got, want)
			}
		}
		n++
	}
	if n < 20 {
		t.Errorf("%d names in the table", n)
	}
}
