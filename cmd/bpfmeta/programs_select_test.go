package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestProgramsByName: bpfmeta programs, of the loaded programs and with
// --journal, takes names as show --prog does (the program's, a function's
// with or without bpf_prog_<tag>_) beside ids: only that program's load,
// and with --journal its unload; a name no program has is an error. It
// said "NAME is not a program id" before.
func TestProgramsByName(t *testing.T) {
	testkit.Root(t)
	testkit.BPF(t)
	progs, _ := testkit.LoadAsm(t)
	id := progs[0].ID
	k, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := k.Programs(id)
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	head := fmt.Sprintf("%d: ", id)
	for _, name := range []string{testkit.AsmProgName, p.Funcs[0].KernelName, p.Funcs[0].PerfName} {
		r := bpfmeta(t, nil, "programs", name)
		if r.code != exitOK || !strings.HasPrefix(r.stdout, head) || strings.Count(r.stdout, "name "+testkit.AsmProgName) != strings.Count(r.stdout, "\n\tfunc 0:") {
			t.Errorf("programs %s: %v\n%s", name, r, r.stdout)
		}
	}
	r := bpfmeta(t, nil, "programs", "bpfmeta_no_such_program")
	oneLine(t, "programs NAME of no program", r, "no program named", "bpfmeta_no_such_program")

	dir := filepath.Join(t.TempDir(), "journal")
	jw, err := journal.Create(dir, k.System(), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := jw.Load(p); err != nil {
		t.Fatal(err)
	}
	if err := jw.Unload(p.ID, p.Tag, p.LoadTime+1); err != nil {
		t.Fatal(err)
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
	r = bpfmeta(t, nil, "programs", "--journal", dir, testkit.AsmProgName)
	unload := fmt.Sprintf("unload  %d  tag %s", id, p.Tag)
	if r.code != exitOK || !strings.Contains(r.stdout, "load    "+head) || !strings.Contains(r.stdout, unload) {
		t.Errorf("programs --journal DIR NAME: %v\n%s", r, r.stdout)
	}
	r = bpfmeta(t, nil, "programs", "--journal", dir, "bpfmeta_no_such_program")
	if r.code != exitFailure || !strings.Contains(r.stderr, "no program named") || strings.Contains(r.stdout, "load ") {
		t.Errorf("programs --journal DIR NAME of no program: %v\n%s", r, r.stdout)
	}
}
