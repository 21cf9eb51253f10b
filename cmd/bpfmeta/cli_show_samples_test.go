package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// sampleModes are the record orders perf 6.1 writes: plain, a pipe stream,
// per-CPU data files in a directory (--threads), the programs synthesized
// at the end rather than the start (--tail-synthesize), and the flight recorder
// (--overwrite: backward ring buffers read newest first, what perf
// synthesizes written at the tail), dumped at the end or, as perf daemon
// does, by SIGUSR2 with --switch-output.
var sampleModes = []struct {
	name string
	mode testkit.RecordMode
	args []string
}{
	{"plain", testkit.RecordFile, nil},
	{"pipe", testkit.RecordPipe, nil},
	{"threads", testkit.RecordFile, []string{"--threads"}},
	{"tail-synthesize", testkit.RecordFile, []string{"--tail-synthesize"}},
	{"overwrite", testkit.RecordFile, []string{"--overwrite"}},
	{"overwrite-switch-output", testkit.RecordFile, []string{"--overwrite", "--switch-output=signal"}},
}

// TestShowSamplesAsPerfReport: show's count of samples of each function of
// a program is perf report's (of the perf that recorded), in every record
// order perf writes, and inject's count of a program it has no metadata
// for is their sum. The program (testdata/bpf/meta.bpf.o's filter, loaded
// before perf starts, busy while it records) is this test's own; the
// machine's other programs are not looked at.
func TestShowSamplesAsPerfReport(t *testing.T) {
	testkit.Root(t)
	perf := perfPath(t, stockPerf)
	dir := t.TempDir()
	// a snapshot without the filter: inject has no metadata for it, and
	// says how many samples it has
	empty := filepath.Join(dir, "before.jsonl")
	if res := bpfmeta(t, nil, "snapshot", "-q", "-o", empty); res.code != exitOK {
		t.Fatalf("snapshot: %v", res)
	}
	progs, busy := testkit.BusyFilter(t)
	id := progs[slices.IndexFunc(progs, func(p testkit.Loaded) bool { return p.Name == "bpfprogt_multi_function_main" })].ID
	for _, m := range sampleModes {
		t.Run(m.name, func(t *testing.T) {
			rec := filepath.Join(dir, m.name+".data")
			args := append([]string{"-F", "4999", "-m", "1024"}, m.args...)
			r := testkit.StartPerf(t, perf, rec, testkit.PerfOptions{Mode: m.mode, SystemWide: true, Args: args})
			r.WaitReady(t)
			if n := busy(1500 * time.Millisecond); n == 0 {
				t.Fatal("no datagram sent")
			}
			if slices.Contains(m.args, "--switch-output=signal") {
				rec = switchOutput(t, r, rec)
			} else {
				r.Stop(t)
			}
			meta := filepath.Join(dir, m.name+".meta.data")
			if res := bpfmeta(t, nil, "inject", "-q", "-i", rec, "-o", meta); res.code != exitOK {
				t.Fatalf("inject: %v", res)
			}
			got := showSamples(t, meta, id)
			want := perfReportSamples(t, perf, rec, m.mode.Pipe(), got)
			total := 0
			for _, fn := range []string{"bpfprogt_multi_function_main", "bpfprogt_sub_add", "bpfprogt_sub_mul"} {
				name := filterFunc(t, got, fn)
				t.Logf("%s: perf report %d samples, show %d", name, want[name], got[name].samples)
				if got[name].samples != want[name] {
					t.Errorf("%s: show counts %d samples, perf report %d", name, got[name].samples, want[name])
				}
				total += want[name]
			}
			if total == 0 {
				t.Fatalf("perf report has no sample in the filter: %v", want)
			}
			res := bpfmeta(t, nil, "inject", "-v", "-i", rec, "--snapshot", empty, "-o", filepath.Join(dir, m.name+".nometa.data"))
			if n, ok := injectSamples(res.stderr, id); !ok || n != total {
				t.Errorf("inject --snapshot (without the filter) counts %d samples of program %d (listed: %v), perf report %d:\n%s", n, id, ok, total, res.stderr)
			}
		})
	}
}

