package journal

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/doc"
)

// Record is one record of a segment, as segmentReader hands it out.
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
	// Damaged, when none of them is, says why the bytes at Offset (Size
	// of them, up to the next record that reads) are no record: a frame
	// damaged since it was written, skipped.
	Damaged string
}

// segmentReader reads a segment's records one at a time: Next, Record,
// and at the end Err and Torn. The segment's header is read by the first
// Next and is not handed out (System, Seq, Started).
//
// A damaged frame (a length over MaxRecord, a wrong checksum, a payload
// that is no record) loses that record only: the reader looks for the
// next frame that reads (a length within MaxRecord, its checksum right, a
// JSON object), as journald's journal_file_next_entry() skips a corrupt
// entry, and hands out the bytes skipped as a Record with Damaged.
type segmentReader struct {
	name string
	ra   io.ReaderAt
	size int64 // what is read of it: its size when it was opened
	// win holds the bytes of the segment from winOff.
	win    []byte
	winOff int64
	off    int64
	header *segmentHeader
	rec    Record
	err    error
	// torn says where the segment stops being readable, if it does
	// before its end (a record cut by a SIGKILL or a crash, or damaged
	// with no record after it that reads).
	torn string
	// scanned counts the bytes checksummed looking for the next record
	// after damaged ones (maxResync).
	scanned int64
	// Raw, when set, keeps a load's JSON instead of decoding it
	// (RawLoad); the index reads programs only when asked.
	raw     bool
	rawLoad []byte
}

// windowSize is how much of a segment segmentReader reads at once.
const windowSize = 64 << 10

// maxResync bounds the bytes segmentReader checksums in a segment looking
// for the record after a damaged one: a segment made of frames that
// almost read would otherwise cost a checksum of up to MaxRecord bytes
// per byte. Past it, the rest of the segment is torn.
const maxResync = 64 << 20

// newSegmentReader reads the segment in f (its Name names it in errors),
// to the size it has now.
func newSegmentReader(f *os.File) *segmentReader {
	s := &segmentReader{name: f.Name(), ra: f}
	st, err := f.Stat()
	if err != nil {
		s.err = fmt.Errorf("%s: %w", s.name, err)
		return s
	}
	s.size = st.Size()
	return s
}

// newSegmentReaderFrom reads a segment of size bytes from ra, named name.
func newSegmentReaderFrom(ra io.ReaderAt, size int64, name string) *segmentReader {
	return &segmentReader{name: name, ra: ra, size: size}
}

// System is the machine and boot the segment's records are of (after the
// first Next).
func (s *segmentReader) System() bpfprog.System {
	if s.header == nil {
		return bpfprog.System{}
	}
	return s.header.System
}

// Header is the segment's header, nil until the first Next read it.
func (s *segmentReader) Header() *segmentHeader { return s.header }

// at returns n bytes of the segment from off, fewer at its end; nil and
// Err set on a read error.
func (s *segmentReader) at(off int64, n int) []byte {
	n = int(min(int64(n), max(s.size-off, 0)))
	if n == 0 {
		return nil
	}
	if off >= s.winOff && off+int64(n) <= s.winOff+int64(len(s.win)) {
		return s.win[off-s.winOff : off-s.winOff+int64(n)]
	}
	want := int(min(max(int64(n), windowSize), s.size-off))
	if cap(s.win) < want || cap(s.win) > windowSize && want <= windowSize {
		s.win = make([]byte, want) // a large record's buffer is not kept
	}
	s.win = s.win[:want]
	s.winOff = off
	if m, err := s.ra.ReadAt(s.win, off); m < want {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF // it shrank since it was opened
		}
		s.err, s.win = fmt.Errorf("%s: reading at offset %d: %w", s.name, off, err), s.win[:0]
		return nil
	}
	return s.win[:n]
}

