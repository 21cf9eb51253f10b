package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestShowStable: show --stable prints the same text and JSON for two
// recordings of the same programs and metadata made on other hosts and
// boots (other tags, ids, addresses, offsets, sample counts, loads), and
// only the changed values for a program whose metadata changed; sorted,
// each function and its entries once.
func TestShowStable(t *testing.T) {
	dir := t.TempDir()
	rec := func(name string, seed int, version string, loads int) string {
		return streamFile(t, dir, name, func(s *testkit.Stream) {
			for i, fn := range []string{"xdp_main", "tc_egress"} {
				for l := range loads {
					tag := perfdata.BPFTag{byte(seed), byte(i), byte(l), 0xee}
					addr := 0xffffffffc0000000 + uint64(seed*0x100000+i*0x1000+l*0x10000)
					id := uint32(seed*100 + i*10 + l)
					s.KSymbol(addr, 0x40, perfdata.BPFProgName(tag, fn), false, true)
					s.BPFEvent(perfdata.BPFEventProgLoad, id, tag, true)
					for range seed {
						s.Sample(addr + 4)
					}
					s.Metadata(perfdata.BPFMetadata{ProgName: perfdata.BPFProgName(tag, fn), Entries: []perfdata.BPFMetadataEntry{
						{Key: "version", Value: `"` + version + `"`}, {Key: "api", Value: fmt.Sprint(3 + i)}}})
				}
			}
		})
	}
	a := rec("a.data", 1, "1.0.0", 1)
	b := rec("b.data", 7, "1.0.0", 3)
	c := rec("c.data", 2, "1.1.0", 1)
	want := `tc_egress
  entry:              version = "1.0.0"
  entry:                  api = 4

xdp_main
  entry:              version = "1.0.0"
  entry:                  api = 3
`
	for _, args := range [][]string{{"show", "--stable"}, {"show", "--stable", "--json"}} {
		ra := bpfmeta(t, nil, append(args, "-i", a)...)
		rb := bpfmeta(t, nil, append(args, "-i", b)...)
		rc := bpfmeta(t, nil, append(args, "-i", c)...)
		if ra.code != exitOK || rb.code != exitOK || rc.code != exitOK {
			t.Fatalf("%v: %v, %v, %v", args, ra, rb, rc)
		}
		if ra.stdout != rb.stdout {
			t.Errorf("%v: another host and boot print otherwise:\n%s\n---\n%s", args, ra.stdout, rb.stdout)
		}
		if strings.ReplaceAll(ra.stdout, "1.0.0", "1.1.0") != rc.stdout {
			t.Errorf("%v: 1.0.0 -> 1.1.0 changes more than the version:\n%s\n---\n%s", args, ra.stdout, rc.stdout)
		}
		for _, leak := range []string{"0xffff", "ee", "program", "sample", "offset"} {
			if strings.Contains(ra.stdout, leak) {
				t.Errorf("%v: the output has %q:\n%s", args, leak, ra.stdout)
			}
		}
	}
	if r := bpfmeta(t, nil, "show", "--stable", "-i", a); r.stdout != want {
		t.Errorf("show --stable:\n%s\nwant\n%s", r.stdout, want)
	}
	r := bpfmeta(t, nil, "show", "--stable", "--json", "-i", a)
	for _, s := range []string{`"kind": "show-stable"`, `"function": "tc_egress"`, `"key": "version"`, `"value": "\"1.0.0\""`} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("show --stable --json has no %s:\n%s", s, r.stdout)
		}
	}
}

// TestProgramsStable: two loads of the same object (other ids, tags may
// be the same, other addresses and load times) print the same
// programs --stable, text and JSON, with their metadata.
func TestProgramsStable(t *testing.T) {
	testkit.BPF(t)
	bpffs := testkit.MountBPFFS(t)
	a, _ := testkit.LoadBpftool(t, bpffs, "meta", "stable-a")
	b, _ := testkit.LoadBpftool(t, bpffs, "meta", "stable-b")
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("loads of %d and %d programs", len(a), len(b))
	}
	ids := func(ls []testkit.Loaded) []string {
		var s []string
		for _, l := range ls {
			s = append(s, fmt.Sprint(l.ID))
		}
		return s
	}
	for _, args := range [][]string{{"programs", "--stable"}, {"programs", "--stable", "--json"}} {
		ra := bpfmeta(t, nil, append(args, ids(a)...)...)
		rb := bpfmeta(t, nil, append(args, ids(b)...)...)
		if ra.code != exitOK || rb.code != exitOK {
			t.Fatalf("%v: %v, %v", args, ra, rb)
		}
		if ra.stdout != rb.stdout {
			t.Errorf("%v: two loads print otherwise:\n%s\n---\n%s", args, ra.stdout, rb.stdout)
		}
		if !strings.Contains(ra.stdout, "version") || strings.Contains(ra.stdout, fmt.Sprint(a[0].ID)) && len(fmt.Sprint(a[0].ID)) > 3 {
			t.Errorf("%v: no metadata, or the id:\n%s", args, ra.stdout)
		}
	}
}

// TestProgramsObject: programs --stable --object prints, without root,
// the text of the programs loaded from the object (TestGoldenVersions'
// golden of the loaded program, made from a load), text and JSON as
// programs --stable prints them; no ids with it, nor a file that is no
// object.
func TestProgramsObject(t *testing.T) {
	for _, v := range []string{"1.0.0", "1.1.0"} {
		object := testkit.Fixture("versioned" + strings.ReplaceAll(v, ".", ""))
		r := bpfmeta(t, nil, "programs", "--stable", "--object", object)
		want := testkit.ReadFile(t, filepath.Join("testdata", "golden-versions", v+".loaded"))
		if r.code != exitOK || r.stdout != string(want) {
			t.Errorf("programs --stable --object %s: %v\n%s", v, r, testkit.Diff(want, []byte(r.stdout)))
		}
		if r := bpfmeta(t, nil, "programs", "--object", object, "--json"); r.code != exitOK || !strings.Contains(r.stdout, `"kind": "programs-stable"`) {
			t.Errorf("programs --object --json: %v", r)
		}
	}
	if r := bpfmeta(t, nil, "programs", "--object", testkit.Fixture("meta"), "97"); r.code != exitUsage {
		t.Errorf("--object with an id: %v, want a usage error", r)
	}
	if r := bpfmeta(t, nil, "programs", "--object", testkit.RepoPath("README.md")); r.code != exitFailure || !strings.Contains(r.stderr, "README.md") {
		t.Errorf("--object README.md: %v, want an error naming it", r)
	}
}
