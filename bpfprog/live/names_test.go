package live

import (
	"errors"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// namer is a BTF object with the given type names by id (id 0 is void).
func namer(names map[uint32]string) typeNamer {
	return func(id uint32) (string, bool, error) {
		if id == 0 {
			return "", true, nil
		}
		n, ok := names[id]
		return n, ok, nil
	}
}

// TestSynthesizeProgName covers each branch of perf 7.2's
// synthesize_bpf_prog_name(); the cases marked [perf] were seen in records
// perf 7.2.13 wrote (see TestLiveAgainstPerf).
func TestSynthesizeProgName(t *testing.T) {
	t0, t1 := testkit.Tag(t, "5d126c929afd31f7"), testkit.Tag(t, "1811999f9c3db065")
	btf := namer(map[uint32]string{1: "main_func", 2: "sub_func", 3: ""})
	long := strings.Repeat("n", 600)
	for _, tc := range []struct {
		name string
		info nameInfo
		btf  typeNamer
		i    int
		want string
	}{
		{"btf name [perf]", nameInfo{progTags: []perfdata.BPFTag{t0, t1}, nrJitedKsyms: 2, funcInfoRecSize: 8, funcTypeIDs: []uint32{1, 2}},
			btf, 1, "bpf_prog_1811999f9c3db065_sub_func"},
		{"anonymous type in a map's BTF [perf]", nameInfo{progTags: []perfdata.BPFTag{t0}, nrJitedKsyms: 1, funcInfoRecSize: 8, funcTypeIDs: []uint32{3}, name: "prog"},
			btf, 0, "bpf_prog_5d126c929afd31f7_"},
		{"void", nameInfo{progTags: []perfdata.BPFTag{t0}, nrJitedKsyms: 1, funcInfoRecSize: 8, funcTypeIDs: []uint32{0}},
			btf, 0, "bpf_prog_5d126c929afd31f7_"},
		{"type id beyond the BTF: no suffix [perf]", nameInfo{progTags: []perfdata.BPFTag{t0, t1}, nrJitedKsyms: 2, funcInfoRecSize: 8, funcTypeIDs: []uint32{1, 9}},
			btf, 1, "bpf_prog_1811999f9c3db065"},
		{"no func_info, one function: info name [perf]", nameInfo{progTags: []perfdata.BPFTag{t0}, nrJitedKsyms: 1, funcInfoRecSize: 8, name: "asm_prog"},
			btf, 0, "bpf_prog_5d126c929afd31f7_asm_prog"},
		{"no BTF, one function", nameInfo{progTags: []perfdata.BPFTag{t0}, nrJitedKsyms: 1, name: "asm_prog"},
			nil, 0, "bpf_prog_5d126c929afd31f7_asm_prog"},
		{"no BTF, one function, no name", nameInfo{progTags: []perfdata.BPFTag{t0}, nrJitedKsyms: 1},
			nil, 0, "bpf_prog_5d126c929afd31f7"},
		{"no BTF, subprograms", nameInfo{progTags: []perfdata.BPFTag{t0, t1}, nrJitedKsyms: 2, name: "p"},
			nil, 0, "bpf_prog_5d126c929afd31f7_F"},
		{"func_info_rec_size too small", nameInfo{progTags: []perfdata.BPFTag{t0, t1}, nrJitedKsyms: 2, funcInfoRecSize: 4, funcTypeIDs: []uint32{1, 2}},
			btf, 1, "bpf_prog_1811999f9c3db065_F"},
		{"cut to 511 bytes", nameInfo{progTags: []perfdata.BPFTag{t0}, nrJitedKsyms: 1, name: long},
			nil, 0, ("bpf_prog_5d126c929afd31f7_" + long)[:perfdata.BPFProgNameLen-1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := synthesizeProgName(&tc.info, tc.btf, tc.i)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestSynthesizeProgNameError(t *testing.T) {
	boom := errors.New("boom")
	info := nameInfo{progTags: []perfdata.BPFTag{{}}, nrJitedKsyms: 1, funcInfoRecSize: 8, funcTypeIDs: []uint32{1}}
	_, err := synthesizeProgName(&info, func(uint32) (string, bool, error) { return "", false, boom }, 0)
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}

func TestKernelKsymName(t *testing.T) {
	prog, f0, f1 := testkit.Tag(t, "e21be2de8fc54252"), testkit.Tag(t, "5d126c929afd31f7"), testkit.Tag(t, "1811999f9c3db065")
	for _, tc := range []struct {
		name         string
		funcTag      perfdata.BPFTag
		i            int
		btfName      string
		haveFuncInfo bool
		progName     string
		want         string
	}{
		{"main: program tag, BTF name", f0, 0, "main_func", true, "main_fu", "bpf_prog_e21be2de8fc54252_main_func"},
		{"subprogram: own tag", f1, 1, "sub_func", true, "main_fu", "bpf_prog_1811999f9c3db065_sub_func"},
		{"main without func_info: program name", f0, 0, "", false, "asm_prog", "bpf_prog_e21be2de8fc54252_asm_prog"},
		{"main without func_info or name", f0, 0, "", false, "", "bpf_prog_e21be2de8fc54252"},
		{"subprogram without func_info: F", f1, 1, "", false, "asm_prog", "bpf_prog_1811999f9c3db065_F"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kernelKsymName(prog, tc.funcTag, tc.i, tc.btfName, tc.haveFuncInfo, tc.progName); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
