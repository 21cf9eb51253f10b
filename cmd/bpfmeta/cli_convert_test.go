package main

// convert round trips (issue 3, Done-when 3): file -> pipe -> file and
// pipe -> file -> pipe, for the corpus and for recordings made now with
// both perfs and -z. perf reads the converted recordings with the same
// records, compressed records keep their bytes, and what changes in the
// layout is listed, byte range by byte range, in golden files.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// convertRefusals are corpus files convert cannot turn into a pipe stream,
// and why: what the error must say.
var convertRefusals = map[string]string{}

// convertNotes are the notes convert -o - prints for a corpus file: the
// features a pipe stream cannot carry (a HEADER_FEATURE record holds at
// most 64 KiB; perf inject leaves them out too).
var convertNotes = map[string][]string{
	bpfFile: {"feature CACHE (132008 bytes)", "feature BPF_PROG_INFO (291764 bytes)", "feature BPF_BTF (365726 bytes)"},
}

// tooLargeNote is convert's note about a feature a pipe cannot carry.
var tooLargeNote = regexp.MustCompile(`^bpfmeta: note: .*: feature (\S+) \((\d+) bytes\) is not in the pipe stream: (too large for a HEADER_FEATURE record|a simpleperf feature, which perf does not know)$`)

// maxFeaturePayload is what a HEADER_FEATURE record holds at most.
const maxFeaturePayload = 65535 - 16

// dataMoves are the corpus files whose data section legitimately changes
// in a file -> pipe -> file round trip, and why.
var dataMoves = map[string]string{
	// simpleperf keeps its trace data in a record of the data section; the
	// pipe stream carries it as perf does, and a file as the TRACING_DATA
	// feature.
	"aosp_simpleperf_tracepoint_event.data": "simpleperf's TRACING_DATA record becomes the TRACING_DATA feature",
}

// perfQuirks are the converted corpus files perf reads differently from
// their input, by file and by what perf reads ("the pipe stream", "the
// final file"): what differs, and why.
var perfQuirks = map[string]map[string]*perfQuirk{
	"aosp_simpleperf_lbr.data": {"the pipe stream": {
		why: "perf 7.2 reading a pipe prints cpu 0 for every SAMPLE after the first (perf 6.1 prints the stream's cpu 11 throughout): the cpu column is not compared",
		// the leading "CPU " of the decoded SAMPLE lines
		drop: regexp.MustCompile(`^\d+ \d+ OFFSET \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE`),
	}},
	"aosp_simpleperf_aarch64_callchain_record.data": {"the pipe stream": {
		why:  "perf 7.2 reading a pipe prints cpu 0 for the records after the first SAMPLE (perf 6.1 prints the stream's cpu): the lines with a cpu column are not compared",
		drop: regexp.MustCompile(`^\d+ \d+ OFFSET \[0x[0-9a-f]+\]: PERF_RECORD_`),
	}},
	"aosp_simpleperf_aarch64_cs_etm_auxtrace.data": {"the final file": {
		why:  "simpleperf's HEADER_AUXTRACE has no count, so perf 6.1 ignores it (\"Failed to process auxtrace index\") and decodes the AUX data as from a pipe; the final file's index is perf's, so perf decodes the same AUX data in the index's pieces: the \"Trace data: size\" lines and blank lines are not compared",
		drop: regexp.MustCompile(`CoreSight ETMV4I Trace data: size|^$`),
	}},
}

// perfInput is a recording for perf to read: a file, or bytes it reads
// from a real pipe.
type perfInput struct {
	name  string // for messages
	path  string // "-" for stdin
	stdin []byte
}

func fileInput(name, path string) perfInput     { return perfInput{name, path, nil} }
func pipeInput(name string, b []byte) perfInput { return perfInput{name, "-", b} }

