package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
