package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// A program with metadata recorded by perf 6.1 with -g, its perf script
// text through annotate --pprof: read with package profile, the samples
// in the program carry its metadata as labels and name its functions
// with annotate's label, the totals are --folded's, and go tool pprof
// reads the file (-raw, -top with -tagfocus, -tags, and its -proto
// output read again).
func TestAnnotatePprofRecording(t *testing.T) {
	testkit.Root(t)
	stock := perfPath(t, stockPerf)
	_, busy := testkit.BusyFilter(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "busy.data")
	r := testkit.StartPerf(t, stock, rec, testkit.PerfOptions{SystemWide: true, Workload: "sleep 1", Args: []string{"-g", "-F", "2000"}})
	r.WaitReady(t)
	if n := busy(700 * time.Millisecond); n == 0 {
		t.Fatal("no datagram sent")
	}
	r.Wait(t)
	meta := filepath.Join(dir, "busy.meta.data")
	if res := bpfmeta(t, nil, "inject", "-q", "-i", rec, "-o", meta); res.code != 0 {
		t.Fatalf("inject: %v", res)
	}
	text := perfScriptText(t, stock, rec) // perf 6.1 reads no BPF_METADATA records
	args := []string{"--keys", "version,build", "-i", meta}
	res := annotateText(t, text, append([]string{"--pprof", "-v"}, args...)...)
	if res.code != 0 || strings.Contains(res.stderr, "warning") {
		t.Fatalf("annotate --pprof: %v", res)
	}
	prof, err := profile.Parse(strings.NewReader(res.stdout))
	if err != nil {
		t.Fatalf("profile.Parse: %v", err)
	}
	// the samples in the filter's main function
	main := "bpfprogt_multi_function_main" + metaLabel
	var inMain, total, samples int64
	v := len(prof.SampleType) - 1
	for _, s := range prof.Sample {
		total += s.Value[v]
		samples += s.Value[0]
		for _, l := range s.Location {
			if len(l.Line) > 0 && strings.HasSuffix(l.Line[0].Function.Name, main) {
				inMain += s.Value[v]
				if got := s.Label["bpf_version"]; len(got) != 1 || got[0] != "3.14159" || len(s.Label["bpf_build"]) != 1 || s.Label["bpf_build"][0] != "abc" {
					t.Errorf("a sample in %s has labels %v", main, s.Label)
				}
				break
			}
		}
	}
	if inMain == 0 {
		t.Fatalf("no sample in %s", main)
	}
	if n := int64(strings.Count(text, "\n\n")); samples != n {
		t.Errorf("%d samples in the profile, %d in the text", samples, n)
	}
	folded := annotateText(t, text, append([]string{"--folded"}, args...)...)
	var foldedTotal, foldedMain int64
	for _, line := range strings.Split(strings.TrimSuffix(folded.stdout, "\n"), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, _ := strconv.ParseInt(line[i+1:], 10, 64)
		foldedTotal += n
		if strings.Contains(line[:i], main) {
			foldedMain += n
		}
	}
	if total != foldedTotal || inMain != foldedMain {
		t.Errorf("profile: %d in all, %d in %s; --folded: %d, %d", total, inMain, main, foldedTotal, foldedMain)
	}
	checkGoToolPprof(t, res.stdout, main)
}

// checkGoToolPprof runs go tool pprof on the profile: -raw, -top of the
// samples -tagfocus selects by their metadata (the function named main
// among them), -tags, and -proto, whose output package profile reads.
func checkGoToolPprof(t *testing.T, prof, main string) {
	goTool := testkit.Command(t, "go")
	file := filepath.Join(t.TempDir(), "prof.pb.gz")
	if err := os.WriteFile(file, []byte(prof), 0o600); err != nil {
		t.Fatal(err)
	}
	pprof := func(args ...string) string {
		out, err := exec.Command(goTool, append(append([]string{"tool", "pprof"}, args...), file)...).Output()
		if err != nil {
			t.Fatalf("go tool pprof %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	if out := pprof("-raw"); !strings.Contains(out, "samples/count cpu-clock/nanoseconds") || !strings.Contains(out, main) {
		t.Errorf("go tool pprof -raw:\n%s", tail(out, 2000))
	}
	if out := pprof("-top", "-tagfocus", "bpf_version=3.14159"); !strings.Contains(out, main) {
		t.Errorf("go tool pprof -top -tagfocus bpf_version=3.14159:\n%s", tail(out, 2000))
	}
	if out := pprof("-tags"); !strings.Contains(out, "bpf_version:") || !strings.Contains(out, "3.14159") || !strings.Contains(out, "comm:") {
		t.Errorf("go tool pprof -tags:\n%s", tail(out, 2000))
	}
	again, err := profile.Parse(strings.NewReader(pprof("-proto")))
	if err != nil {
		t.Fatalf("go tool pprof -proto: %v", err)
	}
	if len(again.Sample) == 0 || len(again.SampleType) != 2 {
		t.Errorf("go tool pprof -proto: %d samples, %d types", len(again.Sample), len(again.SampleType))
	}
}

// --pprof is binary: never to a terminal, and one output with --folded.
func TestAnnotatePprofUsage(t *testing.T) {
	rec := testkit.RepoPath("annotate", "testdata", "busy.meta.data")
	var stdout, stderr bytes.Buffer
	s := cliutil.NewSession(strings.NewReader(""), &stdout, &stderr)
	s.StdoutTerminal = true
	if code := run([]string{"bpfmeta", "annotate", "-i", rec, "--pprof"}, s); code != exitUsage || stdout.Len() != 0 || !strings.Contains(stderr.String(), "terminal") {
		t.Errorf("--pprof to a terminal: exit %d, %d bytes out, %q", code, stdout.Len(), stderr.String())
	}
	res := bpfmeta(t, nil, "annotate", "-i", rec, "--pprof", "--folded")
	if res.code != exitUsage || res.stdout != "" {
		t.Errorf("--pprof --folded: %v", res)
	}
	// not perf script output, and a frame of no sample: in no profile,
	// with a warning
	f := testkit.PipeOf(t, []byte("not perf script\n\tffffffff81000130 f+0x76 ([kernel.kallsyms])\n"))
	res = bpfmeta(t, f, "annotate", "-i", rec, "--pprof")
	if res.code != 0 || !strings.Contains(res.stderr, "warning: 2 lines of the text not in the profile: 1 not perf script output, 1 of no sample") {
		t.Errorf("lines of no sample: %v", res)
	}
	if _, err := profile.Parse(strings.NewReader(res.stdout)); err != nil {
		t.Errorf("the profile of no sample: %v", err)
	}
}
