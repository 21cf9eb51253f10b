package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Directory recordings (perf record --threads) of the corpus the tests use.
const (
	threads61     = "perf6.1_x86_64_threads_bpf.data"   // perf 6.1, no BPF_METADATA
	threads72     = "perf7.2_x86_64_threads_bpf.data"   // perf 7.2: its own BPF_METADATA records
	threads61Zstd = "perf6.1_x86_64_threads_zstd.data"  // -z: a zstd stream per data file
	threads72Zstd = "perf7.2_x86_64_threads_zstd2.data" // -z, COMPRESSED2
)

// bpfmetaStats runs bpfmeta dump --stats on path.
func bpfmetaStats(t *testing.T, path string) testkit.Stats {
	t.Helper()
	r := bpfmeta(t, nil, "dump", "--stats", "-i", path)
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("dump --stats -i %s: %v", path, r)
	}
	s, ok := testkit.ParseStats(r.stdout)
	if !ok {
		t.Fatalf("dump --stats has no Aggregated stats:\n%s", r.stdout)
	}
	return s
}

func equalStats(t *testing.T, what string, got, want testkit.Stats) {
	t.Helper()
	for k, n := range want.Counts {
		if got.Counts[k] != n {
			t.Errorf("%s: %s events: %d, want %d", what, k, got.Counts[k], n)
		}
	}
	for k, n := range got.Counts {
		if _, ok := want.Counts[k]; !ok {
			t.Errorf("%s: %s events: %d, want none", what, k, n)
		}
	}
}

// TestDirDumpStats: dump --stats of a directory recording is perf's report
// --stats, perf 7.2's for every one, perf 6.1's for its own.
func TestDirDumpStats(t *testing.T) {
	for _, name := range testkit.ThreadsNames(t) {
		t.Run(name, func(t *testing.T) {
			ours := bpfmetaStats(t, testkit.ThreadsDir(name))
			equalStats(t, "perf 7.2", ours, testkit.ReportStats(t, perfPath(t, modernPerf), testkit.ThreadsDir(name)))
			if strings.HasPrefix(name, "perf6.1") {
				equalStats(t, "perf 6.1", ours, testkit.ReportStats(t, perfPath(t, stockPerf), testkit.ThreadsDir(name)))
			}
		})
	}
}

// TestDirStripConvert: strip of perf 7.2's directory recording writes a
// directory without its BPF_METADATA records, every other byte the
// same, which perf 7.2 reads (perf 6.1 reads no recording of perf 7.2's:
// its attrs are too new); convert writes one file or stream that perf 6.1
// and 7.2 read with the same counts.
func TestDirStripConvert(t *testing.T) {
	dir := t.TempDir()
	stripped := filepath.Join(dir, "stripped.data")
	r := bpfmeta(t, nil, "strip", "-i", testkit.ThreadsDir(threads72), "-o", stripped)
	if r.code != exitOK {
		t.Fatalf("strip: %v", r)
	}
	oneLine(t, "strip", r, "bpfmeta: "+testkit.ThreadsDir(threads72)+": removed 8 BPF_METADATA records")
	for _, n := range []string{"data.0", "data.1"} {
		want, _ := os.ReadFile(filepath.Join(testkit.ThreadsDir(threads72), n))
		got, err := os.ReadFile(filepath.Join(stripped, n))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("stripped %s is not the input's (%v)", n, err)
		}
	}
	want := bpfmetaStats(t, testkit.ThreadsDir(threads72))
	want.Counts["TOTAL"] -= want.Counts["BPF_METADATA"]
	delete(want.Counts, "BPF_METADATA")
	equalStats(t, "stripped, perf 7.2", testkit.ReportStats(t, perfPath(t, modernPerf), stripped), want)
	// stripping again changes nothing
	again := filepath.Join(dir, "again.data")
	if r := bpfmeta(t, nil, "strip", "-q", "-i", stripped, "-o", again); r.code != exitOK {
		t.Fatalf("strip: %v", r)
	}
	testkit.SameDir(t, stripped, again)

	for _, name := range []string{threads61, threads72} {
		file := filepath.Join(dir, name+".file")
		if r := bpfmeta(t, nil, "convert", "-i", testkit.ThreadsDir(name), "-o", file); r.code != exitOK || r.stderr != "" {
			t.Fatalf("convert %s: %v", name, r)
		}
		want := bpfmetaStats(t, testkit.ThreadsDir(name))
		equalStats(t, name+" as a file, perf 7.2", testkit.ReportStats(t, perfPath(t, modernPerf), file), want)
		if name == threads61 {
			equalStats(t, name+" as a file, perf 6.1", testkit.ReportStats(t, perfPath(t, stockPerf), file), want)
		}
		pipe := filepath.Join(dir, name+".pipe")
		f, err := os.Create(pipe)
		if err != nil {
			t.Fatal(err)
		}
		r := bpfmeta(t, nil, "convert", "-i", testkit.ThreadsDir(name), "-o", "-")
		f.WriteString(r.stdout)
		f.Close()
		if r.code != exitOK || r.stderr != "" {
			t.Fatalf("convert %s -o -: %v", name, r)
		}
		// the stream's records are the directory's, and its prelude
		got := bpfmetaStats(t, pipe)
		if got.Counts["SAMPLE"] != want.Counts["SAMPLE"] || got.Counts["BPF_METADATA"] != want.Counts["BPF_METADATA"] || got.Counts["KSYMBOL"] != want.Counts["KSYMBOL"] {
			t.Errorf("%s as a stream: %v, the directory %v", name, got.Counts, want.Counts)
		}
		equalStats(t, name+" as a stream, perf 7.2", testkit.ReportStats(t, perfPath(t, modernPerf), pipe), got)
	}
}

