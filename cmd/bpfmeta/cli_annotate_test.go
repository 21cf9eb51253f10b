package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// The label annotate --keys version,build gives testdata/bpf/meta.bpf.o's
// functions.
const metaLabel = "[version=3.14159,build=abc]"

// A real recording with samples inside BPF programs (perf 6.1, -a -g,
// a loop whose every datagram runs a socket filter), its perf script text
// from perf 6.1 on a stripped copy and from perf 7.2 on the injected
// file, through annotate: the filter's frames carry its metadata, every
// other byte is unchanged, and --folded is stackcollapse-perf.pl's output
// of the annotated text. A recording without records gets the same from
// the running kernel, and perf 7.2's recording from its own records.
func TestAnnotateRecording(t *testing.T) {
	testkit.Root(t)
	stock := perfPath(t, stockPerf)
	progs, busy := testkit.BusyFilter(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "busy.data")
	modern := perfPath(t, modernPerf)
	// perf 7.2 records the same after perf 6.1, with its own BPF_METADATA
	// records (not at once: perf 6.1 aborts on a recording with a newer
	// perf's libraries in it, see StartPerf)
	rec72 := filepath.Join(dir, "busy72.data")
	for _, run := range []struct{ perf, out string }{{stock, rec}, {modern, rec72}} {
		r := testkit.StartPerf(t, run.perf, run.out, testkit.PerfOptions{SystemWide: true, Workload: "sleep 1.5", Args: []string{"-g", "-F", "2000"}})
		r.WaitReady(t)
		if n := busy(1200 * time.Millisecond); n == 0 {
			t.Fatal("no datagram sent")
		}
		r.Wait(t)
	}
	meta := filepath.Join(dir, "busy.meta.data")
	if res := bpfmeta(t, nil, "inject", "-q", "-i", rec, "-o", meta); res.code != 0 {
		t.Fatalf("inject: %v", res)
	}
	snap := filepath.Join(dir, "progs.jsonl")
	if res := bpfmeta(t, nil, "snapshot", "-q", "-o", snap); res.code != 0 {
		t.Fatalf("snapshot: %v", res)
	}
	stripped := filepath.Join(dir, "busy.stripped.data")
	if res := bpfmeta(t, nil, "strip", "-q", "-i", meta, "-o", stripped); res.code != 0 {
		t.Fatalf("strip: %v", res)
	}
	var ours []string // our programs' function names' tags, as a frame has them
	for _, p := range progs {
		ours = append(ours, "_"+p.Name)
	}
	ours = append(ours, "_bpfprogt_sub_add", "_bpfprogt_sub_mul")
	script := func(perf, in string, args ...string) string { return perfScriptText(t, perf, in, args...) }
	texts := map[string]string{
		"perf 6.1, stripped": script(stock, stripped),
		// without callchains, and -F field sets with a symbol
		"perf 6.1, stripped, -G":                            script(stock, stripped, "-G"),
		"perf 6.1, stripped, -F ip,sym -G":                  script(stock, stripped, "-F", "ip,sym", "-G"),
		"perf 6.1, stripped, -F comm,tid,ip,sym,symoff,dso": script(stock, stripped, "-F", "comm,tid,ip,sym,symoff,dso"),
	}
	texts["perf 7.2, injected"] = script(modern, meta)
	texts["perf 7.2, injected, -F ip,sym,dso -G"] = script(modern, meta, "-F", "ip,sym,dso", "-G")
	// what perf script prints beside samples: records without a sample's
	// header, BPF_METADATA records' entries, source lines
	texts["perf 7.2, injected, --show-bpf-events --show-round-events -F +srcline"] = script(modern, meta, "--show-bpf-events", "--show-round-events", "-F", "+srcline")
	texts["perf 7.2, recorded by perf 7.2"] = script(modern, rec72)
	for what, text := range texts {
		// the records; the kernel; a snapshot
		srcs := [][]string{{"-i", meta}, {"-i", rec}, {"-i", rec, "--snapshot", snap}}
		if strings.Contains(what, "recorded by perf 7.2") {
			srcs = [][]string{{"-i", rec72}} // its own records
		}
		for _, src := range srcs {
			in := strings.Join(src, " ")
			res := annotateText(t, text, append([]string{"-v", "--keys", "version,build"}, src...)...)
			if res.code != 0 {
				t.Fatalf("%s, %s: %v", what, in, res)
			}
			n := checkLabels(t, text, res.stdout, ours)
			t.Logf("%s, %s: %d frames of the filter labelled", what, in, n)
			if n == 0 {
				t.Errorf("%s, %s: no frame of the filter labelled (%s)", what, in, res.stderr)
			}
			if !strings.Contains(res.stderr, " 0 not perf script output") {
				t.Errorf("%s: %s", what, res.stderr)
			}
			folded := annotateText(t, text, append([]string{"--folded", "--keys", "version,build"}, src...)...)
			want := stackcollapse(t, res.stdout)
			if folded.stdout != want {
				t.Errorf("%s: --folded differs from stackcollapse-perf.pl's:\n%s", what, testkit.Diff([]byte(want), []byte(folded.stdout)))
			}
			if callchains := !strings.Contains(what, "-G"); callchains && !strings.Contains(folded.stdout, "bpfprogt_multi_function_main"+metaLabel) {
				t.Errorf("%s: --folded has no labelled frame", what)
			}
		}
	}
}

