package reader

import "github.com/bpfmeta/bpfmeta/perfdata"

// short reports whether a record of header h, n bytes of which are in the
// buffer, is one Next hands out by its short path: a kernel record (type
// < 64: its framing and meaning change no state of the reader's; user
// types do, and take the long way), whole in the buffer. Next's fast
// path, nextTop's short path and a Run's walk all ask it.
func short(h perfdata.EventHeader, n int) bool {
	return h.Type < perfdata.UserTypeStart && h.Size >= perfdata.EventHeaderSize && n >= int(h.Size)
}

// Run is the records that Next would hand out next, one after the other,
// each by its short path and with nothing to do between them: whole
// kernel records already in the reader's buffer, stored in the data
// section or stream, or decoded from a compressed record. A caller that
// only passes such records on walks them in a loop of its own (Peek,
// Take) instead of a call of Next each, then has the reader move past
// those it took (Reader.Pass) and writes them on as one span of input
// bytes (writer.Writer.WriteRun).
//
// A Run is valid until the next call of Next or Pass.
type Run struct {
	b    []byte // the run's bytes, from its first record on
	rest []byte // b from the next record on
	last int    // size of the last record taken
	n    int    // records taken

	off   int64 // offset of b[0]: Record.Offset
	outer int64 // Record.Outer
	part  int   // Record.Part
}

// Run returns the run of records at the reader's position: empty if Next
// has something else to do first (read, skip data, decompress, look at a
// record of a user type), and for a big-endian recording, whose records
// Next hands out one at a time (a Run's walk reads little-endian headers
// only, so that Peek is small enough to be inlined in the caller's loop).
func (r *Reader) Run() Run {
	switch {
	case r.big:
	case r.fast:
		s := r.s
		b := s.buf[s.r:s.w]
		return Run{b: b, rest: b, off: s.off, outer: -1, part: r.part}
	case r.inInner && r.err == nil && !r.done && r.payload.left == 0:
		// what nextInner hands out before it decodes more
		b := r.inner[r.innerR:]
		return Run{b: b, rest: b, off: r.innerOff, outer: r.outer, part: r.part}
	}
	return Run{}
}

// Peek returns the header of the run's next record, false at the run's end.
func (u *Run) Peek() (perfdata.EventHeader, bool) {
	if len(u.rest) < perfdata.EventHeaderSize {
		return perfdata.EventHeader{}, false
	}
	h := perfdata.DecodeEventHeaderLittle(u.rest)
	return h, short(h, len(u.rest))
}

// Take moves past the record Peek returned the header h of, and returns
// its bytes (header included).
func (u *Run) Take(h perfdata.EventHeader) []byte {
	raw := u.rest[:h.Size]
	u.rest = u.rest[h.Size:]
	u.last = int(h.Size)
	u.n++
	return raw
}

// Len is the number of records taken.
func (u *Run) Len() int { return u.n }

// Taken returns the records taken, back to back, and the offset of the
// first (as Record.Offset).
func (u *Run) Taken() (off int64, raw []byte) { return u.off, u.b[:u.len()] }

// len is the number of bytes taken.
func (u *Run) len() int { return len(u.b) - len(u.rest) }

// Compressed reports whether the run's records were decoded from a
// compressed record (Record.Compressed): a writer does not write them,
// the compressed record carries them.
func (u *Run) Compressed() bool { return u.outer >= 0 }

// Part is the file of a directory recording the run is in (Record.Part).
func (u *Run) Part() int { return u.part }

// Pass moves the reader past the records taken from u, the last Run it
// returned, as that many calls of Next would: Counts, Offset and Record
// (the last of them) are then as after those calls.
func (r *Reader) Pass(u Run) {
	if u.n == 0 {
		return
	}
	n := u.len()
	last := u.b[n-u.last : n]
	r.setRecord(u.off+int64(n-u.last), perfdata.DecodeEventHeaderLittle(last), last, u.outer)
	if u.outer < 0 {
		r.s.consume(n)
		r.counts.Records += int64(u.n)
		return
	}
	r.innerR += n
	r.innerOff += int64(n)
	r.counts.Inner += int64(u.n)
	r.counts.InnerBytes += int64(n)
}
