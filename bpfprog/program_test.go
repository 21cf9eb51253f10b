package bpfprog

import (
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestNamed: a program is named by its id, its name, and each function's
// BTF, perf and kernel names, with or without bpf_prog_<tag>_; not by
// another id, an empty name, or a prefix.
func TestNamed(t *testing.T) {
	tag := perfdata.BPFTag{1, 2, 3, 4, 5, 6, 7, 8}
	p := &Program{ID: 97, Name: "xdp_prog", Funcs: []Func{
		{BTFName: "xdp_main", PerfName: perfdata.BPFProgName(tag, "xdp_main"), KernelName: perfdata.BPFProgName(tag, "xdp_main")},
		{BTFName: "helper", PerfName: perfdata.BPFProgName(tag, "F"), KernelName: perfdata.BPFProgName(tag, "F")},
	}}
	for _, c := range []struct {
		prog string
		want bool
	}{
		{"97", true}, {"98", false}, {"xdp_prog", true}, {"xdp_main", true}, {"helper", true},
		{perfdata.BPFProgName(tag, "xdp_main"), true}, {"F", true}, {"", false}, {"xdp", false}, {"bpf_prog_", false},
	} {
		if got := p.Named(c.prog); got != c.want {
			t.Errorf("Named(%q) = %v, want %v", c.prog, got, c.want)
		}
	}
}