// Next reads the next record; false at the segment's end, at a record it
// cannot read and none after it (Torn says where), or on an error (Err).
func (s *segmentReader) Next() bool {
	if s.err != nil || s.torn != "" {
		return false
	}
	if s.header == nil && !s.readHeader() {
		return false
	}
	for {
		start := s.off
		r, why := s.frame()
		switch {
		case s.err != nil:
			return false
		case why == "" && s.off == start:
			return false // the end
		case why != "":
			next, ok := s.resync(start + 1)
			if !ok {
				if s.err == nil {
					s.torn = why
				}
				return false
			}
			s.off = next
			s.rec = Record{Offset: start, Size: next - start, Damaged: why}
			return true
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

// readHeader reads the magic and the header record.
func (s *segmentReader) readHeader() bool {
	// A writer killed right after it made the file leaves less than the
	// magic and the header: a segment cut, not another file.
	m := s.at(0, len(magic))
	switch {
	case s.err != nil:
		return false
	case len(m) < len(magic) && string(m) == magic[:len(m)]:
		s.torn = fmt.Sprintf("cut at offset %d, before its header", len(m))
		return false
	case string(m) != magic:
		s.err = fmt.Errorf("%s: %w (no segment magic)", s.name, ErrFormat)
		return false
	}
	s.off = int64(len(magic))
	r, why := s.frame()
	switch {
	case s.err != nil:
		return false
	case why != "":
		s.torn = why + ", its header"
		return false
	case s.off == int64(len(magic)):
		s.torn = "cut before its header"
		return false
	case r.Segment == nil || r.Segment.Kind != doc.KindJournal:
		s.err = fmt.Errorf("%s: %w (its first record is not a segment header)", s.name, ErrFormat)
		return false
	case r.Segment.FormatVersion > doc.FormatVersion:
		s.err = fmt.Errorf("%s: format version %d, written by a newer bpfmeta", s.name, r.Segment.FormatVersion)
		return false
	}
	s.header = r.Segment
	return true
}

// frame reads the frame at s.off and decodes its payload, and moves past
// it. At the end it returns with s.off unmoved; a frame that does not
// read, with why.
func (s *segmentReader) frame() (r record, why string) {
	h := s.at(s.off, frameHeader)
	switch {
	case s.err != nil, len(h) == 0:
		return r, ""
	case len(h) < frameHeader:
		return r, fmt.Sprintf("a record cut at offset %d (%d bytes of its frame)", s.off, len(h))
	}
	size := binary.LittleEndian.Uint32(h[:4])
	sum := binary.LittleEndian.Uint32(h[4:])
	if size > MaxRecord {
		return r, fmt.Sprintf("a damaged record at offset %d (its length says %d bytes)", s.off, size)
	}
	p := s.at(s.off+frameHeader, int(size))
	switch {
	case s.err != nil:
		return r, ""
	case len(p) < int(size):
		return r, fmt.Sprintf("a record cut at offset %d", s.off)
	case crc32.Checksum(p, castagnoli) != sum:
		return r, fmt.Sprintf("a damaged record at offset %d (its checksum is wrong)", s.off)
	}
	if err := json.Unmarshal(p, &r); err != nil {
		return record{}, fmt.Sprintf("a damaged record at offset %d (%v)", s.off, bpfprog.JSONError(err))
	}
	s.off += frameHeader + int64(size)
	return r, ""
}

// resync finds the first frame at or after from that reads: its length
// within MaxRecord and within the segment, its payload a JSON object
// ('{' to '}') whose checksum is right. false if there is none (or
// maxResync was spent looking).
func (s *segmentReader) resync(from int64) (int64, bool) {
	for q := from; q+frameHeader+2 <= s.size; {
		// a payload begins with '{': look for the next one
		w := s.at(q+frameHeader, windowSize)
		if s.err != nil {
			return 0, false
		}
		i := bytes.IndexByte(w, '{')
		if i < 0 {
			q += int64(len(w))
			continue
		}
		q += int64(i)
		h := s.at(q, frameHeader)
		if len(h) < frameHeader {
			return 0, false
		}
		size := int64(binary.LittleEndian.Uint32(h[:4]))
		if size >= 2 && size <= MaxRecord && q+frameHeader+size <= s.size {
			if s.scanned += size; s.scanned > maxResync {
				return 0, false
			}
			sum := binary.LittleEndian.Uint32(h[4:])
			p := s.at(q+frameHeader, int(size))
			if s.err != nil {
				return 0, false
			}
			if p[len(p)-1] == '}' && crc32.Checksum(p, castagnoli) == sum {
				return q, true
			}
		}
		q++
	}
	return 0, false
}

// Record is the record Next read.
func (s *segmentReader) Record() Record { return s.rec }

// Err is the error that stopped Next, if any.
func (s *segmentReader) Err() error { return s.err }

// Torn says where the segment stops being readable before its end, ""
// if it does not: a record its writer was killed while writing (the last
// one), or one damaged since with no record after it that reads.
func (s *segmentReader) Torn() string { return s.torn }
