package main

// Tests of bpfmeta watch as a process: CMD's exit status and signals, the
// snapshot file, and a watch around a perf 6.1 recording whose programs are
// gone by inject time, compared with what perf 7.2 records natively.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/cmd/internal/childcmd"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// What the watch tests run.
const (
	watchFixtureVersion = "3.14159" // bpf_metadata_version in testdata/bpf/meta.bpf.o
	// watchTimeout bounds every bpfmeta and perf run.
	watchTimeout = 2 * time.Minute
	// watchProgName names the programs the tests load in-process.
	watchProgName = "bpfwatchc_prog"
)

// watchNeeds ends the test unless it can load BPF programs and open
// CPU-wide perf events (root), and has sh.
func watchNeeds(t *testing.T) {
	t.Helper()
	testkit.BPF(t)
	testkit.Command(t, "sh")
}

// watchBuffer collects a process's output while it runs.
type watchBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *watchBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *watchBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// watchProc is a running bpfmeta.
type watchProc struct {
	ctx            context.Context
	cmd            *exec.Cmd
	stdout, stderr *watchBuffer
	done           chan struct{}
	status         int
}

func startBpfmeta(t *testing.T, bin string, args ...string) *watchProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watchTimeout)
	p := &watchProc{ctx: ctx, cmd: exec.CommandContext(ctx, bin, args...), stdout: &watchBuffer{}, stderr: &watchBuffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.status = childcmd.ExitStatus(ee.ProcessState)
		default:
			p.status = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		cancel()
	})
	return p
}

// wait waits for bpfmeta to exit and returns its status.
func (p *watchProc) wait(t *testing.T) int {
	t.Helper()
	<-p.done
	if p.status == -1 || p.ctx.Err() != nil {
		t.Fatalf("bpfmeta %q did not finish within %v:\n%s", p.cmd.Args[1:], watchTimeout, p.stderr)
	}
	return p.status
}

// runBpfmeta runs bpfmeta to the end.
func runBpfmeta(t *testing.T, bin string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	p := startBpfmeta(t, bin, args...)
	status = p.wait(t)
	return status, p.stdout.String(), p.stderr.String()
}

// waitFor polls until cond holds, for at most a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// readWatchSnapshot reads a snapshot file bpfmeta watch wrote.
func readWatchSnapshot(t *testing.T, b []byte) *snapshot.File {
	t.Helper()
	s, err := snapshot.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("the snapshot: %v\n%.300s", err, b)
	}
	return s
}

func readWatchSnapshotFile(t *testing.T, path string) *snapshot.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readWatchSnapshot(t, b)
}

// checkWatchSummary checks the summary line on stderr.
func checkWatchSummary(t *testing.T, stderr, name string) {
	t.Helper()
	var summary []string
	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, "bpfmeta: watch: "+name+": ") {
			summary = append(summary, line)
		}
	}
	if len(summary) != 1 || !strings.Contains(summary[0], "at start") || !strings.Contains(summary[0], "loaded while watching") ||
		!strings.Contains(summary[0], "with metadata") || !strings.Contains(summary[0], "lost") {
		t.Errorf("stderr has no summary line for %s:\n%s", name, stderr)
	}
}

// noTemporaries checks that nothing but want is left in dir.
func noTemporaries(t *testing.T, dir string, want ...string) {
	t.Helper()
	names := testkit.DirNames(t, dir)
	if !slices.Equal(names, want) {
		t.Errorf("%s has %q, want %q", dir, names, want)
	}
}