// perfReads compares what perf reads from converted recordings with what it
// reads from their input: perf 6.1 where it reads the input, else perf 7.2.
// perf 6.1 reads pipe streams with attrs its file reader rejects ("incompatible
// file format": attr.size 136); for such a file perf 7.2 does the comparing.
type perfReads struct {
	t      *testing.T
	in     perfInput
	quirks map[string]*perfQuirk // by output name
	runs   map[string]scriptRun  // the input, per perf
}

func newPerfReads(t *testing.T, in perfInput, quirks map[string]*perfQuirk) *perfReads {
	return &perfReads{t: t, in: in, quirks: quirks, runs: map[string]scriptRun{}}
}

func (p *perfReads) input(perf string) scriptRun {
	if r, ok := p.runs[perf]; ok {
		return r
	}
	r := perfScript(p.t, perfPath(p.t, perf), p.in.path, p.in.stdin)
	p.runs[perf] = r
	return r
}

// compare checks that perf reads out with the input's records, leaving out
// the types in skip on both sides.
func (p *perfReads) compare(out perfInput, skip []int) {
	t := p.t
	t.Helper()
	q := p.quirks[out.name]
	same := " with the input's records"
	if q != nil {
		same += ", but: " + q.why
	}
	if p.input(stockPerf).err == nil {
		got := perfScript(t, perfPath(t, stockPerf), out.path, out.stdin)
		if got.err == nil || !strings.Contains(got.err.Error(), "incompatible file format") {
			p.note("perf 6.1", out.name, same, compareScript(t, out.name+" (perf 6.1)", p.input(stockPerf).without(skip).apply(q), got.without(skip).apply(q)))
			return
		}
		t.Logf("perf 6.1 rejects %s (\"incompatible file format\", as the corpus files with 136-byte attrs)", out.name)
	}
	want := p.input(modernPerf)
	if want.err != nil {
		t.Logf("no perf reads the input: %s not compared", out.name)
		return
	}
	got := perfScript(t, perfPath(t, modernPerf), out.path, out.stdin)
	p.note("perf 7.2", out.name, same, compareScript(t, out.name+" (perf 7.2)", want.without(skip).apply(q), got.without(skip).apply(q)))
}

// note logs what perf read; what the machine's perfs read is not in the
// golden files, which depend on their inputs only.
func (p *perfReads) note(perf, name, same string, ok bool) {
	p.t.Helper()
	if ok {
		p.t.Logf("%s reads %s%s", perf, name, same)
	} else {
		p.t.Errorf("%s does not read %s as it reads the input", perf, name)
	}
}

// roundTrips collects what each round trip changed, for the golden file.
type roundTrips struct {
	mu    sync.Mutex
	notes map[string][]string
}

func (rt *roundTrips) add(name string, notes []string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.notes == nil {
		rt.notes = map[string][]string{}
	}
	rt.notes[name] = notes
}

func (rt *roundTrips) check(t *testing.T, path, title string) {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n# Generated by go test ./cmd/bpfmeta -run Convert -update; every line is checked.\n", title)
	names := make([]string, 0, len(rt.notes))
	for n := range rt.notes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\n%s\n", n)
		if len(rt.notes[n]) == 0 {
			fmt.Fprintf(&b, "\tbyte-identical\n")
		}
		for _, l := range rt.notes[n] {
			fmt.Fprintf(&b, "\t%s\n", l)
		}
	}
	testkit.Golden(t, path, b.Bytes())
}

// TestConvertFilePipeFile: every file-mode corpus file, converted to a pipe
// stream and back to a file, is read by perf (6.1 where it reads the input,
// else 7.2) with the input's records, from the stream and from the file;
// the compressed records are the input's bytes; what differs is in
// testdata/convert-file-pipe-file.golden.
func TestConvertFilePipeFile(t *testing.T) {
	checkRoundTrips(t, false, filePipeFile, "convert-file-pipe-file.golden", "file -> pipe -> file: what bpfmeta convert changes, per corpus file")
}

