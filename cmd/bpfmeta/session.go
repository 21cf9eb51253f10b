package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// session is one run of bpfmeta: its standard streams, and what a signal
// that ends it must undo first.
type session struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	out            *stdoutWriter // stdout, watched for a broken pipe
	// stdoutClosed: fd 1 was closed when bpfmeta started (the Go runtime
	// then opens /dev/null on it, read-write).
	stdoutClosed bool
	// stdinTerminal, stdoutTerminal: the streams are terminals.
	stdinTerminal, stdoutTerminal bool

	mu    sync.Mutex
	files map[*outfile.File]bool // output files to remove if a signal ends the run
	// claim, when set, gets the ending signals instead (watch).
	claim chan<- os.Signal
	// signals are the signals that end bpfmeta, when it handles them (a
	// process session).
	signals chan os.Signal
}

// newProcessSession is the session of the bpfmeta process: os.Stdin and
// os.Stdout, and SIGINT, SIGTERM, SIGHUP and SIGQUIT handled so that no
// temporary file survives them (they end bpfmeta as they would have, after
// that). A write to a closed stdout pipe fails instead of killing the
// process at once, so that the same cleanup happens; bpfmeta then ends as
// SIGPIPE would have ended it, quietly. A closed stderr is ignored.
func newProcessSession() *session {
	s := &session{
		stdin:        os.Stdin,
		stderr:       &quietWriter{w: os.Stderr},
		stdoutClosed: reopenedStdout(),
		files:        map[*outfile.File]bool{},
	}
	s.out = &stdoutWriter{w: os.Stdout}
	s.stdout = s.out
	s.stdinTerminal = term.IsTerminal(int(os.Stdin.Fd()))
	s.stdoutTerminal = term.IsTerminal(int(os.Stdout.Fd()))
	// SIGPIPE: write errors instead of a sudden death (and, handled rather
	// than ignored, it is back to the default in a program watch starts).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	s.signals = make(chan os.Signal, 4)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		if !signal.Ignored(sig) { // under nohup, SIGHUP stays ignored
			signal.Notify(s.signals, sig)
		}
	}
	go s.handleSignals()
	return s
}

// newSession is a session over streams of the caller's (tests).
func newSession(stdin io.Reader, stdout, stderr io.Writer) *session {
	out := &stdoutWriter{w: stdout}
	return &session{stdin: stdin, stdout: out, out: out, stderr: stderr, files: map[*outfile.File]bool{}}
}

// signalGrace is how long a re-raised signal has to end bpfmeta before it
// exits with 128+N instead.
const signalGrace = time.Second

// handleSignals removes the output files, then lets the signal end bpfmeta
// as it would have; a command that claimed the signals gets them instead.
// It never waits for the command: a run blocked in an open or a write ends.
func (s *session) handleSignals() {
	for sig := range s.signals {
		s.mu.Lock()
		claim := s.claim
		s.mu.Unlock()
		if claim != nil {
			select {
			case claim <- sig:
			default:
			}
			continue
		}
		s.abortFiles()
		n := sig.(syscall.Signal)
		if n != syscall.SIGQUIT { // the Go runtime's SIGQUIT is a stack dump
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), n)
			time.Sleep(signalGrace)
		}
		os.Exit(exitSignalBase + int(n))
	}
}

// claimSignals has the ending signals sent to ch until the returned
// function is called.
func (s *session) claimSignals(ch chan<- os.Signal) (release func()) {
	s.mu.Lock()
	s.claim = ch
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.claim = nil
		s.mu.Unlock()
	}
}

// track has f removed if a signal ends the run; the returned function
// stops that (after a commit, or an abort).
func (s *session) track(f *outfile.File) (untrack func()) {
	s.mu.Lock()
	s.files[f] = true
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.files, f)
		s.mu.Unlock()
	}
}

func (s *session) abortFiles() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f := range s.files {
		f.Abort()
	}
}

// exit ends the process with code; a run ended by a broken stdout pipe
// ends as SIGPIPE ends a process.
func (s *session) exit(code int) {
	s.abortFiles()
	if s.stdoutBroken() {
		signal.Reset(syscall.SIGPIPE)
		syscall.Kill(os.Getpid(), syscall.SIGPIPE)
		time.Sleep(signalGrace)
	}
	os.Exit(code)
}

// errorf prints one line "bpfmeta: ..." on stderr, with anything in it that
// would act on a terminal escaped.
func (s *session) errorf(format string, args ...any) {
	fmt.Fprintf(s.stderr, "bpfmeta: %s\n", safetext.Clean(fmt.Sprintf(format, args...)))
}

// stdoutBroken reports whether a write to stdout found its pipe closed.
func (s *session) stdoutBroken() bool { return s.out.broken }

// stdoutWriter is stdout, noting a broken pipe.
type stdoutWriter struct {
	w      io.Writer
	broken bool
}

func (w *stdoutWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		w.broken = true
	}
	return n, err
}

// File returns the *os.File under stdout, if it is one.
func (w *stdoutWriter) File() (*os.File, bool) {
	f, ok := w.w.(*os.File)
	return f, ok
}

// quietWriter is stderr: a write that fails (a closed pipe) is dropped,
// and the run goes on.
type quietWriter struct{ w io.Writer }

func (q *quietWriter) Write(p []byte) (int, error) {
	q.w.Write(p)
	return len(p), nil
}

// reopenedStdout reports whether fd 1 is the /dev/null the Go runtime opens
// read-write on a standard descriptor that was closed when the process
// started (runtime.checkfds): a shell's >&-. A >/dev/null opens it
// write-only.
func reopenedStdout() bool {
	var st unix.Stat_t
	if unix.Fstat(1, &st) != nil {
		return true
	}
	fl, err := unix.FcntlInt(1, unix.F_GETFL, 0)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == unix.Mkdev(1, 3) && fl&unix.O_ACCMODE == unix.O_RDWR
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
