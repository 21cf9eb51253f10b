package outfile

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A Guard removes a process's unfinished output files when a signal ends
// it, then lets the signal end the process as it would have: a run blocked
// in an open (a FIFO nobody reads) or a write ends too, with nothing left
// behind. Files are guarded from Track to the function it returns.
type Guard struct {
	mu    sync.Mutex
	files map[Aborter]bool
	// claim, when set, gets the signals instead (a command that ends
	// itself on them, such as one that runs a child).
	claim chan<- os.Signal
}

// signalGrace is how long a re-raised signal has to end the process before
// it exits with 128+N instead.
const signalGrace = time.Second

// NewGuard handles sigs (those that are not ignored: under nohup, SIGHUP
// stays ignored) for as long as the process lives.
func NewGuard(sigs ...os.Signal) *Guard {
	g := &Guard{files: map[Aborter]bool{}}
	ch := make(chan os.Signal, 4)
	for _, sig := range sigs {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	go g.handle(ch)
	return g
}

func (g *Guard) handle(ch <-chan os.Signal) {
	for sig := range ch {
		g.mu.Lock()
		claim := g.claim
		g.mu.Unlock()
		if claim != nil {
			select {
			case claim <- sig:
			default:
			}
			continue
		}
		g.AbortAll()
		n := sig.(syscall.Signal)
		if n != syscall.SIGQUIT { // the Go runtime's SIGQUIT is a stack dump
			signal.Reset(sig)
			unix.Kill(os.Getpid(), n)
			time.Sleep(signalGrace)
		}
		os.Exit(128 + int(n))
	}
}

// Aborter is an output a Guard removes: a *File, a *Dir.
type Aborter interface{ Abort() }

// Track guards f; the returned function stops that (after a commit, or an
// abort).
func (g *Guard) Track(f Aborter) (untrack func()) {
	g.mu.Lock()
	g.files[f] = true
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		delete(g.files, f)
		g.mu.Unlock()
	}
}

// Claim has the signals sent to ch until the returned function is called:
// the caller ends the process itself.
func (g *Guard) Claim(ch chan<- os.Signal) (release func()) {
	g.mu.Lock()
	g.claim = ch
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.claim = nil
		g.mu.Unlock()
	}
}

// AbortAll aborts every guarded file. A nil Guard guards nothing.
func (g *Guard) AbortAll() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for f := range g.files {
		f.Abort()
	}
}
