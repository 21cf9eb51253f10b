package journal

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/bpfmeta/bpfmeta/bpfprog"
)

// Record is one record of a segment, as SegmentReader hands it out.
type Record struct {
	// Offset is where the record's frame starts in its segment.
	Offset int64
	// Size is the frame's size.
	Size int64
	// One of these is set.
	Program *bpfprog.Program // a load
	Unload  *Unload
	Dropped *Dropped
	Lost    *Lost
}

// SegmentReader reads a segment's records one at a time: Next, Record,
// and at the end Err and Torn. The segment's header is read by the first
// Next and is not handed out (System, Seq, Started).
type SegmentReader struct {
	name   string
	br     *bufio.Reader
	off    int64
	header *segmentHeader
	rec    Record
	err    error
	// torn says where the segment stops being readable, if it does
	// before its end (a record cut by a SIGKILL or a crash, or damaged).
	torn    string
	payload []byte
	// Raw, when set, keeps a load's JSON instead of decoding it
	// (RawLoad); the index reads programs only when asked.
	raw     bool
	rawLoad []byte
}

// NewSegmentReader reads the segment in f (its Name names it in errors),
// to the size fstat(2) gives it now: the segment its writer appends to is
// read to where it was, however fast the writer goes.
func NewSegmentReader(f *os.File) *SegmentReader {
	var r io.Reader = f
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		r = io.LimitReader(f, st.Size())
	}
	return &SegmentReader{name: f.Name(), br: bufio.NewReaderSize(r, 64<<10)}
}

// newSegmentReaderFrom reads a segment from r, named name.
func newSegmentReaderFrom(r io.Reader, name string) *SegmentReader {
	return &SegmentReader{name: name, br: bufio.NewReaderSize(r, 64<<10)}
}

// System is the machine and boot the segment's records are of (after the
// first Next).
func (s *SegmentReader) System() bpfprog.System {
	if s.header == nil {
		return bpfprog.System{}
	}
	return s.header.System
}

// Header is the segment's header, nil until the first Next read it.
func (s *SegmentReader) Header() *segmentHeader { return s.header }

// Next reads the next record; false at the segment's end, at a record it
// cannot read (Torn says where), or on an error (Err).
func (s *SegmentReader) Next() bool {
	if s.err != nil || s.torn != "" {
		return false
	}
	if s.header == nil {
		// A writer killed right after it made the file leaves less than
		// the magic and the header: a segment cut, not another file.
		var m [len(magic)]byte
		n, err := io.ReadFull(s.br, m[:])
		switch {
		case (err == io.EOF || err == io.ErrUnexpectedEOF) && string(m[:n]) == magic[:n]:
			s.torn = fmt.Sprintf("cut at offset %d, before its header", n)
			return false
		case err != nil:
			s.err = fmt.Errorf("%s: %w", s.name, err)
			return false
		case string(m[:]) != magic:
			s.err = fmt.Errorf("%s: %w (no segment magic)", s.name, ErrFormat)
			return false
		}
		s.off = int64(len(magic))
		r, ok := s.frame()
		if !ok {
			if s.err == nil && s.torn == "" {
				s.torn = "cut before its header"
			}
			return false
		}
		if r.Segment == nil || r.Segment.Kind != Kind {
			s.err = fmt.Errorf("%s: %w (its first record is not a segment header)", s.name, ErrFormat)
			return false
		}
		if r.Segment.FormatVersion > bpfprog.FormatVersion {
			s.err = fmt.Errorf("%s: format version %d, written by a newer bpfmeta", s.name, r.Segment.FormatVersion)
			return false
		}
		s.header = r.Segment
	}
	for {
		start := s.off
		r, ok := s.frame()
		if !ok {
			return false
		}
		s.rec = Record{Offset: start, Size: s.off - start}
		switch {
		case r.Load != nil && s.raw:
			s.rawLoad = r.Load
			s.rec.Program = &bpfprog.Program{} // a load, not decoded
		case r.Load != nil:
			p := new(bpfprog.Program)
			if err := p.UnmarshalJSON(r.Load); err != nil {
				s.err = fmt.Errorf("%s: the record at offset %d: %w: %v", s.name, start, ErrFormat, bpfprog.JSONError(err))
				return false
			}
			s.rec.Program = p
		case r.Unload != nil:
			s.rec.Unload = r.Unload
		case r.Dropped != nil:
			s.rec.Dropped = r.Dropped
		case r.Lost != nil:
			s.rec.Lost = r.Lost
		default:
			continue // a kind of record a newer bpfmeta writes
		}
		return true
	}
}

// frame reads one frame and decodes its payload; false at the end, or
// where the rest cannot be read (torn).
func (s *SegmentReader) frame() (record, bool) {
	var r record
	var h [frameHeader]byte
	n, err := io.ReadFull(s.br, h[:])
	switch {
	case err == io.EOF:
		return r, false
	case err == io.ErrUnexpectedEOF:
		s.torn = fmt.Sprintf("a record cut at offset %d (%d bytes of its frame)", s.off, n)
		return r, false
	case err != nil:
		s.err = fmt.Errorf("%s: %w", s.name, err)
		return r, false
	}
	size := binary.LittleEndian.Uint32(h[:4])
	if size > MaxRecord {
		s.torn = fmt.Sprintf("a damaged record at offset %d (its length says %d bytes)", s.off, size)
		return r, false
	}
	if cap(s.payload) < int(size) {
		s.payload = make([]byte, size)
	}
	p := s.payload[:size]
	if _, err := io.ReadFull(s.br, p); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			s.torn = fmt.Sprintf("a record cut at offset %d", s.off)
			return r, false
		}
		s.err = fmt.Errorf("%s: %w", s.name, err)
		return r, false
	}
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(h[4:]) {
		s.torn = fmt.Sprintf("a damaged record at offset %d (its checksum is wrong)", s.off)
		return r, false
	}
	if err := json.Unmarshal(p, &r); err != nil {
		s.torn = fmt.Sprintf("a damaged record at offset %d (%v)", s.off, bpfprog.JSONError(err))
		return r, false
	}
	s.off += frameHeader + int64(size)
	if cap(s.payload) > 64<<10 {
		s.payload = nil
	}
	return r, true
}

// Record is the record Next read.
func (s *SegmentReader) Record() Record { return s.rec }

// Err is the error that stopped Next, if any.
func (s *SegmentReader) Err() error { return s.err }

// Torn says where the segment stops being readable before its end, ""
// if it does not: a record its writer was killed while writing (the last
// one), or one damaged since. What follows it is not read.
func (s *SegmentReader) Torn() string { return s.torn }
