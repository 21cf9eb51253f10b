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
//
// One rule for when a signal comes: before the output is committed, the
// run ends by the signal (128+N) with its output removed, and the process
// says nothing more than the one line of Options.Say; once a guarded
// output is committed (one that says so: Committed), the run is complete
// and ends with its own status, the signal noted and not acted on.
type Guard struct {
	mu    sync.Mutex
	files map[Aborter]bool
	// claim, when set, gets the signals instead (a command that ends
	// itself on them, such as one that runs a child).
	claim chan<- os.Signal
	// committed: a guarded output was committed; signals no longer end
	// the run.
	committed bool
	// ending is closed once a signal is ending the process: the run's own
	// messages and exit wait for it (Ending).
	ending chan struct{}
	say    func(sig os.Signal, removed bool)
	// ignored: the signals the process started with ignored, and handles
	// all the same (Always)
	ignored map[os.Signal]bool
}

// signalGrace is how long a re-raised signal has to end the process before
// it exits with 128+N instead.
const signalGrace = time.Second

// GuardOptions say which signals a Guard handles.
type GuardOptions struct {
	// Always are handled whatever the disposition the process inherited:
	// SIGINT and SIGTERM, as perf record's signal(SIGINT, sig_handler)
	// does, so that "bpfmeta watch &" in a script (which a shell starts
	// with SIGINT ignored) stops on kill -INT as perf does.
	Always []os.Signal
	// UnlessIgnored are handled if the process did not start with them
	// ignored: under nohup, SIGHUP stays ignored.
	UnlessIgnored []os.Signal
	// Say, if set, prints the one line of a signal that ends the run
	// (removed: an unfinished output was removed).
	Say func(sig os.Signal, removed bool)
	// Ending, if set, is the channel Ending returns (made before the
	// Guard, for writers that exist before it).
	Ending chan struct{}
}

// NewGuard handles the signals of o for as long as the process lives.
func NewGuard(o GuardOptions) *Guard {
	g := &Guard{files: map[Aborter]bool{}, ending: o.Ending, say: o.Say, ignored: map[os.Signal]bool{}}
	if g.ending == nil {
		g.ending = make(chan struct{})
	}
	ch := make(chan os.Signal, 4)
	for _, sig := range o.Always {
		g.ignored[sig] = signal.Ignored(sig)
	}
	signal.Notify(ch, o.Always...)
	for _, sig := range o.UnlessIgnored {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	go g.handle(ch)
	return g
}

// Ending is closed once a signal ends the process: what would print or
// exit meanwhile (an error from a write the abort cut short) waits on it
// for ever instead.
func (g *Guard) Ending() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.ending
}

// committer is an Aborter that tells whether it was committed (File, Dir).
type committer interface{ Committed() bool }

func (g *Guard) handle(ch <-chan os.Signal) {
	for sig := range ch {
		g.mu.Lock()
		claim := g.claim
		if claim != nil {
			g.mu.Unlock()
			select {
			case claim <- sig:
			default:
			}
			continue
		}
		// Abort what is not committed, with the lock held: a Commit that
		// comes meanwhile finds its file aborted, one that came first
		// makes the run complete.
		removed := false
		for f := range g.files {
			f.Abort()
			if c, ok := f.(committer); ok {
				if c.Committed() {
					g.committed = true
				} else {
					removed = true
				}
			}
		}
		if g.committed {
			// the run is complete: it ends with its own status
			g.mu.Unlock()
			continue
		}
		close(g.ending)
		g.mu.Unlock()
		if g.say != nil {
			g.say(sig, removed)
		}
		n := sig.(syscall.Signal)
		if n != syscall.SIGQUIT && !g.ignored[sig] { // the Go runtime's SIGQUIT is a stack dump
			// Reset restores the disposition the process started with: a
			// signal ignored then would be ignored again, so it exits
			// 128+N below instead.
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
		if c, ok := f.(committer); ok && c.Committed() {
			g.committed = true
		}
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
