package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/bpfmetatest"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestGoldenVersions: a team's golden tests across two versions of its
// program, end to end (README, "Golden tests of your BPF program's
// metadata"): versioned100 and versioned110 (clang-built, "1.0.0" ->
// "1.1.0", a struct's minor field 0 -> 1), each loaded, recorded by perf
// 6.1 and saved by snapshot --prog --portable. The loaded program's and
// the injected recording's stable text match goldens made at another
// time (other ids, addresses, load times), and show --stable --snapshot
// prints the recording's the same; between the versions only the
// version and the struct change, the struct with its fields' names; and a
// portable snapshot injects the same bytes as the whole one.
func TestGoldenVersions(t *testing.T) {
	testkit.BPF(t)
	stock := testkit.PerfStock(t)
	bpffs := testkit.MountBPFFS(t)
	dir := t.TempDir()
	texts := map[string][][]byte{} // kind: the two versions' texts
	for _, v := range []string{"1.0.0", "1.1.0"} {
		object := "versioned" + strings.ReplaceAll(v, ".", "")
		progs, unload := testkit.LoadBpftool(t, bpffs, object, "golden-"+object)
		id := strconv.FormatUint(uint64(progs[0].ID), 10)
		loaded, err := bpfmetatest.LoadedText(ebpf.ProgramID(progs[0].ID))
		if err != nil {
			t.Fatal(err)
		}
		rec, full, portable := filepath.Join(dir, v+".data"), filepath.Join(dir, v+".jsonl"), filepath.Join(dir, v+".portable.jsonl")
		testkit.StartPerf(t, stock, rec, testkit.PerfOptions{SystemWide: true, Workload: "sleep 0.2", Args: []string{"-F", "99"}}).Wait(t)
		for _, args := range [][]string{{"-o", full}, {"--portable", "-o", portable}} {
			if r := bpfmeta(t, nil, append([]string{"snapshot", "--prog", id}, args...)...); r.code != exitOK {
				t.Fatalf("snapshot %v: %v", args, r)
			}
		}
		unload()
		samePortable(t, rec, full, portable)
		recording, err := bpfmetatest.RecordingText(rec, portable, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		// the command line's route to the same text
		if r := bpfmeta(t, nil, "show", "--stable", "--snapshot", portable, portable+".data"); r.code != exitOK || r.stdout != string(recording) {
			t.Errorf("show --stable --snapshot: %v\nwant\n%s", r, recording)
		}
		testkit.Golden(t, filepath.Join("testdata", "golden-versions", v+".loaded"), loaded)
		testkit.Golden(t, filepath.Join("testdata", "golden-versions", v+".recording"), recording)
		texts["loaded"] = append(texts["loaded"], loaded)
		texts["recording"] = append(texts["recording"], recording)
	}
	want := []string{
		`version = "1.1.0"`,
		`abi = {1,1,"x86_64"}`,
		`abi = {"major":1,"minor":1,"arch":"x86_64"}`,
	}
	for kind, vs := range texts {
		if got := changedLines(vs[0], vs[1]); !slices.Equal(got, want) {
			t.Errorf("%s: 1.0.0 -> 1.1.0 changes\n%q\nwant\n%q\n(1.0.0:\n%s\n1.1.0:\n%s)", kind, got, want, vs[0], vs[1])
		}
	}
}

// samePortable: inject from the portable snapshot writes the same bytes
// as from the whole one.
func samePortable(t *testing.T, rec, full, portable string) {
	t.Helper()
	var outs [][]byte
	for _, snap := range []string{full, portable} {
		out := snap + ".data"
		if r := bpfmeta(t, nil, "inject", "--snapshot", snap, "--require", "bpfprogt_versioned", "-i", rec, "-o", out); r.code != exitOK {
			t.Fatalf("inject --snapshot %s: %v", filepath.Base(snap), r)
		}
		outs = append(outs, testkit.ReadFile(t, out))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("inject from the portable snapshot differs from inject from the whole one")
	}
}

// changedLines are b's lines that are not a's at the same place, with
// their "entry N:" or "named:" prefix and spacing taken off; nil if the
// two have not the same number of lines.
func changedLines(a, b []byte) []string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	if len(la) != len(lb) {
		return nil
	}
	var out []string
	for i := range la {
		if la[i] != lb[i] {
			_, rest, _ := strings.Cut(lb[i], ":")
			out = append(out, strings.Join(strings.Fields(rest), " "))
		}
	}
	return out
}
