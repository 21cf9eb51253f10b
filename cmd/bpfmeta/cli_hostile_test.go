package main

// Hostile inputs and hostile ground: recordings that claim more than they
// hold, text that would act on a terminal, outputs another user prepared
// (FIFOs, symlinks, device nodes), signals, closed streams, races. Each
// case runs bpfmeta as a process, so that its peak memory (the kernel's
// maxrss), its exit and what it leaves behind are what a user sees.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// peakBound is the most memory a run may take, whatever its input claims,
// and hostileCPU the most CPU time (not wall time: the machine is shared).
const (
	peakBound  = 64 << 20
	hostileCPU = 10 * time.Second
)

// procRun is how a test runs bpfmeta as a process.
type procRun struct {
	stdin  io.Reader // nil: /dev/null
	stdout io.Writer // nil: kept in the result
	dir    string
	wrap   []string // a command bpfmeta runs under (setpriv ...)
}

// procResult is what a process did.
type procResult struct {
	result
	peak   int64          // maxrss, bytes
	cpu    time.Duration  // user and system time
	signal syscall.Signal // the signal that ended it, or 0
}

// runProc runs bpfmeta through maxRSSHelper, which reports its peak
// memory.
func runProc(t testing.TB, bin string, o procRun, args ...string) procResult {
	t.Helper()
	argv := append(append(append([]string(nil), o.wrap...), bin), args...)
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Env = append(os.Environ(), maxRSSEnv+"=1")
	cmd.Dir = o.dir
	cmd.Stdin = o.stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if o.stdout != nil {
		cmd.Stdout = o.stdout
	}
	rp, wp, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	cmd.ExtraFiles = []*os.File{wp}
	err = cmd.Start()
	wp.Close()
	if err != nil {
		t.Fatal(err)
	}
	report, _ := io.ReadAll(rp)
	cmd.Wait()
	var r procResult
	var sig int
	var cpuNs int64
	if _, err := fmt.Sscan(string(report), &r.code, &sig, &r.peak, &cpuNs); err != nil {
		t.Fatalf("%v: no report from the helper: %q, %v", argv, report, cmd.ProcessState)
	}
	r.signal = syscall.Signal(sig)
	r.cpu = time.Duration(cpuNs)
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r
}

// maxRSSEnv makes the test binary maxRSSHelper.
const maxRSSEnv = "BPFMETA_TEST_MAXRSS"

// maxRSSHelper runs argv and writes its exit code, the signal that ended
// it (or 0), its peak memory in bytes and its CPU time in ns to fd 3. It stands between the
// test and bpfmeta because Linux counts in a process's maxrss the memory of
// the process it was started from when that shares its memory until exec
// (as os/exec's vfork does): bpfmeta started by this small process starts
// from its few MiB, not from the whole test's.
func maxRSSHelper(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Run()
	report := os.NewFile(3, "report")
	if cmd.ProcessState == nil {
		fmt.Fprintln(report, -1, 0, 0, 0)
		return 1
	}
	sig := 0
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig = int(ws.Signal())
	}
	var peak int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = int64(ru.Maxrss) << 10 // int32 on 32-bit platforms
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	fmt.Fprintln(report, cmd.ProcessState.ExitCode(), sig, peak, int64(cpu))
	return 0
}

// bombPipe is a pipe recording whose one COMPRESSED record decompresses to
// 200 MiB.
func bombPipe() []byte {
	s := testkit.NewStream(binary.LittleEndian)
	s.CompressedBomb(200 << 20)
	return s.Bytes()
}

// buildIDStream writes a pipe recording that starts with n bytes of
// HEADER_BUILD_ID records, then a sample.
func buildIDStream(n int64) io.Reader {
	r, w := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(w, 1<<20)
		s := testkit.NewStream(binary.LittleEndian)
		bw.Write(s.Bytes())
		err := testkit.WriteBuildIDs(bw, binary.LittleEndian, n)
		s = testkit.NewRecords(binary.LittleEndian)
		s.Sample(0x1000)
		bw.Write(s.Bytes())
		if err == nil {
			err = bw.Flush()
		}
		w.CloseWithError(err)
	}()
	return r
}