// TestWatchExitStatus runs CMDs that exit in different ways: bpfmeta must
// exit as CMD did, writing the snapshot whenever CMD ran.
func TestWatchExitStatus(t *testing.T) {
	watchNeeds(t)
	bin := buildBinary(t)
	notExec := testkit.NotExecutable(t)
	for _, tc := range []struct {
		name     string
		cmd      []string
		status   int
		snapshot bool
	}{
		{"exit 0", []string{"sh", "-c", "exit 0"}, 0, true},
		{"exit 7", []string{"sh", "-c", "exit 7"}, 7, true},
		{"exit 255", []string{"sh", "-c", "exit 255"}, 255, true},
		{"SIGTERM", []string{"sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM), true},
		{"SIGKILL", []string{"sh", "-c", "kill -KILL $$"}, 128 + int(syscall.SIGKILL), true},
		{"SIGSEGV", []string{"sh", "-c", "kill -SEGV $$"}, 128 + int(syscall.SIGSEGV), true},
		{"not found", []string{"bpfmeta-watch-no-such-command"}, childcmd.ExitNotFound, false},
		{"not executable", []string{notExec}, childcmd.ExitCannotExec, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			snap := filepath.Join(dir, "snap.json")
			status, _, stderr := runBpfmeta(t, bin, append([]string{"watch", "-o", snap, "--"}, tc.cmd...)...)
			if status != tc.status {
				t.Fatalf("exit status %d, want %d; stderr:\n%s", status, tc.status, stderr)
			}
			if !tc.snapshot {
				noTemporaries(t, dir)
				if !strings.HasPrefix(stderr, "bpfmeta: watch: ") || strings.Count(stderr, "\n") != 1 {
					t.Errorf("stderr is not one error line:\n%s", stderr)
				}
				return
			}
			noTemporaries(t, dir, "snap.json")
			readWatchSnapshotFile(t, snap)
			checkWatchSummary(t, stderr, snap)
		})
	}
}

// loadWatchTestProg loads a socket filter in this process, unloaded at
// cleanup at the latest.
func loadWatchTestProg(t *testing.T, ret int32) (*ebpf.Program, uint32, perfdata.BPFTag) {
	t.Helper()
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: watchProgName, Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, ret), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	id, info := testkit.ProgramInfo(t, p)
	return p, id, testkit.Tag(t, info.Tag)
}

// TestWatchSignals sends SIGINT and SIGTERM to bpfmeta alone (not to its
// process group): with CMD they must reach CMD, and bpfmeta must exit as CMD
// does; without CMD they stop the watch, which exits 0. The snapshot is
// written either way.
func TestWatchSignals(t *testing.T) {
	watchNeeds(t)
	bin := buildBinary(t)
	for _, tc := range []struct {
		sig    syscall.Signal
		trap   string // the CMD's trap for sig; "" for none
		status int
	}{
		{syscall.SIGINT, `trap "exit 42" INT`, 42},
		{syscall.SIGTERM, `trap "exit 43" TERM`, 43},
		{syscall.SIGTERM, "", 128 + int(syscall.SIGTERM)},
	} {
		t.Run(fmt.Sprintf("CMD/%v/%q", tc.sig, tc.trap), func(t *testing.T) {
			dir := t.TempDir()
			snap, ready := filepath.Join(dir, "snap.json"), filepath.Join(dir, "ready")
			script := fmt.Sprintf("%s; touch %q; while :; do sleep 0.05; done", tc.trap, ready)
			if tc.trap == "" {
				script = script[2:]
			}
			p := startBpfmeta(t, bin, "watch", "-o", snap, "--", "sh", "-c", script)
			waitFor(t, "CMD to start", func() bool { _, err := os.Stat(ready); return err == nil })
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if status := p.wait(t); status != tc.status {
				t.Fatalf("exit status %d after %v, want %d; stderr:\n%s", status, tc.sig, tc.status, p.stderr)
			}
			readWatchSnapshotFile(t, snap)
			checkWatchSummary(t, p.stderr.String(), snap)
		})
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(fmt.Sprintf("no CMD/%v", sig), func(t *testing.T) {
			_, before, beforeTag := loadWatchTestProg(t, 1)
			snap := filepath.Join(t.TempDir(), "snap.json")
			p := startBpfmeta(t, bin, "watch", "-o", snap)
			waitFor(t, "the watch to start", func() bool { return strings.Contains(p.stderr.String(), "following BPF program loads") })
			// A program loaded and unloaded while watching.
			prog, during, duringTag := loadWatchTestProg(t, 2)
			time.Sleep(20 * time.Millisecond)
			prog.Close()
			time.Sleep(20 * time.Millisecond)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if status := p.wait(t); status != 0 {
				t.Fatalf("exit status %d after %v, want 0; stderr:\n%s", status, sig, p.stderr)
			}
			s := readWatchSnapshotFile(t, snap)
			for _, want := range []struct {
				what string
				id   uint32
				tag  perfdata.BPFTag
			}{{"loaded before", before, beforeTag}, {"loaded and unloaded while watching", during, duringTag}} {
				if _, err := s.Lookup(want.id, want.tag); err != nil {
					t.Errorf("program %d (%s): %v", want.id, want.what, err)
				}
			}
			checkWatchSummary(t, p.stderr.String(), snap)
			if n := strings.Count(p.stderr.String(), "\n"); n != 2 {
				t.Errorf("stderr has %d lines, want the start and the summary line:\n%s", n, p.stderr)
			}
		})
	}
}