// TestDirRefusals: what is refused, with words that say why, and nothing
// left behind.
func TestDirRefusals(t *testing.T) {
	dir := t.TempDir()
	in, err := os.Open(testkit.ThreadsDir(threads61))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r := bpfmeta(t, in, "dump", "--stats")
	if r.code != exitUsage {
		t.Errorf("stdin a directory: %v, want exit 2", r)
	}
	oneLine(t, "stdin a directory", r, "bpfmeta: stdin is a directory: a directory recording (perf record --threads) is read with -i DIR")

	r = bpfmeta(t, nil, "show", "-i", filepath.Join(testkit.ThreadsDir(threads72), "data"))
	if r.code != exitFailure || !strings.Contains(r.stderr, "is the data file of a directory recording") {
		t.Errorf("-i DIR/data: %v", r)
	}

	// one file of two zstd streams
	out := filepath.Join(dir, "one.data")
	r = bpfmeta(t, nil, "convert", "-i", testkit.ThreadsDir(threads61Zstd), "-o", out)
	if r.code != exitFailure || !strings.Contains(r.stderr, "two zstd streams") {
		t.Errorf("convert of a -z directory: %v", r)
	}
	// an existing output, without -f
	existing := filepath.Join(dir, "existing.data")
	if err := os.Mkdir(existing, 0o700); err != nil {
		t.Fatal(err)
	}
	r = bpfmeta(t, nil, "strip", "--no-clobber", "-i", testkit.ThreadsDir(threads61), "-o", existing)
	if r.code != exitFailure || !strings.Contains(r.stderr, "exists") {
		t.Errorf("strip --no-clobber to an existing directory: %v", r)
	}
	// the input as the output
	r = bpfmeta(t, nil, "strip", "-f", "-i", testkit.ThreadsDir(threads61), "-o", testkit.ThreadsDir(threads61))
	if r.code != exitUsage {
		t.Errorf("strip -f to the input: %v", r)
	}
	if got := testkit.DirNames(t, dir); !slices.Equal(got, []string{"existing.data"}) {
		t.Errorf("left behind: %q", got)
	}
	insideInput(t)
	if got := testkit.DirNames(t, existing); len(got) != 0 {
		t.Errorf("written into the existing directory: %q", got)
	}
	// with -f, replaced by a complete directory
	if r := bpfmeta(t, nil, "strip", "-f", "-q", "-i", testkit.ThreadsDir(threads61Zstd), "-o", existing); r.code != exitOK {
		t.Fatalf("strip -f: %v", r)
	}
	testkit.SameDir(t, testkit.ThreadsDir(threads61Zstd), existing)
	if got := testkit.DirNames(t, dir); !slices.Equal(got, []string{"existing.data"}) {
		t.Errorf("left behind: %q", got)
	}
	// without -f or --no-clobber, replaced and kept as .old, as perf
	// record keeps it
	if r := bpfmeta(t, nil, "strip", "-q", "-i", testkit.ThreadsDir(threads61), "-o", existing); r.code != exitOK {
		t.Fatalf("strip to an existing directory recording: %v", r)
	}
	testkit.SameDir(t, testkit.ThreadsDir(threads61Zstd), existing+".old")
	if got := testkit.DirNames(t, dir); !slices.Equal(got, []string{"existing.data", "existing.data.old"}) {
		t.Errorf("left behind: %q", got)
	}
}

