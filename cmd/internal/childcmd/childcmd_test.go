package childcmd

import (
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestRun: the status is what a shell's $? would be: the exit code, 128+N
// for a signal passed on to the command, 126 and 127 when it cannot run,
// 128+N for a signal before it started (unstarted).
func TestRun(t *testing.T) {
	notExec := testkit.NotExecutable(t)
	for _, c := range []struct {
		name   string
		argv   []string
		signal bool // SIGTERM once it runs
		want   int
		err    string
	}{
		{"exit code", []string{"sh", "-c", "exit 3"}, false, 3, ""},
		{"signal passed on", []string{"sh", "-c", "echo started; exec sleep 60"}, true, exitSignalBase + int(syscall.SIGTERM), ""},
		{"not found", []string{"bpfmeta-childcmd-no-such-command"}, false, ExitNotFound, "bpfmeta-childcmd-no-such-command"},
		{"not executable", []string{notExec}, false, ExitCannotExec, "permission denied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 1)
			pr, pw := io.Pipe()
			cmd := Command{Argv: c.argv, Stdout: pw, Stderr: io.Discard}
			if c.signal {
				go func() {
					buf := make([]byte, 8)
					pr.Read(buf) // "started": the command runs
					sigs <- syscall.SIGTERM
					io.Copy(io.Discard, pr)
				}()
			} else {
				go io.Copy(io.Discard, pr)
			}
			got, err := cmd.Run(sigs, nil, nil)
			pw.Close()
			if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Errorf("status %d, %v; want %d, %q", got, err, c.want, c.err)
			}
		})
	}
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGINT
	if got, err := (Command{Argv: []string{"true"}}).Run(sigs, nil, nil); got != exitSignalBase+int(syscall.SIGINT) || err == nil {
		t.Errorf("a signal before the start: status %d, %v", got, err)
	}
}