// TestWatchOutput checks -o: stdout by default, -f to replace, checked
// before CMD runs, a file mode 0600.
func TestWatchOutput(t *testing.T) {
	watchNeeds(t)
	bin := buildBinary(t)
	t.Run("stdout by default", func(t *testing.T) {
		status, stdout, stderr := runBpfmeta(t, bin, "watch", "--", "true")
		if status != 0 {
			t.Fatalf("without -o: exit %d, stderr %q", status, stderr)
		}
		readWatchSnapshot(t, []byte(stdout))
	})
	t.Run("existing file", func(t *testing.T) {
		dir := t.TempDir()
		snap := filepath.Join(dir, "snap.json")
		if err := os.WriteFile(snap, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		status, _, stderr := runBpfmeta(t, bin, "watch", "--no-clobber", "-o", snap, "--", "sh", "-c", "echo ran > "+filepath.Join(dir, "ran"))
		if status != exitFailure || !strings.Contains(stderr, "exists (--no-clobber") {
			t.Errorf("onto an existing file with --no-clobber: exit %d, stderr %q; want 1 and \"exists\"", status, stderr)
		}
		if b, _ := os.ReadFile(snap); string(b) != "keep" {
			t.Errorf("the existing file now has %q", b)
		}
		noTemporaries(t, dir, "snap.json") // and CMD did not run
		status, _, stderr = runBpfmeta(t, bin, "watch", "-o", snap, "--", "true")
		if status != 0 {
			t.Fatalf("without -f: exit %d: %s", status, stderr)
		}
		readWatchSnapshotFile(t, snap)
		if b, _ := os.ReadFile(snap + ".old"); string(b) != "keep" {
			t.Errorf("the file replaced, kept as snap.json.old, holds %q", b)
		}
		os.Remove(snap + ".old")
		status, _, stderr = runBpfmeta(t, bin, "watch", "-f", "-o", snap, "--", "true")
		if status != 0 {
			t.Fatalf("with -f: exit %d: %s", status, stderr)
		}
		readWatchSnapshotFile(t, snap)
		noTemporaries(t, dir, "snap.json")
		if st, err := os.Stat(snap); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("the snapshot's mode: %v, %v; want 0600 (it holds kernel addresses)", st.Mode().Perm(), err)
		}
	})
	t.Run("stdout", func(t *testing.T) {
		status, stdout, stderr := runBpfmeta(t, bin, "watch", "-o", "-", "--", "true")
		if status != 0 {
			t.Fatalf("exit %d: %s", status, stderr)
		}
		s := readWatchSnapshot(t, []byte(stdout))
		if s.Len() == 0 && !strings.Contains(stderr, "0 BPF programs at start") {
			t.Errorf("empty snapshot, stderr %q", stderr)
		}
		checkWatchSummary(t, stderr, "stdout")
	})
	t.Run("unwritable directory", func(t *testing.T) {
		snap := filepath.Join(t.TempDir(), "no-such-dir", "snap.json")
		status, _, stderr := runBpfmeta(t, bin, "watch", "-o", snap, "--", "true")
		if status != exitFailure || !strings.HasPrefix(stderr, "bpfmeta: "+snap+": ") {
			t.Errorf("exit %d, stderr %q: want 1 and an error before watching", status, stderr)
		}
	})
}

// The records of a recording the end-to-end test compares.
type watchRecording struct {
	metas []watchMeta
	ksyms map[string]bool              // names of KSYMBOLs (register)
	loads map[uint32]perfdata.BPFEvent // PROG_LOAD BPF_EVENTs by id
}

// watchMeta is one BPF_METADATA record.
type watchMeta struct {
	name    string
	version string // the value of its "version" entry
	entries []byte // nr_entries and the entries, as stored
	body    []byte // prog_name, nr_entries and the entries (the record without header and trailer)
}