// hugeSections writes a file-format recording whose header sections hold
// size bytes in all (sparse): a trace data section with one ftrace format
// file of most of it, and the rest a command line feature.
func hugeSections(t testing.TB, dir string, tracing, cmdline int64) string {
	t.Helper()
	recs := testkit.NewRecords(binary.LittleEndian)
	recs.Sample(0x1000)
	head, size := testkit.TracingData(tracing)
	feats := []testkit.FileFeature{{Bit: perfdata.FeatTracingData, Head: head, Size: size}}
	if cmdline > 0 {
		feats = append(feats, testkit.FileFeature{Bit: perfdata.FeatCmdline, Size: cmdline})
	}
	path := filepath.Join(dir, fmt.Sprintf("sections-%d-%d.data", tracing, cmdline))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := testkit.WriteFile(path, binary.LittleEndian, recs.Bytes(), feats); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHostileMemory: whatever a recording or snapshot claims, a run's
// peak memory stays under 64 MiB, and it ends in success or in one error
// line, with no output left on failure.
func TestHostileMemory(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	snap := emptySnapshot(t)
	bomb := filepath.Join(dir, "bomb.data")
	if err := os.WriteFile(bomb, bombPipe(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		stdin func() io.Reader
		args  []string
		fail  string // "" for success, else what the error says
	}{
		{"zstd bomb, inject pipe to pipe", func() io.Reader { return bytes.NewReader(bombPipe()) },
			[]string{"inject", "-q", "--snapshot", snap, "-i", "-", "-o", "-"}, "compressed records expand"},
		{"zstd bomb, dump --stats", nil, []string{"dump", "--stats", "-i", bomb}, "compressed records expand"},
		{"zstd bomb, no limit of expansion, inject pipe to pipe", func() io.Reader { return bytes.NewReader(bombPipe()) },
			[]string{"inject", "-q", "--max-expansion", "0", "--snapshot", snap, "-i", "-", "-o", "-"}, ""},
		{"zstd bomb, no limit of expansion, dump --stats", nil, []string{"dump", "--max-expansion", "0", "--stats", "-i", bomb}, ""},
		{"256 MiB of build IDs, inject pipe to file", func() io.Reader { return buildIDStream(256 << 20) },
			[]string{"inject", "-q", "--snapshot", snap, "-o", "OUT"}, ""},
		{"256 MiB of build IDs, convert pipe to file", func() io.Reader { return buildIDStream(256 << 20) },
			[]string{"convert", "-q", "-o", "OUT"}, ""},
		{"256 MiB of trace data, inject file to pipe", nil,
			[]string{"inject", "-q", "--snapshot", snap, "-i", hugeSections(t, dir, 256<<20, 0), "-o", "-"}, ""},
		{"1 GiB of header sections, inject file to pipe", nil,
			[]string{"inject", "-q", "--snapshot", snap, "-i", hugeSections(t, dir, 512<<20, 512<<20), "-o", "-"}, ""},
		{"1 GiB of header sections, convert file to file", nil,
			[]string{"convert", "-q", "-i", hugeSections(t, dir, 512<<20, 512<<20), "-o", "OUT"}, ""},
		{"a KSYMBOL flood, inject", nil,
			[]string{"inject", "-q", "--snapshot", snap, "-i", ksymbolFlood(t, dir), "-o", "OUT"}, "KSYMBOL"},
		{"a KSYMBOL flood, show", nil, []string{"show", "-i", ksymbolFlood(t, dir)}, "KSYMBOL"},
		{"a BPF_METADATA flood, show", nil, []string{"show", "-i", metadataFlood(t, dir)}, "more than"},
		{"1,000 BPF_METADATA records of 64 KiB, show", nil, []string{"show", "-i", bigMetadataFlood(t, dir)}, "MiB"},
		{"65,535 KSYMBOLs of one name and 32,768 records of it, show", nil, []string{"show", "-i", sameNameFlood(t, dir)}, ""},
		{"65,535 KSYMBOLs of one name and 32,768 records of it, show --json", nil, []string{"show", "--json", "-i", sameNameFlood(t, dir)}, ""},
		{"500,000 program loads and unloads, inject", nil,
			[]string{"inject", "-q", "--snapshot", snap, "-i", progFlood(t, dir, true), "-o", "OUT"}, ""},
		{"500,000 program loads and unloads, show", nil, []string{"show", "-i", progFlood(t, dir, true)}, ""},
		{"16,384 loads of one program, then 1,000,000 of its BPF_METADATA records, inject", nil,
			[]string{"inject", "-q", "--snapshot", snap, "-i", claimFlood(t, dir), "-o", "OUT"}, ""},
		{"500,000 programs loaded at once, inject", nil,
			[]string{"inject", "-q", "--snapshot", snap, "-i", progFlood(t, dir, false), "-o", "OUT"}, "programs"},
		{"a snapshot of 1,000,000 programs, in descending ids", nil,
			[]string{"inject", "-q", "--snapshot", manyProgramsSnapshot(t, dir, 1_000_000), "-i", corpusPath(t, bpfFile), "-o", "OUT"}, ""},
		{"a snapshot of 1,048,577 programs", nil,
			[]string{"inject", "-q", "--snapshot", manyProgramsSnapshot(t, dir, 1<<20+1), "-i", corpusPath(t, bpfFile), "-o", "OUT"}, "programs"},
		{"a snapshot with a 100 MB value", nil,
			[]string{"inject", "-q", "--snapshot", bigValueSnapshot(t, dir, 100<<20), "-i", corpusPath(t, bpfFile), "-o", "OUT"}, "MiB"},
		{"a version 1 snapshot of 32 MiB, one program of 11 million functions", nil,
			[]string{"inject", "-q", "--snapshot", emptyFuncsSnapshot(t, dir, 1, 32<<20), "-i", corpusPath(t, bpfFile), "-o", "OUT"}, "line 4"},
		{"a snapshot with a line of 4 MiB of functions", nil,
			[]string{"inject", "-q", "--snapshot", emptyFuncsSnapshot(t, dir, 2, 4<<20-100), "-i", corpusPath(t, bpfFile), "-o", "OUT"}, "line 2"},
		{"1,000,000 loads of one id, compressed, inject", nil,
			[]string{"inject", "-q", "--snapshot", snap, "-i", oneIDFlood(t, dir), "-o", "OUT"}, ""},
		{"1,000,000 loads of one id, compressed, show", nil, []string{"show", "-i", oneIDFlood(t, dir)}, ""},
		{"10,000 KSYMBOL names of 65,000 bytes, compressed, inject", nil,
			[]string{"inject", "-q", "--max-expansion", "0", "--snapshot", snap, "-i", longNameFlood(t, dir), "-o", "OUT"}, ""},
		{"10,000 KSYMBOL names of 65,000 bytes, compressed, show", nil, []string{"show", "--max-expansion", "0", "-i", longNameFlood(t, dir)}, ""},
		{"65,535 KSYMBOLs of one function name and 32,767 records of other tags, show", nil,
			[]string{"show", "-i", sameFunctionFlood(t, dir)}, ""},
		{"131,072 BPF_METADATA records of no program, long names, inject", nil,
			[]string{"inject", "-q", "--snapshot", snap, "-i", orphanFlood(t, dir), "-o", "OUT"}, ""},
		{"131,072 BPF_METADATA records of no program, long names, show", nil,
			[]string{"show", "-i", orphanFlood(t, dir)}, "more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			outDir := t.TempDir()
			args := append([]string(nil), c.args...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = filepath.Join(outDir, "out.data")
				}
			}
			o := procRun{stdout: io.Discard}
			if c.stdin != nil {
				o.stdin = c.stdin()
			}
			start := time.Now()
			r := runProc(t, bin, o, args...)
			t.Logf("%v, peak %.1f MiB, %v (CPU %v)", r, float64(r.peak)/(1<<20), time.Since(start).Round(time.Millisecond), r.cpu.Round(time.Millisecond))
			if r.peak > peakBound {
				t.Errorf("peak memory %d MiB, want < %d MiB", r.peak>>20, peakBound>>20)
			}
			if r.cpu > hostileCPU {
				t.Errorf("took %v of CPU, want < %v", r.cpu.Round(time.Millisecond), hostileCPU)
			}
			if c.fail == "" && r.code != exitOK {
				t.Errorf("%v, want exit 0", r)
			}
			if c.fail != "" {
				if r.code != exitFailure {
					t.Errorf("%v, want exit 1", r)
				}
				oneLine(t, c.name, r.result, c.fail)
				if names := testkit.DirNames(t, outDir); len(names) != 0 {
					t.Errorf("a failed run left %v", names)
				}
			}
		})
	}
}

