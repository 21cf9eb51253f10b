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
	for _, tc := range []struct{ line, label string }{
		{fmt.Sprintf("\t%16x %s+0x4 (%s)\n", kept+4, sym, sym), v1},
		{fmt.Sprintf("\t%16x %s+0x4 (%s)\n", gone+4, sym, sym), "[bpfmeta:ambiguous]"},
		{"\t" + sym + "+0x4 (" + sym + ")\n", "[bpfmeta:ambiguous]"},
	} {
		res := annotateText(t, tc.line, "-i", rec)
		want := strings.Replace(tc.line, "+0x4", tc.label+"+0x4", 1)
		if res.code != 0 || res.stdout != want {
			t.Errorf("%v: %q, want %q", res, res.stdout, want)
		}
	}
}

// ourFrameRE is a frame of testdata/bpf/meta.bpf.o's functions: its
// address and symbol.
var ourFrameRE = regexp.MustCompile(`^\s*([0-9a-f]+) (bpf_prog_[0-9a-f]{16}_bpfprogt_\w+)`)

// A program reloaded with another build while perf records (same code, so
// the same tag and symbols; other metadata), both loads busy: perf 7.2's
// perf script of the injected file and perf 6.1's of the recording
// without records, through annotate --keys build: every frame of either
// load carries its own build, told by its address, none is ambiguous.
func TestAnnotateReloaded(t *testing.T) {
	testkit.Root(t)
	stock := perfPath(t, stockPerf)
	modern := perfPath(t, modernPerf)
	progs1, busy1 := testkit.BusyFilterBuild(t, "build1")
	progs2, busy2 := testkit.BusyFilterBuild(t, "build2")
	type load struct {
		addr, end uint64
		label     string
	}
	var loads []load
	for label, progs := range map[string][]testkit.Loaded{"[build=build1]": progs1, "[build=build2]": progs2} {
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
				loads = append(loads, load{uint64(addrs[i]), uint64(addrs[i]) + uint64(lens[i]), label})
			}
		}
	}
	dir := t.TempDir()
	rec := filepath.Join(dir, "reload.data")
	r := testkit.StartPerf(t, stock, rec, testkit.PerfOptions{SystemWide: true, Workload: "sleep 1.5", Args: []string{"-g", "-F", "2000"}})
	r.WaitReady(t)
	busy1(500 * time.Millisecond)
	busy2(500 * time.Millisecond)
	r.Wait(t)
	meta := filepath.Join(dir, "reload.meta.data")
	if res := bpfmeta(t, nil, "inject", "-q", "-i", rec, "-o", meta); res.code != 0 {
		t.Fatalf("inject: %v", res)
	}
	for _, tc := range []struct{ what, perf, in string }{
		{"perf 7.2, injected", modern, meta},
		{"perf 6.1, without records", stock, rec},
	} {
		text := perfScriptText(t, tc.perf, tc.in)
		res := annotateText(t, text, "--keys", "build", "-i", tc.in)
		if res.code != 0 {
			t.Fatalf("%s: %v", tc.what, res)
		}
		il, ol := strings.SplitAfter(text, "\n"), strings.SplitAfter(res.stdout, "\n")
		if len(il) != len(ol) {
			t.Fatalf("%s: %d lines in, %d out", tc.what, len(il), len(ol))
		}
		seen := map[string]int{}
		for i := range il {
			m := ourFrameRE.FindStringSubmatch(il[i])
			if m == nil {
				if il[i] != ol[i] && !strings.Contains(il[i], " bpf_prog_") {
					t.Errorf("%s: line %d: %q became %q", tc.what, i+1, il[i], ol[i])
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
				t.Errorf("%s: line %d: %q in neither load", tc.what, i+1, il[i])
				continue
			}
			seen[want]++
			if exp := strings.Replace(il[i], m[2], m[2]+want, 1); ol[i] != exp {
				t.Errorf("%s: line %d: %q, want %q", tc.what, i+1, ol[i], exp)
			}
		}
		t.Logf("%s: frames labelled %v", tc.what, seen)
		if len(seen) != 2 {
			t.Errorf("%s: frames of %d loads labelled, want both: %v", tc.what, len(seen), seen)
		}
	}
}
