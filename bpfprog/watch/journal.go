package watch

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/perfevent"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Journaler is a Watcher that appends every program it reads, and every
// unload of one, to a journal (journal.Writer): what bpfmeta watch
// --journal does, as a service, until it is stopped.
type Journaler struct {
	w      *Watcher
	jw     *journal.Writer
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// StartJournal opens the events and appends every program loaded (New)
// to jw, then follows the loads and unloads in a goroutine until Stop. An
// error writing the journal, here or later (Err, Stop), is a
// *outfile.WriteError; one of the kernel's is not.
func StartJournal(k *live.Kernel, jw *journal.Writer) (*Journaler, error) {
	j := &Journaler{jw: jw, done: make(chan struct{})}
	var err error
	j.w, err = New(k, Options{
		Emit: func(p *bpfprog.Program) error {
			if err := jw.Load(p); err != nil {
				return &outfile.WriteError{Err: err}
			}
			return nil
		},
		Unload: func(id uint32, tag perfdata.BPFTag, at uint64) error {
			if err := jw.Unload(id, tag, bootTime(at)); err != nil {
				return &outfile.WriteError{Err: err}
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	j.cancel = cancel
	go func() {
		j.err = j.w.Run(ctx)
		close(j.done)
	}()
	return j, nil
}

// bootTime is the perfevent.Clock time at on CLOCK_BOOTTIME, where
// program load times are: the two clocks differ by the time the machine
// was suspended, measured now.
func bootTime(at uint64) time.Duration {
	var mono, boot unix.Timespec
	if unix.ClockGettime(perfevent.Clock, &mono) != nil || unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil {
		return time.Duration(at)
	}
	return time.Duration(at) + time.Duration(boot.Nano()-mono.Nano())
}

// Stopped is closed when the watch stops by itself, on an error; Err then
// says which.
func (j *Journaler) Stopped() <-chan struct{} { return j.done }

// Err is the error that stopped the watch (after Stopped is closed).
func (j *Journaler) Err() error { return j.err }

// AtStart is how many programs were loaded when the watch started.
func (j *Journaler) AtStart() int { return j.w.Stats().AtStart }

// Stop ends the watch, reads what is left (see Watcher.Run), closes the
// events and the journal (synced), and returns the statistics of both.
func (j *Journaler) Stop() (Stats, journal.Stats, error) {
	j.cancel()
	<-j.done
	st := j.w.Stats()
	j.w.Close()
	jst := j.jw.Stats()
	var cerr error
	if err := j.jw.Close(); err != nil {
		cerr = &outfile.WriteError{Err: err}
	}
	return st, jst, errors.Join(j.err, cerr)
}
