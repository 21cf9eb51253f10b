package watch

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/internal/perfevent"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Journaler is a Watcher that appends every program it reads, and every
// unload of one, to a journal (journal.Writer): what bpfmeta watch
// --journal does, as a service, until it is stopped.
type Journaler struct {
	background
	jw *journal.Writer
}

// StartJournal opens the events and appends every program loaded (New)
// to jw, then follows the loads and unloads in a goroutine until Stop. An
// error writing the journal, here or later (Err, Stop), is a
// *outfile.WriteError; one of the kernel's is not.
func StartJournal(k *live.Kernel, jw *journal.Writer) (*Journaler, error) {
	w, err := New(k, Options{
		Emit: func(p *bpfprog.Program) error { return writeError(jw.Load(p)) },
		Unload: func(id uint32, tag perfdata.BPFTag, at uint64) error {
			return writeError(jw.Unload(id, tag, bootTime(at)))
		},
		Lost: func(m *MissedProgram, records uint64) error {
			l := journal.Lost{Records: records}
			if m != nil {
				l.ID, l.Tag, l.Name, l.Why = m.ID, m.Tag, m.Name, m.Err.Error()
			}
			return writeError(jw.Lost(l))
		},
	})
	if err != nil {
		return nil, err
	}
	j := &Journaler{jw: jw}
	j.start(w)
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

// Stop ends the watch, reads what is left (see Watcher.Run), closes the
// events and the journal (synced), and returns the statistics of both.
func (j *Journaler) Stop() (Stats, journal.Stats, error) {
	st := j.stop()
	jst := j.jw.Stats()
	return st, jst, errors.Join(j.err, writeError(j.jw.Close()))
}
