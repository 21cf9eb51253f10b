package main

// Recordings perf record did not finish, and empty files: every command
// that reads a recording says so in perf's words.

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// The words of the two messages: perf_session__read_header()'s question,
// and what a 0-byte file is.
const (
	unfinishedWords = "the data size field is 0 at 0x30, which is unexpected: was the 'perf record' command properly terminated?"
	emptyWords      = "is empty (0 bytes)"
)

// TestUnfinished: a file whose header's data size is 0 (perf record killed,
// or still running: it writes the data size and the feature sections when
// it ends) is refused by every command with perf's question, from a file,
// a redirected stdin and a pipe; an empty file is said to be empty. Nothing
// is written.
func TestUnfinished(t *testing.T) {
	unfinished := testkit.CorpusBytes(t, smallFile)
	if binary.LittleEndian.Uint64(unfinished[48:]) == 0 {
		t.Fatalf("%s has a data size of 0 already", smallFile)
	}
	binary.LittleEndian.PutUint64(unfinished[48:], 0)
	checkRefused(t, map[string][]byte{"data size 0": unfinished}, unfinishedWords)
	checkRefused(t, map[string][]byte{"0 bytes": nil}, emptyWords)
}

// TestKilledRecording: what perf 6.1 and perf 7.2 leave when killed with
// SIGKILL is refused with perf's question, which perf asks of it too.
func TestKilledRecording(t *testing.T) {
	testkit.Root(t)
	killed := map[string][]byte{}
	for _, role := range []string{stockPerf, modernPerf} {
		perf := perfPath(t, role)
		out := testkit.TempPath(t, role+".data")
		r := testkit.StartPerf(t, perf, out, testkit.PerfOptions{SystemWide: true, Args: []string{"-F", "99"}})
		r.WaitReady(t)
		r.Kill(t)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		killed[role] = b
		// perf's own words for it
		stderr, _ := exec.Command(perf, "report", "--stats", "-i", out).CombinedOutput()
		if !strings.Contains(string(stderr), "data size field is 0 which is unexpected.\nWas the 'perf record' command properly terminated?") {
			t.Errorf("%s report of its killed recording does not ask whether perf record was properly terminated:\n%s", role, stderr)
		}
	}
	checkRefused(t, killed, unfinishedWords)
}

// checkRefused runs every reading command on each input (by name, from a
// file, from stdin redirected from it, from a pipe) and wants exit 1, one
// line with want, and no output.
func checkRefused(t *testing.T, inputs map[string][]byte, want string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.data")
	snap := emptySnapshot(t)
	for name, b := range inputs {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".data")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, c := range readingCommands(snap) {
			args := c.args
			if c.writes {
				args = with(args, "-o", out)
			}
			for _, how := range []string{"-i", "stdin", "pipe"} {
				what := name + ": " + c.name + ", " + how
				var r result
				switch how {
				case "-i":
					r = bpfmeta(t, nil, append(args, "-i", path)...)
				case "stdin":
					f, err := os.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					r = bpfmeta(t, f, args...)
					f.Close()
				case "pipe":
					r = bpfmeta(t, testkit.PipeOf(t, b), args...)
				}
				if r.code != exitFailure || r.stdout != "" {
					t.Errorf("%s: %v, %d bytes on stdout; want exit 1 and nothing", what, r, len(r.stdout))
				}
				oneLine(t, what, r, want)
				if _, err := os.Lstat(out); err == nil {
					t.Errorf("%s: left an output", what)
					os.Remove(out)
				}
			}
		}
	}
}
