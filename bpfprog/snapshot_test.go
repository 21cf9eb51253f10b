package bpfprog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"

	"github.com/cilium/ebpf"
)

const snapshotGolden = "testdata/snapshot-v1.golden.json"

// goldenSnapshot has one program with metadata (one entry not formatted)
// and one without.
func goldenSnapshot(t *testing.T) *Snapshot {
	return &Snapshot{
		Sys: System{
			KernelRelease: "6.18.44", BootID: "f0ef39ac-e669-4e9e-b6bf-383e3c4be558", Hostname: "vm",
			BootTime: time.Date(2026, 12, 2, 15, 28, 36, 861375769, time.UTC),
		},
		Taken: time.Date(2026, 12, 2, 15, 46, 11, 0, time.UTC),
		Programs: []*Program{
			{
				ID: 97, Tag: mustTag(t, "e21be2de8fc54252"), Name: "bpfprogt_multi_", Type: ebpf.SocketFilter,
				LoadTime: 1049500284317 * time.Nanosecond, BTFID: 21, MapIDs: []uint32{29},
				Funcs: []Func{
					{Tag: mustTag(t, "5d126c929afd31f7"), BTFName: "bpfprogt_multi_function_main", Addr: 0xffffffffc0023054, Len: 40,
						PerfName:   "bpf_prog_5d126c929afd31f7_bpfprogt_multi_function_main",
						KernelName: "bpf_prog_e21be2de8fc54252_bpfprogt_multi_function_main"},
					{Tag: mustTag(t, "1811999f9c3db065"), BTFName: "bpfprogt_sub_add", Addr: 0xffffffffc002309c, Len: 25,
						PerfName:   "bpf_prog_1811999f9c3db065_bpfprogt_sub_add",
						KernelName: "bpf_prog_1811999f9c3db065_bpfprogt_sub_add"},
				},
				Metadata: &Metadata{MapID: 29, MapName: ".rodata", BTFID: 20,
					ProgNames: []string{"bpf_prog_5d126c929afd31f7_", "bpf_prog_1811999f9c3db065_"},
					Entries:   []Entry{{Key: "version", Value: `"3.14159"`}, {Key: "odd", Value: ""}}},
				MetadataErr: &MetadataError{ProgID: 97, MapID: 29, Key: "odd", Err: errors.New("cannot format")},
			},
			{
				ID: 119, Tag: mustTag(t, "a823616fe0b41d16"), Name: "bpfprogt_nometa", Type: ebpf.SocketFilter,
				LoadTime: time.Second, BTFID: 61, MapIDs: []uint32{},
				Funcs: []Func{{Tag: mustTag(t, "a823616fe0b41d16"), BTFName: "bpfprogt_nometa", Addr: 0xffffffffc0026e94, Len: 32,
					PerfName: "bpf_prog_a823616fe0b41d16_bpfprogt_nometa", KernelName: "bpf_prog_a823616fe0b41d16_bpfprogt_nometa"}},
			},
		},
	}
}

