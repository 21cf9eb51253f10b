package watch

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
)

// Snapshotter is a Watcher that writes every program it reads to a
// snapshot (snapshot.Writer) as it goes: what bpfmeta watch does.
// The snapshot is complete once Stop has closed it; one cut short (the
// process killed) holds every program read before, which inject reads.
type Snapshotter struct {
	background
	sw      *snapshot.Writer
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
		return nil, writeError(err)
	}
	s := &Snapshotter{sw: sw}
	w, err := New(k, Options{Emit: func(p *bpfprog.Program) error {
		if err := sw.Add(p); err != nil {
			return writeError(err)
		}
		s.written++
		return nil
	}})
	if err != nil {
		return nil, err
	}
	s.start(w)
	return s, nil
}

// Stop ends the watch, reads what is left (see Watcher.Run), closes the
// snapshot with its end (the time, and how many programs were missed) and
// the events, and returns the statistics and how many programs the
// snapshot holds. An error leaves those programs in the snapshot, which is
// then incomplete: it is an *IncompleteError when there are any.
func (s *Snapshotter) Stop() (Stats, int, error) {
	st := s.stop()
	endErr := writeError(s.sw.Close(snapshot.End{Until: time.Now(), Missed: st.Lost + st.Failed}))
	return st, s.written, stopError(errors.Join(s.err, endErr), s.written)
}

// An IncompleteError is Stop's error when the watch stopped on an error,
// or the snapshot could not be ended, after programs were written to it:
// the snapshot holds those read before, and is worth keeping, an
// incomplete snapshot inject reads (snapshot.File.Incomplete, or an end
// with fewer programs than were loaded). An error before any program was
// written is Stop's as it is: that snapshot holds nothing to keep.
type IncompleteError struct {
	Err      error // what stopped the watch or the snapshot
	Programs int   // how many programs the snapshot holds, at least 1
}

func (e *IncompleteError) Error() string { return e.Err.Error() }

func (e *IncompleteError) Unwrap() error { return e.Err }

// Holds says what the snapshot holds, after its name: "holds the 2
// programs read before (an incomplete snapshot)".
func (e *IncompleteError) Holds() string {
	progs := "programs"
	if e.Programs == 1 {
		progs = "program"
	}
	return fmt.Sprintf("holds the %d %s read before (an incomplete snapshot)", e.Programs, progs)
}

// stopError is Stop's error: err, an *IncompleteError when the snapshot
// holds written programs.
func stopError(err error, written int) error {
	if err == nil || written == 0 {
		return err
	}
	return &IncompleteError{Err: err, Programs: written}
}