// checkRoundTrips runs roundTrip over every corpus pipe stream (pipes) or
// file (!pipes), in parallel, and compares what each changed with the
// golden file. What bpfmeta did is the golden file's, and depends on the
// input only; roundTrip's perf then checks what the machine's perfs read
// (a missing perf skips that part only).
func checkRoundTrips(t *testing.T, pipes bool, roundTrip func(*testing.T, string) (notes []string, perf func()), golden, title string) {
	var rt roundTrips
	t.Run("corpus", func(t *testing.T) {
		for _, path := range testkit.CorpusFiles(t) {
			name := filepath.Base(path)
			if strings.Contains(name, ".pipe.") != pipes {
				continue
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				notes, perf := roundTrip(t, path)
				rt.add(name, notes)
				if perf != nil {
					perf()
				}
			})
		}
	})
	rt.check(t, filepath.Join(cliGoldenDir, golden), title)
}

// filePipeFile does one file -> pipe -> file round trip and returns what
// changed, and the check that perf reads the results as the input.
func filePipeFile(t *testing.T, path string) ([]string, func()) {
	dir := t.TempDir()
	name := filepath.Base(path)
	r := bpfmeta(t, nil, "convert", "-i", path, "-o", "-")
	if want, ok := convertRefusals[name]; ok {
		if r.code != exitFailure {
			t.Fatalf("convert -o -: %v, want the refusal %q", r, want)
		}
		oneLine(t, "refusal", r, path, want)
		return []string{"file -> pipe refused: " + want}, nil
	}
	if r.code != exitOK {
		t.Fatalf("convert -o -: %v", r)
	}
	var notes []string
	for _, n := range convertNotes[name] {
		if !strings.Contains(r.stderr, n) {
			t.Errorf("convert -o -: stderr %q does not say %q", r.stderr, n)
		}
		notes = append(notes, "not in the pipe stream: "+n)
	}
	if len(convertNotes[name]) == 0 && r.stderr != "" {
		// A recording made here can have features too large for a pipe
		// (BPF_PROG_INFO grows with the programs loaded on the machine):
		// each note must name one that really is.
		sizes := map[string]uint64{}
		for _, f := range openSections(t, path).l.Features {
			sizes[f.ID.String()] = f.Size
		}
		for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			g := tooLargeNote.FindStringSubmatch(l)
			simpleperf := g != nil && strings.HasPrefix(g[3], "a simpleperf")
			if g == nil || fmt.Sprint(sizes[g[1]]) != g[2] ||
				simpleperf && (len(g[1]) != 3 || g[1] < "128") || !simpleperf && sizes[g[1]] <= maxFeaturePayload {
				t.Errorf("convert -o -: stderr line %q", l)
				continue
			}
			notes = append(notes, fmt.Sprintf("not in the pipe stream: feature %s (%s bytes): %s", g[1], g[2], g[3]))
		}
	}
	pipe := filepath.Join(dir, "pipe.data")
	if err := os.WriteFile(pipe, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "final.data")
	if r := bpfmeta(t, nil, "convert", "-i", pipe, "-o", final); r.code != exitOK || r.stderr != "" {
		t.Fatalf("convert pipe -> file: %v", r)
	}
	if readRecording(t, pipe).Format != perfdata.FormatPipe {
		t.Fatalf("convert -o - did not write a pipe stream")
	}

	// The compressed records keep their bytes, in the stream and in the file.
	inRec := readRecording(t, path)
	for _, p := range []string{pipe, final} {
		if got := readRecording(t, p).compressedRecords(); !equalBytes(got, inRec.compressedRecords()) {
			t.Errorf("%s: %d COMPRESSED/COMPRESSED2 records, not the input's %d byte for byte", filepath.Base(p), len(got), len(inRec.compressedRecords()))
		}
	}

	notes = append(notes, layoutChanges(t, path, final)...)
	pipeBytes, err := os.ReadFile(pipe)
	if err != nil {
		t.Fatal(err)
	}
	return notes, func() {
		pr := newPerfReads(t, fileInput("the input", path), perfQuirks[name])
		pr.compare(pipeInput("the pipe stream", pipeBytes), prelude)
		pr.compare(fileInput("the final file", final), nil)
	}
}