func (m watchMeta) funcName(t *testing.T) string {
	t.Helper()
	// bpf_prog_<16 hex digits>_<function>
	rest, ok := strings.CutPrefix(m.name, "bpf_prog_")
	if !ok || len(rest) < 2*perfdata.BPFTagSize+1 || rest[2*perfdata.BPFTagSize] != '_' {
		t.Fatalf("BPF_METADATA prog_name %q is not bpf_prog_<tag>_<function>", m.name)
	}
	return rest[2*perfdata.BPFTagSize+1:]
}

func readWatchRecording(t *testing.T, path string) watchRecording {
	t.Helper()
	r := rectest.Open(t, path, reader.Options{Decompress: true})
	rec := watchRecording{ksyms: map[string]bool{}, loads: map[uint32]perfdata.BPFEvent{}}
	bo := r.ByteOrder()
	for r.Next() {
		raw := r.Record().Raw
		switch r.Record().Header.Type {
		case perfdata.RecordKSymbol:
			k, err := perfdata.DecodeKSymbol(raw, bo)
			if err != nil {
				t.Fatal(err)
			}
			if !k.Unregister() {
				rec.ksyms[k.Name] = true
			}
		case perfdata.RecordBPFEvent:
			e, err := perfdata.DecodeBPFEvent(raw, bo)
			if err != nil {
				t.Fatal(err)
			}
			if e.Type == perfdata.BPFEventProgLoad {
				rec.loads[e.ID] = e
			}
		case perfdata.RecordBPFMetadata:
			m, err := perfdata.DecodeBPFMetadata(raw, bo)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			wm := watchMeta{name: m.ProgName}
			for _, e := range m.Entries {
				if e.Key == "version" {
					wm.version = e.Value
				}
			}
			end := perfdata.BPFMetadataSize(len(m.Entries), 0)
			wm.body = bytes.Clone(raw[perfdata.EventHeaderSize:end])
			wm.entries = wm.body[perfdata.BPFProgNameLen:]
			rec.metas = append(rec.metas, wm)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rec
}

// mine returns the records whose version entry is the test's.
func (r watchRecording) mine(version string) []watchMeta {
	var out []watchMeta
	for _, m := range r.metas {
		if m.version == `"`+version+`"` {
			out = append(out, m)
		}
	}
	return out
}

// watchLoaded is what bpftool says about a program the workload loaded.
type watchLoaded struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
	Tag  string `json:"tag"`
}

func readWatchLoaded(t *testing.T, path string) []watchLoaded {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the workload did not say what it loaded: %v", err)
	}
	var out []watchLoaded
	d := json.NewDecoder(bytes.NewReader(b))
	for d.More() {
		var l watchLoaded
		if err := d.Decode(&l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, l)
	}
	if len(out) != 3 {
		t.Fatalf("%s: the workload loaded %d programs, want the fixture's 3", path, len(out))
	}
	return out
}

// sortedPairs sorts (key, value) pairs, to compare multisets.
func sortedPairs(pairs [][2]string) [][2]string {
	slices.SortFunc(pairs, func(a, b [2]string) int {
		return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1])
	})
	return pairs
}

