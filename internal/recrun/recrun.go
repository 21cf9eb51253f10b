// Package recrun is the fast path of the records that are only passed on.
//
// A Run is a window of whole records in a reader's buffer that a caller
// walks in a loop of its own (Peek, Take) instead of a call of the
// reader's Next each, has the reader move past (Source.Pass) and writes on
// as one span of input bytes (Sink.WriteRun). inject passes a recording's
// SAMPLEs so (a 317 MB recording has 2.8 M records; most are SAMPLEs), and
// writer.Copy every record of convert.
//
// Which records a run holds is decided here once, by Passes, which Peek
// asks of every record: reader, writer and inject take no other view of
// it.
//
// The fast path is not part of the public API of package reader or
// writer: a *reader.Reader hands out runs and a *writer.Writer writes them
// through unexported methods, which those packages register here
// (SetSourceOf, SetSinkOf) and their users reach by SourceOf and SinkOf.
// The public way to read records is the reader's Next.
package recrun

import "github.com/bpfmeta/bpfmeta/perfdata"

// passMask has bit t set for each kernel record type t that passes: all
// but those perfdata's table of record types marks inspected
// (RecordType.Inspected: KSYMBOL and BPF_EVENT), made once so that Passes
// is a bit test.
var passMask = func() (m uint64) {
	for t := range perfdata.UserTypeStart {
		if !t.Inspected() {
			m |= 1 << t
		}
	}
	return m
}()

// Passes reports whether a record of type t can be in a run, the one rule
// of what ends a run. A record passes if it is a kernel record (type <
// perfdata.UserTypeStart) other than those perfdata.RecordType.Inspected
// names, KSYMBOL and BPF_EVENT:
//
//   - a record of a user type (FINISHED_ROUND, COMPRESSED, HEADER_ATTR,
//     FINISHED_INIT, BPF_METADATA, ...) changes the reader's state (its
//     framing, a compressed record's records, the attrs of a stream) or
//     the writer's (a file output's sections), or inject's (the records
//     it adds), and takes the reader's Next;
//   - KSYMBOL and BPF_EVENT feed inject's tracker (bpftrack): what a
//     program is, where its functions are.
//
// Every other record is only passed on unchanged, and inject reads at
// most the time and ip of it (passRun). A kernel record that is to do
// more must not pass: inject does for a record that passes nothing but
// what passRun does (injector.record returns before the rest).
func Passes(t perfdata.RecordType) bool {
	return t < perfdata.UserTypeStart && passMask>>t&1 != 0
}

// Run is the records that the reader's Next would hand out next, one
// after the other, each by its short path and with nothing to do between
// them: whole records that pass (Passes), already in the reader's buffer,
// stored in the data section or stream, or decoded from a compressed
// record. A Run is valid until the next call of the reader's Next or Pass.
type Run struct {
	b    []byte // the run's bytes, from its first record on
	rest []byte // b from the next record on
	last int    // size of the last record taken
	n    int    // records taken

	off   int64 // offset of b[0]: Record.Offset
	outer int64 // Record.Outer
	part  int   // Record.Part
}

// New returns the run of the records in b, the first at offset off
// (Record.Offset), with Record.Outer outer (-1: stored, not decoded from
// a compressed record) and Record.Part part. b holds little-endian
// records: Peek reads little-endian headers only, so that it is small
// enough to be inlined in the caller's loop (a reader of a big-endian
// recording hands out no runs).
func New(b []byte, off, outer int64, part int) Run {
	return Run{b: b, rest: b, off: off, outer: outer, part: part}
}

// Peek returns the header of the run's next record, false at the run's
// end: a record that does not pass (Passes), a record not whole in the
// buffer, or a header whose size is less than a header's.
func (u *Run) Peek() (perfdata.EventHeader, bool) {
	if len(u.rest) < perfdata.EventHeaderSize {
		return perfdata.EventHeader{}, false
	}
	h := perfdata.DecodeEventHeaderLittle(u.rest)
	return h, Passes(h.Type) && h.Size >= perfdata.EventHeaderSize && len(u.rest) >= int(h.Size)
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
func (u *Run) Taken() (off int64, raw []byte) { return u.off, u.b[:u.bytes()] }

// Last returns the last record taken and its offset: the reader's
// Record after Pass. Only for a run with records taken.
func (u *Run) Last() (off int64, raw []byte) {
	n := u.bytes()
	return u.off + int64(n-u.last), u.b[n-u.last : n]
}

// bytes is the number of bytes taken.
func (u *Run) bytes() int { return len(u.b) - len(u.rest) }

// Outer is the offset of the compressed record the run's records were
// decoded from (Record.Outer), -1 for stored records.
func (u *Run) Outer() int64 { return u.outer }

// Compressed reports whether the run's records were decoded from a
// compressed record (Record.Compressed): a writer does not write them,
// the compressed record carries them.
func (u *Run) Compressed() bool { return u.outer >= 0 }

// Part is the file of a directory recording the run is in (Record.Part).
func (u *Run) Part() int { return u.part }

// Source is a recording that hands out runs (a *reader.Reader, through
// SourceOf).
type Source interface {
	// Run returns the run of records at the recording's position: empty
	// if its Next has something else to do first.
	Run() Run
	// Pass moves the recording past the records taken from u, the last
	// Run it returned, as that many calls of Next would.
	Pass(u Run)
}

// Sink is an output that writes a run of records in one call (a
// *writer.Writer, through SinkOf).
type Sink interface {
	// WriteRun writes the records taken from u, a run its source has
	// passed, as writing each of them would.
	WriteRun(u Run) error
}

var (
	sourceOf func(any) Source
	sinkOf   func(any) Sink
)

// SetSourceOf and SetSinkOf are how package reader and package writer
// (in their init) say which of their values hand out or write runs.
func SetSourceOf(f func(any) Source) { sourceOf = f }

// SetSinkOf: see SetSourceOf.
func SetSinkOf(f func(any) Sink) { sinkOf = f }

// SourceOf returns the runs that x, a recording, hands out: x itself if
// it is a Source (a test's), the reader's if x is a *reader.Reader or
// embeds one (the command line's input), nil if x hands out none (its
// records then go one at a time by Next).
func SourceOf(x any) Source { return find(x, sourceOf) }

// SinkOf returns what writes runs to x, an output: x itself if it is a
// Sink, the writer's if x is a *writer.Writer or embeds one, nil if none.
func SinkOf(x any) Sink { return find(x, sinkOf) }

// find is x as a T, or what of, its package's, makes of it.
func find[T any](x any, of func(any) T) T {
	if t, ok := x.(T); ok || of == nil {
		return t
	}
	return of(x)
}
