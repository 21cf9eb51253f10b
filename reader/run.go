package reader

import (
	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// short reports whether a record of header h, n bytes of which are in the
// buffer, is one Next hands out by its short path: a kernel record (type
// < 64: its framing and meaning change no state of the reader's; user
// types do, and take the long way), whole in the buffer. Next's fast
// path and nextTop's short path ask it; a run (recrun.Run) holds only
// such records, fewer of them (recrun.Passes).
func short(h perfdata.EventHeader, n int) bool {
	return h.Type < perfdata.UserTypeStart && h.Size >= perfdata.EventHeaderSize && n >= int(h.Size)
}

func init() {
	recrun.SetSourceOf(func(x any) recrun.Source {
		if r, ok := x.(runSource); ok {
			return r.runSource()
		}
		return nil
	})
}

// runSource is a *Reader, or a value that embeds one (the command line's
// input): the reader's runs are its.
type runSource interface{ runSource() recrun.Source }

func (r *Reader) runSource() recrun.Source {
	if r == nil {
		return nil
	}
	return (*runs)(r)
}

// runs is a Reader as the recrun.Source of its runs: package recrun's
// fast path (inject, writer.Copy), not part of the Reader's API.
type runs Reader

// Run returns the run of records at the reader's position: empty if Next
// has something else to do first (read, skip data, decompress, look at a
// record of a user type), and for a big-endian recording, whose records
// Next hands out one at a time (a run reads little-endian headers only).
func (p *runs) Run() recrun.Run {
	r := (*Reader)(p)
	switch {
	case r.form.big:
	case r.fast:
		s := r.s
		return recrun.New(s.buf[s.r:s.w], s.off, -1, r.part)
	case r.z.inInner && r.err == nil && !r.done && r.payload.left == 0:
		// what nextInner hands out before it decodes more
		return recrun.New(r.z.inner[r.z.innerR:], r.z.innerOff, r.z.outer, r.part)
	}
	return recrun.Run{}
}

// Pass moves the reader past the records taken from u, the last Run it
// returned, as that many calls of Next would: Counts, Offset and Record
// (the last of them) are then as after those calls.
func (p *runs) Pass(u recrun.Run) {
	if u.Len() == 0 {
		return
	}
	r := (*Reader)(p)
	off, last := u.Last()
	r.setRecord(off, perfdata.DecodeEventHeaderLittle(last), last, u.Outer())
	_, taken := u.Taken()
	n := len(taken)
	if !u.Compressed() {
		r.s.consume(n)
		r.counts.Records += int64(u.Len())
		return
	}
	r.z.innerR += n
	r.z.innerOff += int64(n)
	r.counts.Inner += int64(u.Len())
	r.counts.InnerBytes += int64(n)
}