// TestWatchPerfInject is the case: bpfmeta watch runs perf 6.1's
// perf record -a, whose workload loads the meta fixture with bpftool and
// unloads it during the recording. After the recording the programs are gone,
// and inject --snapshot must give them exactly the BPF_METADATA that perf 7.2
// writes when it records the same workload.
//
// The fixture is loaded from a copy whose bpf_metadata_version is a value
// made up for this run, so that the programs are told apart from anyone
// else's loads of the same fixture on a shared machine: same functions, same
// tags, other value. Both recordings load the same copy, and the comparison
// goes by function name (the ids differ between the runs).
func TestWatchPerfInject(t *testing.T) {
	watchNeeds(t)
	watchBpftool := testkit.Command(t, "bpftool")
	watchPerfStock, watchPerfModern := testkit.PerfStock(t), testkit.PerfModern(t)
	bin := buildBinary(t)
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bpffs := testkit.MountBPFFS(t)

	obj, version := uniqueMetaFixture(t, dir)

	// The workload: load, say what was loaded, unload, all while perf records.
	workload := func(run string) (script, loadedFile string) {
		pin := filepath.Join(bpffs, run)
		loadedFile = filepath.Join(dir, run+".loaded")
		script = fmt.Sprintf(`set -e
P=%q
sleep 0.5
%s prog loadall %q "$P"
for f in "$P"/*; do %s prog show pinned "$f" --json; echo; done > %q
sleep 0.3
rm -rf "$P"
sleep 0.5`, pin, watchBpftool, obj, watchBpftool, loadedFile)
		return script, loadedFile
	}

	// perf 6.1 under bpfmeta watch.
	snap, rec := filepath.Join(dir, "snap.json"), filepath.Join(dir, "stock.data")
	script, loadedFile := workload("stock")
	start := time.Now()
	status, _, stderr := runBpfmeta(t, bin, "watch", "-o", snap, "--", watchPerfStock, "record", "-B", "-a", "-o", rec, "--", "sh", "-c", script)
	if status != 0 {
		t.Fatalf("bpfmeta watch -- perf record: exit %d\n%s", status, stderr)
	}
	t.Logf("bpfmeta watch -- perf 6.1 record took %v: %s", time.Since(start).Round(time.Millisecond), lastSummary(stderr))
	checkWatchSummary(t, stderr, snap)
	loaded := readWatchLoaded(t, loadedFile)
	for _, l := range loaded {
		if _, err := live.Program(l.ID); !errors.Is(err, bpfprog.ErrNotFound) {
			t.Fatalf("program %d (%s) is still loaded after the recording (%v): the test needs it gone", l.ID, l.Name, err)
		}
	}

	// The snapshot has the programs, with their metadata.
	s := readWatchSnapshotFile(t, snap)
	var progs []*bpfprog.Program
	for _, l := range loaded {
		p, err := s.Lookup(l.ID, testkit.Tag(t, l.Tag))
		if err != nil {
			t.Fatalf("the snapshot: %v", err)
		}
		md, err := p.BPFMetadata()
		if err != nil {
			t.Fatalf("the snapshot: %v", err)
		}
		if e := md.Entries[0]; e.Key != "version" || e.Value != `"`+version+`"` {
			t.Fatalf("the snapshot: program %d: first entry %+v, want version %q", l.ID, md.Entries[0], version)
		}
		progs = append(progs, p)
	}
	stock := readWatchRecording(t, rec)
	var kernelNames, perfNames [][2]string
	for _, p := range progs {
		if _, ok := stock.loads[p.ID]; !ok {
			t.Errorf("perf 6.1's recording has no PROG_LOAD for program %d (%s)", p.ID, p.Name)
		}
		md, _ := p.BPFMetadata()
		for i, f := range p.Funcs {
			if !stock.ksyms[f.KernelName] {
				t.Errorf("perf 6.1's recording has no KSYMBOL %s (program %d)", f.KernelName, p.ID)
			}
			kernelNames = append(kernelNames, [2]string{f.KernelName, ""})
			perfNames = append(perfNames, [2]string{md.ProgNames[i], ""})
		}
	}

	// inject: from the snapshot, with inject's names (the KSYMBOLs') and
	// with perf's; from the running kernel, which knows the programs no more.
	injected := map[string]watchRecording{}
	for _, v := range []struct {
		name string
		args []string
	}{
		{"snapshot", []string{"--snapshot", snap}},
		{"perf-names", []string{"--snapshot", snap, "--perf-names"}},
		{"live", nil},
	} {
		out := filepath.Join(dir, "inject-"+v.name+".data")
		status, _, stderr := runBpfmeta(t, bin, append(append([]string{"inject"}, v.args...), "-i", rec, "-o", out)...)
		if status != 0 {
			t.Fatalf("bpfmeta inject %q: exit %d\n%s", v.args, status, stderr)
		}
		injected[v.name] = readWatchRecording(t, out)
	}
	if m := injected["live"].mine(version); len(m) != 0 {
		t.Errorf("inject from the running kernel added %d records for programs that are gone", len(m))
	}

	// perf 7.2, the same workload, natively.
	modernRec := filepath.Join(dir, "modern.data")
	script, modernLoadedFile := workload("modern")
	cmd := exec.Command(watchPerfModern, "record", "-B", "-a", "-o", modernRec, "--", "sh", "-c", script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("perf 7.2 record: %v\n%s", err, out)
	}
	modernLoaded := readWatchLoaded(t, modernLoadedFile)
	modern := readWatchRecording(t, modernRec)
	for _, l := range modernLoaded {
		if _, ok := modern.loads[l.ID]; !ok {
			t.Errorf("perf 7.2's recording has no PROG_LOAD for program %d (%s)", l.ID, l.Name)
		}
	}

	want := modern.mine(version)
	if len(want) != len(kernelNames) {
		t.Fatalf("perf 7.2 wrote %d BPF_METADATA records for the test's programs, want one per function: %d", len(want), len(kernelNames))
	}
	byFunc := func(ms []watchMeta, field func(watchMeta) []byte) [][2]string {
		var out [][2]string
		for _, m := range ms {
			out = append(out, [2]string{m.funcName(t), string(field(m))})
		}
		return sortedPairs(out)
	}
	names := func(ms []watchMeta) [][2]string {
		var out [][2]string
		for _, m := range ms {
			out = append(out, [2]string{m.name, ""})
		}
		return sortedPairs(out)
	}
	entries := func(m watchMeta) []byte { return m.entries }
	body := func(m watchMeta) []byte { return m.body }

	// perf 7.2's names are perf's (the program's BTF and prog_tags: the same
	// for the same object), which the snapshot predicts.
	if got := names(want); !slices.Equal(got, sortedPairs(perfNames)) {
		t.Errorf("perf 7.2's prog_names %q, the snapshot's perf names %q", got, perfNames)
	}
	got := injected["snapshot"].mine(version)
	if g := names(got); !slices.Equal(g, sortedPairs(kernelNames)) {
		t.Errorf("inject --snapshot: prog_names %q, want the KSYMBOL names %q", g, kernelNames)
	}
	if g, w := byFunc(got, entries), byFunc(want, entries); !slices.Equal(g, w) {
		t.Errorf("inject --snapshot: entries differ from perf 7.2's by function:\n%s", describePairs(g, w))
	}
	gotPerf := injected["perf-names"].mine(version)
	if g, w := byFunc(gotPerf, body), byFunc(want, body); !slices.Equal(g, w) {
		t.Errorf("inject --snapshot --perf-names: records differ from perf 7.2's:\n%s", describePairs(g, w))
	}
	t.Logf("%d programs loaded and unloaded while perf 6.1 recorded: %d BPF_METADATA records injected from the snapshot, "+
		"entries identical to perf 7.2's %d by function (and with --perf-names, prog_names too)", len(progs), len(got), len(want))
}

