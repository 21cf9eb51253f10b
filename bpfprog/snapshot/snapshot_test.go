package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/internal/testkit"

	"github.com/cilium/ebpf"
)

// The format, pinned: the file the golden snapshot is written as, and a
// snapshot of format version 1 (bpfmeta before the shared JSON form) that
// must still be read.
const (
	snapshotGolden   = "testdata/snapshot.golden.jsonl"
	snapshotV1Golden = "testdata/snapshot-v1.golden.json"
)

// goldenTaken is when the golden snapshot was taken.
var goldenTaken = time.Date(2026, 12, 2, 15, 46, 11, 0, time.UTC)

// goldenSnapshot has one program with metadata (one entry not formatted)
// and one without.
func goldenSnapshot(t *testing.T) *bpfprog.List {
	s := &bpfprog.List{
		Sys: bpfprog.System{
			KernelRelease: "6.18.44", BootID: "f0ef39ac-e669-4e9e-b6bf-383e3c4be558", Hostname: "vm",
			BootTime: time.Date(2026, 12, 2, 15, 28, 36, 861375769, time.UTC),
		},
		Programs: []*bpfprog.Program{
			{
				ID: 97, Tag: testkit.Tag(t, "e21be2de8fc54252"), Name: "bpfprogt_multi_", Type: ebpf.SocketFilter,
				LoadTime: 1049500284317 * time.Nanosecond, BTFID: 21, MapIDs: []uint32{29},
				Funcs: []bpfprog.Func{
					{Tag: testkit.Tag(t, "5d126c929afd31f7"), BTFName: "bpfprogt_multi_function_main", Addr: 0xffffffffc0023054, Len: 40,
						PerfName:   "bpf_prog_5d126c929afd31f7_bpfprogt_multi_function_main",
						KernelName: "bpf_prog_e21be2de8fc54252_bpfprogt_multi_function_main"},
					{Tag: testkit.Tag(t, "1811999f9c3db065"), BTFName: "bpfprogt_sub_add", Addr: 0xffffffffc002309c, Len: 25,
						PerfName:   "bpf_prog_1811999f9c3db065_bpfprogt_sub_add",
						KernelName: "bpf_prog_1811999f9c3db065_bpfprogt_sub_add"},
				},
				Metadata: &bpfprog.Metadata{MapID: 29, MapName: ".rodata", BTFID: 20,
					ProgNames: []string{"bpf_prog_5d126c929afd31f7_", "bpf_prog_1811999f9c3db065_"},
					Entries:   []bpfprog.Entry{{Key: "version", Value: `"3.14159"`}, {Key: "odd", Value: ""}}},
				MetadataErr: &bpfprog.MetadataError{ProgID: 97, MapID: 29, Key: "odd", Err: errors.New("cannot format")},
			},
			{
				ID: 119, Tag: testkit.Tag(t, "a823616fe0b41d16"), Name: "bpfprogt_nometa", Type: ebpf.SocketFilter,
				LoadTime: time.Second, BTFID: 61, MapIDs: []uint32{},
				Funcs: []bpfprog.Func{{Tag: testkit.Tag(t, "a823616fe0b41d16"), BTFName: "bpfprogt_nometa", Addr: 0xffffffffc0026e94, Len: 32,
					PerfName: "bpf_prog_a823616fe0b41d16_bpfprogt_nometa", KernelName: "bpf_prog_a823616fe0b41d16_bpfprogt_nometa"}},
			},
		},
	}
	for _, p := range s.Programs {
		p.LoadedAt = s.Sys.LoadedAt(p)
	}
	return s
}

// openBytes reads a snapshot held in memory.
func openBytes(b []byte) (*File, error) { return Read(bytes.NewReader(b), int64(len(b))) }

// rewrite reads every program of a snapshot and writes them again.
func rewrite(t *testing.T, s *File) []byte { return write(t, s, s.Taken) }