// perfScriptText is perf script's text of recording in.
func perfScriptText(t testing.TB, perf, in string, args ...string) string {
	t.Helper()
	// perf 6.1's perf script now and then aborts on a recording of a
	// machine where programs come and go (as its perf record does, see
	// the README's Development); it reads the same file a moment later
	var err error
	for range 3 {
		var out []byte
		cmd := exec.Command(perf, append([]string{"script", "-i", in}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err = cmd.Output(); err == nil {
			return string(out)
		}
		t.Logf("%s script -i %s %s: %v: %s", perf, in, strings.Join(args, " "), err, tail(stderr.String(), 500))
	}
	t.Fatalf("%s script -i %s: %v", perf, in, err)
	return ""
}

// annotateText runs bpfmeta annotate with text on stdin.
func annotateText(t testing.TB, text string, args ...string) result {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "script")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(text)
	f.Seek(0, 0)
	return bpfmeta(t, f, append([]string{"annotate"}, args...)...)
}

// labelRE is a label annotate adds.
var labelRE = regexp.MustCompile(`\[[^][ ()]*\]`)

// checkLabels checks that out is in but for labels after BPF symbols: a
// frame of one of ours has metaLabel, any other changed line one label
// more (another program's, on a shared machine). It returns how many of
// ours were labelled.
func checkLabels(t testing.TB, in, out string, ours []string) int {
	t.Helper()
	il, ol := strings.SplitAfter(in, "\n"), strings.SplitAfter(out, "\n")
	if len(il) != len(ol) {
		t.Fatalf("%d lines in, %d out", len(il), len(ol))
	}
	n := 0
	for i := range il {
		mine := false
		for _, o := range ours {
			// a record perf script prints (--show-bpf-events) is no frame
			mine = mine || !strings.Contains(il[i], "PERF_RECORD_") && (strings.Contains(il[i], o+"+0x") || strings.Contains(il[i], o+" (") || strings.HasSuffix(strings.TrimSuffix(il[i], "\n"), o))
		}
		switch {
		case mine:
			if strings.Replace(ol[i], metaLabel, "", 1) != il[i] || ol[i] == il[i] {
				t.Errorf("line %d: %q became %q, not labelled %s", i+1, il[i], ol[i], metaLabel)
			}
			n++
		case il[i] != ol[i]:
			loc := labelRE.FindStringIndex(ol[i])
			if loc == nil || ol[i][:loc[0]]+ol[i][loc[1]:] != il[i] || !bytes.Contains([]byte(il[i]), []byte(" bpf_prog_")) {
				t.Errorf("line %d: %q became %q", i+1, il[i], ol[i])
			}
		}
	}
	return n
}

// stackcollapse is FlameGraph's stackcollapse-perf.pl's output for text.
func stackcollapse(t testing.TB, text string) string {
	t.Helper()
	perl := testkit.Command(t, "perl")
	cmd := exec.Command(perl, testkit.RepoPath("annotate", "testdata", "stackcollapse-perf.pl"))
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stackcollapse-perf.pl: %v", err)
	}
	return string(out)
}

