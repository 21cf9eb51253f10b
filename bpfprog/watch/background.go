package watch

import (
	"context"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
)

// background is a Watcher run in a goroutine until it is stopped: what a
// Snapshotter and a Journaler share.
type background struct {
	w      *Watcher
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// start runs w until stop.
func (b *background) start(w *Watcher) {
	ctx, cancel := context.WithCancel(context.Background())
	b.w, b.cancel, b.done = w, cancel, make(chan struct{})
	go func() {
		b.err = w.Run(ctx)
		close(b.done)
	}()
}

// Stopped is closed when the watch stops by itself, on an error; Err then
// says which.
func (b *background) Stopped() <-chan struct{} { return b.done }

// Err is the error that stopped the watch (after Stopped is closed).
func (b *background) Err() error { return b.err }

// AtStart is how many programs were loaded when the watch started.
func (b *background) AtStart() int { return b.w.Stats().AtStart }

// stop ends the run (the Watcher reads what is left, see Watcher.Run) and
// returns its statistics; the Watcher is closed.
func (b *background) stop() Stats {
	b.cancel()
	<-b.done
	st := b.w.Stats()
	b.w.Close()
	return st
}

// writeError is err, an error of the output the watch writes, as a
// *outfile.WriteError (told from the kernel's), or nil.
func writeError(err error) error {
	if err != nil {
		return &outfile.WriteError{Err: err}
	}
	return nil
}
