package reader

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// zstdStream decompresses the payloads of a recording's COMPRESSED and
// COMPRESSED2 records as one continuous zstd stream, the way perf's
// zstd_decompress_stream() feeds every payload to one ZSTD_DStream that is
// never reset: perf record calls ZSTD_flushStream() per record and never
// ZSTD_endStream(), so a payload is only a continuation of the previous
// ones and the frame is never closed.
//
// klauspost/compress has no push API, so the decoder runs in its own
// goroutine over an io.Reader that hands it one payload at a time. In sync
// mode (concurrency 1) the decoder asks for more input only after it has
// returned everything it could decode, so the moment it asks is the moment
// all output for the payloads fed so far has been delivered.
type zstdStream struct {
	in   chan []byte
	out  chan zstdChunk
	ack  chan struct{} // feed has copied the last chunk: its buffer may be reused
	done chan struct{}
	// err is sticky: once the stream is corrupt nothing more can be decoded.
	err     error
	started bool
}

type zstdChunk struct {
	b    []byte
	err  error
	need bool // the decoder is waiting for the next payload
}

// zstdReadSize is the size of the decoder's output reads.
const zstdReadSize = 256 << 10

// maxDecompressed bounds what one compressed record may decompress to. perf
// itself decompresses each record into a buffer of HEADER_COMPRESSED's
// mmap_len (528 KiB by default, the ring buffer size with -m); the bound
// keeps a damaged or hostile stream from exhausting memory.
const maxDecompressed = 256 << 20

// maxIdleReads is how many empty reads in a row the decoder may make.
const maxIdleReads = 1000

func newZstdStream() *zstdStream {
	return &zstdStream{
		in:   make(chan []byte),
		out:  make(chan zstdChunk),
		ack:  make(chan struct{}),
		done: make(chan struct{}),
	}
}

// feed decompresses payload and appends the output to dst.
func (z *zstdStream) feed(dst, payload []byte) ([]byte, error) {
	if z.err != nil {
		return dst, z.err
	}
	if !z.started {
		z.started = true
		go z.run()
	}
	select {
	case z.in <- payload:
	case <-z.done:
		return dst, errors.New("zstd stream closed")
	}
	start := len(dst)
	for c := range z.out {
		if c.need {
			return dst, nil
		}
		if c.err != nil {
			z.err = c.err
			return dst, c.err
		}
		if len(dst)-start+len(c.b) > maxDecompressed {
			z.err = fmt.Errorf("decompresses to more than %d MiB", maxDecompressed>>20)
			z.close()
			return dst, z.err
		}
		dst = append(dst, c.b...)
		select {
		case z.ack <- struct{}{}:
		case <-z.done:
		}
	}
	return dst, errors.New("zstd stream closed")
}

func (z *zstdStream) close() {
	select {
	case <-z.done:
	default:
		close(z.done)
	}
}

// run is the decoder goroutine.
func (z *zstdStream) run() {
	src := &payloadSource{z: z}
	dec, err := zstd.NewReader(src,
		zstd.WithDecoderConcurrency(1), // sync mode: see the type comment
		zstd.WithDecoderLowmem(true),
		zstd.IgnoreChecksum(true))
	if err != nil {
		z.send(zstdChunk{err: err})
		return
	}
	defer dec.Close()
	buf := make([]byte, zstdReadSize)
	idle := 0
	for {
		n, err := dec.Read(buf)
		if n == 0 && err == nil {
			// A decoder that returns nothing and no error at the end of a
			// frame would spin here forever.
			if idle++; idle > maxIdleReads {
				err = errors.New("zstd decoder makes no progress")
			}
		} else {
			idle = 0
		}
		if n > 0 {
			if !z.send(zstdChunk{b: buf[:n]}) {
				return
			}
			select {
			case <-z.ack:
			case <-z.done:
				return
			}
		}
		if err != nil {
			if errors.Is(err, errStreamClosed) {
				return
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = fmt.Errorf("zstd stream ended: %w", err)
			}
			z.send(zstdChunk{err: err})
			return
		}
	}
}

func (z *zstdStream) send(c zstdChunk) bool {
	select {
	case z.out <- c:
		return true
	case <-z.done:
		return false
	}
}

var errStreamClosed = errors.New("zstd stream closed")

// payloadSource is the decoder's input: the payloads fed so far.
type payloadSource struct {
	z   *zstdStream
	cur []byte
	fed bool // a payload has been handed to the decoder
}

func (p *payloadSource) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.fed {
			// All output for the payloads so far has been read: let feed return.
			if !p.z.send(zstdChunk{need: true}) {
				return 0, errStreamClosed
			}
		}
		p.fed = true
		select {
		case c := <-p.z.in:
			p.cur = c
		case <-p.z.done:
			return 0, errStreamClosed
		}
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}