// TestHostileReloads: one program still loaded, with metadata of 202
// variables (records of nearly 64 KiB), whose KSYMBOLs and PROG_LOAD
// BPF_EVENT a 1 MB recording repeats 20,000 times. inject from the kernel
// writes its records once, at the end, as perf writes an id's records
// once (perf_env__insert_bpf_prog_info()); it kept one per load (1.3 GiB,
// and as big an output).
func TestHostileReloads(t *testing.T) {
	testkit.Root(t)
	bin := buildBinary(t)
	progs, _ := testkit.LoadCilium(t, "many202")
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := live.Program(progs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Metadata == nil || len(p.Metadata.Entries) != perfdata.MaxBPFMetadataEntries {
		t.Fatalf("program %d: metadata %v, want %d entries", p.ID, p.Metadata, perfdata.MaxBPFMetadataEntries)
	}
	const loads = 20_000
	s := testkit.NewStream(binary.LittleEndian)
	for range loads {
		for _, f := range p.Funcs {
			s.KSymbol(f.Addr, f.Len, f.KernelName, false, true)
		}
		s.BPFEvent(perfdata.BPFEventProgLoad, p.ID, p.Tag, true)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "reloads.data"), filepath.Join(dir, "out.data")
	if err := os.WriteFile(in, s.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := runProc(t, bin, procRun{}, "inject", "-q", "--recorded-only", "-i", in, "-o", out)
	t.Logf("%d bytes in: %v, peak %.1f MiB, %v (CPU %v)", s.Len(), r, float64(r.peak)/(1<<20), time.Since(start).Round(time.Millisecond), r.cpu.Round(time.Millisecond))
	if r.code != exitOK || r.peak > peakBound || r.cpu > hostileCPU {
		t.Fatalf("%v, peak %d MiB, CPU %v; want exit 0 under %d MiB and %v", r, r.peak>>20, r.cpu, peakBound>>20, hostileCPU)
	}
	rb := readRecording(t, out)
	if n := rb.countType(perfdata.RecordBPFMetadata); n != len(p.Funcs) {
		t.Errorf("%d BPF_METADATA records, want %d: one per function of the id, once", n, len(p.Funcs))
	}
	if st, err := os.Stat(out); err != nil || st.Size() > int64(s.Len())+int64(len(p.Funcs))<<16 {
		t.Errorf("output of %v bytes (%v), want the input and one record per function", st.Size(), err)
	}
}

// ksymbolFlood writes a pipe recording with more BPF KSYMBOLs than
// package bpftrack keeps.
func ksymbolFlood(t testing.TB, dir string) string {
	t.Helper()
	return streamFile(t, dir, "ksymbols.data", func(s *testkit.Stream) {
		for i := range bpftrack.MaxFuncs + 1 {
			s.KSymbol(0xffffffffc0000000+uint64(i)*0x40, 0x40, "bpf_prog_0123456789abcdef_f", false, true)
		}
	})
}

// progFlood writes a pipe recording of 500,000 PROG_LOAD BPF_EVENTs (each
// followed by its PROG_UNLOAD if unload): more programs than inject lists,
// and, loaded at once, than package bpftrack keeps.
func progFlood(t testing.TB, dir string, unload bool) string {
	t.Helper()
	return streamFile(t, dir, fmt.Sprintf("progs-%v.data", unload), func(s *testkit.Stream) {
		for i := range 500_000 {
			tag := perfdata.BPFTag{byte(i), byte(i >> 8), byte(i >> 16)}
			s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tag, true)
			if unload {
				s.BPFEvent(perfdata.BPFEventProgUnload, uint32(i+1), tag, true)
			}
		}
	})
}

// claimFlood writes a pipe recording in which 16,384 programs the source
// does not know, all with a function of one name, are loaded while
// recording, and then come 1,000,000 BPF_METADATA records of that name:
// each record may be any of theirs (a record perf wrote at the end).
func claimFlood(t testing.TB, dir string) string {
	t.Helper()
	return streamFile(t, dir, "claims.data", func(s *testkit.Stream) {
		const name = "bpf_prog_0123456789abcdef_f"
		for i := range 1 << 14 {
			addr := 0xffffffffc0000000 + uint64(i)*0x40
			tag := perfdata.BPFTag{byte(i), byte(i >> 8)}
			s.KSymbol(addr, 0x40, name, false, true)
			s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tag, true)
			s.KSymbol(addr, 0x40, name, true, true)
			s.BPFEvent(perfdata.BPFEventProgUnload, uint32(i+1), tag, true)
		}
		m := perfdata.BPFMetadata{ProgName: name, Entries: []perfdata.BPFMetadataEntry{{Key: "k", Value: "1"}}}
		for range 1_000_000 {
			s.Metadata(m)
		}
	})
}

