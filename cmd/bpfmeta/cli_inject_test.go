package main

// inject, strip and show from the command line, on corpus recordings with
// BPF programs and snapshots made from them (no kernel needed): --strict,
// -q, strip giving back the input, show --json.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// recordedPrograms returns the BPF programs of a recording as a snapshot
// would have them: one per PROG_LOAD BPF_EVENT, its functions the BPF
// KSYMBOLs since the previous BPF_EVENT, with the metadata entries
// version="1.0.<id>" when withMeta says so.
func recordedPrograms(t testing.TB, path string, withMeta func(id uint32) bool) []*bpfprog.Program {
	t.Helper()
	r := rectest.Open(t, path, reader.Options{Decompress: true})
	var progs []*bpfprog.Program
	seen := map[uint32]bool{}
	var funcs []bpfprog.Func
	for r.Next() {
		rec := r.Record()
		switch rec.Header.Type {
		case perfdata.RecordKSymbol:
			k, err := perfdata.DecodeKSymbol(rec.Raw, r.ByteOrder())
			if err != nil {
				t.Fatal(err)
			}
			if k.Type == perfdata.KSymbolTypeBPF && !k.Unregister() {
				funcs = append(funcs, bpfprog.Func{Addr: k.Addr, Len: k.Len, PerfName: k.Name, KernelName: k.Name})
			}
		case perfdata.RecordBPFEvent:
			e, err := perfdata.DecodeBPFEvent(rec.Raw, r.ByteOrder())
			if err != nil {
				t.Fatal(err)
			}
			if e.Type == perfdata.BPFEventProgLoad && len(funcs) > 0 && !seen[e.ID] {
				seen[e.ID] = true
				p := &bpfprog.Program{ID: e.ID, Tag: e.Tag, Name: fmt.Sprintf("prog%d", e.ID), Funcs: funcs}
				if withMeta(e.ID) {
					m := &bpfprog.Metadata{Entries: []bpfprog.Entry{{Key: "version", Value: fmt.Sprintf(`"1.0.%d"`, e.ID)}, {Key: "build", Value: "42"}}}
					for _, f := range funcs {
						m.ProgNames = append(m.ProgNames, f.PerfName)
					}
					p.Metadata = m
				}
				progs = append(progs, p)
			}
			funcs = nil
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(progs) == 0 {
		t.Fatalf("%s has no BPF programs", path)
	}
	return progs
}

func programsSnapshot(t testing.TB, progs []*bpfprog.Program) string {
	t.Helper()
	s := &bpfprog.List{Programs: progs}
	s.Sys.Hostname = "bpfmeta-test"
	return snapshotFile(t, s)
}

func allPrograms(uint32) bool { return true }

// countType counts the top-level records of type typ.
func (rb readBack) countType(typ perfdata.RecordType) int {
	n := 0
	for _, r := range rb.Records {
		if !r.Compressed() && r.Type == typ {
			n++
		}
	}
	return n
}

// injectInputs are corpus recordings with BPF programs: file, pipe, and
// file with COMPRESSED records.
var injectInputs = []string{bpfFile, bpfPipe, bpfZstdFile}

var injectSummary = regexp.MustCompile(`: (\d+) BPF programs?[,;] (\d+) BPF_METADATA records? added for (\d+)`)

// TestInjectStrip: inject from a snapshot adds one BPF_METADATA record per
// function, says so on stderr, is idempotent, and strip gives back the
// input byte for byte, to a file and to stdout.
func TestInjectStrip(t *testing.T) {
	modern := perfPath(t, modernPerf)
	for _, name := range injectInputs {
		t.Run(name, func(t *testing.T) {
			in := corpusPath(t, name)
			progs := recordedPrograms(t, in, allPrograms)
			funcs := 0
			for _, p := range progs {
				funcs += len(p.Funcs)
			}
			snap := programsSnapshot(t, progs)
			dir := t.TempDir()
			injected := filepath.Join(dir, "injected.data")
			r := bpfmeta(t, nil, "inject", "--snapshot", snap, "-i", in, "-o", injected)
			if r.code != exitOK || r.stdout != "" {
				t.Fatalf("inject: %v, %d bytes on stdout", r, len(r.stdout))
			}
			g := injectSummary.FindStringSubmatch(r.stderr)
			if g == nil || g[1] != fmt.Sprint(len(progs)) || g[2] != fmt.Sprint(funcs) || g[3] != fmt.Sprint(len(progs)) {
				t.Errorf("the summary does not say %d programs, %d records added for %d:\n%s", len(progs), funcs, len(progs), r.stderr)
			}
			if n := readRecording(t, injected).countType(perfdata.RecordBPFMetadata); n != funcs {
				t.Errorf("%d BPF_METADATA records, want %d (one per function)", n, funcs)
			}
			// perf 7.2 reads them
			out, err := exec.Command(modern, "script", "-D", "-i", injected).CombinedOutput()
			if n := strings.Count(string(out), "]: event: 84\n"); err != nil || n != funcs {
				t.Errorf("perf 7.2 reads %d BPF_METADATA records (%v), want %d", n, err, funcs)
			}

			again := filepath.Join(dir, "again.data")
			if r := bpfmeta(t, nil, "inject", "-q", "--snapshot", snap, "-i", injected, "-o", again); r.code != exitOK {
				t.Fatalf("inject again: %v", r)
			}
			if !bytes.Equal(stateOf(t, again).data, stateOf(t, injected).data) {
				t.Errorf("injecting twice is not injecting once")
			}

			// inject and strip keep the input's format: strip gives back
			// the input itself, file or pipe stream.
			if got, want := readRecording(t, injected).Format, readRecording(t, in).Format; got != want {
				t.Errorf("inject wrote %v format for a %v input", got, want)
			}
			stripped := filepath.Join(dir, "stripped.data")
			r = bpfmeta(t, nil, "strip", "-i", injected, "-o", stripped)
			if r.code != exitOK || r.stdout != "" {
				t.Fatalf("strip: %v", r)
			}
			oneLine(t, "strip", r, fmt.Sprintf("removed %d BPF_METADATA records", funcs))
			if !bytes.Equal(stateOf(t, stripped).data, stateOf(t, in).data) {
				t.Errorf("strip of the injected file is not the input")
			}

			// Through stdout: inject | strip is convert, and for a pipe
			// stream the input.
			r = bpfmeta(t, nil, "inject", "-q", "--snapshot", snap, "-i", in)
			if refusal := convertRefusals[name]; refusal != "" {
				if r.code != exitFailure || !strings.Contains(r.stderr, refusal) {
					t.Errorf("inject -o -: %v, want the refusal %q", r, refusal)
				}
				return
			}
			if r.code != exitOK {
				t.Fatalf("inject -o -: %v", r)
			}
			pipe := filepath.Join(dir, "injected.pipe.data")
			if err := os.WriteFile(pipe, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			r = bpfmeta(t, nil, "strip", "-q", "-i", pipe)
			want := bpfmeta(t, nil, "convert", "-i", in)
			if r.code != exitOK || r.stderr != "" || want.code != exitOK || r.stdout != want.stdout {
				t.Errorf("inject -o - | strip -q -o - is not convert -o -: %v", r)
			}
			if isPipe := readRecording(t, in).Format == perfdata.FormatPipe; isPipe && r.stdout != string(stateOf(t, in).data) {
				t.Errorf("inject -o - | strip -o - of a pipe stream is not the stream")
			}
		})
	}
}

// strictRecording is a recording of two programs loaded before it started,
// each with metadata: 10, whose function has samples, and 11, whose
// function has none; and a snapshot of both.
func strictRecording(t *testing.T) (recording string, progs []*bpfprog.Program) {
	t.Helper()
	s := testkit.NewStream(binary.LittleEndian)
	for i, id := range []uint32{10, 11} {
		tag := perfdata.BPFTag{byte(id), 1, 2, 3, 4, 5, 6, 7}
		addr := 0xffffffffc0000000 + uint64(i)*0x1000
		name := perfdata.BPFProgName(tag, fmt.Sprintf("prog%d", id))
		s.KSymbol(addr, 64, name, false, false)
		s.BPFEvent(perfdata.BPFEventProgLoad, id, tag, false)
		progs = append(progs, &bpfprog.Program{ID: id, Tag: tag, Name: fmt.Sprintf("prog%d", id),
			Funcs:    []bpfprog.Func{{Tag: tag, Addr: addr, Len: 64, PerfName: name, KernelName: name}},
			Metadata: &bpfprog.Metadata{ProgNames: []string{name}, Entries: []bpfprog.Entry{{Key: "version", Value: `"1.0"`}}}})
	}
	s.Record(perfdata.RecordFinishedInit, nil)
	s.Sample(0xffffffffc0000010)
	s.Sample(0xffffffffc0000020)
	path := filepath.Join(t.TempDir(), "strict.pipe.data")
	if err := os.WriteFile(path, s.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, progs
}

// TestInjectStrict: --strict fails (exit 1, no output anywhere) when a
// program with samples gets no metadata; a program without samples does
// not count; the unresolved programs are named in id order.
func TestInjectStrict(t *testing.T) {
	in, progs := strictRecording(t)
	for _, out := range []string{"file", "-"} {
		t.Run("-o "+out, func(t *testing.T) {
			runInject := func(t *testing.T, snap string, strict bool) (result, []byte, string) {
				dir := t.TempDir()
				file := filepath.Join(dir, "out.data")
				args := []string{"inject", "--snapshot", snap, "-i", in, "-o", file}
				if out == "-" {
					args[len(args)-1] = "-"
				}
				if strict {
					args = append(args, "--strict")
				}
				r := bpfmeta(t, nil, args...)
				data := []byte(r.stdout)
				if out == "file" {
					data, _ = os.ReadFile(file)
				}
				return r, data, dir
			}
			// 10 (with samples) missing: --strict fails
			r, data, dir := runInject(t, programsSnapshot(t, progs[1:]), true)
			if r.code != exitFailure {
				t.Errorf("%v, want exit 1", r)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if last := lines[len(lines)-1]; last != "bpfmeta: --strict: 1 BPF program with samples in the recording got no metadata (see above); no output written" {
				t.Errorf("the last line is not the --strict error: %s", last)
			}
			if !strings.Contains(r.stderr, "program 10 (tag 0a01020304050607, bpf_prog_0a01020304050607_prog10, 2 samples): not in the snapshot") {
				t.Errorf("the program is not named with its samples:\n%s", r.stderr)
			}
			if len(data) != 0 {
				t.Errorf("--strict wrote %d bytes of output", len(data))
			}
			if names := testkit.DirNames(t, dir); len(names) != 0 {
				t.Errorf("the output directory has %v", names)
			}
			// 11 (no samples) missing: --strict succeeds, as without it
			strict, sdata, _ := runInject(t, programsSnapshot(t, progs[:1]), true)
			plain, pdata, _ := runInject(t, programsSnapshot(t, progs[:1]), false)
			if strict.code != exitOK || plain.code != exitOK || len(sdata) == 0 || !bytes.Equal(sdata, pdata) {
				t.Errorf("--strict with only a program without samples missing: %v; without --strict: %v; the same output: %v", strict, plain, bytes.Equal(sdata, pdata))
			}
		})
	}
}

// TestInjectQuiet: inject -q prints nothing on success, with or without
// programs left unresolved; strip -q neither.
func TestInjectQuiet(t *testing.T) {
	for _, name := range injectInputs {
		in := corpusPath(t, name)
		progs := recordedPrograms(t, in, allPrograms)
		for _, snap := range []struct{ name, path string }{
			{"complete snapshot", programsSnapshot(t, progs)},
			{"empty snapshot", emptySnapshot(t)},
		} {
			t.Run(name+" "+snap.name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out.data")
				if r := bpfmeta(t, nil, "inject", "-q", "--snapshot", snap.path, "-i", in, "-o", out); r.code != exitOK || r.stdout != "" || r.stderr != "" {
					t.Errorf("inject -q: %v, stdout %d bytes", r, len(r.stdout))
				}
				if r := bpfmeta(t, nil, "inject", "-q", "--snapshot", snap.path, "-i", in); convertRefusals[name] == "" && (r.code != exitOK || r.stderr != "" || len(r.stdout) == 0) {
					t.Errorf("inject -q -o -: %v, stdout %d bytes", r, len(r.stdout))
				}
				if r := bpfmeta(t, nil, "strip", "-q", "-i", out, "-f", "-o", "/dev/null"); r.code != exitOK || r.stdout != "" || r.stderr != "" {
					t.Errorf("strip -q: %v", r)
				}
				// and without -q there is a summary
				if r := bpfmeta(t, nil, "inject", "--snapshot", snap.path, "-i", in, "-f", "-o", "/dev/null"); r.code != exitOK || !injectSummary.MatchString(r.stderr) {
					t.Errorf("inject without -q: %v, no summary", r)
				}
			})
		}
	}
}

// TestInjectIncompleteSnapshot: inject from a snapshot whose writer did not
// finish (no end line, or a last line cut) injects what it holds and says
// that it is incomplete, unless -q.
func TestInjectIncompleteSnapshot(t *testing.T) {
	in := corpusPath(t, bpfFile)
	progs := recordedPrograms(t, in, allPrograms)
	whole, err := os.ReadFile(programsSnapshot(t, progs))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(whole, []byte("\n"))
	if len(lines) < 4 { // header, programs, end, ""
		t.Fatalf("a snapshot of %d lines", len(lines))
	}
	noEnd := bytes.Join(lines[:len(lines)-2], nil)
	cut := noEnd[:len(noEnd)-10]
	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"no end line", "it has no end line", noEnd},
		{"last line cut", "is cut", cut},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := filepath.Join(t.TempDir(), "snap.jsonl")
			if err := os.WriteFile(snap, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			r := bpfmeta(t, nil, "inject", "--snapshot", snap, "-i", in, "-o", "/dev/null")
			if r.code != exitOK || !strings.Contains(r.stderr, "is an incomplete snapshot: ") || !strings.Contains(r.stderr, c.want) || !injectSummary.MatchString(r.stderr) {
				t.Errorf("inject --snapshot of a snapshot with %s: %v", c.name, r)
			}
			if r := bpfmeta(t, nil, "inject", "-q", "--snapshot", snap, "-i", in, "-o", "/dev/null"); r.code != exitOK || r.stderr != "" {
				t.Errorf("inject -q: %v", r)
			}
		})
	}
	// a complete one: no warning
	if r := bpfmeta(t, nil, "inject", "--snapshot", programsSnapshot(t, progs), "-i", in, "-o", "/dev/null"); r.code != exitOK || strings.Contains(r.stderr, "incomplete") {
		t.Errorf("inject --snapshot of a complete snapshot: %v", r)
	}
}

// TestInjectSnapshotStdin: --snapshot - reads the snapshot from stdin (a
// pipe), as it would from its file; and is refused when the recording is
// read from stdin too.
func TestInjectSnapshotStdin(t *testing.T) {
	in := corpusPath(t, bpfFile)
	progs := recordedPrograms(t, in, allPrograms)
	snap := programsSnapshot(t, progs)
	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	fromFile := filepath.Join(t.TempDir(), "file.data")
	if r := bpfmeta(t, nil, "inject", "-q", "--snapshot", snap, "-i", in, "-o", fromFile); r.code != exitOK {
		t.Fatalf("inject --snapshot FILE: %v", r)
	}
	fromStdin := filepath.Join(t.TempDir(), "stdin.data")
	if r := bpfmeta(t, testkit.PipeOf(t, data), "inject", "-q", "--snapshot", "-", "-i", in, "-o", fromStdin); r.code != exitOK {
		t.Fatalf("inject --snapshot - from a pipe: %v", r)
	}
	a, _ := os.ReadFile(fromFile)
	b, _ := os.ReadFile(fromStdin)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("inject --snapshot - wrote %d bytes, --snapshot FILE %d: not the same", len(b), len(a))
	}
	f, err := os.Open(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if r := bpfmeta(t, f, "inject", "--snapshot", "-", "-o", "/dev/null"); r.code != exitUsage || !strings.Contains(r.stderr, "cannot both be read from stdin") {
		t.Errorf("inject --snapshot - with the recording on stdin: %v", r)
	}
}

// TestShowJSON: show --json is a document whose records are one object per
// BPF_METADATA record: its offset, prog_name and entries, the KSYMBOL it
// belongs to, the program id and the samples in it; the injected corpus
// file's is testdata/show-NAME.json.
func TestShowJSON(t *testing.T) {
	for _, name := range injectInputs {
		t.Run(name, func(t *testing.T) {
			in := corpusPath(t, name)
			progs := recordedPrograms(t, in, func(id uint32) bool { return id%2 == 1 })
			injected := filepath.Join(t.TempDir(), "injected.data")
			if r := bpfmeta(t, nil, "inject", "-q", "--snapshot", programsSnapshot(t, progs), "-i", in, "-o", injected); r.code != exitOK {
				t.Fatalf("inject: %v", r)
			}
			r := bpfmeta(t, nil, "show", "--json", "-i", injected)
			if r.code != exitOK || r.stderr != "" {
				t.Fatalf("show --json: %v", r)
			}
			testkit.Golden(t, filepath.Join(cliGoldenDir, "show-"+strings.TrimSuffix(name, ".data")+".json"), []byte(r.stdout))

			var d struct {
				FormatVersion int              `json:"format_version"`
				Kind          string           `json:"kind"`
				Records       []map[string]any `json:"records"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || d.FormatVersion != doc.FormatVersion || d.Kind != "show" {
				t.Fatalf("show --json is not a show document: %v, %d %q", err, d.FormatVersion, d.Kind)
			}
			shown := d.Records
			// The records, in the order inject writes them: after each
			// program's BPF_EVENT (these recordings have only programs
			// loaded before perf record started).
			type function struct {
				p    *bpfprog.Program
				name string
				addr uint64
			}
			var want []function
			for _, p := range progs {
				if p.Metadata != nil {
					for _, f := range p.Funcs {
						want = append(want, function{p, f.PerfName, f.Addr})
					}
				}
			}
			if len(shown) != len(want) {
				t.Fatalf("%d objects, want one per function of a program with metadata: %d", len(shown), len(want))
			}
			for i, o := range shown {
				for _, k := range []string{"offset", "prog_name", "entries", "ksymbol", "program_id", "samples", "others"} {
					if _, ok := o[k]; !ok {
						t.Errorf("object %d has no %q: %v", i, k, o)
					}
				}
				pn, _ := o["prog_name"].(string)
				p := want[i].p
				if pn != want[i].name {
					t.Errorf("object %d: prog_name %q, want %q", i, pn, want[i].name)
				}
				if id, _ := o["program_id"].(float64); uint32(id) != p.ID {
					t.Errorf("object %d (%s): program_id %v, want %d", i, pn, o["program_id"], p.ID)
				}
				entries := fmt.Sprintf(`[{"key":"version","typed":"1.0.%d","value":"\"1.0.%d\""},{"key":"build","typed":42,"value":"42"}]`, p.ID, p.ID)
				if got, _ := json.Marshal(o["entries"]); string(got) != entries {
					t.Errorf("object %d: entries %s, want %s", i, got, entries)
				}
				k, _ := o["ksymbol"].(map[string]any)
				if k["name"] != pn || k["matched"] != "name" {
					t.Errorf("object %d: ksymbol %v, want %s matched by name", i, k, pn)
				}
				// a kernel address is above 2^53: a string, as in snapshots
				if addr := fmt.Sprintf("%#x", want[i].addr); k["addr"] != addr {
					t.Errorf("object %d: ksymbol addr %v (%T), want %q", i, k["addr"], k["addr"], addr)
				}
			}

			// A recording without BPF_METADATA: an empty records array.
			r = bpfmeta(t, nil, "show", "--json", "-i", in)
			d.Records = nil
			if err := json.Unmarshal([]byte(r.stdout), &d); r.code != exitOK || err != nil || d.Records == nil || len(d.Records) != 0 {
				t.Errorf("show --json of a recording without BPF_METADATA: %v (%v), stdout %q", r, err, r.stdout)
			}
		})
	}
}

// TestInjectOtherHost: metadata from a machine other than the recording's
// is one warning line, for a file and for a pipe stream; none when they
// agree.
func TestInjectOtherHost(t *testing.T) {
	other := emptySnapshot(t) // of bpfmeta-test
	same := snapshotFile(t, &bpfprog.List{Sys: bpfprog.System{Hostname: "arthur-des", KernelRelease: "5.15.193-1-MANJARO"}})
	for _, name := range []string{"mstange_perf6.16_x86_64_zstd_compressed2.data", trailingPipe} {
		in := corpusPath(t, name)
		r := bpfmeta(t, nil, "inject", "--snapshot", other, "-i", in, "-o", "-")
		if n := strings.Count(r.stderr, "warning: "); n != 1 || !strings.Contains(r.stderr, `was recorded on arthur-des (kernel 5.15.193-1-MANJARO); the snapshot is of bpfmeta-test`) {
			t.Errorf("%s: %d warnings: %s", name, n, r.stderr)
		}
		if r := bpfmeta(t, nil, "inject", "--snapshot", same, "-i", in, "-o", "-"); strings.Contains(r.stderr, "warning: ") {
			t.Errorf("%s, the same machine: %s", name, r.stderr)
		}
	}
}

// TestInjectStrictStdout: --strict holds a stream output back in a file
// until the summary is known; what then reaches stdout is the same pipe
// stream as without --strict, also for a file-format input (the file
// holding it back is no reason for file format).
func TestInjectStrictStdout(t *testing.T) {
	snap := emptySnapshot(t)
	for _, name := range []string{smallFile, bpfZstdFile} {
		in := corpusPath(t, name)
		strict := bpfmeta(t, nil, "inject", "-q", "--strict", "--snapshot", snap, "-i", in, "-o", "-")
		plain := bpfmeta(t, nil, "inject", "-q", "--snapshot", snap, "-i", in, "-o", "-")
		if strict.code != exitOK || plain.code != exitOK || strict.stdout != plain.stdout {
			t.Errorf("%s: --strict -o -: %v; without --strict: %v; the same output: %v", name, strict, plain, strict.stdout == plain.stdout)
		}
		if !bytes.HasPrefix([]byte(strict.stdout), perfdata.PipeHeader(binary.LittleEndian)) {
			t.Errorf("%s: --strict -o - is not a pipe stream: %q", name, strict.stdout[:min(16, len(strict.stdout))])
		}
	}
}

// TestSyncFlag: --sync reaches the output of every command that writes a
// recording (the file is on the disk when bpfmeta exits), and a snapshot is
// synced without it (package outfile's test covers a recording left
// unsynced without --sync).
func TestSyncFlag(t *testing.T) {
	in := corpusPath(t, bpfFile)
	snap := programsSnapshot(t, recordedPrograms(t, in, allPrograms))
	injected := filepath.Join(t.TempDir(), "injected.data")
	cases := []struct {
		name string
		args []string
	}{
		{"inject", []string{"inject", "-q", "--sync", "--snapshot", snap, "-i", in}},
		{"strip", []string{"strip", "-q", "--sync", "-i", injected}},
		{"convert", []string{"convert", "-q", "--sync", "-i", in}},
		{"snapshot", []string{"snapshot", "-q"}},
		{"strip directory", []string{"strip", "-q", "--sync", "-i", testkit.ThreadsDir(threads72)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "snapshot" {
				testkit.Root(t)
			}
			out := filepath.Join(t.TempDir(), "out")
			if c.name == "inject" {
				out = injected
			}
			if r := bpfmeta(t, nil, append(c.args, "-o", out)...); r.code != exitOK {
				t.Fatalf("%v", r)
			}
			files := []string{out}
			if st, err := os.Stat(out); err == nil && st.IsDir() {
				files, _ = filepath.Glob(filepath.Join(out, "*"))
			}
			for _, f := range files {
				if n := testkit.Unsynced(t, f); n != 0 {
					t.Errorf("%d pages of %s are not on the disk when bpfmeta has exited", n, f)
				}
			}
		})
	}
}

// TestInjectReasons: -v says why each program got no metadata in the
// library's words, which name no program (the line names it already).
func TestInjectReasons(t *testing.T) {
	in, progs := strictRecording(t)
	large, hidden := *progs[0], *progs[1]
	large.Metadata, large.TooLarge = nil, &bpfprog.TooLargeError{MapID: 7, Variables: 300}
	hidden.Funcs = slices.Clone(hidden.Funcs)
	hidden.Funcs[0].Addr = 0
	r := bpfmeta(t, nil, "inject", "-v", "--snapshot", programsSnapshot(t, []*bpfprog.Program{&large, &hidden}), "-i", in, "-o", filepath.Join(t.TempDir(), "out.data"))
	for _, want := range []string{
		"bpfmeta:   program 10 (tag 0a01020304050607, bpf_prog_0a01020304050607_prog10, 2 samples): its metadata map 7 has 300 bpf_metadata_ variables; perf writes BPF_METADATA for at most 202\n",
		"bpfmeta:   program 11 (tag 0b01020304050607, bpf_prog_0b01020304050607_prog11, 0 samples): the source has no addresses for its functions (read without CAP_SYSLOG, or with kernel.kptr_restrict): it cannot be matched to the recording's KSYMBOLs\n",
	} {
		if r.code != exitOK || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant the line %q", r.code, r.stderr, want)
		}
	}
}

// TestInjectClockWarning: a recording perf record -k CLOCK_TAI made
// without CLOCK_DATA (perf before 5.10) has timestamps no load time can be
// placed among: inject says so in a warning, without -v, rather than
// leave out the programs loaded during it in silence; with CLOCK_DATA it
// looks for them and says nothing.
func TestInjectClockWarning(t *testing.T) {
	boot := time.Unix(1796400000, 0)
	tag := perfdata.BPFTag{10, 1, 2, 3, 4, 5, 6, 7}
	name := perfdata.BPFProgName(tag, "prog10")
	prog := &bpfprog.Program{ID: 10, Tag: tag, Name: "prog10", LoadTime: time.Second,
		Funcs:    []bpfprog.Func{{Tag: tag, Addr: 0xffffffffc0000000, Len: 64, PerfName: name, KernelName: name}},
		Metadata: &bpfprog.Metadata{ProgNames: []string{name}, Entries: []bpfprog.Entry{{Key: "version", Value: `"1.0"`}}}}
	list := &bpfprog.List{Programs: []*bpfprog.Program{prog}}
	list.Sys.Hostname, list.Sys.BootTime = "bpfmeta-test", boot
	snap := snapshotFile(t, list)
	record := func(clockData bool) string {
		bo := binary.LittleEndian
		s := testkit.NewRecords(bo)
		s.Write(perfdata.PipeHeader(bo))
		attr := testkit.StreamAttr(bo)
		bo.PutUint64(attr[40:], bo.Uint64(attr[40:])|1<<25) // use_clockid
		bo.PutUint32(attr[92:], uint32(perfdata.ClockTAI))
		s.Record(perfdata.RecordHeaderAttr, attr)
		tai := uint64(boot.Add(100*time.Second).UnixNano()) + 37e9
		if clockData {
			f := make([]byte, 8+perfdata.ClockDataSize)
			bo.PutUint64(f, uint64(perfdata.FeatClockData))
			bo.PutUint32(f[8:], 1)
			bo.PutUint32(f[12:], uint32(perfdata.ClockTAI))
			bo.PutUint64(f[16:], tai-37e9)
			bo.PutUint64(f[24:], tai)
			s.Record(perfdata.RecordHeaderFeature, f)
		}
		s.KSymbol(0xffffffffc0000000, 64, name, false, false)
		s.BPFEvent(perfdata.BPFEventProgLoad, 10, tag, false)
		s.SampleAt(0xffffffffc0000010, tai)
		s.SampleAt(0xffffffffc0000010, tai+1e9)
		path := filepath.Join(t.TempDir(), "tai.data")
		if err := os.WriteFile(path, s.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const warning = "programs loaded elsewhere during the recording were not looked for: the recording's clock is CLOCK_TAI, and it has no CLOCK_DATA"
	in := record(false)
	r := bpfmeta(t, nil, "inject", "--snapshot", snap, "-i", in, "-o", "/dev/null")
	if r.code != exitOK || !strings.Contains(r.stderr, "bpfmeta: warning: "+in+": "+warning) {
		t.Errorf("without CLOCK_DATA: %v, want a warning %q", r, warning)
	}
	if r := bpfmeta(t, nil, "inject", "-q", "--snapshot", snap, "-i", in, "-o", "/dev/null"); r.code != exitOK || r.stderr != "" {
		t.Errorf("-q: %v, want nothing on stderr", r)
	}
	if r := bpfmeta(t, nil, "inject", "--snapshot", snap, "-i", record(true), "-o", "/dev/null"); r.code != exitOK || strings.Contains(r.stderr, "not looked for") {
		t.Errorf("with CLOCK_DATA: %v, want no warning", r)
	}
}

// TestInjectRequire: --require NAME fails (exit 1, no output, naming what
// is missing) when a named program gets no metadata, with samples or
// without (--strict lets program 11, without samples, go); it takes the
// function name or the KSYMBOL's full name, and passes when each named
// program got its metadata. The error line itself names the program and
// why, also under -q, which silences every line before it.
func TestInjectRequire(t *testing.T) {
	in, progs := strictRecording(t)
	run := func(t *testing.T, snap string, args ...string) (result, []byte) {
		file := filepath.Join(t.TempDir(), "out.data")
		r := bpfmeta(t, nil, append([]string{"inject", "--snapshot", snap, "-i", in, "-o", file}, args...)...)
		data, _ := os.ReadFile(file)
		return r, data
	}
	only10 := programsSnapshot(t, progs[:1]) // program 11 (no samples) missing
	full11 := progs[1].Funcs[0].PerfName
	for _, tc := range []struct {
		snap, why string
		args      []string
		fail      string
	}{
		{only10, "no samples, but required", []string{"--require", "prog11"}, "prog11: no metadata (program 11: not in the snapshot)"},
		{only10, "by its KSYMBOL's name", []string{"--require", full11}, full11 + ": no metadata (program 11:"},
		{only10, "--strict lets it go, --require not", []string{"--strict", "--require", "prog11"}, "prog11: no metadata"},
		{only10, "no such program", []string{"--require", "prog10", "--require", "nosuch"}, "nosuch: the recording has no program of this name"},
		{only10, "present", []string{"--require", "prog10"}, ""},
		{programsSnapshot(t, progs), "all present", []string{"--require", "prog10", "--require", full11}, ""},
	} {
		t.Run(tc.why, func(t *testing.T) {
			r, data := run(t, tc.snap, tc.args...)
			if tc.fail == "" {
				if r.code != exitOK || len(data) == 0 {
					t.Errorf("%v, want success with output", r)
				}
				return
			}
			for _, quiet := range [][]string{nil, {"-q"}} {
				r, data := run(t, tc.snap, append(quiet, tc.args...)...)
				if r.code != exitFailure || len(data) != 0 {
					t.Errorf("%v: %v (%d bytes of output), want exit 1 and none", quiet, r, len(data))
				}
				last := strings.TrimSpace(r.stderr)
				last = last[strings.LastIndex(last, "\n")+1:]
				if !strings.HasPrefix(last, "bpfmeta: --require: ") || !strings.Contains(last, tc.fail) || !strings.HasSuffix(last, "; no output written") {
					t.Errorf("%v: the error does not say %q and that nothing was written:\n%s", quiet, tc.fail, r.stderr)
				}
			}
		})
	}
}
