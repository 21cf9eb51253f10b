package main

// Writes and privilege (issue 23): standard streams that are not what they
// seem, runs without a capability, outputs another user prepared.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// asNobody is the command bpfmeta runs under to be another user, without
// any capability.
func asNobody(t testing.TB) []string {
	t.Helper()
	testkit.Root(t)
	return []string{testkit.Command(t, "setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"}
}

// nobodyCanRun makes bin and dir usable by nobody.
func nobodyCanRun(t testing.TB, bin, dir string) {
	t.Helper()
	for _, d := range []string{filepath.Dir(bin), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStdoutDevNullReadWrite: a stdout that is /dev/null opened read-write
// (1<>/dev/null, Python's subprocess.DEVNULL) is /dev/null, not a closed
// stdout: the commands that write to stdout succeed.
func TestStdoutDevNullReadWrite(t *testing.T) {
	sh := testkit.Command(t, "sh")
	bin := buildBinary(t)
	snap := emptySnapshot(t)
	in := corpusPath(t, bpfFile)
	cases := [][]string{
		{"show", "-i", in},
		{"show", "--json", "-i", in},
		{"inject", "-q", "--snapshot", snap, "-i", in, "-o", "-"},
		{"convert", "-i", in, "-o", "-"},
		{"strip", "-q", "-i", in, "-o", "-"},
		{"dump", "-i", in},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, []string{"programs"}, []string{"programs", "--json"}, []string{"snapshot"})
	}
	for _, args := range cases {
		cmd := exec.Command(sh, append([]string{"-c", `exec "$@" 1<>/dev/null`, "sh", bin}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != exitOK {
			t.Errorf("%s 1<>/dev/null: exit %d, %q; want exit 0", strings.Join(args[:1], " "), code, stderr.String())
		}
	}
}

// TestStdoutIsInput: a stdout that is the input (>> INPUT, or < INPUT >>
// INPUT) is refused as -o INPUT is, and the input is left as it was.
func TestStdoutIsInput(t *testing.T) {
	bin := buildBinary(t)
	snap := emptySnapshot(t)
	for _, c := range writingCommands(snap) {
		for _, how := range []string{"-i INPUT -o -", "-i INPUT -o /dev/stdout", "-i - -o -"} {
			dir := t.TempDir()
			in := copyFile(t, corpusPath(t, smallFile), dir)
			before := stateOf(t, in)
			out, err := os.OpenFile(in, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			args := with(c.args, strings.Fields(strings.ReplaceAll(how, "INPUT", in))...)
			o := procRun{stdout: out}
			if strings.HasPrefix(how, "-i -") {
				stdin, err := os.Open(in)
				if err != nil {
					t.Fatal(err)
				}
				defer stdin.Close()
				o.stdin = stdin
			}
			r := runProc(t, bin, o, args...)
			out.Close()
			if r.code != exitUsage {
				t.Errorf("%s %s >> INPUT: %v, want exit 2", c.name, how, r.result)
			}
			oneLine(t, c.name+" "+how, r.result, "the input")
			before.check(t, in, c.name+" "+how+" >> INPUT")
		}
	}
}

// TestProgramsFailurePrintsNothing: programs that cannot read the kernel's
// programs (another user) prints nothing on stdout: a script reading its
// JSON must not see an empty list.
func TestProgramsFailurePrintsNothing(t *testing.T) {
	wrap := asNobody(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	nobodyCanRun(t, bin, dir)
	for _, args := range [][]string{{"programs", "--json"}, {"programs"}, {"programs", "--json", "1"}} {
		r := runProc(t, bin, procRun{dir: dir, wrap: wrap}, args...)
		if r.code != exitFailure || r.stdout != "" {
			t.Errorf("%s as nobody: %v, stdout %q; want exit 1 and nothing on stdout", strings.Join(args, " "), r.result, r.stdout)
		}
		oneLine(t, strings.Join(args, " "), r.result, "CAP_SYS_ADMIN")
	}
}

// TestWatchWithoutCapSyslog: a watch that the kernel shows no addresses to
// (root without CAP_SYSLOG) fails, naming the capability, and leaves no
// snapshot: one whose every address is 0 would label nothing, and a later
// inject would exit 0 with no record added.
func TestWatchWithoutCapSyslog(t *testing.T) {
	watchNeeds(t)
	setpriv := testkit.Command(t, "setpriv")
	bin := buildBinary(t)
	testkit.LoadCilium(t, "meta") // a program to read, whatever else is loaded
	noSyslog := []string{setpriv, "--inh-caps=-syslog", "--bounding-set=-syslog"}
	for _, args := range [][]string{{"watch", "-o", "SNAP", "--", "true"}, {"snapshot", "-o", "SNAP"}} {
		dir := t.TempDir()
		for i, a := range args {
			if a == "SNAP" {
				args[i] = filepath.Join(dir, "snap.jsonl")
			}
		}
		r := runProc(t, bin, procRun{wrap: noSyslog}, args...)
		if r.code != exitFailure {
			t.Errorf("%s without CAP_SYSLOG: %v, want exit 1", args[0], r.result)
		}
		oneLine(t, args[0], r.result, "CAP_SYSLOG")
		if names := testkit.DirNames(t, dir); len(names) != 0 {
			t.Errorf("%s without CAP_SYSLOG left %v", args[0], names)
		}
	}
}

// TestProgramsWithoutCapSyslog: programs (text and --json) run by root
// without CAP_SYSLOG lists the programs with their addresses and lengths
// hidden (null in JSON) and one warning, never 0x0 as if it were real.
func TestProgramsWithoutCapSyslog(t *testing.T) {
	watchNeeds(t)
	setpriv := testkit.Command(t, "setpriv")
	bin := buildBinary(t)
	loaded, _ := testkit.LoadCilium(t, "meta") // programs to read, whatever else is loaded
	id := fmt.Sprint(loaded[0].ID)
	noSyslog := []string{setpriv, "--inh-caps=-syslog", "--bounding-set=-syslog"}
	r := runProc(t, bin, procRun{wrap: noSyslog}, "programs", id)
	if r.code != exitOK || !strings.Contains(r.stdout, "addr hidden  len hidden") || strings.Contains(r.stdout, "addr 0 ") {
		t.Errorf("programs without CAP_SYSLOG: %v\n%s", r.result, r.stdout)
	}
	oneLine(t, "programs", r.result, "CAP_SYSLOG", "hidden")
	r = runProc(t, bin, procRun{wrap: noSyslog}, "programs", "--json", id)
	var doc struct {
		Programs []struct {
			Funcs []map[string]any `json:"funcs"`
		} `json:"programs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != exitOK || len(doc.Programs) != 1 {
		t.Fatalf("programs --json without CAP_SYSLOG: %v, %v\n%s", r.result, err, r.stdout)
	}
	oneLine(t, "programs --json", r.result, "CAP_SYSLOG", "null in JSON")
	for _, f := range doc.Programs[0].Funcs {
		if a, ok := f["addr"]; !ok || a != nil || f["len"] != nil {
			t.Errorf("a function's addr %v, len %v; want null", f["addr"], f["len"])
		}
	}
	// with CAP_SYSLOG: real addresses, no warning
	r = runProc(t, bin, procRun{}, "programs", id)
	if r.code != exitOK || r.stderr != "" || strings.Contains(r.stdout, "hidden") {
		t.Errorf("programs as root: %v\n%s", r.result, r.stdout)
	}
}

// TestPlantedOutput: root's -f onto a FIFO, or a symlink to a device or
// FIFO, that another user put in a sticky directory others can write is
// refused (the kernel's protected_fifos and protected_symlinks rules,
// whatever the sysctls say): nothing reaches that user's reader.
func TestPlantedOutput(t *testing.T) {
	testkit.Root(t)
	snap := emptySnapshot(t)
	in := corpusPath(t, smallFile)
	for _, c := range writingCommands(snap) {
		for _, how := range []string{"FIFO", "symlink to a FIFO", "symlink to a character device"} {
			sticky, plain := t.TempDir(), t.TempDir()
			if err := unix.Chmod(sticky, 0o1777); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(sticky, "out.data")
			fifo := out
			if how != "FIFO" {
				fifo = filepath.Join(plain, "fifo")
			}
			if err := unix.Mkfifo(fifo, 0o666); err != nil {
				t.Fatal(err)
			}
			target := fifo
			if how == "symlink to a character device" {
				target = filepath.Join(plain, "tty")
				if err := unix.Mknod(target, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
					t.Fatal(err)
				}
			}
			if how != "FIFO" {
				if err := os.Symlink(target, out); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{out, fifo, target} {
				if err := os.Lchown(p, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			rd, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := bpfmeta(t, nil, with(c.args, "-f", "-i", in, "-o", out)...)
			n, _ := rd.Read(make([]byte, 16))
			rd.Close()
			if r.code != exitFailure || n != 0 {
				t.Errorf("%s -f onto another user's %s: %v, their reader got %d bytes; want exit 1 and nothing", c.name, how, r, n)
			}
			rule := "protected_fifos"
			if how != "FIFO" {
				rule = "protected_symlinks" // the symlink is refused, whatever it points at
			}
			oneLine(t, c.name+" "+how, r, rule)
		}
	}
}

// startHalfFed starts bpfmeta with args reading the pipe recording rec
// from stdin, writes the first half of it, and returns once bpfmeta has had
// the time to open its output; the caller writes the rest, or not.
func startHalfFed(t *testing.T, bin string, rec []byte, args ...string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write(rec[:len(rec)/2])
	waitOutputOpen(t, cmd.Process.Pid, filepath.Dir(args[len(args)-1]))
	return cmd, stdin
}

// waitTracked waits until process pid, reading its input from the pipe
// or FIFO w, is past opening its output in dir: the output is open
// (waitOutputOpen), and then more, written to w after that, is read. A
// command reads its input after the output is open only in its copy,
// which starts once Open has had the output tracked for removal on a
// signal: a signal sent then finds a file to remove, whatever the timing
// (sent as soon as the file was seen open, it came before Track under
// load: "stopped by SIGHUP" alone). more must fit in the pipe.
func waitTracked(t *testing.T, pid int, dir string, w *os.File, more []byte) {
	t.Helper()
	waitOutputOpen(t, pid, dir)
	if _, err := w.Write(more); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Fatalf("FIONREAD: %v", err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatalf("process %d read nothing more of its input after it opened its output", pid)
}

// waitOutputOpen waits until process pid has its output in dir open: an
// unnamed file (O_TMPFILE, "dir/#INODE (deleted)"), or a hidden temporary
// one, which cannot be waited for in dir.
func waitOutputOpen(t *testing.T, pid int, dir string) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		es, _ := os.ReadDir(fds)
		for _, e := range es {
			if l, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && (strings.HasPrefix(l, dir+"/#") || strings.HasPrefix(l, dir+"/.")) {
				return
			}
		}
	}
	t.Fatalf("process %d opened no output in %s", pid, dir)
}

// TestOutputDirRenamed: an output directory renamed away while bpfmeta
// writes in it keeps no temporary file: the output is made, linked and
// removed relative to the directory's descriptor.
func TestOutputDirRenamed(t *testing.T) {
	bin, cmds, rec := writingSetup(t)
	for _, c := range cmds {
		root := t.TempDir()
		dir, moved := filepath.Join(root, "dir"), filepath.Join(root, "moved")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd, stdin := startHalfFed(t, bin, rec, with(c.args, "-i", "-", "-o", filepath.Join(dir, "o.data"))...)
		if err := os.Rename(dir, moved); err != nil {
			t.Fatal(err)
		}
		stdin.Write(rec[len(rec)/2:])
		stdin.Close()
		err := cmd.Wait()
		names := testkit.DirNames(t, moved)
		if err != nil || len(names) != 1 || names[0] != "o.data" {
			t.Errorf("%s, its directory renamed: %v, the directory holds %q; want exit 0 and o.data only", c.name, err, names)
		}
	}
}

// TestLowLimits: under limits too low for the Go runtime to go on (ulimit
// -n 6: no descriptors for its poller, or none free at all; ulimit -v
// under 1 GiB) bpfmeta fails at start with exit 1 and one line naming the
// limit, not with the runtime's exit 2 and goroutine dump half-way, which
// left the temporary output; with enough, it runs.
func TestLowLimits(t *testing.T) {
	sh := testkit.Command(t, "sh")
	bin := buildBinary(t)
	in := corpusPath(t, smallFile)
	for _, c := range []struct {
		limit string
		open  int // descriptors open besides 0, 1 and 2
		want  int
		says  string
	}{
		{"ulimit -n 6", 0, exitFailure, "ulimit -n"},
		// 3, 4 and 5 open: not one descriptor free when bpfmeta counts
		// them
		{"ulimit -n 6", 3, exitFailure, "ulimit -n"},
		{"ulimit -n 20", 0, exitFailure, "ulimit -n"},
		{"ulimit -v 900000", 0, exitFailure, "ulimit -v"},
		{"ulimit -n 64", 0, exitOK, ""},
		{"ulimit -v 1100000", 0, exitOK, ""},
	} {
		dir := t.TempDir()
		cmd := exec.Command(sh, "-c", c.limit+` && exec "$@"`, "sh", bin, "convert", "-i", in, "-o", filepath.Join(dir, "out.data"))
		for range c.open {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.ExtraFiles = append(cmd.ExtraFiles, f)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		r := result{code: cmd.ProcessState.ExitCode(), stderr: stderr.String()}
		if r.code != c.want {
			t.Errorf("%s, %d open: %v, want exit %d", c.limit, c.open, r, c.want)
		}
		if c.want == exitOK {
			continue
		}
		oneLine(t, c.limit, r, c.says)
		if names := testkit.DirNames(t, dir); len(names) != 0 {
			t.Errorf("%s: left %v", c.limit, names)
		}
	}
}

// TestKilledLeavesNothing: a run ended by what it cannot catch (SIGKILL,
// the OOM killer, a fatal error of the Go runtime) leaves nothing of its
// output: the file is unnamed (O_TMPFILE) until it is complete.
func TestKilledLeavesNothing(t *testing.T) {
	bin, cmds, rec := writingSetup(t)
	for _, c := range cmds {
		dir := t.TempDir()
		cmd, stdin := startHalfFed(t, bin, rec, with(c.args, "-i", "-", "-o", filepath.Join(dir, "o.data"))...)
		cmd.Process.Kill()
		cmd.Wait()
		stdin.Close()
		if names := testkit.DirNames(t, dir); len(names) != 0 {
			t.Errorf("%s killed: the directory holds %q", c.name, names)
		}
	}
}

// writingSetup is what the tests of every writing command start from: the
// binary, the commands (inject from an empty snapshot), and a small pipe
// recording to give them.
func writingSetup(t *testing.T) (bin string, cmds []readingCommand, rec []byte) {
	t.Helper()
	return buildBinary(t), writingCommands(emptySnapshot(t)), testkit.CorpusBytes(t, smallPipe)
}

// TestFullDisk: a recording written where there is no room fails (exit
// 1), with a message that names the output as given and says why, and
// leaves nothing there; as a file, a directory recording, or from a pipe.
func TestFullDisk(t *testing.T) {
	testkit.Root(t) // to mount
	// 181 KiB, and a directory recording of 128 KiB: neither fits in 32
	in := corpusPath(t, "quipper_perf3.8_x86_64_systemwide.data")
	pipe := filepath.Join(t.TempDir(), "in.pipe.data")
	if r := bpfmeta(t, nil, "convert", "-q", "-i", in, "-o", pipe); r.code != exitOK {
		t.Fatalf("convert to pipe format: %v", r)
	}
	dirIn := corpusPath(t, "threads/perf7.2_x86_64_threads_zstd2.data")
	snap := emptySnapshot(t)
	for _, c := range writingCommands(snap) {
		for _, input := range []struct{ name, path string }{{"file", in}, {"pipe", pipe}, {"directory", dirIn}} {
			if input.name == "directory" && c.name == "convert" {
				continue // convert writes one file of a directory recording: the file case
			}
			t.Run(c.name+"/"+input.name, func(t *testing.T) {
				tiny := t.TempDir()
				if err := unix.Mount("none", tiny, "tmpfs", 0, "size=32k"); err != nil {
					t.Fatalf("mount a 32 KiB tmpfs: %v", err)
				}
				defer func() {
					if err := unix.Unmount(tiny, 0); err != nil {
						t.Errorf("unmount: %v (a file left open?)", err)
						unix.Unmount(tiny, unix.MNT_DETACH)
					}
				}()
				out := filepath.Join(tiny, "out.data")
				r := bpfmeta(t, nil, with(c.args, "-i", input.path, "-o", out)...)
				want := out + ": write: no space left on device"
				if input.name == "directory" { // the file of it
					want = out + ": write " + filepath.Join(out, "data") + ": no space left on device"
				}
				if r.code != exitFailure || !strings.Contains(r.stderr, want) {
					t.Errorf("%v: want exit 1 and %q", r, want)
				}
				if ents, err := os.ReadDir(tiny); err != nil || len(ents) != 0 {
					t.Errorf("left in the full file system: %v (%v)", ents, err)
				}
			})
		}
	}
}