// bigMetadataFlood writes a pipe recording of 1,000 BPF_METADATA records
// of nearly 64 KiB each (perf's 202 variables, 63-byte keys and 255-byte
// values): more bytes than show keeps.
func bigMetadataFlood(t testing.TB, dir string) string {
	t.Helper()
	return streamFile(t, dir, "big-metadata.data", func(s *testkit.Stream) {
		m := perfdata.BPFMetadata{ProgName: "bpf_prog_0123456789abcdef_f"}
		for i := range perfdata.MaxBPFMetadataEntries {
			m.Entries = append(m.Entries, perfdata.BPFMetadataEntry{Key: fmt.Sprintf("%063d", i), Value: strings.Repeat("v", 255)})
		}
		for range 1000 {
			s.Metadata(m)
		}
	})
}

// sameNameFlood writes a pipe recording with as many BPF KSYMBOLs of one
// name as package bpftrack keeps, and as many BPF_METADATA records of that
// name as show keeps: each record may be any of the functions.
func sameNameFlood(t testing.TB, dir string) string {
	t.Helper()
	return streamFile(t, dir, "same-name.data", func(s *testkit.Stream) {
		const name = "bpf_prog_0123456789abcdef_f"
		for i := range bpftrack.MaxHistory - 1 {
			s.KSymbol(0xffffffffc0000000+uint64(i)*0x40, 0x40, name, false, true)
		}
		m := perfdata.BPFMetadata{ProgName: name, Entries: []perfdata.BPFMetadataEntry{{Key: "k", Value: "1"}}}
		for range bpftrack.MaxMetadataRecords {
			s.Metadata(m)
		}
	})
}

// zFlood writes a pipe recording whose records go in COMPRESSED records
// of about 1 MiB of records each: a small file that claims much.
type zFlood struct{ s, rs *testkit.Stream }

// zFloodFile writes the compressed pipe recording fill makes as dir/name,
// as streamFile does.
func zFloodFile(t testing.TB, dir, name string, fill func(z *zFlood)) string {
	t.Helper()
	return streamFile(t, dir, name, func(s *testkit.Stream) {
		z := &zFlood{s, testkit.NewRecords(binary.LittleEndian)}
		fill(z)
		z.flush()
		t.Logf("%s: %d bytes", name, s.Len())
	})
}

// add returns where to write the next records.
func (z *zFlood) add() *testkit.Stream {
	if z.rs.Len() > 1<<20 {
		z.flush()
	}
	return z.rs
}

func (z *zFlood) flush() {
	if z.rs.Len() > 0 {
		z.s.Compressed(z.rs.Bytes(), false)
		z.rs.Reset()
	}
}

// cached returns path if a generator wrote it already.
func cached(dir, name string) (string, bool) {
	path := filepath.Join(dir, name)
	_, err := os.Stat(path)
	return path, err == nil
}

// streamFile writes the pipe recording fill makes as dir/name, unless it
// is there already (cached), and returns its path.
func streamFile(t testing.TB, dir, name string, fill func(s *testkit.Stream)) string {
	t.Helper()
	path, ok := cached(dir, name)
	if ok {
		return path
	}
	s := testkit.NewStream(binary.LittleEndian)
	fill(s)
	if err := os.WriteFile(path, s.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// oneIDFlood writes a compressed pipe recording of 1,000,000 PROG_LOAD
// BPF_EVENTs of one id, none unloaded: each load replaces the one before.
func oneIDFlood(t testing.TB, dir string) string {
	t.Helper()
	return zFloodFile(t, dir, "one-id.data", func(z *zFlood) {
		for range 1_000_000 {
			z.add().BPFEvent(perfdata.BPFEventProgLoad, 7, perfdata.BPFTag{7}, true)
		}
	})
}

// longNameFlood writes a compressed pipe recording of 10,000 BPF
// KSYMBOLs of names of 65,000 bytes (KSYM_NAME_LEN is 512), each in a
// program loaded while recording.
func longNameFlood(t testing.TB, dir string) string {
	t.Helper()
	return zFloodFile(t, dir, "long-names.data", func(z *zFlood) {
		long := "bpf_prog_0123456789abcdef_" + strings.Repeat("n", 65000-26-8)
		for i := range 10_000 {
			rs := z.add()
			rs.KSymbol(0xffffffffc0000000+uint64(i)*0x40, 0x40, fmt.Sprintf("%s%08d", long, i), false, true)
			rs.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), perfdata.BPFTag{1}, true)
		}
	})
}

// sameFunctionFlood writes a pipe recording of 65,535 programs loaded and
// unloaded while recording, each with one function of its own tag and one
// function name, and then 32,767 BPF_METADATA records of that function
// name and tags no KSYMBOL has: each record may be any of them. It is not
// compressed: show keeps all of this, and a zstd window on top of it is
// more than 64 MiB (see README, Bounded memory).
func sameFunctionFlood(t testing.TB, dir string) string {
	t.Helper()
	return streamFile(t, dir, "same-function.data", func(s *testkit.Stream) {
		for i := range bpftrack.MaxHistory - 1 {
			tg := perfdata.BPFTag{0, byte(i), byte(i >> 8), byte(i >> 16)}
			s.KSymbol(0xffffffffc0000000+uint64(i)*0x40, 0x40, perfdata.BPFProgName(tg, "f"), false, true)
			s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tg, true)
			s.BPFEvent(perfdata.BPFEventProgUnload, uint32(i+1), tg, true)
		}
		for i := range bpftrack.MaxMetadataRecords - 1 {
			tg := perfdata.BPFTag{1, byte(i), byte(i >> 8), byte(i >> 16)}
			s.Metadata(perfdata.BPFMetadata{ProgName: perfdata.BPFProgName(tg, "f"), Entries: []perfdata.BPFMetadataEntry{{Key: "k", Value: "1"}}})
		}
	})
}

