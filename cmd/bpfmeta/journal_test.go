package main

// Tests of bpfmeta watch --journal as a process: killed with SIGKILL in a
// burst of loads and started again; at its size limit, with inject naming
// the programs that fell out of it.

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// journalLoads reads a journal as bpfmeta programs --journal does, and
// returns the ids of its loads, its segments, and where segments stop
// before their end.
func journalLoads(t *testing.T, dir string) (ids []uint32, segs []uint64, torn []string) {
	t.Helper()
	j, err := journal.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range j.Hosts() {
		for e, err := range j.Host(h).Records() {
			if err != nil {
				t.Fatalf("the journal does not read: %v", err)
			}
			if !slices.Contains(segs, e.Seq) {
				segs = append(segs, e.Seq)
			}
			if e.Program != nil {
				ids = append(ids, e.Program.ID)
			}
			if e.Torn != "" {
				torn = append(torn, e.Torn)
			}
		}
	}
	return ids, segs, torn
}

// TestWatchJournalKill kills watch --journal with SIGKILL in the middle of
// a burst of loads: the journal reads, every program loaded more than a
// second before the kill is in it, and a watch started again continues it
// in a new segment, with the programs still loaded.
func TestWatchJournalKill(t *testing.T) {
	watchNeeds(t)
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "journal")
	p := startBpfmeta(t, bin, "watch", "--journal", dir)
	waitFor(t, "the journal to start", func() bool { return strings.Contains(p.stderr.String(), "following BPF program loads") })
	type loaded struct {
		id   uint32
		at   time.Time
		prog *ebpf.Program
	}
	var progs []loaded
	start := time.Now()
	var killed time.Time
	for i := 0; time.Since(start) < 2500*time.Millisecond; i++ {
		prog, id, _ := loadWatchTestProg(t, int32(i))
		progs = append(progs, loaded{id, time.Now(), prog})
		if i%4 != 0 {
			// most are unloaded again soon: the journal has their unloads too
			if old := len(progs) - 20; old >= 0 && old%4 != 0 {
				progs[old].prog.Close()
			}
		}
		if killed.IsZero() && time.Since(start) > 1500*time.Millisecond {
			if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = time.Now()
		}
		time.Sleep(time.Millisecond)
	}
	p.wait(t)
	ids, segs, torn := journalLoads(t, dir)
	var lost []uint32
	n := 0
	for _, l := range progs {
		if l.at.Before(killed.Add(-time.Second)) {
			n++
			if !slices.Contains(ids, l.id) {
				lost = append(lost, l.id)
			}
		}
	}
	if len(lost) > 0 || n == 0 {
		t.Errorf("%d of the %d programs loaded more than a second before the SIGKILL are not in the journal: %v", len(lost), n, lost)
	}
	t.Logf("%d programs loaded in the burst, %d of them more than a second before the SIGKILL; the journal has %d loads; torn: %q", len(progs), n, len(ids), torn)

	// Started again: a new segment, with what is loaded now.
	p2 := startBpfmeta(t, bin, "watch", "--journal", dir)
	waitFor(t, "the journal to start again", func() bool { return strings.Contains(p2.stderr.String(), "following BPF program loads") })
	if err := p2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if status := p2.wait(t); status != 0 {
		t.Fatalf("exit status %d after SIGTERM; stderr:\n%s", status, p2.stderr)
	}
	ids2, segs2, _ := journalLoads(t, dir)
	if len(segs2) != len(segs)+1 || segs2[len(segs2)-1] <= segs[len(segs)-1] {
		t.Errorf("started again: segments %v, before %v", segs2, segs)
	}
	still := progs[len(progs)-1] // never closed until the test ends
	if !slices.Contains(ids2[len(ids):], still.id) {
		t.Errorf("the new segment does not have program %d, still loaded", still.id)
	}
	// The files and directories are the service's alone.
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]os.FileMode{true: 0o700, false: 0o600}[fi.IsDir()]; fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
		return nil
	})
}

