package main

// What a new user tries first: the recording as an argument, options
// before the command, -j, --prog, a mistyped flag, and show on a recording
// that has no BPF_METADATA yet.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

func TestCLIPerfHabits(t *testing.T) {
	in := corpusPath(t, bpfFile)
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // a part of it
		stderr string
	}{
		// show FILE is show -i FILE; it names the file, and what inject would do
		{[]string{"show", in}, exitOK, "BPF_METADATA records; it has ", ""},
		{[]string{"show", in}, exitOK, "bpfmeta inject adds the metadata of those that have bpf_metadata_* variables", ""},
		{[]string{"show", in}, exitOK, "if inject wrote this file, none of them has any (make demo", ""},
		{[]string{"show", "-j", in}, exitOK, `"records": []`, ""},
		{[]string{"-q", "show", in}, exitOK, "no BPF_METADATA records", ""},
		{[]string{"-v", "show", in}, exitOK, "no BPF_METADATA records", "records, "},
		{[]string{"dump", "--stats", in}, exitOK, "KSYMBOL", ""},
		{[]string{"show", "--prog", "1", in}, exitFailure, "", "no BPF_METADATA record of a program 1"},
		{[]string{"show", "-i", in, in}, exitUsage, "", "name the recording once"},
		{[]string{"show", "--jsn", in}, exitUsage, "", "did you mean --json?"},
		{[]string{"show", "--jsno", in}, exitUsage, "", "did you mean --json?"},
		{[]string{"inject", in, "p.meta.data"}, exitUsage, "", "(to write p.meta.data: -o p.meta.data)"},
		{[]string{"strip", in, "p.data"}, exitUsage, "", "-o p.data"},
		{[]string{"inject", "--snapsot", "x", in}, exitUsage, "", "did you mean --snapshot?"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := bpfmeta(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("%v, stdout %q; want exit %d, %q on stdout and %q on stderr", r, tail(r.stdout, 500), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestInjectSummary: one line without -v; the note that perf before 6.17
// cannot read the output only where such a perf may read it, not on the
// way into bpfmeta show, nor into /dev/null.
func TestInjectSummary(t *testing.T) {
	bin := buildBinary(t)
	bash := testkit.Command(t, "bash")
	in := corpusPath(t, bpfFile)
	snap := programsSnapshot(t, recordedPrograms(t, in, allPrograms))
	out := filepath.Join(t.TempDir(), "out.data")
	inject := bin + " inject --snapshot " + snap + " -i " + in
	for _, tc := range []struct {
		script string
		lines  int
		note   bool
	}{
		{inject + " -o " + out, 1, true},
		{inject + " | cat >/dev/null", 1, true},
		{inject + " | " + bin + " show >/dev/null", 1, false},
		// the shell's fork not yet bpfmeta when inject ends (all its output
		// in the pipe): inject waits for the exec
		{inject + " | (sleep 0.05; exec " + bin + " show >/dev/null)", 1, false},
		{inject + " -o /dev/null", 1, false},
		{inject + " -v -o /dev/null", 2, false}, // and the programs not looked for
	} {
		t.Run(tc.script, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.Command(bash, "-e", "-o", "pipefail", "-c", tc.script)
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			// the recording is of another machine, from a pipe: warnings and
			// notes of its own come first
			_, summary, _ := strings.Cut(stderr.String(), "BPF_METADATA records added")
			lines := strings.Count(summary, "\n")
			note := strings.Contains(summary, "note: perf before 6.17")
			if note {
				lines--
			}
			if lines != tc.lines || note != tc.note {
				t.Errorf("stderr:\n%s\nwant %d lines of summary, the note %v", stderr.String(), tc.lines, tc.note)
			}
		})
	}
}

// TestProgressSignal: on a terminal, inject reading a pipe shows the bytes
// read, and a signal that ends it erases the line first.
func TestProgressSignal(t *testing.T) {
	bin := buildBinary(t)
	scriptCmd := testkit.Command(t, "script") // a terminal for bpfmeta's stderr
	perf := perfPath(t, stockPerf)
	testkit.Root(t)
	// a CPU kept busy for 2 s, so that the stream is MBs however idle the
	// machine is (a system-wide sleep 1 made 0.5 MB on a quiet one)
	busy := `end=$(($(date +%s)+2)); while [ $(date +%s) -lt $end ]; do :; done`
	stream, err := exec.Command(perf, "record", "-q", "-o", "-", "-a", "-F", "20000", "-g", "--", "sh", "-c", busy).Output()
	if err != nil || len(stream) < 1<<20 {
		t.Fatalf("perf record: %d bytes, %v", len(stream), err)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	typescript := filepath.Join(dir, "typescript")
	cmd := exec.Command(scriptCmd, "-qfec", bin+" inject --snapshot "+emptySnapshot(t)+" -i "+fifo+" -o /dev/null", typescript)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	go func() { // slowly, so that the progress shows
		for b := stream; len(b) > 0; b = b[min(len(b), 64<<10):] {
			if _, err := w.Write(b[:min(len(b), 64<<10)]); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	waitFor(t, "the progress line", func() bool {
		b, _ := os.ReadFile(typescript)
		return bytes.Contains(b, []byte(" MB read"))
	})
	pids, err := exec.Command("pgrep", "-f", "^"+bin+" inject").Output() // not script, nor its sh
	if err != nil {
		t.Fatalf("pgrep: %v", err)
	}
	for _, pid := range strings.Fields(string(pids)) {
		exec.Command("kill", "-TERM", pid).Run()
	}
	cmd.Wait()
	b, _ := os.ReadFile(typescript)
	_, after, _ := bytes.Cut(b[bytes.LastIndex(b, []byte(" MB read")):], []byte("\033[K"))
	if !bytes.HasPrefix(after, []byte("\r\033[K")) {
		t.Errorf("after the last progress line, not erased: %q", tail(string(b), 300))
	}
}

// TestInjectIntoMktemp: perf's own tests/shell/pipe_test.sh makes its
// output with mktemp, then runs perf record -o - | perf inject -o "$data":
// an empty file of the caller's is replaced without -f, nothing of it can
// be lost; once it holds a recording, it is replaced and kept as
// FILE.old, or refused with --no-clobber.
func TestInjectIntoMktemp(t *testing.T) {
	in := corpusPath(t, bpfFile)
	snap := programsSnapshot(t, recordedPrograms(t, in, allPrograms))
	data := filepath.Join(t.TempDir(), "perf.data.XXXXXX")
	if err := os.WriteFile(data, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if r := bpfmeta(t, f, "inject", "--snapshot", snap, "-o", data); r.code != exitOK {
		t.Fatalf("inject -o over an empty file of mktemp's: %v", r)
	}
	if st, _ := os.Stat(data); st == nil || st.Size() == 0 {
		t.Fatalf("the output is %v", st)
	}
	before := stateOf(t, data)
	r := bpfmeta(t, nil, "inject", "--no-clobber", "--snapshot", snap, "-i", in, "-o", data)
	oneLine(t, "inject -o over a recording with --no-clobber", r, "exists (--no-clobber")
	before.check(t, data, "a refused inject")
	// without --no-clobber: replaced, as perf inject replaces it, and kept
	// as perf.data.old, as perf record keeps it
	if r := bpfmeta(t, nil, "inject", "--snapshot", snap, "-i", in, "-o", data); r.code != exitOK {
		t.Fatalf("inject -o over a recording: %v", r)
	}
	before.check(t, data+".old", "the recording replaced")
	// FILE.old the input: it would be replaced while it is read
	r = bpfmeta(t, nil, "inject", "--snapshot", snap, "-i", data+".old", "-o", data)
	if r.code != exitUsage || !strings.Contains(r.stderr, ".old is the input") {
		t.Errorf("inject -i FILE.old -o FILE: %v", r)
	}
	before.check(t, data+".old", "a refused inject of FILE.old")
	if r := bpfmeta(t, nil, "inject", "-h"); !strings.Contains(r.stdout, "kept as FILE.old") || !strings.Contains(r.stdout, "--no-clobber") {
		t.Errorf("inject -h does not say a file is kept as FILE.old, or --no-clobber: %q", r.stdout)
	}
}

// TestSnapshotMessages: what --snapshot says of a snapshot it cannot use
// names the cause: TMPDIR where a piped snapshot is copied to, a file of
// procfs (size 0, content all the same) that is not a snapshot, a stdin
// that is not one (it once returned a nil snapshot: a panic).
func TestSnapshotMessages(t *testing.T) {
	in := corpusPath(t, smallFile)
	snap := testkit.ReadFile(t, emptySnapshot(t))
	pipeOf := func(b []byte) *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() { w.Write(b); w.Close() }()
		t.Cleanup(func() { r.Close() })
		return r
	}
	t.Run("TMPDIR", func(t *testing.T) {
		fifo := fifoWith(t, t.TempDir(), snap)
		t.Setenv("TMPDIR", "/nonexistent")
		r := bpfmeta(t, nil, "inject", "-i", in, "--snapshot", fifo, "-o", "/dev/null")
		oneLine(t, "a FIFO's snapshot, TMPDIR=/nonexistent", r, "TMPDIR (/nonexistent)", "no such file or directory")
		r = bpfmeta(t, pipeOf(snap), "inject", "-i", in, "--snapshot", "-", "-o", "/dev/null")
		oneLine(t, "a piped snapshot, TMPDIR=/nonexistent", r, "stdin: a snapshot read from a pipe is copied to TMPDIR (/nonexistent)")
	})
	for _, c := range []struct {
		name  string
		stdin []byte
		path  string
		want  string
	}{
		{"/proc/kallsyms", nil, "/proc/kallsyms", "/proc/kallsyms: snapshot: not a bpfmeta snapshot (its first line is not a snapshot's)"},
		{"empty", nil, filepath.Join(t.TempDir(), "empty"), "not a bpfmeta snapshot: the file is empty"},
		{"stdin not a snapshot", []byte("garbage\n"), "-", "stdin: snapshot: not a bpfmeta snapshot"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "empty" {
				os.WriteFile(c.path, nil, 0o600)
			}
			var stdin *os.File
			if c.stdin != nil {
				stdin = pipeOf(c.stdin)
			}
			r := bpfmeta(t, stdin, "inject", "-i", in, "--snapshot", c.path, "-o", "/dev/null")
			if r.code != exitFailure {
				t.Errorf("%v, want exit 1", r)
			}
			oneLine(t, c.name, r, c.want)
		})
	}
}

// TestLoadsOfOneID: a recording of many loads of one program id (perf
// records an id once) is summarised as one program and the loads, not as
// as many programs as loads.
func TestLoadsOfOneID(t *testing.T) {
	path := zFloodFile(t, t.TempDir(), "one-id.data", func(z *zFlood) {
		for range 1000 {
			z.add().BPFEvent(perfdata.BPFEventProgLoad, 7, perfdata.BPFTag{7}, true)
		}
	})
	for _, v := range []string{"", "-v"} {
		args := []string{"inject", "--snapshot", emptySnapshot(t), "-i", path, "-o", "/dev/null"}
		if v != "" {
			args = append(args, v)
		}
		r := bpfmeta(t, nil, args...)
		if r.code != exitOK || !strings.Contains(r.stderr, ": 1 BPF program") || !strings.Contains(r.stderr, "999 ") || strings.Contains(r.stderr, "1000 BPF programs") {
			t.Errorf("inject %s of 1000 loads of one id: %v\n%s", v, r, r.stderr)
		}
	}
}

// TestShortNotRecording: a short file that does not start as a recording
// does is "not a perf.data recording", whatever its length; one that does
// is a recording cut short.
func TestShortNotRecording(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello this is a text file\n"), 0o600)
	oneLine(t, "show of 26 bytes of text", bpfmeta(t, nil, "show", text), "notes.txt is not a perf.data recording")
	cut := filepath.Join(dir, "cut.data")
	os.WriteFile(cut, testkit.CorpusBytes(t, smallFile)[:30], 0o600)
	oneLine(t, "show of 30 bytes of a recording", bpfmeta(t, nil, "show", cut), "truncated file header: 30 of 104 bytes")
}

// TestInjectVerboseWords: inject -v's headline counts the programs that
// have no bpf_metadata_* variables apart from those whose metadata is
// missing (not "0 without metadata; 3 without the metadata"), and a
// program unloaded during the recording points at watch's journal.
func TestInjectVerboseWords(t *testing.T) {
	sum := &inject.Summary{Programs: []inject.Program{
		{ID: 5, Outcome: inject.NotFound, Err: bpfprog.ErrNotFound, Unloaded: true, Missing: inject.MissingWithSamples, Samples: 3},
		{ID: 6, Outcome: inject.NoMetadata},
	}}
	var b strings.Builder
	summarize(sum, journal.WithKernel(nil, nil)).print(&b, "p.data", true)
	out := b.String()
	for _, want := range []string{"1 without bpf_metadata_* variables", "the metadata of 1 is missing (1 with samples)", "unloaded during the recording, before inject could read it, and no journal keeps it (bpfmeta-watch.service, or bpfmeta watch"} {
		if !strings.Contains(out, want) {
			t.Errorf("inject -v says\n%s\nwithout %q", out, want)
		}
	}
	if strings.Contains(out, "without metadata") {
		t.Errorf("inject -v says %q", out)
	}
}

// TestOtherMachineWords: the warning of another machine's recording does
// not say that nothing matches, when the summary then counts records
// added (a hostname edited in the snapshot, a machine renamed).
func TestOtherMachineWords(t *testing.T) {
	in := corpusPath(t, bpfFile)
	r := bpfmeta(t, nil, "inject", "--snapshot", programsSnapshot(t, recordedPrograms(t, in, allPrograms)), "-i", in, "-o", "/dev/null")
	if r.code != exitOK || !strings.Contains(r.stderr, "41 BPF_METADATA records added") ||
		!strings.Contains(r.stderr, "only programs that match the recording's by id, tag and addresses get metadata") || strings.Contains(r.stderr, "do not match") {
		t.Errorf("%v\n%s", r, r.stderr)
	}
}

// TestSpoolProgress: cat big.data | bpfmeta inject -o out, on a terminal,
// shows the copy of a file-format recording to TMPDIR (which comes before
// any record is read) instead of nothing.
func TestSpoolProgress(t *testing.T) {
	bin := buildBinary(t)
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		testkit.Missing(t, "no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := testkit.CorpusBytes(t, smallFile)
	cmd := exec.Command(bin, "inject", "--snapshot", emptySnapshot(t), "-o", filepath.Join(t.TempDir(), "out.data"))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var shown bytes.Buffer
	read := make(chan struct{})
	go func() {
		io.Copy(&shown, ptmx) // to EIO, when the process has closed it
		close(read)
	}()
	in.Write(data[:4096])
	time.Sleep(cliutil.ProgressDelay + 300*time.Millisecond)
	in.Write(data[4096:5000]) // a read after the delay draws the line
	time.Sleep(200 * time.Millisecond)
	in.Write(data[5000:])
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, shown.String())
	}
	select {
	case <-read:
	case <-time.After(2 * time.Second):
	}
	if !strings.Contains(shown.String(), "bpfmeta: stdin (a file-format recording, copied to ") {
		t.Errorf("the terminal shows %q, no copy's progress", shown.String())
	}
}