// orphanFlood writes a pipe recording of 131,072 BPF_METADATA records of
// names of BPF_PROG_NAME_LEN-1 bytes, all different, of no program the
// recording has (not compressed: perf never writes them inside COMPRESSED
// records, and inject counts only those outside).
func orphanFlood(t testing.TB, dir string) string {
	t.Helper()
	return streamFile(t, dir, "orphans.data", func(s *testkit.Stream) {
		long := strings.Repeat("o", perfdata.BPFProgNameLen-1-8)
		for i := range 1 << 17 {
			s.Metadata(perfdata.BPFMetadata{ProgName: fmt.Sprintf("%s%08d", long, i), Entries: []perfdata.BPFMetadataEntry{{Key: "k", Value: "1"}}})
		}
	})
}

// metadataFlood writes a pipe recording with more BPF_METADATA records
// than show keeps.
func metadataFlood(t testing.TB, dir string) string {
	t.Helper()
	return streamFile(t, dir, "metadata.data", func(s *testkit.Stream) {
		for range bpftrack.MaxMetadataRecords + 1 {
			s.Metadata(perfdata.BPFMetadata{ProgName: "bpf_prog_0123456789abcdef_f", Entries: []perfdata.BPFMetadataEntry{{Key: "k", Value: "1"}}})
		}
	})
}

