package cliutil

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// Session is one run of the program: its standard streams, and what a
// signal that ends it must undo first.
type Session struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	out            *stdoutWriter // Stdout, watched for a broken pipe
	// StdinTerminal, StdoutTerminal: the streams are terminals.
	StdinTerminal, StdoutTerminal bool

	// guard removes the output files when a signal ends the run (a
	// process session only). It is set, and the handlers installed, once
	// installed is closed; nil: a session without handlers.
	guard     *outfile.Guard
	installed chan struct{}
}

// NewProcessSession is the session of the process: os.Stdin and
// os.Stdout, and SIGINT, SIGTERM, SIGHUP and SIGQUIT handled so that no
// temporary file survives them (they end the process as they would have,
// after that). A write to a closed stdout pipe fails instead of killing the
// process at once, so that the same cleanup happens; Exit then ends it as
// SIGPIPE would have, quietly. A closed stderr is ignored.
//
// The handlers are installed beside the command's start, not before it:
// the Go runtime installs one with a round trip to its signal thread, and
// the five took 1 ms in the VM the benchmarks run in, as long as the rest
// of a small file's inject takes to start. Whatever acts on them waits
// until they are in place: track, ClaimSignals, Exit, and every write to
// Stdout and Stderr. A signal that comes before then ends the process as
// it would have anyway, with nothing of its to remove yet.
func NewProcessSession() *Session {
	installed, ending := make(chan struct{}), make(chan struct{})
	s := &Session{
		Stdin:          os.Stdin,
		Stderr:         &stderrWriter{W: os.Stderr, ready: installed, ending: ending},
		out:            &stdoutWriter{W: os.Stdout, ready: installed},
		StdinTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		installed:      installed,
	}
	s.Stdout = s.out
	go func() {
		// SIGPIPE: write errors instead of a sudden death (and, handled
		// rather than ignored, it is back to the default in a program
		// watch starts).
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		s.guard = outfile.NewGuard(outfile.GuardOptions{
			Always:        []os.Signal{os.Interrupt, syscall.SIGTERM},
			UnlessIgnored: []os.Signal{syscall.SIGHUP, syscall.SIGQUIT},
			Ending:        ending,
			Say: func(sig os.Signal, removed bool) {
				what := ""
				if removed {
					what = " before its output was complete; nothing of it is left"
				}
				fmt.Fprintf(os.Stderr, "bpfmeta: stopped by %s%s\n", unix.SignalName(sig.(syscall.Signal)), what)
			},
		})
		close(installed)
	}()
	return s
}

// handlers waits until the signal handlers are installed, and returns
// the guard (nil in a session without handlers).
func (s *Session) handlers() *outfile.Guard {
	if s.installed != nil {
		<-s.installed
	}
	return s.guard
}

// NewSession is a session over streams of the caller's (tests): no
// signal is handled, no stream is a terminal.
func NewSession(stdin io.Reader, stdout, stderr io.Writer) *Session {
	out := &stdoutWriter{W: stdout}
	return &Session{Stdin: stdin, Stdout: out, out: out, Stderr: stderr}
}

// ClaimSignals has the ending signals sent to ch until the returned
// function is called (watch: CMD gets them).
func (s *Session) ClaimSignals(ch chan<- os.Signal) (release func()) {
	g := s.handlers()
	if g == nil {
		return func() {}
	}
	return g.Claim(ch)
}

// track has f removed if a signal ends the run; the returned function
// stops that (after a commit, or an abort).
func (s *Session) track(f outfile.Aborter) (untrack func()) {
	g := s.handlers()
	if g == nil {
		return func() {}
	}
	return g.Track(f)
}

// Exit ends the process with code, after removing the files a signal
// would have; a run ended by a broken stdout pipe ends as SIGPIPE ends a
// process.
func (s *Session) Exit(code int) {
	g := s.handlers()
	select {
	case <-g.Ending():
		select {} // a signal ends the process, by its own rule
	default:
	}
	g.AbortAll()
	if s.stdoutBroken() {
		signal.Reset(syscall.SIGPIPE)
		syscall.Kill(os.Getpid(), syscall.SIGPIPE)
		time.Sleep(time.Second)
	}
	os.Exit(code)
}

// errorf prints one line "bpfmeta: ..." on stderr, with anything in it
// that would act on a terminal escaped.
func (s *Session) errorf(format string, args ...any) {
	fmt.Fprintf(s.Stderr, "bpfmeta: %s\n", safetext.Clean(fmt.Sprintf(format, args...)))
}

// stdoutBroken reports whether a write to stdout found its pipe closed.
func (s *Session) stdoutBroken() bool { return s.out.Broken() }