// switchOutput signals perf record --switch-output=signal once, as perf
// daemon does for a dump, stops it, and returns the dump: the first file
// perf switched out.
func switchOutput(t *testing.T, r *testkit.PerfRun, out string) string {
	t.Helper()
	r.Signal(t, syscall.SIGUSR2)
	deadline := time.Now().Add(testkit.RecordTimeout)
	for {
		dumps, _ := filepath.Glob(out + ".2*")
		if len(dumps) > 0 && strings.Contains(r.Log(), "Dump "+dumps[0]) {
			r.Stop(t)
			return dumps[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("perf record wrote no dump on SIGUSR2:\n%s", r.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reportLine is a line of perf report --stdio -F overhead,sample,sym: the
// share, the sample count, [k] and the symbol; scriptLine one of perf
// script -F ip,sym: the address and the symbol.
var (
	reportLine = regexp.MustCompile(`^\s*[\d.]+%\s+(\d+)\s+\[k\]\s+(\S+)`)
	scriptLine = regexp.MustCompile(`^\s*([0-9a-f]+)\s+(\S+)`)
)

// perfReportSamples returns perf report's sample count of each function of
// ours (by name) in recording path (pipe: a pipe stream, read on stdin):
// the count of its symbol, less the samples perf script puts in a symbol
// of its name outside its addresses (a load of the same object by another
// test on the machine: perf report counts by name).
func perfReportSamples(t *testing.T, perf, path string, pipe bool, ours map[string]showFunc) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, l := range perfOutput(t, perf, path, pipe, "report", "--stdio", "-F", "overhead,sample,sym") {
		if m := reportLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			counts[m[2]] += n
		}
	}
	for _, l := range perfOutput(t, perf, path, pipe, "script", "-F", "ip,sym") {
		m := scriptLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		f, ok := ours[m[2]]
		ip, err := strconv.ParseUint(m[1], 16, 64)
		if ok && err == nil && (ip < f.addr || ip-f.addr >= uint64(f.len)) {
			counts[m[2]]--
		}
	}
	return counts
}

// perfOutput runs perf CMD -i path ARGS and returns its lines.
func perfOutput(t *testing.T, perf, path string, pipe bool, cmd string, args ...string) []string {
	t.Helper()
	c := exec.Command(perf, append([]string{cmd, "-i", path}, args...)...)
	if pipe {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c = exec.Command(perf, append([]string{cmd, "-i", "-"}, args...)...)
		c.Stdin = f
	}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(c.Args, " "), err)
	}
	return strings.Split(string(out), "\n")
}

// showFunc is a function of show --json's records: where it is, and its
// samples.
type showFunc struct {
	addr    uint64
	len     uint32
	samples int
}

// showSamples returns show --json's functions of program id in recording
// path, by name.
func showSamples(t *testing.T, path string, id uint32) map[string]showFunc {
	t.Helper()
	res := bpfmeta(t, nil, "show", "--json", "-i", path)
	if res.code != exitOK {
		t.Fatalf("show: %v", res)
	}
	var doc struct {
		Records []struct {
			KSymbol *struct {
				Name string
				Addr string
				Len  uint32
			} `json:"ksymbol"`
			Program *uint32 `json:"program_id"`
			Samples int     `json:"samples"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("show --json: %v", err)
	}
	funcs := map[string]showFunc{}
	for _, r := range doc.Records {
		if r.KSymbol == nil || r.Program == nil || *r.Program != id {
			continue
		}
		addr, err := strconv.ParseUint(strings.TrimPrefix(r.KSymbol.Addr, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("show --json: ksymbol addr %q", r.KSymbol.Addr)
		}
		funcs[r.KSymbol.Name] = showFunc{addr, r.KSymbol.Len, r.Samples}
	}
	return funcs
}

// filterFunc returns the one KSYMBOL name in show's functions that ends in
// _fn: the function fn of this test's filter.
func filterFunc(t *testing.T, funcs map[string]showFunc, fn string) string {
	t.Helper()
	var names []string
	for name := range funcs {
		if strings.HasSuffix(name, "_"+fn) {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		t.Fatalf("show has %d records of a function %s of the filter: %v", len(names), fn, names)
	}
	return names[0]
}

// injectSamples returns the samples inject -v lists for program id.
func injectSamples(stderr string, id uint32) (int, bool) {
	m := regexp.MustCompile(`program ` + strconv.Itoa(int(id)) + ` \(tag [0-9a-f]+, .*?, (\d+) samples?\)`).FindStringSubmatch(stderr)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	return n, true
}
