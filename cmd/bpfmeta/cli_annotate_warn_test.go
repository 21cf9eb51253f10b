package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

const walkSym = "bpf_prog_6deef7357e7b4530_walk_filter"

// walkRecording writes a pipe recording of one load of walkSym at addr,
// loaded before perf recorded (its KSYMBOL without a time), with a
// BPF_METADATA record of version.
func walkRecording(t testing.TB, dir, name string, addr uint64, version string) string {
	t.Helper()
	return streamFile(t, dir, name, func(s *testkit.Stream) {
		s.KSymbol(addr, 52, walkSym, false, false)
		s.BPFEvent(perfdata.BPFEventProgLoad, 7, perfdata.BPFTag{0x6d, 0xee, 0xf7, 0x35, 0x7e, 0x7b, 0x45, 0x30}, false)
		s.Metadata(perfdata.BPFMetadata{ProgName: walkSym, Entries: []perfdata.BPFMetadataEntry{
			{Key: "bpf_metadata_version", Value: `"` + version + `"`}, {Key: "bpf_metadata_build", Value: `"b7"`}}})
	})
}

// walkText is perf script -g text of n samples with a frame of walkSym at
// ip each; with callchains false, perf script's text without -g.
func walkText(n int, ip uint64, callchains bool) string {
	var b strings.Builder
	for i := range n {
		if callchains {
			fmt.Fprintf(&b, "walker 4242 [000] 3474.%06d: 250000 cpu-clock:ppp: \n\t%16x %s+0x4 (%s)\n\tffffffff81000130 entry_SYSCALL_64+0x76 ([kernel.kallsyms])\n\n", i, ip, walkSym, walkSym)
		} else {
			fmt.Fprintf(&b, "walker 4242 [000] 3474.%06d: 250000 cpu-clock:ppp:  %16x %s+0x4 (%s)\n", i, ip, walkSym, walkSym)
		}
	}
	return b.String()
}

// The text of recording B annotated with recording A, whose only load of
// the function was elsewhere: every frame is not in the recording, and
// one warning without -v says the text may not be the recording's; a
// frame or two in a hundred thousand says nothing.
func TestAnnotateWarnOtherRecording(t *testing.T) {
	dir := t.TempDir()
	const addrA, addrB = 0xffffffffc0023448, 0xffffffffc0a1b2c0
	a := walkRecording(t, dir, "a.data", addrA, "2.3.1")
	b := walkRecording(t, dir, "b.data", addrB, "9.9.9-other")
	text := walkText(200, addrB+4, true)
	r := annotateText(t, text, "-i", a)
	if r.code != 0 || strings.Count(r.stdout, "[bpfmeta:not-in-recording]") != 200 || strings.Contains(r.stdout, "2.3.1") {
		t.Errorf("B's text with A: %v:\n%s", r, r.stdout)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "warning: 200 of 200 frames of BPF functions lie in no load of their name in "+a) ||
		!strings.Contains(r.stderr, "the text may not come from the recording given with -i") {
		t.Errorf("B's text with A: stderr %q, want one warning", r.stderr)
	}
	if r := annotateText(t, text, "-i", b); r.code != 0 || r.stderr != "" || strings.Count(r.stdout, "[version=9.9.9-other,build=b7]") != 200 {
		t.Errorf("B's text with B: %v", r)
	}
	few := walkText(1000, addrA+4, true) + walkText(10, addrB+4, true)
	if r := annotateText(t, few, "-i", a); r.code != 0 || r.stderr != "" || strings.Count(r.stdout, "[bpfmeta:not-in-recording]") != 10 {
		t.Errorf("1%% of the frames elsewhere: %v", r)
	}
}

// Saying when nothing happened: --folded of text without callchains;
// --keys with a key no record has; a recording fed as text. Each is one
// warning without -v, and the output what it was.
func TestAnnotateWarnNothing(t *testing.T) {
	dir := t.TempDir()
	const addr = 0xffffffffc0023448
	rec := walkRecording(t, dir, "a.data", addr, "2.3.1")
	r := annotateText(t, walkText(100, addr+4, false), "--folded", "-i", rec)
	if r.code != 0 || r.stdout != "" || r.stderr != "bpfmeta: warning: no callchains: record with -g (perf record -g): 100 samples of the text and no stack to fold\n" {
		t.Errorf("--folded without callchains: %v", r)
	}
	if r := annotateText(t, walkText(100, addr+4, true), "--folded", "-i", rec); r.code != 0 || r.stderr != "" || r.stdout == "" {
		t.Errorf("--folded with callchains: %v", r)
	}
	r = annotateText(t, walkText(3, addr+4, true), "--keys", "verison,build", "-i", rec)
	if r.code != 0 || strings.Count(r.stdout, walkSym+"[build=b7]+0x4") != 3 ||
		r.stderr != "bpfmeta: warning: --keys verison,build: no record of "+rec+" has the key verison: its records have build, version\n" {
		t.Errorf("--keys verison: %v", r)
	}
	bin, err := os.ReadFile(testkit.RepoPath("annotate", "testdata", "busy.meta.data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, folded := range []bool{false, true} {
		args := []string{"-i", rec}
		if folded {
			args = append(args, "--folded")
		}
		r = annotateText(t, string(bin), args...)
		if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "are not perf script output: annotate reads perf script's text") {
			t.Errorf("a recording as text (%v): %v", args, r)
		}
	}
	r = annotateText(t, strings.Repeat("x\n", 5)+walkText(10, addr+4, true), "-i", rec)
	if r.code != 0 || r.stderr != "" {
		t.Errorf("a few lines not perf script's: %v", r)
	}
}
