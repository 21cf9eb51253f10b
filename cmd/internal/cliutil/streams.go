package cliutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// stdoutWriter is a command's standard output that notes a write that found its
// pipe closed (EPIPE), so that the command can end as SIGPIPE would have
// ended it once it has cleaned up.
type stdoutWriter struct {
	W      io.Writer
	broken bool
	// ready, if not nil, is closed once SIGPIPE is handled
	// (NewProcessSession): until then a closed pipe would end the
	// process at once.
	ready <-chan struct{}
}

func (w *stdoutWriter) Write(p []byte) (int, error) {
	if w.ready != nil {
		<-w.ready
	}
	n, err := w.W.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		w.broken = true
	}
	return n, err
}

// Broken reports whether a write found the pipe closed.
func (w *stdoutWriter) Broken() bool { return w.broken }

// File returns the *os.File under it, if it is one.
func (w *stdoutWriter) File() (*os.File, bool) {
	f, ok := w.W.(*os.File)
	return f, ok
}

// stderrWriter is a command's standard error: a write that fails (a closed pipe)
// is dropped, and the command goes on.
type stderrWriter struct {
	W     io.Writer
	ready <-chan struct{} // as stdoutWriter's
	// ending is closed once a signal ends the process (Guard.Ending): a
	// message then, such as a write's error after its file was removed,
	// is not written; the signal's one line is.
	ending <-chan struct{}
}

func (q *stderrWriter) Write(p []byte) (int, error) {
	if q.ready != nil {
		<-q.ready
	}
	select {
	case <-q.ending:
		select {} // the guard ends the process
	default:
	}
	q.W.Write(p)
	return len(p), nil
}

// isTerminal reports whether w is a terminal (under a stdoutWriter or stderrWriter).
func isTerminal(w io.Writer) bool {
	switch s := w.(type) {
	case *stdoutWriter:
		w = s.W
	case *stderrWriter:
		w = s.W
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// StdoutReadBy reports whether stdout is a pipe that a process named comm,
// or running this program's executable, reads as its stdin (the next
// command of a shell pipeline). Processes it may not look into do not
// count.
//
// The shell forks the commands of a pipeline and each then executes its
// program: a reader that still runs the executable of this process's
// parent (the shell) may be one that has not yet, when this process had
// so little to write that the pipe held it all. It is looked at again,
// every readerPoll for at most readerWait, until it runs another
// program; one that stays the shell (a function, a while-read loop) is
// not comm.
func (s *Session) StdoutReadBy(comm string) bool {
	f, ok := s.out.File()
	if !ok {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return false
	}
	pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
	self, _ := os.Stat("/proc/self/exe")
	shell, _ := os.Stat("/proc/" + strconv.Itoa(os.Getppid()) + "/exe")
	for waited := time.Duration(0); ; waited += readerPoll {
		found, forked := pipeReaders(pipe, comm, self, shell)
		if found || !forked || waited >= readerWait {
			return found
		}
		time.Sleep(readerPoll)
	}
}

const (
	readerPoll = 5 * time.Millisecond
	readerWait = 200 * time.Millisecond
)

// pipeReaders looks at the processes whose stdin is pipe: found, one is
// named comm or runs the executable self; forked, one runs shell's.
func pipeReaders(pipe, comm string, self, shell os.FileInfo) (found, forked bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	me := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		pid := p.Name()
		if pid == me || pid[0] < '0' || pid[0] > '9' {
			continue
		}
		if in, err := os.Readlink("/proc/" + pid + "/fd/0"); err != nil || in != pipe {
			continue
		}
		if name, err := os.ReadFile("/proc/" + pid + "/comm"); err == nil && strings.TrimSpace(string(name)) == comm {
			return true, false
		}
		exe, err := os.Stat("/proc/" + pid + "/exe")
		if err != nil {
			continue
		}
		if self != nil && os.SameFile(self, exe) {
			return true, false
		}
		if shell != nil && os.SameFile(shell, exe) && (self == nil || !os.SameFile(self, shell)) {
			forked = true
		}
	}
	return false, forked
}