// TestSnapshotGolden pins the file format: write, compare with the golden
// file, read back, write again.
func TestSnapshotGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, goldenSnapshot(t)); err != nil {
		t.Fatal(err)
	}
	if *testkit.Update {
		if err := os.WriteFile(snapshotGolden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(snapshotGolden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(buf.Bytes(), golden) {
		t.Errorf("snapshot differs from %s (go test -update rewrites it):\n%s", snapshotGolden, buf.Bytes())
	}
	if !json.Valid(golden) {
		t.Fatalf("%s is not valid JSON", snapshotGolden)
	}

	s, err := ReadSnapshot(bytes.NewReader(golden))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteSnapshot(&again, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), golden) {
		t.Errorf("read and written again, the snapshot changed:\n%s", again.Bytes())
	}

	p, err := s.Lookup(97, mustTag(t, "e21be2de8fc54252"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.BPFMetadata(); err == nil || !strings.Contains(err.Error(), "cannot format") {
		t.Errorf("BPFMetadata of a program whose metadata is not exact: %v", err)
	}
	var me *MetadataError
	if !errors.As(p.MetadataErr, &me) || me.MapID != 29 || me.Key != "odd" {
		t.Errorf("MetadataErr %#v", p.MetadataErr)
	}
	if p.Funcs[0].Addr != 0xffffffffc0023054 {
		t.Errorf("address %x", p.Funcs[0].Addr)
	}
	p, err = s.Lookup(119, mustTag(t, "a823616fe0b41d16"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.BPFMetadata(); !errors.Is(err, ErrNoMetadata) {
		t.Errorf("BPFMetadata of a program without metadata: %v", err)
	}
	if s.System() != goldenSnapshot(t).Sys || !s.Taken.Equal(goldenSnapshot(t).Taken) {
		t.Errorf("System %+v taken %v", s.System(), s.Taken)
	}
}

func TestSnapshotLookup(t *testing.T) {
	s := goldenSnapshot(t) // built by hand: Lookup indexes it on first use
	if _, err := s.Lookup(97, mustTag(t, "e21be2de8fc54252")); err != nil {
		t.Errorf("Lookup: %v", err)
	}
	other := mustTag(t, "0000000000000001")
	_, err := s.Lookup(97, other)
	var tm *TagMismatchError
	if !errors.As(err, &tm) || !errors.Is(err, ErrTagMismatch) || tm.ID != 97 || tm.Want != other || tm.Got.String() != "e21be2de8fc54252" {
		t.Errorf("Lookup with another tag: %v", err)
	}
	if _, err := s.Lookup(98, other); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrTagMismatch) {
		t.Errorf("Lookup of an id not in the snapshot: %v", err)
	}
}

func TestReadSnapshotErrors(t *testing.T) {
	golden, err := os.ReadFile(snapshotGolden)
	if err != nil {
		t.Fatal(err)
	}
	g := string(golden)
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "PERFILE2", "not a bpfmeta snapshot"},
		{"no version", `{"programs": []}`, "no format_version"},
		{"newer version", `{"format_version": 2, "programs": []}`, "format_version 2, this bpfmeta reads 1"},
		{"bad tag", strings.Replace(g, `"tag": "e21be2de8fc54252"`, `"tag": "e21b"`, 1), "tag"},
		{"bad address", strings.Replace(g, `"addr": "0xffffffffc0023054"`, `"addr": 18446744072635953224`, 1), "addr"},
		{"duplicate id", strings.Replace(g, `"id": 119`, `"id": 97`, 1), "program 97 appears twice"},
		{"prog_names", strings.Replace(g, `"bpf_prog_5d126c929afd31f7_",`, "", 1), "program 97: 1 metadata prog_names for 2 functions"},
		{"null program", `{"format_version": 1, "programs": [null]}`, "program 0 is null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSnapshot(strings.NewReader(tc.in))
			if !errors.Is(err, ErrSnapshotFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadSnapshot: %v, want %v with %q", err, ErrSnapshotFormat, tc.want)
			}
		})
	}
}

func TestSnapshotWriter(t *testing.T) {
	var buf bytes.Buffer
	sw, err := NewSnapshotWriter(&buf, System{Hostname: "h"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSnapshot(&buf)
	if err != nil || len(s.Programs) != 0 || s.Sys.Hostname != "h" {
		t.Fatalf("empty snapshot: %+v, %v", s, err)
	}

	buf.Reset()
	sw, _ = NewSnapshotWriter(&buf, System{}, time.Unix(0, 0))
	p := goldenSnapshot(t).Programs[1]
	if err := sw.Add(p); err != nil {
		t.Fatal(err)
	}
	if err := sw.Add(p); err == nil || !strings.Contains(err.Error(), "added twice") {
		t.Errorf("adding a program twice: %v", err)
	}
	sw.Close()
	if err := sw.Add(goldenSnapshot(t).Programs[0]); err == nil {
		t.Error("Add after Close: no error")
	}
	if _, err := ReadSnapshot(&buf); err != nil {
		t.Errorf("snapshot with one program: %v", err)
	}
}

// TestSnapshotOutlivesPrograms takes a snapshot of the running kernel,
// unloads the test's programs, and finds them, with the same metadata, in
// the snapshot only.
func TestSnapshotOutlivesPrograms(t *testing.T) {
	testkit.BPF(t)
	live, err := NewLive()
	if err != nil {
		t.Fatal(err)
	}
	var loaded []loadedProg
	var unloads []func()
	c, unload := testkit.LoadCilium(t, "meta")
	loaded, unloads = append(loaded, c...), append(unloads, unload)
	b, unload := testkit.LoadBpftool(t, testkit.MountBPFFS(t), "meta", "snapshot-meta")
	loaded, unloads = append(loaded, b...), append(unloads, unload)
	a, unload := loadAsm(t)
	loaded, unloads = append(loaded, a...), append(unloads, unload)

	// As `bpfmeta snapshot` takes it: every program, one at a time.
	path := filepath.Join(t.TempDir(), "snapshot.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := NewSnapshotWriter(f, live.System(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	taken := map[uint32]*Program{}
	for p, err := range live.Programs() {
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.Add(p); err != nil {
			t.Fatal(err)
		}
		taken[p.ID] = p
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	for _, u := range unloads {
		u()
	}
	for _, l := range loaded {
		waitGone(t, live, l.ID)
	}

	f, err = os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ReadSnapshot(f)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := CurrentSystem()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.System(); got.BootID != sys.BootID || got.Hostname != sys.Hostname || got.KernelRelease != sys.KernelRelease {
		t.Errorf("snapshot system %+v, running %+v", got, sys)
	}
	for _, l := range loaded {
		want := taken[l.ID]
		if want == nil {
			t.Fatalf("%v not in the snapshot", l)
		}
		if _, err := live.Lookup(l.ID, want.Tag); !errors.Is(err, ErrNotFound) {
			t.Errorf("%v: live Lookup after unload: %v", l, err)
		}
		got, err := s.Lookup(l.ID, want.Tag)
		if err != nil {
			t.Errorf("%v: snapshot Lookup: %v", l, err)
			continue
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) {
			t.Errorf("%v: from the snapshot\n%s\nwant\n%s", l, gj, wj)
		}
		if got.Metadata == nil || len(got.Metadata.Entries) == 0 {
			t.Errorf("%v: no metadata in the snapshot", l)
		}
		gm, gerr := got.BPFMetadata()
		wm, werr := want.BPFMetadata()
		if (gerr == nil) != (werr == nil) || (gerr == nil && !equalMetadata(gm, wm)) {
			t.Errorf("%v: snapshot metadata %+v, %v; live %+v, %v", l, gm, gerr, wm, werr)
		}
	}
}

func equalMetadata(a, b *Metadata) bool {
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	return bytes.Equal(aj, bj)
}