// TestWatchJournalSizeLimit fills a journal past --max-size after a
// recording whose programs are then gone: its oldest segments are
// dropped and counted, and inject names the recording's programs that
// fell out of it.
func TestWatchJournalSizeLimit(t *testing.T) {
	watchNeeds(t)
	perf := testkit.PerfStock(t)
	bin := buildBinary(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "journal")
	p := startBpfmeta(t, bin, "watch", "--journal", dir, "--max-size", "5M")
	waitFor(t, "the journal to start", func() bool { return strings.Contains(p.stderr.String(), "following BPF program loads") })
	rec := filepath.Join(tmp, "rec.data")
	r := testkit.StartPerf(t, perf, rec, testkit.PerfOptions{SystemWide: true, Args: []string{"-F", "99"}})
	r.WaitReady(t)
	time.Sleep(200 * time.Millisecond)
	var early []uint32
	for i := range 3 {
		prog, id, _ := loadWatchTestProg(t, int32(1000+i))
		early = append(early, id)
		time.Sleep(100 * time.Millisecond) // read by the journal while loaded
		prog.Close()
	}
	time.Sleep(200 * time.Millisecond)
	r.Stop(t)
	// Fill the journal until the segment with the early programs is
	// dropped: batches of programs kept loaded until the journal read them.
	first := filepath.Join(dir, mustHostname(t), "0000000000000001.journal")
	for batch := 0; ; batch++ {
		if _, err := os.Stat(first); os.IsNotExist(err) {
			break
		}
		if batch > 400 {
			t.Fatal("the journal's first segment is still there after 400 batches of loads")
		}
		var held []*ebpf.Program
		for i := range 100 {
			prog, _, _ := loadWatchTestProg(t, int32(i))
			held = append(held, prog)
		}
		time.Sleep(50 * time.Millisecond)
		for _, h := range held {
			h.Close()
		}
	}
	time.Sleep(200 * time.Millisecond)
	var size int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	if size > 5<<20 {
		t.Errorf("the journal holds %d bytes, over --max-size 5M", size)
	}
	status, stdout, stderr := runBpfmeta(t, bin, "programs", "--journal", dir)
	if status != 0 || !strings.Contains(stdout, "dropped segment 1 by the size limit") {
		t.Errorf("programs --journal: status %d, no dropped segment 1:\n%s", status, stderr)
	}
	status, _, stderr = runBpfmeta(t, bin, "inject", "--journal", dir, "-v", "-i", rec, "-o", filepath.Join(tmp, "out.data"))
	if status != 0 || !strings.Contains(stderr, "fell out of the journal") {
		t.Fatalf("inject: status %d, it says nothing of programs that fell out of the journal:\n%s", status, stderr)
	}
	for _, id := range early {
		if !strings.Contains(stderr, " "+itoa(id)) {
			t.Errorf("inject does not name program %d, which fell out of the journal:\n%s", id, stderr)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(t)
	t.Logf("journal of %d bytes; inject says:\n%s", size, stderr)
}

func mustHostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func itoa(id uint32) string { return strconv.FormatUint(uint64(id), 10) }

// TestInjectOtherHostJournal: a recording of another machine is warned of
// when its metadata comes from the running kernel, unless the journal has
// that machine's programs (a tree of hosts).
func TestInjectOtherHostJournal(t *testing.T) {
	watchNeeds(t)
	in := corpusPath(t, "mstange_perf6.16_x86_64_zstd_compressed2.data") // recorded on arthur-des
	for host, warned := range map[string]bool{"arthur-des": false, "elsewhere": true} {
		dir := t.TempDir()
		jw, err := journal.Create(dir, bpfprog.System{Hostname: host, BootID: "elsewhere"}, journal.Options{})
		if err != nil {
			t.Fatal(err)
		}
		jw.Close()
		r := bpfmeta(t, nil, "inject", "--journal", dir, "-i", in, "-o", "/dev/null")
		if got := strings.Contains(r.stderr, "was recorded on arthur-des"); got != warned || r.code != exitOK {
			t.Errorf("a journal of %s: warned %v, want %v: %v", host, got, warned, r)
		}
	}
}

// TestPerfDaemonJournal is the README's recipe: a perf daemon
// flight-recorder session (--switch-output, and --overwrite, whose ring
// buffer perf copies newest record first) beside the journal service; programs loaded and unloaded; the session signalled
// after they are gone; inject of the dump takes their metadata from the
// journal.
func TestPerfDaemonJournal(t *testing.T) {
	for _, session := range []string{"--switch-output", "--overwrite --switch-output"} {
		t.Run(session, func(t *testing.T) { testPerfDaemonJournal(t, session) })
	}
}

func testPerfDaemonJournal(t *testing.T, session string) {
	watchNeeds(t)
	perf := testkit.PerfStock(t)
	bpftool := testkit.Command(t, "bpftool")
	bin := buildBinary(t)
	bpffs := testkit.MountBPFFS(t)
	tmp := t.TempDir()
	jdir := filepath.Join(tmp, "journal")
	svc := startBpfmeta(t, bin, "watch", "--journal", jdir)
	waitFor(t, "the journal to start", func() bool { return strings.Contains(svc.stderr.String(), "following BPF program loads") })

	base, conf := filepath.Join(tmp, "perf-flight"), filepath.Join(tmp, "perf-flight.conf")
	os.Mkdir(base, 0o700)
	os.WriteFile(conf, []byte("[daemon]\nbase="+base+"\n\n[session-flight]\nrun = -m 16M -a -g -F 99 "+session+"\n"), 0o600)
	daemon := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(perf, append([]string{"daemon"}, append(args, "--config", conf)...)...).CombinedOutput(); err != nil {
			t.Fatalf("perf daemon %v: %v\n%s", args, err, out)
		}
	}
	daemon("start")
	t.Cleanup(func() { exec.Command(perf, "daemon", "stop", "--config", conf).Run() })
	time.Sleep(time.Second) // the session records

	pin := filepath.Join(bpffs, "flight")
	if out, err := exec.Command("sh", "-c", "mkdir -p '"+pin+"' && "+bpftool+" prog loadall '"+testkit.Fixture("meta")+"' '"+pin+"'").CombinedOutput(); err != nil {
		t.Fatalf("bpftool: %v\n%s", err, out)
	}
	ids := pinnedIDsIn(t, pin)
	time.Sleep(300 * time.Millisecond)
	os.RemoveAll(pin)
	for _, id := range ids {
		testkit.WaitUnloaded(t, id)
	}
	daemon("signal", "--session", "flight")
	var dump string
	waitFor(t, "the session's dump", func() bool {
		m, _ := filepath.Glob(filepath.Join(base, "session-flight", "perf.data.2*"))
		if len(m) > 0 {
			dump = m[0]
		}
		return dump != ""
	})
	time.Sleep(500 * time.Millisecond)
	out := filepath.Join(tmp, "flight.meta.data")
	status, _, stderr := runBpfmeta(t, bin, "inject", "--journal", jdir, "-v", "-i", dump, "-o", out)
	if status != 0 || !strings.Contains(stderr, "came from the journal") {
		t.Fatalf("inject of the dump: status %d:\n%s", status, stderr)
	}
	_, shown, _ := runBpfmeta(t, bin, "show", out)
	for _, id := range ids {
		if strings.Contains(stderr, "program "+itoa(id)+" ") {
			t.Errorf("program %d has no metadata:\n%s", id, stderr)
		}
	}
	if !strings.Contains(shown, watchFixtureVersion) {
		t.Errorf("show of the dump has not the fixture's version %s:\n%s", watchFixtureVersion, shown)
	}
	// the recipe's flame graph step: stacks to fold
	if r := annotateText(t, perfScriptText(t, perf, dump), "-i", out, "--folded"); r.code != 0 || r.stdout == "" || strings.Contains(r.stderr, "no callchains") {
		t.Errorf("annotate --folded of the dump: %v", r)
	}
	svc.cmd.Process.Signal(syscall.SIGTERM)
	svc.wait(t)
}

// pinnedIDsIn returns the ids of the programs pinned under dir.
func pinnedIDsIn(t *testing.T, dir string) []uint32 {
	t.Helper()
	var ids []uint32
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p, err := ebpf.LoadPinnedProgram(filepath.Join(dir, e.Name()), nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, testkit.ProgramID(t, p))
		p.Close()
	}
	if len(ids) == 0 {
		t.Fatalf("nothing pinned under %s", dir)
	}
	return ids
}
