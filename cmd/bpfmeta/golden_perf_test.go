package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestGoldenPerfVersions: one program, loaded by cilium/ebpf (whose maps
// have a BTF of their own, from which perf 7.2 names the records
// "bpf_prog_<tag>_" and "bpf_prog_<tag>_.rodata"), recorded by perf 7.2,
// which writes its BPF_METADATA records itself, and by perf 6.1 with
// bpfmeta inject adding them, each into a file and a pipe: show --stable
// --prog gives one golden of all four, by the program's id and by its
// name (issue 48 item 1: perf 7.2's gave another text, with functions ""
// and ".rodata", and --prog by name found no record).
func TestGoldenPerfVersions(t *testing.T) {
	testkit.BPF(t)
	modern, stock := testkit.PerfModern(t), testkit.PerfStock(t)
	progs, _ := testkit.LoadCilium(t, "meta")
	var id string
	for _, p := range progs {
		if p.Name == "bpfprogt_multi_function_main" {
			id = strconv.FormatUint(uint64(p.ID), 10)
		}
	}
	if id == "" {
		t.Fatalf("cilium/ebpf loaded no bpfprogt_multi_function_main: %v", progs)
	}
	dir := t.TempDir()
	var texts []string
	var first string
	for _, rec := range []struct {
		perf, name string
		mode       testkit.RecordMode
		inject     bool
	}{
		{modern, "perf7.2-file", testkit.RecordFile, false},
		{modern, "perf7.2-pipe", testkit.RecordPipe, false},
		{stock, "perf6.1-file", testkit.RecordFile, true},
		{stock, "perf6.1-pipe", testkit.RecordPipe, true},
	} {
		data := filepath.Join(dir, rec.name+".data")
		testkit.StartPerf(t, rec.perf, data, testkit.PerfOptions{Mode: rec.mode, Workload: "true"}).Wait(t)
		if rec.inject {
			out := data + ".meta"
			if r := bpfmeta(t, nil, "inject", "-q", "--require", id, "-i", data, "-o", out); r.code != exitOK {
				t.Fatalf("%s: inject: %v", rec.name, r)
			}
			data = out
		}
		for _, prog := range []string{id, "bpfprogt_multi_function_main"} {
			r := bpfmeta(t, nil, "show", "--stable", "--prog", prog, data)
			if r.code != exitOK {
				t.Fatalf("%s: show --stable --prog %s: %v", rec.name, prog, r)
			}
			texts = append(texts, rec.name+" --prog "+prog+":\n"+r.stdout)
			if first == "" {
				first = r.stdout
				testkit.Golden(t, filepath.Join("testdata", "golden-perf", "meta-cilium.stable"), []byte(r.stdout))
			} else if r.stdout != first {
				t.Errorf("%s --prog %s differs from %s", rec.name, prog, texts[0][:strings.IndexByte(texts[0], ':')])
			}
		}
	}
	if t.Failed() {
		for _, text := range texts {
			t.Log(text)
		}
	}
}
