package cliutil

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/term"
)

// Stdout is a command's standard output that notes a write that found its
// pipe closed (EPIPE), so that the command can end as SIGPIPE would have
// ended it once it has cleaned up.
type Stdout struct {
	W      io.Writer
	broken bool
}

func (w *Stdout) Write(p []byte) (int, error) {
	n, err := w.W.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		w.broken = true
	}
	return n, err
}

// Broken reports whether a write found the pipe closed.
func (w *Stdout) Broken() bool { return w.broken }

// File returns the *os.File under it, if it is one.
func (w *Stdout) File() (*os.File, bool) {
	f, ok := w.W.(*os.File)
	return f, ok
}

// Stderr is a command's standard error: a write that fails (a closed pipe)
// is dropped, and the command goes on.
type Stderr struct{ W io.Writer }

func (q *Stderr) Write(p []byte) (int, error) {
	q.W.Write(p)
	return len(p), nil
}

// IsTerminal reports whether w is a terminal (under a Stdout or Stderr).
func IsTerminal(w io.Writer) bool {
	switch s := w.(type) {
	case *Stdout:
		w = s.W
	case *Stderr:
		w = s.W
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
