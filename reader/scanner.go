package reader

import (
	"io"
	"runtime"

	"github.com/bpfmeta/bpfmeta/internal/hugebuf"
	"github.com/bpfmeta/bpfmeta/internal/retain"
)

// Buffer sizes.
const (
	// streamBufSize is the read buffer of the record stream: big enough
	// that a copy runs at the speed of the page cache, small enough for a
	// constant, small memory footprint. The buffer and the spare are the
	// two halves of a hugebuf block.
	streamBufSize = hugebuf.Size / 2
	// maxRecord is the largest record a perf_event_header can describe.
	maxRecord = 1<<16 - 1
)

// scanner is a forward-only buffered view of a record stream that hands
// out slices of its buffer, so records are not copied.
type scanner struct {
	src  io.Reader
	buf  []byte
	r, w int
	off  int64 // input offset of buf[r]
	eof  bool

	// held, once a writer is attached (retain.Attach), lets it keep the
	// bytes handed out past the next peek. The scanner then alternates
	// between two buffers, and waits with spareRelease before it writes into
	// the one it left.
	held         *retain.Buffers
	spare        []byte
	spareRelease func()

	// blk is the hugebuf block buf and spare are halves of, until close;
	// cleanup gives it back if the scanner is dropped unclosed.
	blk     []byte
	cleanup runtime.Cleanup
}

func newScanner(src io.Reader, off int64, held *retain.Buffers) *scanner {
	blk := hugebuf.Get()
	s := &scanner{
		src:   src,
		buf:   blk[:streamBufSize:streamBufSize],
		spare: blk[streamBufSize:],
		off:   off,
		held:  held,
		blk:   blk,
	}
	s.cleanup = runtime.AddCleanup(s, dropped, heldBlock{blk, held})
	return s
}

// heldBlock is what the cleanup of a scanner dropped unclosed needs.
type heldBlock struct {
	blk  []byte
	held *retain.Buffers
}

// dropped gives back the block of a scanner dropped unclosed, unless a
// writer was given its bytes to write (retain.Attach): that one may not
// be done with them, and the block stays out of the pool.
func dropped(h heldBlock) {
	if retain.Of(h.held) == nil {
		hugebuf.Put(h.blk)
	}
}

// close gives the buffers back, once a writer that was given their bytes
// to write has written them (retain). The scanner reads nothing after.
func (s *scanner) close() {
	if s.blk == nil {
		return
	}
	if hold := retain.Of(s.held); hold != nil {
		hold()()
	}
	if s.spareRelease != nil {
		s.spareRelease()
		s.spareRelease = nil
	}
	s.cleanup.Stop()
	hugebuf.Put(s.blk)
	s.blk, s.buf, s.spare = nil, nil, nil
	s.r, s.w, s.eof = 0, 0, true
}

// restart goes on with another stream, whose first byte is at offset off,
// once the last one's bytes are all consumed. The bytes handed out before
// stay where they are (they may be retained).
func (s *scanner) restart(src io.Reader, off int64) {
	s.src, s.off, s.eof = src, off, false
}

// drop consumes the bytes read and not handed out: the stream is left
// there, to be restarted elsewhere.
func (s *scanner) drop() {
	s.off += int64(s.w - s.r)
	s.r = s.w
}

// buffered is the number of bytes available without reading.
func (s *scanner) buffered() int { return s.w - s.r }

// peek returns the next n bytes without consuming them, or fewer if the
// stream ends first. Slices returned earlier stay valid until the next peek
// that has to make room (or, with retain, until their release).
func (s *scanner) peek(n int) ([]byte, error) {
	if s.w-s.r >= n {
		return s.buf[s.r : s.r+n], nil
	}
	// Make room only when the buffer's end is reached, so that reads
	// of any size (a pipe gives 64 KiB at a time) fill whole buffers.
	if len(s.buf)-s.r < n {
		switch hold := retain.Of(s.held); {
		case hold != nil:
			// The consumer may still hold bytes of buf: move to the
			// other buffer once it is done with that one's.
			release := hold()
			if s.spare == nil {
				s.spare = make([]byte, max(len(s.buf), n))
			}
			if s.spareRelease != nil {
				s.spareRelease()
			}
			m := copy(s.spare, s.buf[s.r:s.w])
			s.buf, s.spare = s.spare, s.buf
			s.r, s.w = 0, m
			s.spareRelease = release
		default:
			m := copy(s.buf, s.buf[s.r:s.w])
			s.r, s.w = 0, m
		}
		if n > len(s.buf) {
			nb := make([]byte, n)
			copy(nb, s.buf[:s.w])
			s.buf = nb
		}
	}
	for s.w-s.r < n && !s.eof {
		m, err := s.src.Read(s.buf[s.w:])
		s.w += m
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			return s.buf[s.r:s.w], err
		}
	}
	return s.buf[s.r:min(s.r+n, s.w)], nil
}

// consume drops n buffered bytes.
func (s *scanner) consume(n int) {
	s.r += n
	s.off += int64(n)
}

// read reads up to len(p) bytes of the stream, from the buffer first. It
// never moves buffered data, so slices handed out by peek stay valid.
func (s *scanner) read(p []byte) (int, error) {
	if s.r < s.w {
		n := copy(p, s.buf[s.r:s.w])
		s.consume(n)
		return n, nil
	}
	if s.eof {
		return 0, io.EOF
	}
	n, err := s.src.Read(p)
	s.off += int64(n)
	if err == io.EOF {
		s.eof = true
		if n > 0 {
			err = nil
		}
	}
	return n, err
}

// skip drops n bytes of the stream, seeking where the source allows.
func (s *scanner) skip(n int64) (int64, error) {
	b := min(n, int64(s.buffered()))
	s.consume(int(b))
	left := n - b
	if left == 0 {
		return n, nil
	}
	if sk, ok := s.src.(io.Seeker); ok {
		cur, err := sk.Seek(0, io.SeekCurrent)
		if err == nil {
			end, err := sk.Seek(0, io.SeekEnd)
			if err == nil {
				step := min(left, end-cur)
				if _, err := sk.Seek(cur+step, io.SeekStart); err == nil {
					s.off += step
					if step < left {
						s.eof = true
						return b + step, io.ErrUnexpectedEOF
					}
					return n, nil
				}
			}
		}
	}
	m, err := io.CopyN(io.Discard, readerFunc(s.read), left)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return b + m, err
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// payloadReader reads the bytes a record carries beyond header.size.
type payloadReader struct {
	s          *scanner
	size, left int64
	// r, if set, makes an input that ends inside the data the reader's
	// error (Reader.payloadCut), whoever was reading the data.
	r *Reader
}

func (p *payloadReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n, err := p.s.read(b)
	p.left -= int64(n)
	if err == io.EOF && p.left > 0 {
		err = io.ErrUnexpectedEOF
		if p.r != nil {
			err = p.r.payloadCut()
		}
	}
	return n, err
}
