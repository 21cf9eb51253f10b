package main

// Writes and privilege (issue 23): standard streams that are not what they
// seem, runs without a capability, outputs another user prepared.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
		if names := dirNames(t, dir); len(names) != 0 {
			t.Errorf("%s without CAP_SYSLOG left %v", args[0], names)
		}
	}
}