// insideInput: an output in the input directory, which would replace or
// add one of its data files while they are read, is refused (exit 2),
// whatever names it: -f, a data file's name, a new data.N, a path
// through a symlink to it.
func insideInput(t *testing.T) {
	t.Helper()
	in := testkit.CopyDir(t, testkit.ThreadsDir(threads72))
	dir := filepath.Dir(in)
	if err := os.Symlink(in, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	// a symlink to a directory of the input, then ..: the kernel takes
	// .. of where the symlink leads, not of the path's text
	sub := filepath.Join(in, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sub, filepath.Join(dir, "tosub")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"convert", "-o", filepath.Join(dir, "tosub") + "/../data.6"},
		{"strip", "-f", "-o", filepath.Join(in, "data")},
		{"convert", "-f", "-o", filepath.Join(in, "data.1")},
		{"convert", "-o", filepath.Join(in, "data.5")},
		{"inject", "-o", filepath.Join(dir, "link", "sub", "x.data")},
	} {
		r := bpfmeta(t, nil, append(args, "-i", in)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "is inside the input") {
			t.Errorf("%q: %v, want exit 2, inside the input", args, r)
		}
	}
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	testkit.SameDir(t, testkit.ThreadsDir(threads72), in)
}

// TestDirMemory: memory stays flat whatever the number of data files:
// dump --stats and strip of a directory recording with 10,000 data files
// (hard links to one) take at most what the collector lets the heap of a
// run with 2 grow to.
func TestDirMemory(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	many := filepath.Join(dir, "many.data")
	if err := os.Mkdir(many, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"data", "data.0", "data.1"} {
		b, err := os.ReadFile(filepath.Join(testkit.ThreadsDir(threads61), n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(many, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const n = 10000
	for i := 2; i < n; i++ {
		if err := os.Link(filepath.Join(many, "data.1"), filepath.Join(many, perfdata.DataFileName(i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		args func(in, out string) []string
	}{
		{"dump --stats", func(in, out string) []string { return []string{"dump", "--stats", "-i", in} }},
		{"strip", func(in, out string) []string { return []string{"strip", "-q", "-i", in, "-o", out} }},
	} {
		few := runProc(t, bin, procRun{}, c.args(testkit.ThreadsDir(threads61), filepath.Join(dir, "few.out"))...)
		lots := runProc(t, bin, procRun{}, c.args(many, filepath.Join(dir, "many.out"))...)
		if few.code != exitOK || lots.code != exitOK {
			t.Fatalf("%s: %v; %v", c.name, few.result, lots.result)
		}
		t.Logf("%s: 2 data files %.1f MiB, %d data files %.1f MiB", c.name, float64(few.peak)/(1<<20), n, float64(lots.peak)/(1<<20))
		// what each data file costs (a few KiB of handles and names) is
		// garbage the collector takes back: the heap stays within twice
		// what it holds live, whatever the number of files
		if lots.peak > 2*few.peak+4<<20 || lots.peak > peakBound {
			t.Errorf("%s of %d data files: peak %d MiB, with 2: %d MiB", c.name, n, lots.peak>>20, few.peak>>20)
		}
	}
	out := testkit.DirNames(t, filepath.Join(dir, "many.out"))
	if len(out) != n+1 {
		t.Errorf("strip wrote %d files, want %d", len(out), n+1)
	}
}

// TestDirDump: dump lists a directory recording's records file by file,
// each file's offsets its own, after a line naming it; strip -o - writes
// one stream of them that perf 7.2 reads.
func TestDirDump(t *testing.T) {
	r := bpfmeta(t, nil, "dump", "-i", testkit.ThreadsDir(threads61))
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("dump: %v", r)
	}
	var files []string
	first := map[string]string{}
	cur := "data"
	for _, l := range strings.Split(r.stdout, "\n") {
		if n, ok := strings.CutPrefix(l, "# data."); ok {
			cur = "data." + n
			files = append(files, cur)
			continue
		}
		if _, seen := first[cur]; !seen && strings.HasPrefix(l, "0x") {
			first[cur], _, _ = strings.Cut(l, " ")
		}
	}
	if !slices.Equal(files, []string{"data.0", "data.1"}) {
		t.Errorf("dump names the files %q", files)
	}
	if !strings.Contains(r.stdout, "# a directory recording: data and 2 data files, read in this order\n") {
		t.Errorf("dump does not say it is a directory recording:\n%.400s", r.stdout)
	}
	if first["data.0"] != "0x0" || first["data.1"] != "0x0" || first["data"] == "0x0" {
		t.Errorf("the first records are at %v: data.N start at 0, data after its header", first)
	}

	stream := filepath.Join(t.TempDir(), "stream")
	s := bpfmeta(t, nil, "strip", "-q", "-i", testkit.ThreadsDir(threads72), "-o", "-")
	if s.code != exitOK {
		t.Fatalf("strip -o -: %v", s)
	}
	if err := os.WriteFile(stream, []byte(s.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	got := bpfmetaStats(t, stream)
	if got.Counts["BPF_METADATA"] != 0 || got.Counts["SAMPLE"] != bpfmetaStats(t, testkit.ThreadsDir(threads72)).Counts["SAMPLE"] {
		t.Errorf("strip -o - of a directory recording: %v", got.Counts)
	}
	equalStats(t, "strip -o -, perf 7.2", testkit.ReportStats(t, perfPath(t, modernPerf), stream), got)
}

// TestDirOthers: what a directory recording holds besides data and data.N
// (perf record --kcore's kcore_dir) is not copied, and the output says so.
func TestDirOthers(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.data")
	if err := os.Mkdir(in, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range testkit.DirNames(t, testkit.ThreadsDir(threads61)) {
		b, err := os.ReadFile(filepath.Join(testkit.ThreadsDir(threads61), n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(in, "kcore_dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.data")
	r := bpfmeta(t, nil, "strip", "-i", in, "-o", out)
	if r.code != exitOK {
		t.Fatalf("strip: %v", r)
	}
	if !strings.Contains(r.stderr, "bpfmeta: warning: "+in+": kcore_dir not copied: bpfmeta writes a directory recording's data and data.N files only\n") {
		t.Errorf("no warning about kcore_dir:\n%s", r.stderr)
	}
	if got := testkit.DirNames(t, out); !slices.Equal(got, []string{"data", "data.0", "data.1"}) {
		t.Errorf("the output has %q", got)
	}
}

// TestDirGap: a directory recording without data.0 but with data.1 lost a
// recording thread's records; perf reads what is there without a word,
// every bpfmeta command reads it and warns.
func TestDirGap(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.data")
	if err := os.Mkdir(in, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range testkit.DirNames(t, testkit.ThreadsDir(threads61)) {
		if n == "data.0" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(testkit.ThreadsDir(threads61), n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := "bpfmeta: warning: " + in + ": no data.0: perf record --threads writes data.0, data.1, ... with no gap, so the records of 1 recording thread are lost (perf reads what is there, and says nothing)\n"
	snap := emptySnapshot(t)
	for _, args := range [][]string{
		{"strip", "-o", filepath.Join(dir, "strip.data")},
		{"inject", "--snapshot", snap, "-o", filepath.Join(dir, "inject.data")},
		{"convert", "-o", filepath.Join(dir, "convert.data")},
		{"dump", "--stats"},
		{"show"},
	} {
		r := bpfmeta(t, nil, append(args, "-i", in)...)
		if r.code != exitOK || strings.Count(r.stderr, want) != 1 {
			t.Errorf("%s: %v, want one warning %q", args[0], r, want)
		}
	}
}

// TestDirShowFile: show --json names the data file each record's offset
// is in, and a BPF_METADATA record is there.
func TestDirShowFile(t *testing.T) {
	dir := testkit.ThreadsDir(threads72)
	r := bpfmeta(t, nil, "show", "--json", "-i", dir)
	if r.code != exitOK {
		t.Fatalf("show --json: %v", r)
	}
	var doc struct {
		Records []struct {
			Offset int64
			File   string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Records) == 0 {
		t.Fatal("no records")
	}
	for _, rec := range doc.Records {
		b := make([]byte, perfdata.EventHeaderSize)
		f, err := os.Open(filepath.Join(dir, rec.File))
		if err == nil {
			_, err = f.ReadAt(b, rec.Offset)
			f.Close()
		}
		if err != nil || rec.File == "" {
			t.Fatalf("record at %#x of %q: %v", rec.Offset, rec.File, err)
		}
		if h := perfdata.DecodeEventHeader(b, binary.LittleEndian); h.Type != perfdata.RecordBPFMetadata {
			t.Errorf("%s at %#x: a %v record, not BPF_METADATA", rec.File, rec.Offset, h.Type)
		}
	}
}