func perfVersion(role string) string {
	if role == stockPerf {
		return "perf 6.1"
	}
	return "perf 7.2"
}

func equalBytes(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, func(x, y []byte) bool { return bytes.Equal(x, y) })
}

// fileSections is where everything is in a file-mode recording.
type fileSections struct {
	path string
	data []byte
	l    *perfdata.FileLayout
}

func openSections(t testing.TB, path string) fileSections {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer r.Close()
	if r.Layout() == nil {
		t.Fatalf("%s is not in file format", path)
	}
	return fileSections{path, b, r.Layout()}
}

func (s fileSections) bytes(sec perfdata.Section) []byte {
	if sec.End() > uint64(len(s.data)) {
		return nil
	}
	return s.data[sec.Offset:sec.End()]
}

func (s fileSections) tableSection() perfdata.Section {
	return perfdata.Section{Offset: s.l.Header.FeatureTableOffset(), Size: uint64(len(s.l.Features) * perfdata.SectionSize)}
}

// regions lists every byte range the header points at, by name.
func (s fileSections) regions() map[string]perfdata.Section {
	h := &s.l.Header
	m := map[string]perfdata.Section{
		"header": {Offset: 0, Size: h.Size},
		"attrs":  h.Attrs,
		"data":   h.Data,
		"table":  s.tableSection(),
	}
	if h.EventTypes.Size > 0 {
		m["event_types"] = h.EventTypes
	}
	for i, a := range s.l.Attrs {
		if a.IDs.Size > 0 {
			m[fmt.Sprintf("ids %d", i)] = a.IDs
		}
	}
	for _, f := range s.l.Features {
		m["feature "+f.ID.String()] = f.Section
	}
	return m
}

// gaps returns the byte ranges no region covers.
func (s fileSections) gaps() []perfdata.Section {
	var rs []perfdata.Section
	for _, r := range s.regions() {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Offset < rs[j].Offset })
	var gaps []perfdata.Section
	at := uint64(0)
	for _, r := range rs {
		if r.Offset > at {
			gaps = append(gaps, perfdata.Section{Offset: at, Size: r.Offset - at})
		}
		at = max(at, r.End())
	}
	if n := uint64(len(s.data)); n > at {
		gaps = append(gaps, perfdata.Section{Offset: at, Size: n - at})
	}
	return gaps
}

func (s fileSections) order() string {
	type named struct {
		name string
		sec  perfdata.Section
	}
	var ns []named
	for n, r := range s.regions() {
		if strings.HasPrefix(n, "feature ") || strings.HasPrefix(n, "ids ") && n != "ids 0" {
			continue
		}
		ns = append(ns, named{strings.TrimSuffix(n, " 0"), r})
	}
	sort.Slice(ns, func(i, j int) bool {
		if ns[i].sec.Offset != ns[j].sec.Offset {
			return ns[i].sec.Offset < ns[j].sec.Offset
		}
		return ns[i].name < ns[j].name
	})
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprintf("%s@%#x", n.name, n.sec.Offset))
	}
	return strings.Join(parts, " ")
}