// write writes every program of src as a snapshot taken at taken: Take at
// a time of the test's.
func write(t *testing.T, src bpfprog.Lister, taken time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	sw, err := NewWriter(&buf, src.System(), taken)
	if err != nil {
		t.Fatal(err)
	}
	for p, err := range src.All() {
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Close(End{Until: taken}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSnapshotGolden pins the file format: write, compare with the golden
// file, read back, write again; and reads the version 1 file into the same.
func TestSnapshotGolden(t *testing.T) {
	testkit.Golden(t, snapshotGolden, write(t, goldenSnapshot(t), goldenTaken))
	golden, err := os.ReadFile(snapshotGolden)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(golden, []byte("\n")), []byte("\n")) {
		if !json.Valid(line) {
			t.Fatalf("%s line %d is not valid JSON", snapshotGolden, i+1)
		}
	}
	v1, err := os.ReadFile(snapshotV1Golden)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []struct {
		name string
		b    []byte
	}{{"version 2", golden}, {"version 1", v1}} {
		t.Run(in.name, func(t *testing.T) {
			s, err := openBytes(in.b)
			if err != nil {
				t.Fatal(err)
			}
			if s.Incomplete != "" {
				t.Errorf("Incomplete %q", s.Incomplete)
			}
			if again := rewrite(t, s); !bytes.Equal(again, golden) {
				t.Errorf("read and written again, the snapshot is not the golden one:\n%s", again)
			}
			checkGoldenPrograms(t, s)
		})
	}
}

func checkGoldenPrograms(t *testing.T, s *File) {
	p, err := s.Lookup(97, testkit.Tag(t, "e21be2de8fc54252"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.BPFMetadata(); err == nil || !strings.Contains(err.Error(), "cannot format") {
		t.Errorf("BPFMetadata of a program whose metadata is not exact: %v", err)
	}
	var me *bpfprog.MetadataError
	if !errors.As(p.MetadataErr, &me) || me.MapID != 29 || me.Key != "odd" {
		t.Errorf("MetadataErr %#v", p.MetadataErr)
	}
	if p.Funcs[0].Addr != 0xffffffffc0023054 {
		t.Errorf("address %x", p.Funcs[0].Addr)
	}
	p, err = s.Lookup(119, testkit.Tag(t, "a823616fe0b41d16"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.BPFMetadata(); !errors.Is(err, bpfprog.ErrNoMetadata) {
		t.Errorf("BPFMetadata of a program without metadata: %v", err)
	}
	if s.System() != goldenSnapshot(t).Sys || !s.Taken.Equal(goldenTaken) {
		t.Errorf("System %+v taken %v", s.System(), s.Taken)
	}
}

func TestSnapshotLookup(t *testing.T) {
	s, err := openBytes(write(t, goldenSnapshot(t), goldenTaken))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(97, testkit.Tag(t, "e21be2de8fc54252")); err != nil {
		t.Errorf("Lookup: %v", err)
	}
	other := testkit.Tag(t, "0000000000000001")
	_, err = s.Lookup(97, other)
	var tm *bpfprog.TagMismatchError
	if !errors.As(err, &tm) || !errors.Is(err, bpfprog.ErrTagMismatch) || tm.ID != 97 || tm.Want != other || tm.Got.String() != "e21be2de8fc54252" {
		t.Errorf("Lookup with another tag: %v", err)
	}
	if _, err := s.Lookup(98, other); !errors.Is(err, bpfprog.ErrNotFound) || errors.Is(err, bpfprog.ErrTagMismatch) {
		t.Errorf("Lookup of an id not in the snapshot: %v", err)
	}
}

func TestReadSnapshotErrors(t *testing.T) {
	g := string(testkit.ReadFile(t, snapshotGolden))
	lines := strings.SplitAfter(g, "\n")
	for _, tc := range []struct {
		name, in, want string
		newer          bool
	}{
		{"not JSON", "PERFILE2", "not a bpfmeta snapshot", false},
		{"empty", "", "empty", false},
		{"no kind", `{"format_version":2}` + "\n", "first line", false},
		{"newer version", `{"format_version":3,"kind":"snapshot"}` + "\n", "written by a newer bpfmeta", true},
		{"bad tag", strings.Replace(g, `"tag":"e21be2de8fc54252"`, `"tag":"e21b"`, 1), "tag", false},
		{"bad address", strings.Replace(g, `"addr":"0xffffffffc0023054"`, `"addr":18446744072635953224`, 1), "addr", false},
		{"duplicate id", strings.Replace(g, `"id":119`, `"id":97`, 1), "program 97 appears twice", false},
		{"prog_names", strings.Replace(g, `"bpf_prog_5d126c929afd31f7_",`, "", 1), "program 97: 1 metadata prog_names for 2 functions", false},
		{"neither", lines[0] + `{"other":1}` + "\n", "neither a program nor the end", false},
		{"a line after the end", g + lines[1], "after the end", false},
		{"end counts", strings.Replace(g, `"programs":2`, `"programs":3`, 1), "counts 3 programs", false},
		{"too long a line", lines[0] + `{"program":"` + strings.Repeat("x", 5<<20) + "\"}\n", "longer than", false},
		{"a value too long for perf", strings.Replace(g, `3.14159`, strings.Repeat("y", 300), 1), "longer than perf records", false},
		{"v1: null program", `{` + "\n" + `  "format_version": 1, "programs": [null]}`, "program 0 is null", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openBytes([]byte(tc.in))
			want := ErrFormat
			if tc.newer {
				want = ErrNewer
			}
			if !errors.Is(err, want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read: %v, want %v with %q", err, want, tc.want)
			}
		})
	}
}

// TestSnapshotCut: a snapshot whose writer stopped (no end line, a last
// line cut anywhere) is read up to its last whole program, and says so.
func TestSnapshotCut(t *testing.T) {
	golden, err := os.ReadFile(snapshotGolden)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(golden, []byte("\n"))
	first := len(lines[0])
	for cut := first; cut < len(golden)-1; cut++ {
		s, err := openBytes(golden[:cut])
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if s.Incomplete == "" {
			t.Fatalf("cut at %d: not reported incomplete", cut)
		}
		wantProgs := 0
		for n, i := first, 1; i < len(lines)-1; i++ {
			if n += len(lines[i]); n <= cut {
				wantProgs++
			}
		}
		if s.Len() != wantProgs {
			t.Fatalf("cut at %d: %d programs, want %d", cut, s.Len(), wantProgs)
		}
	}
}

func TestSnapshotWriter(t *testing.T) {
	var buf bytes.Buffer
	sw, err := NewWriter(&buf, bpfprog.System{Hostname: "h"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(End{}); err != nil {
		t.Fatal(err)
	}
	s, err := openBytes(buf.Bytes())
	if err != nil || s.Len() != 0 || s.System().Hostname != "h" || s.Incomplete != "" {
		t.Fatalf("empty snapshot: %+v, %v", s, err)
	}

	buf.Reset()
	sw, _ = NewWriter(&buf, bpfprog.System{}, time.Unix(0, 0))
	p := goldenSnapshot(t).Programs[1]
	if err := sw.Add(p); err != nil {
		t.Fatal(err)
	}
	if err := sw.Add(p); err == nil || !strings.Contains(err.Error(), "added twice") {
		t.Errorf("adding a program twice: %v", err)
	}
	sw.Close(End{})
	if err := sw.Add(goldenSnapshot(t).Programs[0]); err == nil {
		t.Error("Add after Close: no error")
	}
	if _, err := openBytes(buf.Bytes()); err != nil {
		t.Errorf("snapshot with one program: %v", err)
	}
}

// TestSnapshotMemory: reading a snapshot of many programs keeps an index,
// not the programs.
func TestSnapshotMemory(t *testing.T) {
	var buf bytes.Buffer
	sw, _ := NewWriter(&buf, bpfprog.System{}, time.Unix(0, 0))
	p := *goldenSnapshot(t).Programs[0]
	p.MetadataErr = nil
	for i := range 20000 {
		p.ID = uint32(i)
		if err := sw.Add(&p); err != nil {
			t.Fatal(err)
		}
	}
	sw.Close(End{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := openBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d programs in %d bytes: %d bytes held", s.Len(), buf.Len(), held)
	if held > int64(buf.Len())/5 {
		t.Errorf("%d bytes held for a %d-byte snapshot: more than an index", held, buf.Len())
	}
	runtime.KeepAlive(s)
	if got, err := s.Lookup(19999, p.Tag); err != nil || got.ID != 19999 {
		t.Errorf("Lookup: %v, %v", got, err)
	}
}

// TestSnapshotOutlivesPrograms takes a snapshot of the running kernel,
// unloads the test's programs, and finds them, with the same metadata, in
// the snapshot only.
func TestSnapshotOutlivesPrograms(t *testing.T) {
	testkit.BPF(t)
	k, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	var loaded []testkit.Loaded
	var unloads []func()
	c, unload := testkit.LoadCilium(t, "meta")
	loaded, unloads = append(loaded, c...), append(unloads, unload)
	b, unload := testkit.LoadBpftool(t, testkit.MountBPFFS(t), "meta", "snapshot-meta")
	loaded, unloads = append(loaded, b...), append(unloads, unload)
	a, unload := testkit.LoadAsm(t)
	loaded, unloads = append(loaded, a...), append(unloads, unload)

	// As `bpfmeta snapshot` takes it.
	path := filepath.Join(t.TempDir(), "snapshot.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Take(f, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// what the kernel said of them while they were loaded
	taken := map[uint32]*bpfprog.Program{}
	for _, l := range loaded {
		if taken[l.ID], err = k.Program(l.ID); err != nil {
			t.Fatal(err)
		}
	}

	for _, u := range unloads {
		u()
	}
	for _, l := range loaded {
		testkit.WaitUnloaded(t, l.ID)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != n || n < len(loaded) {
		t.Errorf("Take wrote %d programs, the snapshot has %d, %d were loaded by the test", n, s.Len(), len(loaded))
	}
	sys, err := live.CurrentSystem()
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
		if _, err := k.Lookup(l.ID, want.Tag); !errors.Is(err, bpfprog.ErrNotFound) {
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

func equalMetadata(a, b *bpfprog.Metadata) bool {
	aj, _ := json.Marshal(a)
	bj, _ := json.Marshal(b)
	return bytes.Equal(aj, bj)
}

// TestSnapshotOldTyped: a snapshot written before typed integers beyond
// 2^53 became strings (a number there), and before its end line always had
// "missed", still reads, its typed value kept as written.
func TestSnapshotOldTyped(t *testing.T) {
	golden, err := os.ReadFile(snapshotGolden)
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Replace(golden, []byte(`{"key":"version","value":"\"3.14159\""}`),
		[]byte(`{"key":"version","value":"\"3.14159\""},{"key":"big","value":"18446744073709551615","typed":18446744073709551615}`), 1)
	old = bytes.Replace(old, []byte(`,"missed":0}`), []byte(`}`), 1)
	if bytes.Equal(old, golden) {
		t.Fatal("the golden snapshot is not as this test expects")
	}
	s, err := openBytes(old)
	if err != nil {
		t.Fatal(err)
	}
	if s.Incomplete != "" {
		t.Errorf("Incomplete %q", s.Incomplete)
	}
	if again := rewrite(t, s); !bytes.Contains(again, []byte(`"typed":18446744073709551615`)) {
		t.Errorf("the typed value is not kept:\n%s", again)
	}
}

// TestTakePortable: a portable snapshot has no hostname, boot id, boot
// time, times, load times, uids, map or BTF ids, and is the same bytes
// whenever it is taken; its programs have their ids, tags, functions (with
// addresses) and metadata, looked up as from the whole snapshot.
func TestTakePortable(t *testing.T) {
	src := goldenSnapshot(t)
	var a, b bytes.Buffer
	if _, err := TakePortable(&a, src); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := TakePortable(&b, src); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("two portable snapshots of the same programs differ:\n%s\n%s", a.Bytes(), b.Bytes())
	}
	for _, leak := range []string{src.Sys.BootID, `"vm"`, "2026", `"load_time_ns":1049500284317`, `"btf_id":21`, `"map_ids":[29]`, `"map_id":29`} {
		if strings.Contains(a.String(), leak) {
			t.Errorf("the portable snapshot has %s:\n%s", leak, a.Bytes())
		}
	}
	s, err := openBytes(a.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if s.Incomplete != "" || s.System().KernelRelease != src.Sys.KernelRelease {
		t.Errorf("incomplete %q, kernel release %q", s.Incomplete, s.System().KernelRelease)
	}
	for _, want := range src.Programs {
		got, err := s.Lookup(want.ID, want.Tag)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Funcs, want.Funcs) || (want.Metadata != nil) != (got.Metadata != nil) ||
			want.Metadata != nil && !slicesEqualEntries(got.Metadata, want.Metadata) {
			t.Errorf("program %d: %+v\nwant %+v", want.ID, got, want)
		}
	}
}

func slicesEqualEntries(a, b *bpfprog.Metadata) bool {
	if strings.Join(a.ProgNames, ",") != strings.Join(b.ProgNames, ",") || len(a.Entries) != len(b.Entries) {
		return false
	}
	for i := range a.Entries {
		if a.Entries[i].Key != b.Entries[i].Key || a.Entries[i].Value != b.Entries[i].Value {
			return false
		}
	}
	return true
}