// manyProgramsSnapshot writes a snapshot of n programs, the highest id
// first.
func manyProgramsSnapshot(t testing.TB, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("programs-%d.jsonl", n))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"format_version":2,"kind":"snapshot","system":{"kernel_release":"x","boot_id":"b","hostname":"h","boot_time":"2026-12-03T09:32:53Z","perf_clock_offset_ns":1},"taken":"2026-12-03T13:17:06Z"}`)
	for i := n; i > 0; i-- {
		fmt.Fprintf(w, "{\"program\":{\"id\":%d,\"tag\":\"e21be2de8fc54252\",\"type\":\"socket_filter\"}}\n", i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// bigValueSnapshot writes a snapshot whose one program has a metadata
// value of n bytes.
func bigValueSnapshot(t testing.TB, dir string, n int) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := snapshot.Take(&b, &bpfprog.List{Sys: bpfprog.System{Hostname: "h"}, Programs: []*bpfprog.Program{{
		ID: 1, Name: "p", Metadata: &bpfprog.Metadata{ProgNames: []string{"bpf_prog_0000000000000000_p"},
			Entries: []bpfprog.Entry{{Key: "k", Value: "VALUE"}}},
		Funcs: []bpfprog.Func{{Addr: 0xffffffffc0000000, Len: 64, PerfName: "bpf_prog_0000000000000000_p"}},
	}}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "big-value.jsonl")
	text := strings.Replace(b.String(), "VALUE", strings.Repeat("v", n), 1)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// emptyFuncsSnapshot writes a snapshot of format version whose one
// program lists about n bytes of empty functions ("funcs":[{},{},...]),
// each of which was a hundred bytes once decoded.
func emptyFuncsSnapshot(t testing.TB, dir string, version, n int) string {
	t.Helper()
	path, ok := cached(dir, fmt.Sprintf("empty-funcs-v%d-%d.json", version, n))
	if ok {
		return path
	}
	funcs := strings.Repeat("{},", n/3) + "{}"
	text := "{\n  \"format_version\": 1,\n  \"programs\": [\n    {\"id\": 1, \"funcs\": [" + funcs + "]}\n  ]\n}\n"
	if version == 2 {
		text = `{"format_version":2,"kind":"snapshot","system":{"hostname":"h"},"taken":"2026-12-03T13:17:06Z"}` + "\n" +
			`{"program":{"id":1,"tag":"e21be2de8fc54252","type":"socket_filter","funcs":[` + funcs + "]}}\n"
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// terminalRecording is a pipe recording whose names and metadata carry
// text a terminal acts on: a KSYMBOL name, a BPF_METADATA prog_name, key
// and value.
func terminalRecording(t testing.TB) string {
	t.Helper()
	bo := binary.LittleEndian
	s := testkit.NewStream(bo)
	tag := perfdata.BPFTag{1, 2, 3, 4, 5, 6, 7, 8}
	name := perfdata.BPFProgName(tag, "f"+testkit.Terminal)
	s.KSymbol(0xffffffffc0001000, 64, name, false, false)
	s.BPFEvent(perfdata.BPFEventProgLoad, 77, tag, false)
	s.Metadata(perfdata.BPFMetadata{ProgName: name, Entries: []perfdata.BPFMetadataEntry{{Key: "k" + testkit.Terminal, Value: `"` + testkit.Terminal + `"`}}})
	s.Sample(0xffffffffc0001004)
	path := filepath.Join(t.TempDir(), "terminal.data")
	if err := os.WriteFile(path, s.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// rawControl returns the first byte in s a terminal would act on (besides
// the newline that ends a line), or -1: C0 and C1 controls, DEL, bytes
// that are not UTF-8.
func rawControl(s string) int {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return i
		}
		i += n
	}
	return -1
}

// TestHostileText: nothing a recording, a snapshot or a file name holds
// reaches a terminal raw, on stdout or stderr; JSON output is JSON.
func TestHostileText(t *testing.T) {
	in := terminalRecording(t)
	snap := snapshotFile(t, &bpfprog.List{Sys: bpfprog.System{Hostname: testkit.Terminal, KernelRelease: testkit.Terminal}})
	weird := filepath.Join(t.TempDir(), testkit.Terminal+".data")
	if err := os.WriteFile(weird, []byte("not a recording"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"show", "-i", in},
		{"show", "--json", "-i", in},
		{"dump", "-i", in},
		{"dump", "--stats", "-i", in},
		{"inject", "-v", "--snapshot", snap, "-i", in, "-o", filepath.Join(t.TempDir(), "out.data")},
		{"strip", "-v", "-i", in, "-o", filepath.Join(t.TempDir(), "out.data")},
		{"dump", "-i", weird},
		{"inject", "--snapshot", weird, "-i", in, "-o", "-"},
		{"convert", "-i", in, "-o", weird},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			r := bpfmeta(t, nil, args...)
			if r.code == exitUsage {
				t.Fatalf("%v", r)
			}
			if i := rawControl(r.stderr); i >= 0 {
				t.Errorf("stderr has a raw control byte at %d: %q", i, r.stderr)
			}
			if args[1] == "--json" && !json.Valid([]byte(r.stdout)) {
				t.Errorf("stdout is not JSON: %q", r.stdout)
			}
			if i := rawControl(r.stdout); i >= 0 && args[len(args)-1] != "-" {
				t.Errorf("stdout has a raw control byte at %d: %q", i, r.stdout)
			}
			if strings.Contains(r.stderr+r.stdout, "\nbpfmeta: all good") {
				t.Errorf("a name printed a line of its own:\n%s%s", r.stdout, r.stderr)
			}
		})
	}
}

// TestHostileDebris: the runs that end early, or race, leave nothing but
// complete outputs, and never report success for records they lost.
func TestHostileDebris(t *testing.T) {
	bin := buildBinary(t)
	snap := emptySnapshot(t)
	in := corpusPath(t, bpfFile)
	want, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("stderr into a closed pipe", func(t *testing.T) {
		dir := t.TempDir()
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pr.Close()
		defer pw.Close()
		cmd := exec.Command(bin, "inject", "-v", "--snapshot", snap, "-i", in, "-o", filepath.Join(dir, "out.data"))
		cmd.Stderr = pw
		err = cmd.Run()
		if err != nil {
			t.Errorf("inject -v with stderr closed: %v, want exit 0 (the output does not depend on stderr)", err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "out.data")); err != nil || !bytes.Equal(got, want) {
			t.Errorf("the output is not the complete recording: %v", err)
		}
		if names := testkit.DirNames(t, dir); len(names) != 1 {
			t.Errorf("the directory has %v, want out.data only", names)
		}
	})

	// Four runs at once into one name: each is complete or absent, and
	// no temporary name survives. By default a run replaces the file of
	// the one before and keeps it as NAME.old (a hard-link race between
	// two runs keeping one file left a temporary name once); with
	// --no-clobber exactly one wins.
	t.Run("four runs, one output", func(t *testing.T) {
		for _, cmdName := range []string{"inject", "convert"} {
			for _, noClobber := range []bool{false, true} {
				for round := range 5 {
					dir := t.TempDir()
					out := filepath.Join(dir, "out.data")
					args := []string{cmdName, "-q", "-i", in, "-o", out}
					if cmdName == "inject" {
						args = append(args, "--snapshot", snap)
					}
					if noClobber {
						args = append(args, "--no-clobber")
					}
					var wg sync.WaitGroup
					codes := make([]int, 4)
					for i := range codes {
						wg.Add(1)
						go func() {
							defer wg.Done()
							codes[i] = runProc(t, bin, procRun{}, args...).code
						}()
					}
					wg.Wait()
					won := 0
					for _, c := range codes {
						if c == exitOK {
							won++
						} else if c != exitFailure {
							t.Errorf("%s round %d: exit %d", cmdName, round, c)
						}
					}
					if won == 0 || noClobber && won != 1 {
						t.Errorf("%s --no-clobber=%v round %d: %d of 4 runs exited 0 (%v)", cmdName, noClobber, round, won, codes)
					}
					names := testkit.DirNames(t, dir)
					for _, n := range names {
						if n != "out.data" && (noClobber || n != "out.data.old") {
							t.Errorf("%s --no-clobber=%v round %d: the directory has %v", cmdName, noClobber, round, names)
							break
						}
						if got, err := os.ReadFile(filepath.Join(dir, n)); err != nil || !bytes.Equal(got, want) {
							t.Errorf("%s --no-clobber=%v round %d: %s is not complete: %v", cmdName, noClobber, round, n, err)
						}
					}
					if !slices.Contains(names, "out.data") {
						t.Errorf("%s --no-clobber=%v round %d: no output: %v", cmdName, noClobber, round, names)
					}
				}
			}
		}
	})

	t.Run("a compressed payload cut in half", func(t *testing.T) {
		dir := t.TempDir()
		bo := binary.LittleEndian
		recs := testkit.NewRecords(bo)
		inner := testkit.NewRecords(bo)
		for i := range 300 {
			inner.Sample(0x1000 + uint64(i))
		}
		recs.Compressed(inner.Bytes(), false)
		cutAt := int64(perfdata.FileHeaderSize+128+perfdata.SectionSize) + int64(recs.Len())
		recs.Compressed(inner.Bytes(), true)
		path := filepath.Join(dir, "cut.data")
		if err := testkit.WriteFile(path, bo, recs.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"inject", "--snapshot", snap, "-i", path, "-o", filepath.Join(dir, "out.data")},
			{"strip", "-i", path, "-o", filepath.Join(dir, "out.data")},
			{"dump", "-i", path},
		} {
			r := bpfmeta(t, nil, args...)
			if r.code != exitFailure {
				t.Errorf("%s: %v, want exit 1", args[0], r)
			}
			oneLine(t, args[0], r, fmt.Sprintf("%#x", cutAt))
			if names := testkit.DirNames(t, dir); len(names) != 1 {
				t.Errorf("%s: the directory has %v, want no output", args[0], names)
			}
		}
	})

	t.Run("a stream that ends inside a record's data", func(t *testing.T) {
		// A TRACING_DATA record announcing 1 MiB of trace data, with 100
		// bytes of it: the input's error, at its offset, whichever command
		// copies the data (FuzzInject found inject blaming its output).
		dir := t.TempDir()
		path := filepath.Join(dir, "cut.pipe")
		if err := os.WriteFile(path, testkit.CutTracingData(binary.LittleEndian, 1<<20, 100), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"inject", "--snapshot", snap, "-i", path, "-o", filepath.Join(dir, "out.data")},
			{"convert", "-i", path, "-o", filepath.Join(dir, "out.data")},
			{"strip", "-i", path, "-o", filepath.Join(dir, "out.data")},
			{"dump", "-i", path},
		} {
			r := bpfmeta(t, nil, args...)
			if r.code != exitFailure {
				t.Errorf("%s: %v, want exit 1", args[0], r)
			}
			oneLine(t, args[0], r, path+": AUX or trace data of the TRACING_DATA record at 0x10 ends after 100 of 1048576 bytes")
			if names := testkit.DirNames(t, dir); len(names) != 1 {
				t.Errorf("%s: the directory has %v, want no output", args[0], names)
			}
		}
	})

	t.Run("a file-format recording on a pipe that never ends", func(t *testing.T) {
		recs := testkit.NewRecords(binary.LittleEndian)
		recs.Sample(0x1000)
		path := filepath.Join(t.TempDir(), "small.data")
		if err := testkit.WriteFile(path, binary.LittleEndian, recs.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
		head, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pr, pw := io.Pipe()
		var written int64
		go func() {
			pw.Write(head)
			junk := make([]byte, 1<<16)
			for {
				n, err := pw.Write(junk)
				written += int64(n)
				if err != nil {
					return
				}
			}
		}()
		r := runProc(t, bin, procRun{stdin: pr}, "dump", "--stats", "-i", "-")
		pr.CloseWithError(io.ErrClosedPipe)
		if r.code != exitFailure {
			t.Errorf("%v, want exit 1", r)
		}
		oneLine(t, "endless stream", r.result, "goes on past")
		if written > 16<<20 {
			t.Errorf("bpfmeta read %d MiB of a recording whose header says it has %d bytes", written>>20, len(head))
		}
	})
}

// TestRootSafety: the output policy against ground another user prepared
// (issue table rows: FIFOs, device nodes, symlinks, modes, names).
func TestRootSafety(t *testing.T) {
	testkit.Root(t) // mknod, and another user
	bin := buildBinary(t)
	snap := emptySnapshot(t)
	in := corpusPath(t, smallFile)
	writers := writingCommands(snap)

	t.Run("FIFO with a reader, no -f", func(t *testing.T) {
		for _, c := range writers {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "out.data")
			if err := unix.Mkfifo(fifo, 0o666); err != nil {
				t.Fatal(err)
			}
			rd, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := bpfmeta(t, nil, with(c.args, "-i", in, "-o", fifo)...)
			buf := make([]byte, 16)
			n, _ := rd.Read(buf)
			rd.Close()
			if r.code != exitFailure || n != 0 {
				t.Errorf("%s: %v, the reader got %d bytes; want exit 1 and nothing", c.name, r, n)
			}
		}
	})

	t.Run("FIFO nobody reads", func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "out.data")
		if err := unix.Mkfifo(fifo, 0o666); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if r := runProc(t, bin, procRun{}, "convert", "-i", in, "-o", fifo); r.code != exitFailure || time.Since(start) > 10*time.Second {
			t.Errorf("without -f: %v after %v, want exit 1 at once", r, time.Since(start))
		}
		// With -f bpfmeta waits outfile.FIFOWait for a reader, then fails.
		start = time.Now()
		r := runProc(t, bin, procRun{}, "convert", "-f", "-i", in, "-o", fifo)
		if r.code != exitFailure || time.Since(start) > outfile.FIFOWait+10*time.Second {
			t.Errorf("-f: %v after %v, want exit 1 after about %v", r, time.Since(start), outfile.FIFOWait)
		}
		oneLine(t, "-f", r.result, "no process reads")
		if names := testkit.DirNames(t, dir); len(names) != 1 {
			t.Errorf("the directory has %v", names)
		}
	})

	t.Run("device nodes and symlinks", func(t *testing.T) {
		dir := t.TempDir()
		blk := filepath.Join(dir, "loop")
		chr := filepath.Join(dir, "null")
		if err := unix.Mknod(blk, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 255))); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mknod(chr, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name, target string
			withF        int // the exit with -f
		}{
			{"symlink to a block device", blk, exitFailure},
			{"block device", "", exitFailure},
			{"dangling symlink", filepath.Join(dir, "nothing"), exitFailure},
			{"symlink to a file", emptySnapshot(t), exitFailure},
			{"symlink to a character device", chr, exitOK},
		} {
			for _, w := range writers {
				out := filepath.Join(t.TempDir(), "out.data")
				if c.target != "" {
					if err := os.Symlink(c.target, out); err != nil {
						t.Fatal(err)
					}
				} else if err := unix.Mknod(out, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 255))); err != nil {
					t.Fatal(err)
				}
				before, _ := os.Lstat(out)
				for _, force := range []bool{false, true} {
					args := with(w.args, "-i", in, "-o", out)
					want := exitFailure
					if force {
						args, want = append(args, "-f"), c.withF
					}
					if r := bpfmeta(t, nil, args...); r.code != want {
						t.Errorf("%s, %s -f=%v: %v, want exit %d", c.name, w.name, force, r, want)
					}
					after, err := os.Lstat(out)
					if err != nil || after.Mode() != before.Mode() {
						t.Errorf("%s, %s -f=%v: %s is now %v (%v), was %v", c.name, w.name, force, out, after.Mode(), err, before.Mode())
					}
				}
			}
		}
		if st, err := os.Lstat(blk); err != nil || st.Mode()&fs.ModeDevice == 0 {
			t.Errorf("the block device node changed: %v", err)
		}
	})

	t.Run("-f -o /dev/stdout", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "captured.data")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r := runProc(t, bin, procRun{stdout: f}, "convert", "-f", "-i", in, "-o", "/dev/stdout")
		if r.code != exitOK {
			t.Fatalf("%v", r)
		}
		if st, err := os.Lstat("/dev/stdout"); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("/dev/stdout is no longer a symlink: %v", err)
		}
		if st, _ := os.Stat(path); st == nil || st.Size() == 0 {
			t.Errorf("nothing was written to stdout")
		}
	})

	t.Run("output mode", func(t *testing.T) {
		dir := t.TempDir()
		wide := copyFile(t, in, dir)
		if err := os.Chmod(wide, 0o777); err != nil {
			t.Fatal(err)
		}
		for _, mask := range []int{0o022, 0o000, 0o077} {
			old := unix.Umask(mask)
			for _, w := range writers {
				out := filepath.Join(t.TempDir(), "out.data")
				r := bpfmeta(t, nil, with(w.args, "-i", wide, "-o", out)...)
				if st, err := os.Stat(out); r.code != exitOK || err != nil || st.Mode().Perm() != 0o600 {
					t.Errorf("%s, umask %03o: %v, mode %v (%v), want 0600", w.name, mask, r, st.Mode(), err)
				}
			}
			unix.Umask(old)
		}
	})

	t.Run("unprivileged inject from the kernel", func(t *testing.T) {
		wrap := asNobody(t)
		dir := t.TempDir()
		os.Chmod(dir, 0o1777)
		os.Chmod(filepath.Dir(bin), 0o755)
		rec := copyFile(t, corpusPath(t, bpfFile), dir)
		os.Chmod(rec, 0o644)
		out := filepath.Join(dir, "out.data")
		r := runProc(t, bin, procRun{dir: dir, wrap: wrap},
			"inject", "-i", rec, "-o", out)
		if r.code != exitFailure {
			t.Errorf("%v, want exit 1", r)
		}
		oneLine(t, "unprivileged", r.result, "CAP_")
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("an output was written")
		}
	})

	t.Run("names quoted, content not echoed", func(t *testing.T) {
		dir := t.TempDir()
		secret := filepath.Join(dir, "shadow")
		if err := os.WriteFile(secret, []byte("root:$6$verysecret:19000:0:99999:7:::\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		victim := filepath.Join(dir, "victim.data")
		os.Symlink(secret, victim)
		for _, args := range [][]string{{"dump", "-i", victim}, {"show", "-i", victim}, {"inject", "--snapshot", victim, "-i", in, "-o", "-"}} {
			r := bpfmeta(t, nil, args...)
			if r.code != exitFailure || strings.Contains(r.stderr, "root") || strings.Contains(r.stderr, "secret") {
				t.Errorf("%s of a non-perf file: %v: its content is echoed, or no error", args[0], r)
			}
		}
		r := bpfmeta(t, nil, "dump", "-i", filepath.Join(dir, "x\n\x1b[31mbpfmeta: all good\x1b[0m\r.data"))
		oneLine(t, "a name with escapes", r, `"`)
		if rawControl(r.stderr) >= 0 {
			t.Errorf("raw control bytes: %q", r.stderr)
		}
	})

	t.Run("long output name", func(t *testing.T) {
		for _, n := range []int{240, 250, 255} {
			dir := t.TempDir()
			out := filepath.Join(dir, strings.Repeat("a", n))
			r := bpfmeta(t, nil, "convert", "-i", in, "-o", out)
			if r.code != exitOK {
				t.Errorf("a %d-byte name: %v", n, r)
			}
			if names := testkit.DirNames(t, dir); len(names) != 1 {
				t.Errorf("a %d-byte name: the directory has %d entries", n, len(names))
			}
		}
	})
}

