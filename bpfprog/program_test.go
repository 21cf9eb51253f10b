package bpfprog

import (
	"strings"
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

// TestHasMetadata: a program has metadata when it is known exactly and
// perf records it: not when it has none, is too large for perf's records,
// or could not be read exactly.
func TestHasMetadata(t *testing.T) {
	md := &Metadata{MapID: 1}
	for _, c := range []struct {
		name string
		p    Program
		want bool
	}{
		{"exact", Program{Metadata: md}, true},
		{"none", Program{}, false},
		{"too large", Program{TooLarge: &TooLargeError{}}, false},
		{"inexact", Program{Metadata: md, MetadataErr: &MetadataError{}}, false},
		{"unread", Program{MetadataErr: &MetadataError{}}, false},
	} {
		if got := c.p.HasMetadata(); got != c.want {
			t.Errorf("%s: HasMetadata %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFuncHidden: a function's address is hidden when the kernel gave 0,
// whatever its length; JSON then has null for both.
func TestFuncHidden(t *testing.T) {
	for _, c := range []struct {
		f    Func
		want bool
	}{
		{Func{}, true},
		{Func{Len: 40}, true},
		{Func{Addr: 0xffffffffc0001000, Len: 40}, false},
	} {
		if got := c.f.Hidden(); got != c.want {
			t.Errorf("%+v: Hidden %v, want %v", c.f, got, c.want)
		}
		j, err := (&Program{ID: 1, Funcs: []Func{c.f}}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if null := strings.Contains(string(j), `"addr":null`) || !strings.Contains(string(j), `"addr"`); null != c.want {
			t.Errorf("%+v: JSON %s", c.f, j)
		}
	}
}
