package cliutil

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/urfave/cli/v2"
)

// Exit statuses, as docs/commands.md and the man page list them.
const (
	ExitOK      = 0
	ExitFailure = 1 // the message says why
	ExitUsage   = 2 // how the program was called
	// exitSignal + N: bpfmeta ended as signal N would have ended it
	// (SIGPIPE), as a shell has it
	exitSignal = 128
)

// UsageError marks an error in how the program was called (ExitUsage).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// ExitStatusError makes Run return Status, after printing Err if it is
// not nil: bpfmeta watch -- CMD exits with CMD's status.
type ExitStatusError struct {
	Status int
	Err    error
}

func (e ExitStatusError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("exit status %d", e.Status)
}

// Run runs app with args and returns the status to exit with. An error is
// printed once, as one "bpfmeta: ..." line (errorf); a run that found
// stdout's pipe closed ends quietly with SIGPIPE's status, as perf does.
func (s *Session) Run(app *cli.App, args []string) int {
	err := app.Run(args)
	if err == nil {
		return ExitOK
	}
	var st ExitStatusError
	if errors.As(err, &st) {
		if st.Err != nil {
			s.errorf("%v", st.Err)
		}
		return st.Status
	}
	if s.stdoutBroken() {
		return exitSignal + int(syscall.SIGPIPE)
	}
	s.errorf("%v", err)
	if errors.As(err, new(UsageError)) {
		return ExitUsage
	}
	return ExitFailure
}