// layoutChanges compares a converted file with its input section by
// section. The data section must be the input's byte for byte, and every
// attr and its ids; everything else that changed is returned, one line
// each, for the golden file.
func layoutChanges(t *testing.T, in, out string) []string {
	t.Helper()
	a, b := openSections(t, in), openSections(t, out)
	if bytes.Equal(a.data, b.data) {
		return nil
	}
	var notes []string
	ha, hb := &a.l.Header, &b.l.Header
	if ha.Magic != hb.Magic {
		notes = append(notes, fmt.Sprintf("magic %q -> %q", ha.Magic[:], hb.Magic[:]))
	}
	if ha.Size != hb.Size {
		notes = append(notes, fmt.Sprintf("header size %d -> %d", ha.Size, hb.Size))
	}
	if ha.AttrSize != hb.AttrSize {
		notes = append(notes, fmt.Sprintf("attr_size %d -> %d", ha.AttrSize, hb.AttrSize))
	}
	if why, ok := dataMoves[filepath.Base(a.path)]; ok {
		notes = append(notes, fmt.Sprintf("data section %d -> %d bytes: %s", ha.Data.Size, hb.Data.Size, why))
	} else if !bytes.Equal(a.bytes(ha.Data), b.bytes(hb.Data)) {
		t.Errorf("the data section is not the input's: %d -> %d bytes", ha.Data.Size, hb.Data.Size)
	}
	if len(a.l.Attrs) != len(b.l.Attrs) {
		t.Errorf("%d attrs, the input has %d", len(b.l.Attrs), len(a.l.Attrs))
	} else {
		for i := range a.l.Attrs {
			aa, ab := a.l.Attrs[i], b.l.Attrs[i]
			if !bytes.Equal(aa.Attr.Raw, ab.Attr.Raw) {
				t.Errorf("attr %d is not the input's", i)
			}
			if !bytes.Equal(a.bytes(aa.IDs), b.bytes(ab.IDs)) {
				t.Errorf("the ids of attr %d are not the input's", i)
			}
		}
	}
	if ha.EventTypes != hb.EventTypes {
		notes = append(notes, fmt.Sprintf("event_types section {%#x, %#x} -> {%#x, %#x}", ha.EventTypes.Offset, ha.EventTypes.Size, hb.EventTypes.Offset, hb.EventTypes.Size))
	}
	if ha.Features != hb.Features {
		notes = append(notes, fmt.Sprintf("feature bits %v -> %v", a.l.Header.FeatureList(), b.l.Header.FeatureList()))
	}
	fb := map[perfdata.Feature]perfdata.FeatureSection{}
	for _, f := range b.l.Features {
		fb[f.ID] = f
	}
	for _, f := range a.l.Features {
		g, ok := fb[f.ID]
		switch {
		case !ok:
			notes = append(notes, fmt.Sprintf("feature %v (%d bytes) dropped", f.ID, f.Size))
		case !bytes.Equal(a.bytes(f.Section), b.bytes(g.Section)):
			notes = append(notes, fmt.Sprintf("feature %v: %s", f.ID, describeBytesChange(a.bytes(f.Section), b.bytes(g.Section))))
		}
		delete(fb, f.ID)
	}
	for _, g := range b.l.Features {
		if _, added := fb[g.ID]; added {
			notes = append(notes, fmt.Sprintf("feature %v (%d bytes) added", g.ID, g.Size))
		}
	}
	if oa, ob := a.order(), b.order(); oa != ob {
		notes = append(notes, "layout "+oa, "    -> "+ob)
	}
	for _, g := range a.gaps() {
		notes = append(notes, fmt.Sprintf("%d bytes at %#x outside every section dropped (%s)", g.Size, g.Offset, describeGap(a.data[g.Offset:g.End()])))
	}
	if gs := b.gaps(); len(gs) > 0 {
		t.Errorf("the output has bytes outside every section: %v", gs)
	}
	if len(notes) == 0 {
		t.Errorf("the output differs from the input, but in no section or offset")
	}
	return notes
}

// describeBytesChange says how b differs from a.
func describeBytesChange(a, b []byte) string {
	switch {
	case len(b) > len(a) && bytes.Equal(b[:len(a)], a):
		return fmt.Sprintf("%d bytes, %s appended", len(a), describeGap(b[len(a):]))
	case len(a) > len(b) && bytes.Equal(a[:len(b)], b):
		return fmt.Sprintf("%d bytes, the last %d (%s) dropped", len(a), len(a)-len(b), describeGap(a[len(b):]))
	}
	var diffs []string
	for j := range min(len(a), len(b)) {
		if a[j] != b[j] {
			diffs = append(diffs, fmt.Sprintf("+%#x %02x->%02x", j, a[j], b[j]))
		}
	}
	if len(a) != len(b) || len(diffs) > maxListedBytes {
		first := "none"
		if len(diffs) > 0 {
			first = diffs[0]
		}
		return fmt.Sprintf("%d -> %d bytes, %d of the first %d differ, the first %s", len(a), len(b), len(diffs), min(len(a), len(b)), first)
	}
	return fmt.Sprintf("%d bytes, %d differ: %s", len(a), len(diffs), strings.Join(diffs, " "))
}