// TestWatchKilled: a watch killed with SIGKILL after it captured a program
// leaves a snapshot that inject uses for that program.
func TestWatchKilled(t *testing.T) {
	watchNeeds(t)
	bin := buildBinary(t)
	snap := filepath.Join(t.TempDir(), "watch.jsonl")
	p := startBpfmeta(t, bin, "watch", "-o", snap)
	waitFor(t, "the watch to start", func() bool { return strings.Contains(p.stderr.String(), "following BPF program loads") })
	loaded, _ := testkit.LoadCilium(t, "meta")
	id := loaded[0].ID
	var prog *bpfprog.Program
	waitFor(t, "the program in the snapshot", func() bool {
		s, err := snapshot.Open(snap)
		if err != nil {
			return false
		}
		defer s.Close()
		for q, err := range s.All() {
			if err == nil && q.ID == id && q.Metadata != nil {
				prog = q
				return true
			}
		}
		return false
	})
	p.cmd.Process.Kill()
	<-p.done
	if st, err := os.Stat(snap); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the snapshot: %v, want mode 0600", err)
	}

	// A recording of that program, as perf 6.1 writes one.
	s := testkit.NewStream(binary.LittleEndian)
	for _, f := range prog.Funcs {
		s.KSymbol(f.Addr, f.Len, f.PerfName, false, false)
	}
	s.BPFEvent(perfdata.BPFEventProgLoad, prog.ID, prog.Tag, false)
	rec := filepath.Join(t.TempDir(), "rec.data")
	if err := os.WriteFile(rec, s.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.data")
	r := bpfmeta(t, nil, "inject", "--snapshot", snap, "-i", rec, "-o", out)
	if r.code != exitOK {
		t.Fatalf("inject --snapshot of a killed watch's journal: %v", r)
	}
	if got := readRecording(t, out); got.countType(perfdata.RecordBPFMetadata) != len(prog.Funcs) {
		t.Errorf("%d BPF_METADATA records, want %d; %v", got.countType(perfdata.RecordBPFMetadata), len(prog.Funcs), r)
	}
	// and inject says that the snapshot is incomplete (watch -h promises it)
	if want := "is an incomplete snapshot: it has no end line"; !strings.Contains(r.stderr, want) {
		t.Errorf("inject --snapshot of a killed watch's journal does not say %q: %v", want, r)
	}
}
