package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestSnapshotProg: snapshot --prog saves only the programs it names (by
// id, by name), as a whole snapshot (its end line counts what it holds:
// inject does not call it incomplete); a --prog that names no loaded
// program is an error that writes nothing.
func TestSnapshotProg(t *testing.T) {
	testkit.BPF(t)
	progs, _ := testkit.LoadBpftool(t, testkit.MountBPFFS(t), "meta", "snapshot-prog")
	dir := t.TempDir()
	for _, c := range []struct {
		arg  string
		want []uint32
	}{
		{strconv.FormatUint(uint64(progs[0].ID), 10), []uint32{progs[0].ID}},
		{progs[len(progs)-1].Name, []uint32{progs[len(progs)-1].ID}},
	} {
		out := filepath.Join(dir, "snap-"+c.arg+".jsonl")
		if r := bpfmeta(t, nil, "snapshot", "--prog", c.arg, "-o", out); r.code != exitOK {
			t.Fatalf("snapshot --prog %s: %v", c.arg, r)
		}
		s, err := snapshot.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint32
		for p, err := range s.All() {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, p.ID)
		}
		if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) || s.Incomplete != "" || len(s.Notes()) != 0 {
			t.Errorf("snapshot --prog %s: programs %v (want %v), incomplete %q", c.arg, got, c.want, s.Incomplete)
		}
	}
	out := filepath.Join(dir, "none.jsonl")
	r := bpfmeta(t, nil, "snapshot", "--prog", "no_such_program_anywhere", "-o", out)
	oneLine(t, "snapshot --prog of nothing", r, "--prog no_such_program_anywhere: no loaded BPF program")
	if r.code != exitFailure {
		t.Errorf("snapshot --prog of nothing: %v, want exit 1", r)
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("snapshot --prog of nothing left %s (%v)", out, err)
	}
}