// maxListedBytes is how many differing bytes a golden line lists one by one.
const maxListedBytes = 12

func describeGap(b []byte) string {
	if len(bytes.Trim(b, "\x00")) == 0 {
		return fmt.Sprintf("%d zero bytes", len(b))
	}
	return fmt.Sprintf("%d bytes, not all zero", len(b))
}

// TestConvertPipeFilePipe: every pipe corpus file perf reads, converted to
// a file and back to a stream, is read by perf with the input's records;
// the records that are not the prelude (HEADER_ATTR, HEADER_FEATURE, ...)
// are the input's byte for byte and in order; what differs is in
// testdata/convert-pipe-file-pipe.golden.
func TestConvertPipeFilePipe(t *testing.T) {
	checkRoundTrips(t, true, pipeFilePipe, "convert-pipe-file-pipe.golden", "pipe -> file -> pipe: what bpfmeta convert changes, per corpus pipe stream")
}

func pipeFilePipe(t *testing.T, path string) ([]string, func()) {
	data := testkit.ReadFile(t, path)
	pr := newPerfReads(t, pipeInput("the input", data), perfQuirks[filepath.Base(path)])
	// unread: no perf reads the input (a perf missing skips the test)
	unread := func() bool { return pr.input(stockPerf).err != nil && pr.input(modernPerf).err != nil }
	dir := t.TempDir()
	file := filepath.Join(dir, "file.data")
	var notes []string
	r := bpfmeta(t, nil, "convert", "-i", path, "-o", file)
	says := strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(r.stderr, path, filepath.Base(path)), file, "FILE"))
	switch {
	case r.code != exitOK:
		oneLine(t, "convert pipe -> file", r, " at 0x")
		return []string{"pipe -> file fails: " + says}, func() {
			if !unread() {
				t.Errorf("convert pipe -> file of a stream perf reads: %v", r)
			}
		}
	case r.stderr != "":
		notes = append(notes, "pipe -> file says: "+says)
	}
	inRec := readRecording(t, path)
	if got := readRecording(t, file).compressedRecords(); !equalBytes(got, inRec.compressedRecords()) {
		t.Errorf("the file has %d COMPRESSED/COMPRESSED2 records, not the input's %d byte for byte", len(got), len(inRec.compressedRecords()))
	}
	if kept := readRecording(t, file).preludeRecords(); kept != "" {
		notes = append(notes, "in the file's data section: "+kept)
	}
	r = bpfmeta(t, nil, "convert", "-i", file, "-o", "-")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("convert file -> pipe: %v", r)
	}
	final := []byte(r.stdout)
	notes = append(notes, streamChanges(t, data, final)...)
	return notes, func() {
		if unread() {
			t.Log("no perf reads it: not compared with perf")
			return
		}
		pr.compare(fileInput("the file", file), prelude)
		pr.compare(pipeInput("the final stream", final), prelude)
	}
}

// streamChanges compares two pipe streams record by record: the records
// that are not the prelude must be the same bytes in the same order (a
// test error otherwise); how the prelude and the trailing bytes differ is
// returned.
func streamChanges(t *testing.T, in, out []byte) []string {
	t.Helper()
	if bytes.Equal(in, out) {
		return nil
	}
	a, b := streamRecords(t, in), streamRecords(t, out)
	var notes []string
	da, db := a.data(), b.data()
	if !equalBytes(da, db) {
		i := 0
		for i < len(da) && i < len(db) && bytes.Equal(da[i], db[i]) {
			i++
		}
		t.Errorf("the records after the prelude differ from record %d on (%d and %d records)", i, len(da), len(db))
	}
	if pa, pb := a.preludeSummary(), b.preludeSummary(); pa != pb {
		notes = append(notes, "prelude "+pa, "     -> "+pb)
	}
	if a.trailing != b.trailing {
		notes = append(notes, fmt.Sprintf("%d bytes after the last record -> %d", a.trailing, b.trailing))
	}
	if len(notes) == 0 {
		notes = append(notes, "the prelude records are the same, in another order")
	}
	return notes
}

