package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/bpfmeta/bpfmeta/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// session is one run of bpfmeta: its standard streams, and what a signal
// that ends it must undo first.
type session struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	out            *cliutil.Stdout // stdout, watched for a broken pipe
	// stdoutClosed: fd 1 was closed when bpfmeta started (the Go runtime
	// then opens /dev/null on it, read-write).
	stdoutClosed bool
	// stdinTerminal, stdoutTerminal: the streams are terminals.
	stdinTerminal, stdoutTerminal bool

	// guard removes the output files when a signal ends the run (a
	// process session only).
	guard *outfile.Guard
}

// newProcessSession is the session of the bpfmeta process: os.Stdin and
// os.Stdout, and SIGINT, SIGTERM, SIGHUP and SIGQUIT handled so that no
// temporary file survives them (they end bpfmeta as they would have, after
// that). A write to a closed stdout pipe fails instead of killing the
// process at once, so that the same cleanup happens; bpfmeta then ends as
// SIGPIPE would have ended it, quietly. A closed stderr is ignored.
func newProcessSession() *session {
	s := &session{
		stdin:          os.Stdin,
		stderr:         &cliutil.Stderr{W: os.Stderr},
		stdoutClosed:   cliutil.StdoutClosed(),
		out:            &cliutil.Stdout{W: os.Stdout},
		stdinTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
		stdoutTerminal: term.IsTerminal(int(os.Stdout.Fd())),
	}
	s.stdout = s.out
	// SIGPIPE: write errors instead of a sudden death (and, handled rather
	// than ignored, it is back to the default in a program watch starts).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	s.guard = outfile.NewGuard(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	return s
}

// newSession is a session over streams of the caller's (tests).
func newSession(stdin io.Reader, stdout, stderr io.Writer) *session {
	out := &cliutil.Stdout{W: stdout}
	return &session{stdin: stdin, stdout: out, out: out, stderr: stderr}
}

// claimSignals has the ending signals sent to ch until the returned
// function is called (watch: CMD gets them).
func (s *session) claimSignals(ch chan<- os.Signal) (release func()) {
	if s.guard == nil {
		return func() {}
	}
	return s.guard.Claim(ch)
}

// track has f removed if a signal ends the run; the returned function
// stops that (after a commit, or an abort).
func (s *session) track(f *outfile.File) (untrack func()) {
	if s.guard == nil {
		return func() {}
	}
	return s.guard.Track(f)
}

// exit ends the process with code; a run ended by a broken stdout pipe
// ends as SIGPIPE ends a process.
func (s *session) exit(code int) {
	s.guard.AbortAll()
	if s.stdoutBroken() {
		signal.Reset(syscall.SIGPIPE)
		syscall.Kill(os.Getpid(), syscall.SIGPIPE)
		time.Sleep(time.Second)
	}
	os.Exit(code)
}

// errorf prints one line "bpfmeta: ..." on stderr, with anything in it that
// would act on a terminal escaped.
func (s *session) errorf(format string, args ...any) {
	fmt.Fprintf(s.stderr, "bpfmeta: %s\n", safetext.Clean(fmt.Sprintf(format, args...)))
}

// stdoutBroken reports whether a write to stdout found its pipe closed.
func (s *session) stdoutBroken() bool { return s.out.Broken() }
