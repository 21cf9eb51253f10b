package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// Two loads of one function, one of them gone before inject could read
// it (no journal): its frames are ambiguous, never the other load's
// metadata; the other's, told by their address, carry its own.
func TestAnnotateLoadWithoutRecord(t *testing.T) {
	testkit.Root(t)
	testkit.BPF(t)
	stock := perfPath(t, stockPerf)
	tag, kept, _ := loadAsmVersion(t, "v1")
	_, gone, unload := loadAsmVersion(t, "v2")
	sym := fmt.Sprintf("bpf_prog_%s_%s", tag, testkit.AsmProgName)
	dir := t.TempDir()
	rec := filepath.Join(dir, "two.data")
	testkit.StartPerf(t, stock, rec, testkit.PerfOptions{SystemWide: true, Workload: "sleep 0.2", Args: []string{"-F", "99"}}).Wait(t)
	loaded := func() bool {
		ksyms, err := os.ReadFile("/proc/kallsyms")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(string(ksyms), fmt.Sprintf("%016x t %s\t", gone, sym))
	}
	if !loaded() {
		t.Fatalf("%s at %#x not in /proc/kallsyms", sym, gone)
	}
	unload()
	// the kernel frees a program after its last reference, a moment later
	for deadline := time.Now().Add(5 * time.Second); loaded(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s at %#x still loaded", sym, gone)
		}
	}
	v1 := "[version=v1,build_num=1]"
	var text, want string
	for _, tc := range []struct{ line, label string }{
		{fmt.Sprintf("\t%16x %s+0x4 (%s)\n", kept+4, sym, sym), v1},
		{fmt.Sprintf("\t%16x %s+0x4 (%s)\n", gone+4, sym, sym), "[bpfmeta:ambiguous]"},
		{"\t" + sym + "+0x4 (" + sym + ")\n", "[bpfmeta:ambiguous]"},
	} {
		text += tc.line
		want += strings.Replace(tc.line, "+0x4", tc.label+"+0x4", 1)
	}
	res := annotateText(t, text, "-v", "-i", rec)
	if res.code != 0 || res.stdout != want {
		t.Errorf("%v: %q, want %q", res, res.stdout, want)
	}
	// The frames are the test's own; the functions are every one the
	// system-wide recording has metadata for, other programs' too.
	if !ownFramesRE.MatchString(res.stderr) {
		t.Errorf("-v says %q, want %q", res.stderr, ownFramesRE)
	}
}

// ownFramesRE is what annotate -v says of TestAnnotateLoadWithoutRecord's
// three frames, of however many functions other programs add.
var ownFramesRE = regexp.MustCompile(`3 frames of [1-9][0-9]* BPF functions? labelled \(2 ambiguous, 0 not in the recording\)`)

// ourFrameRE is a frame of testdata/bpf/meta.bpf.o's functions: its
// address and symbol.
var ourFrameRE = regexp.MustCompile(`^\s*([0-9a-f]+) (bpf_prog_[0-9a-f]{16}_bpfprogt_\w+)`)

// jitted is where the kernel put the functions of progs, each with label.
type jitted struct {
	addr, end uint64
	label     string
}

func jittedOf(t testing.TB, progs []testkit.Loaded, label string) []jitted {
	t.Helper()
	var js []jitted
	for _, p := range progs {
		prog, err := ebpf.NewProgramFromID(ebpf.ProgramID(p.ID))
		if err != nil {
			t.Fatal(err)
		}
		info, err := prog.Info()
		prog.Close()
		if err != nil {
			t.Fatal(err)
		}
		addrs, _ := info.JitedKsymAddrs()
		lens, _ := info.JitedFuncLens()
		if len(addrs) == 0 || len(addrs) != len(lens) {
			t.Fatalf("%s: %d JITed functions, %d lengths", p, len(addrs), len(lens))
		}
		for i := range addrs {
			js = append(js, jitted{uint64(addrs[i]), uint64(addrs[i]) + uint64(lens[i]), label})
		}
	}
	return js
}

