// Package childcmd runs watch's CMD as a child: its signals passed on, its status as $? has it.
//
// It runs a command of the user's as a child (bpfmeta watch -- CMD): with
// the streams it is given, every signal bpfmeta would end on passed on to
// it, and its end as a shell's $? says it (exit code, 128+N for signal N,
// 126 and 127 when it cannot be run, as env(1) has them). It is not for what
// bpfmeta itself exits with (cmd/internal/cliutil).
package childcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// Exit statuses of a command as a shell reports them ($?), as env(1) and
// the shells have them.
const (
	exitSignalBase = 128 // + N when signal N ended it
	ExitCannotExec = 126
	ExitNotFound   = 127
)

// Command is a command to run with standard streams of its own.
type Command struct {
	Argv           []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run starts the command, passes every signal from sigs on to it until it
// exits, and returns its status as a shell reports it: its exit code,
// exitSignalBase+N if signal N ended it, ExitCannotExec or ExitNotFound
// (with an error) if it cannot be started. A signal before the start ends
// it unstarted. When trouble is closed, warn is called once, and the
// command runs on.
func (c Command) Run(sigs <-chan os.Signal, trouble <-chan struct{}, warn func()) (int, error) {
	name := safetext.Quote(c.Argv[0])
	select {
	case s := <-sigs:
		return exitSignalBase + int(s.(syscall.Signal)), fmt.Errorf("%v before %s was started", s, name)
	default:
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	if err := cmd.Start(); err != nil {
		status := ExitCannotExec
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			status = ExitNotFound
		}
		return status, fmt.Errorf("%s: %v", name, errors.Unwrap(err))
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	for {
		select {
		case s := <-sigs:
			// An error means it has just exited: exited tells.
			cmd.Process.Signal(s)
		case <-trouble:
			warn()
			trouble = nil
		case <-exited:
			return ExitStatus(cmd.ProcessState), nil
		}
	}
}

// ExitStatus is a shell's $? for a process: its exit code, or
// exitSignalBase+N if signal N ended it.
func ExitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitSignalBase + int(ws.Signal())
	}
	return ps.ExitCode()
}
