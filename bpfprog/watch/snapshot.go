package watch

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
)

// Snapshotter is a Watcher that writes every program it reads to a
// snapshot (snapshot.Writer) as it goes: what bpfmeta watch does.
// The snapshot is complete once Stop has closed it; one cut short (the
// process killed) holds every program read before, which inject reads.
type Snapshotter struct {
	w       *Watcher
	sw      *snapshot.Writer
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	written int
}

// StartSnapshot writes the start of a snapshot of the kernel k to out, opens the
// events and reads every program loaded (New), and follows the loads in a
// goroutine until Stop. Once it returns, no load can be missed. An error
// writing out, here or later (Err, Stop), is a *outfile.WriteError, one of
// the kernel's is not.
func StartSnapshot(k *live.Kernel, out io.Writer) (*Snapshotter, error) {
	sw, err := snapshot.NewWriter(out, k.System(), time.Now())
	if err != nil {
		return nil, &outfile.WriteError{Err: err}
	}
	s := &Snapshotter{sw: sw, done: make(chan struct{})}
	s.w, err = New(k, Options{Emit: func(p *bpfprog.Program) error {
		if err := sw.Add(p); err != nil {
			return &outfile.WriteError{Err: err}
		}
		s.written++
		return nil
	}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		s.err = s.w.Run(ctx)
		close(s.done)
	}()
	return s, nil
}

// Stopped is closed when the watch stops by itself, on an error; Err then
// says which.
func (s *Snapshotter) Stopped() <-chan struct{} { return s.done }

// Err is the error that stopped the watch (after Stopped is closed).
func (s *Snapshotter) Err() error { return s.err }

// AtStart is how many programs were loaded when the watch started.
func (s *Snapshotter) AtStart() int { return s.w.Stats().AtStart }

// Stop ends the watch, reads what is left (see Watcher.Run), closes the
// snapshot with its end (the time, and how many programs were missed) and
// the events, and returns the statistics and how many programs the
// snapshot holds. An error leaves those programs in the snapshot, which is
// then incomplete.
func (s *Snapshotter) Stop() (Stats, int, error) {
	s.cancel()
	<-s.done
	st := s.w.Stats()
	var endErr error
	if err := s.sw.Close(snapshot.End{Until: time.Now(), Missed: st.Lost + st.Failed}); err != nil {
		endErr = &outfile.WriteError{Err: err}
	}
	s.w.Close()
	return st, s.written, errors.Join(s.err, endErr)
}