// A program reloaded with another build (same code, so the same tag and
// symbols; other metadata), both loads busy, the second loaded before perf
// records or while it does: perf script's text through annotate --keys
// build, from perf 6.1's recording without records, its injected copy,
// and perf 7.2's own records. Every frame of either load carries its own
// build, told by its address, or, where the records do not tell which
// load is whose (perf 7.2's records of programs loaded while it records,
// written at the end), is ambiguous, or has no label (perf 7.2 names the
// record of such a program's main function with the function's tag, its
// KSYMBOL the program's): never the other load's. Every other byte is
// unchanged.
func TestAnnotateReloaded(t *testing.T) {
	testkit.Root(t)
	stock := perfPath(t, stockPerf)
	modern := perfPath(t, modernPerf)
	progs1, busy1 := testkit.BusyFilterBuild(t, "build1")
	loads1 := jittedOf(t, progs1, "[build=build1]")
	for _, during := range []bool{false, true} {
		for _, perf := range []string{stock, modern} {
			name := map[string]string{stock: "perf 6.1", modern: "perf 7.2"}[perf] + " records, second load before"
			if during {
				name = strings.Replace(name, "before", "during", 1)
			}
			t.Run(name, func(t *testing.T) {
				var progs2 []testkit.Loaded
				var busy2 func(time.Duration) int
				if !during {
					progs2, busy2 = testkit.BusyFilterBuild(t, "build2")
				}
				dir := t.TempDir()
				rec := filepath.Join(dir, "reload.data")
				r := testkit.StartPerf(t, perf, rec, testkit.PerfOptions{SystemWide: true, Workload: "sleep 1.5", Args: []string{"-g", "-F", "2000"}})
				r.WaitReady(t)
				busy1(400 * time.Millisecond)
				if during {
					progs2, busy2 = testkit.BusyFilterBuild(t, "build2")
				}
				busy2(400 * time.Millisecond)
				r.Wait(t)
				loads := append(jittedOf(t, progs2, "[build=build2]"), loads1...)
				runs := []struct{ what, perf, in string }{{"perf 7.2's records", modern, rec}}
				if perf == stock {
					meta := filepath.Join(dir, "reload.meta.data")
					if res := bpfmeta(t, nil, "inject", "-q", "-i", rec, "-o", meta); res.code != 0 {
						t.Fatalf("inject: %v", res)
					}
					runs = []struct{ what, perf, in string }{{"perf 7.2, injected", modern, meta}, {"perf 6.1, without records", stock, rec}}
				}
				for _, run := range runs {
					text := perfScriptText(t, run.perf, run.in)
					res := annotateText(t, text, "--keys", "build", "-i", run.in)
					if res.code != 0 {
						t.Fatalf("%s: %v", run.what, res)
					}
					// bpfmeta inject places each record after its program's
					// BPF_EVENT, and so does perf 7.2 for the programs it finds
					// loaded: every frame is told
					told := map[string]bool{"[build=build1]": true, "[build=build2]": run.what != "perf 7.2's records" || !during}
					seen := checkLoads(t, run.what, text, res.stdout, loads, told)
					t.Logf("%s: frames labelled %v", run.what, seen)
					if seen["[build=build1]"] == 0 || told["[build=build2]"] && seen["[build=build2]"] == 0 {
						t.Errorf("%s: frames labelled %v, want of both builds", run.what, seen)
					}
				}
			})
		}
	}
}

const annotateAmbiguous = "[bpfmeta:ambiguous]"

// checkLoads checks that out is text with each frame of ours labelled
// with its load's label (those told always), ambiguous or not at all, and another program's
// frames with a label at most; it returns how many frames got each label
// ("" none).
func checkLoads(t testing.TB, what, text, out string, loads []jitted, told map[string]bool) map[string]int {
	t.Helper()
	il, ol := strings.SplitAfter(text, "\n"), strings.SplitAfter(out, "\n")
	if len(il) != len(ol) {
		t.Fatalf("%s: %d lines in, %d out", what, len(il), len(ol))
	}
	seen := map[string]int{}
	for i := range il {
		m := ourFrameRE.FindStringSubmatch(il[i])
		if m == nil {
			loc := labelRE.FindStringIndex(ol[i])
			if il[i] != ol[i] && (loc == nil || ol[i][:loc[0]]+ol[i][loc[1]:] != il[i] || !strings.Contains(il[i], " bpf_prog_")) {
				t.Errorf("%s: line %d: %q became %q", what, i+1, il[i], ol[i])
			}
			continue
		}
		ip, _ := strconv.ParseUint(m[1], 16, 64)
		want := ""
		for _, l := range loads {
			if l.addr <= ip && ip < l.end {
				want = l.label
			}
		}
		if want == "" {
			t.Errorf("%s: line %d: %q in neither load", what, i+1, il[i])
			continue
		}
		label := want
		switch {
		case strings.Contains(ol[i], want):
		case strings.Contains(ol[i], annotateAmbiguous):
			label = annotateAmbiguous
		case ol[i] == il[i]:
			label = "" // no record of the symbol
		}
		seen[label]++
		if told[want] {
			label = want
		}
		if exp := strings.Replace(il[i], m[2], m[2]+label, 1); ol[i] != exp {
			t.Errorf("%s: line %d: %q, want %q", what, i+1, ol[i], exp)
		}
	}
	return seen
}