// uniqueMetaFixture writes a copy of the meta fixture into dir whose
// bpf_metadata_version is a value made up for this run, so that its
// programs are told apart from anyone else's loads of the fixture on a
// shared machine (same functions, same tags, another value), and returns
// its path and the version.
func uniqueMetaFixture(t *testing.T, dir string) (obj, version string) {
	t.Helper()
	fixture := testkit.Fixture("meta")
	version = fmt.Sprintf("w%06x", rand.Uint32()&0xffffff)
	if len(version) != len(watchFixtureVersion) {
		t.Fatalf("version %q must have the length of %q", version, watchFixtureVersion)
	}
	obj = filepath.Join(dir, "meta-"+version+".bpf.o")
	b, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(watchFixtureVersion+"\x00")); n != 1 {
		t.Fatalf("%s has %q %d times, want once (in .rodata)", fixture, watchFixtureVersion, n)
	}
	if err := os.WriteFile(obj, bytes.Replace(b, []byte(watchFixtureVersion), []byte(version), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	return obj, version
}

// describePairs shows the first difference of two sorted pair lists.
func describePairs(got, want [][2]string) string {
	for i := range max(len(got), len(want)) {
		var g, w [2]string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("item %d: got %s (%d bytes), want %s (%d bytes); %d and %d items",
				i, g[0], len(g[1]), w[0], len(w[1]), len(got), len(want))
		}
	}
	return "no difference"
}

// lastSummary returns bpfmeta watch's summary line.
func lastSummary(stderr string) string {
	for _, line := range slices.Backward(strings.Split(strings.TrimSpace(stderr), "\n")) {
		if strings.HasPrefix(line, "bpfmeta: watch: ") {
			return line
		}
	}
	return ""
}