type streamRecs struct {
	bo       binary.ByteOrder
	records  []rectest.Record
	trailing int
}

func streamRecords(t *testing.T, b []byte) streamRecs {
	t.Helper()
	r := rectest.Stream(t, b, reader.Options{})
	s := streamRecs{bo: r.ByteOrder()}
	for r.Next() {
		rec := r.Record()
		raw := bytes.Clone(rec.Raw)
		if rec.PayloadSize > 0 {
			var p bytes.Buffer
			if _, err := p.ReadFrom(rec.Payload); err != nil {
				t.Fatal(err)
			}
			raw = append(raw, p.Bytes()...)
		}
		s.records = append(s.records, rectest.Record{Type: rec.Header.Type, Offset: rec.Offset, Outer: rec.Outer, Raw: raw})
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	_, tr := r.Trailing()
	s.trailing = len(tr)
	return s
}

func isPrelude(t perfdata.RecordType) bool { return slices.Contains(prelude, int(t)) }

func (s streamRecs) data() [][]byte {
	var d [][]byte
	for _, r := range s.records {
		if !isPrelude(r.Type) {
			d = append(d, r.Raw)
		}
	}
	return d
}

// preludeSummary lists the prelude records in order: runs of one type as
// TYPE×n, HEADER_FEATURE records by feature id.
func (s streamRecs) preludeSummary() string {
	var parts []string
	last, n := perfdata.RecordType(0), 0
	flush := func() {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%v×%d", last, n))
		}
		n = 0
	}
	for _, r := range s.records {
		if !isPrelude(r.Type) {
			continue
		}
		if r.Type == perfdata.RecordHeaderFeature && len(r.Raw) >= 16 {
			flush()
			parts = append(parts, fmt.Sprintf("F%d(%d)", s.bo.Uint64(r.Raw[8:]), len(r.Raw)-16))
			continue
		}
		if r.Type != last {
			flush()
		}
		last = r.Type
		n++
	}
	flush()
	return strings.Join(parts, " ")
}

// recordWorkload is what the new recordings record: a short busy loop.
const recordWorkload = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"

// TestConvertRecorded: recordings made now with perf 6.1 and perf 7.2,
// compressed (-z, -N -B), in file and pipe format, survive file -> pipe ->
// file and pipe -> file -> pipe: perf reads every step with the input's
// records and the COMPRESSED/COMPRESSED2 records keep their bytes.
func TestConvertRecorded(t *testing.T) {
	for _, role := range []string{stockPerf, modernPerf} {
		perf := perfPath(t, role)
		for _, pipe := range []bool{false, true} {
			name := perfVersion(role) + " file"
			if pipe {
				name = perfVersion(role) + " pipe"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				path := filepath.Join(dir, "perf.data")
				o := path
				if pipe {
					o = "-"
				}
				cmd := exec.Command(perf, "record", "-z", "-N", "-B", "-e", "cpu-clock", "-F", "2000", "-o", o, "--", "sh", "-c", recordWorkload)
				cmd.Dir = dir
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s record -o %s: %v\n%s", perf, o, err, stderr.String())
				}
				if pipe {
					if err := os.WriteFile(path, stdout.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				rec := readRecording(t, path)
				if len(rec.compressedRecords()) == 0 {
					t.Fatalf("%s record -z wrote no compressed records", perf)
				}
				roundTrip := filePipeFile
				if pipe {
					roundTrip = pipeFilePipe
				}
				notes, perf := roundTrip(t, path)
				t.Logf("%s: %s", name, strings.Join(notes, "; "))
				if perf != nil {
					perf()
				}
			})
		}
	}
}