// Text that is not perf script output passes through unchanged, -v counts
// its lines; the recording must be named, and not be stdin.
func TestAnnotateCLI(t *testing.T) {
	rec := testkit.RepoPath("annotate", "testdata", "busy.meta.data")
	text := "not\tperf script\n\x1b[31m bpf_prog_5d126c929afd31f7_bpfprogt_multi_function_main\n\n# a comment\nlast line"
	r := annotateText(t, text, "-v", "-i", rec)
	if r.code != 0 || r.stdout != text {
		t.Fatalf("%v: stdout %q, want the input", r, r.stdout)
	}
	if !strings.Contains(r.stderr, "5 lines read, 3 not perf script output") {
		t.Errorf("-v says %q", r.stderr)
	}
	script, err := os.ReadFile(testkit.RepoPath("annotate", "testdata", "busy.perf61.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r = annotateText(t, string(script), "--keys", "version,build", "-i", rec)
	if n := checkLabels(t, string(script), r.stdout, []string{"_bpfprogt_multi_function_main", "_bpfprogt_sub_mul", "_bpfprogt_sub_add", "_bpfprogt_second", "_bpfprogt_single_function"}); r.code != 0 || n == 0 {
		t.Errorf("%v: %d frames labelled", r, n)
	}
	for _, args := range [][]string{{"annotate"}, {"annotate", "-i", "-"}, {"annotate", "-i", rec, "--snapshot", "-"}, {"annotate", "-i", rec, "--keys", ","}, {"annotate", "-i", rec, "x"}} {
		if r := bpfmeta(t, nil, args...); r.code != exitUsage {
			t.Errorf("%q: %v, want a usage error", args, r)
		}
	}
}

// loadAsmVersion loads testkit's asm program (bpfprogt_asm) with its
// .rodata's bpf_metadata_version = version: loads of other versions have
// the same tag and name, so the same symbol in perf script. It returns the
// load's tag, the address of its JITed code, and a function that unloads
// it before the test ends.
func loadAsmVersion(t testing.TB, version string) (perfdata.BPFTag, uint64, func()) {
	t.Helper()
	m := testkit.MetadataRodata(t, 12, version, "build_num", 1)
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: testkit.AsmProgName, Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.LoadMapPtr(asm.R1, m.FD()), asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	unload := func() { p.Close(); m.Close() }
	t.Cleanup(unload)
	_, info := testkit.ProgramInfo(t, p)
	addrs, ok := info.JitedKsymAddrs()
	if !ok || len(addrs) != 1 {
		t.Fatalf("the kernel reports %d JITed functions of the program (%v)", len(addrs), ok)
	}
	return testkit.Tag(t, info.Tag), uint64(addrs[0]), unload
}

// Two loads of one function: with the same metadata, labelled; with
// other metadata, each frame by its address, and where the address does
// not tell (none), ambiguous, never one of them, or in neither load, not
// in the recording; from
// the records of bpfmeta inject and of perf 7.2, and from the kernel for a
// recording without them.
func TestAnnotateAmbiguous(t *testing.T) {
	testkit.Root(t)
	testkit.BPF(t)
	stock := perfPath(t, stockPerf)
	modern := perfPath(t, modernPerf)
	for _, versions := range [][]string{{"v1", "v1"}, {"v1", "v2"}} {
		t.Run(strings.Join(versions, ","), func(t *testing.T) {
			var sym string
			type frame struct{ line, want string }
			var frames []frame
			for _, v := range versions {
				tag, addr, _ := loadAsmVersion(t, v)
				sym = fmt.Sprintf("bpf_prog_%s_%s", tag, testkit.AsmProgName)
				frames = append(frames, frame{fmt.Sprintf("\t%16x %s+0x4 (%s)\n", addr+4, sym, sym), "[version=" + v + ",build_num=1]"})
			}
			other := "[bpfmeta:ambiguous]"
			if versions[0] == versions[1] {
				other = frames[0].want
			}
			frames = append(frames, frame{"\tffffffffffff0004 " + sym + "+0x4 (" + sym + ")\n", "[bpfmeta:not-in-recording]"},
				frame{"\t" + sym + "+0x4 (" + sym + ")\n", other})
			dir := t.TempDir()
			rec, rec72 := filepath.Join(dir, "two.data"), filepath.Join(dir, "two72.data")
			for perf, out := range map[string]string{stock: rec, modern: rec72} {
				testkit.StartPerf(t, perf, out, testkit.PerfOptions{SystemWide: true, Workload: "sleep 0.2", Args: []string{"-F", "99"}}).Wait(t)
			}
			meta := filepath.Join(dir, "two.meta.data")
			if res := bpfmeta(t, nil, "inject", "-q", "-i", rec, "-o", meta); res.code != 0 {
				t.Fatalf("inject: %v", res)
			}
			for _, in := range []string{meta, rec, rec72} {
				for _, f := range frames {
					res := annotateText(t, f.line, "-i", in)
					want := strings.Replace(f.line, "+0x4", f.want+"+0x4", 1)
					if res.code != 0 || res.stdout != want {
						t.Errorf("-i %s: %v: %q, want %q", filepath.Base(in), res, res.stdout, want)
					}
				}
			}
		})
	}
}
