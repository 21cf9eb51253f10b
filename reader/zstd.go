package reader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

// zstdStream decompresses the payloads of a recording's COMPRESSED and
// COMPRESSED2 records as one continuous zstd stream, the way perf's
// zstd_decompress_stream() feeds every payload to one ZSTD_DStream that is
// never reset: perf record calls ZSTD_flushStream() per record and never
// ZSTD_endStream(), so a payload is only a continuation of the previous
// ones and the frame is never closed.
//
// The output of a payload is decoded into the caller's buffer, as much as
// it has room for at a time, so that memory stays bounded whatever a
// payload decompresses to (perf instead decompresses each record into a
// buffer of HEADER_COMPRESSED's mmap_len and fails when that is too small).
//
// klauspost/compress has no push API: its decoder pulls its input from an
// io.Reader. So it runs as a coroutine (iter.Pull) over an io.Reader that
// hands it one payload at a time: next resumes it to decode into the
// caller's buffer, and it yields back what it decoded, or that it needs the
// next payload. In sync mode (concurrency 1) the decoder asks for more
// input only after it has returned everything it could decode, so the
// moment it asks is the moment all output for the payloads fed so far has
// been delivered. A coroutine, not a goroutine: perf writes a COMPRESSED
// record per ring-buffer flush, tens of KiB of records each, and handing
// every one to another thread and back cost more than decoding it (a 126
// MB recording of 2,781 payloads: 0.7 GB/s with a decoder goroutine fed
// one payload at a time, 0.9 as a coroutine; a goroutine fed 64 payloads
// ahead, meeting the reader once per 256 KiB of output, was no faster on 2
// CPUs and cost a third more CPU).
//
// Measured again on a 10 MB -z recording of 111 MB of records (2,406
// payloads, 2,833 blocks; perf 7.2 profile of inject, and paired runs on
// the same payloads): decoding proper (sequence execution, Huffman and FSE
// tables) is most of the time; the coroutine and the per-payload feeding
// cost under 2% over one decoder reading all payloads at once; the two
// copies (payload into the decoder's block buffer, its history into dst) a
// few percent. In sync mode Decoder.Read returns as soon as it has output
// from one block, so a dst larger than a block does not save resumes.
// WithDecoderLowmem(false) is as fast in a warm loop and costs a fresh
// process 12-18% more CPU (its block buffers are allocated at their largest
// up front). The decoder's own stream concurrency (2 or 4, which decodes
// and executes sequences on separate goroutines, klauspost/compress#498)
// took twice the time and CPU on the same payloads, all in one reader: it
// meets its goroutines once per block, and perf's flush per record makes
// blocks small (39 KiB of output on average). Overlap
// needs payloads read ahead of the records handed out, which this type's
// one-payload-at-a-time contract does not give: a decoder goroutine
// running ahead over all payloads, meeting the walk once per 256 KiB, 1 or
// 4 MiB of output, won or lost by up to a third from run to run at a load
// of 4.5 on 2 CPUs and cost 10-25% more CPU (the finer grain the most).
// Tried again with the reader feeding ahead the payloads already in its
// buffer (16 at a time, output in 128 KiB buffers shared with the decoder
// goroutine), on a quiet machine: the same 10 MB recording took 1.08x the
// wall time and 1.23x the CPU of this coroutine (paired, 21 runs), the
// walk waiting for the decoder 377 times in 861 buffers. The profile says
// why: decoding is ~45% of an inject of it and the walk ~7%, so overlap
// can win at most that 7%, and the wake-ups between CPUs cost more.
type zstdStream struct {
	pull func() (zstdChunk, bool)
	stop func()
	// dec is the decoder, kept from one stream to the next (the data
	// files of a directory recording, one stream each): Reset keeps its
	// history ring, as large as a frame's window, where a decoder per
	// stream would allocate one for each (45 ms and 32 MiB for a stream
	// that declares a 32 MiB window, however short; and the old ones'
	// until the GC takes them).
	dec *zstd.Decoder
	// payload is the payload fed and not yet taken by the decoder; dst
	// where the decoder writes when resumed.
	payload []byte
	dst     []byte
	// err is sticky: once the stream is corrupt nothing more can be decoded.
	err error
	// busy: a payload was fed and its output is not all out yet.
	busy  bool
	frame zstdFramer
}

type zstdChunk struct {
	out  []byte // the bytes decoded, in the dst of the Read that decoded them
	err  error
	need bool // the decoder is waiting for the next payload
}

// maxZstdWindow bounds the window a frame may declare: the decoder keeps
// that much history, which a 16 KiB file declaring the format's 512 MiB
// default could make it allocate. perf record -z at levels up to 20 needs
// at most 32 MiB (zstd's windowLog 25 for level 20, on a stream of unknown
// size); levels 21 and 22 need 64 and 128 MiB, which perf reads (its
// windowLogMax is zstd's default, 27) and bpfmeta refuses.
const maxZstdWindow = 32 << 20

// maxIdleReads is how many empty reads in a row the decoder may make.
const maxIdleReads = 1000

var errStreamClosed = errors.New("zstd stream closed")

// feed starts decompressing the next payload. The output follows from next.
// The payload may end anywhere, inside a block or a block header: perf
// 6.1's zstd_compress_stream_to_records() caps a record at
// max_record_size and leaves what ZSTD_flushStream() could not write in
// the compressor, to start the next COMPRESSED record, whatever perf
// writes between the two; perf's zstd_decompress_stream() reads on, as
// the decoder here does (it waits inside the block for the next payload).
// Only a stream that ends inside a block was cut: see unfinished.
//
// at is where the payload's record is, for what unfinished says.
func (z *zstdStream) feed(payload []byte, at int64) error {
	if z.err != nil {
		return z.err
	}
	if z.busy {
		return errors.New("zstd: payload fed before the previous one's output was read")
	}
	if err := z.frame.walk(payload, at); err != nil {
		z.err = err
		return err
	}
	if z.pull == nil {
		z.pull, z.stop = iter.Pull(z.run)
	}
	z.payload = payload
	z.busy = true
	return nil
}

// next decodes more of the current payload's output into dst and returns
// how many bytes it wrote, or 0 once the payload's output is all out. The
// payload must stay unchanged until then.
//
// After a 0, the next call must pass the same dst (its start, at least as
// long): the decoder asks for the next payload from inside a Read that has
// written nothing yet, and that Read, resumed, writes into the dst it was
// called with.
func (z *zstdStream) next(dst []byte) (int, error) {
	if !z.busy {
		return 0, z.err
	}
	z.dst = dst
	c, ok := z.pull()
	z.dst = nil
	switch {
	case !ok:
		z.err = errStreamClosed
	case c.need:
		z.busy = false
		return 0, nil
	case c.err != nil:
		z.err = c.err
	case unsafe.SliceData(c.out) != unsafe.SliceData(dst):
		z.err = errors.New("zstd: the output after a payload's end was asked for in another buffer")
	default:
		return len(c.out), nil
	}
	z.busy = false
	return 0, z.err
}

// restart ends the stream: the next feed starts another, with the same
// decoder.
func (z *zstdStream) restart() {
	if z.stop != nil {
		z.stop()
	}
	*z = zstdStream{dec: z.dec}
}

// close ends the stream and releases the decoder.
func (z *zstdStream) close() {
	z.restart()
	if z.dec != nil {
		z.dec.Close()
		z.dec = nil
	}
}

// run is the decoder coroutine.
func (z *zstdStream) run(yield func(zstdChunk) bool) {
	src := &payloadSource{z: z, yield: yield}
	var err error
	if z.dec == nil {
		z.dec, err = zstd.NewReader(src,
			zstd.WithDecoderConcurrency(1), // sync mode: see the type comment
			zstd.WithDecoderLowmem(true),   // faster from a fresh process: see the type comment
			zstd.WithDecoderMaxWindow(maxZstdWindow),
			zstd.IgnoreChecksum(true))
	} else {
		err = z.dec.Reset(src)
	}
	if err != nil {
		yield(zstdChunk{err: err})
		return
	}
	dec := z.dec
	idle := 0
	for {
		dst := z.dst
		n, err := dec.Read(dst)
		if n == 0 && err == nil {
			// A decoder that returns nothing and no error at the end of a
			// frame would spin here forever.
			if idle++; idle > maxIdleReads {
				err = errors.New("zstd decoder makes no progress")
			}
		} else {
			idle = 0
		}
		if n > 0 && !yield(zstdChunk{out: dst[:n]}) {
			return
		}
		if err != nil {
			if errors.Is(err, errStreamClosed) {
				return
			}
			switch {
			case err == io.EOF || err == io.ErrUnexpectedEOF:
				err = fmt.Errorf("zstd stream ended: %w", err)
			case errors.Is(err, zstd.ErrWindowSizeExceeded):
				err = fmt.Errorf("the zstd frame's window is over %d MiB, which bpfmeta does not keep (perf record -z above level 20?): %w", maxZstdWindow>>20, err)
			}
			yield(zstdChunk{err: err})
			return
		}
	}
}

// payloadSource is the decoder's input: the payloads fed so far.
type payloadSource struct {
	z     *zstdStream
	yield func(zstdChunk) bool
	cur   []byte
}

func (p *payloadSource) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.z.payload == nil {
			// All output for the payloads so far has been read: let next
			// say so, and wait for the next payload.
			if !p.yield(zstdChunk{need: true}) {
				return 0, errStreamClosed
			}
			continue
		}
		p.cur, p.z.payload = p.z.payload, nil
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// zstdFramer follows the frame and block structure of the compressed stream
// (RFC 8878, sections 3.1.1 and 3.1.1.2) without decoding it: the block
// headers say how long every block is. perf record flushes the stream at
// the end of every record (ZSTD_flushStream() ends the current block), so
// a payload usually ends between blocks; one capped at perf's
// max_record_size ends inside one, which the next payload completes. A
// stream that ends inside a block, or inside a header, was cut.
type zstdFramer struct {
	state framerState
	head  [18]byte // the header being read
	have  int      // bytes of it read
	want  int      // bytes it has
	skip  int64    // content bytes left of the current block or skippable frame
	size  int64    // content bytes of the current block
	// at is the walk's at when the current header started: where the
	// record its block starts in is.
	at   int64
	last bool // the current block is its frame's last
	sum  bool // the frame has a content checksum
	// window is the largest window a frame declared (frameWindow): the
	// history the decoder keeps.
	window int64
}

type framerState int

const (
	frameMagic    framerState = iota // at a frame's magic number
	frameHeader                      // in a frame header
	blockHeader                      // at (or in) a block header
	blockContent                     // in a block's content
	frameChecksum                    // in the checksum after the last block
	skippableSize                    // in the size of a skippable frame
	skippableData                    // in a skippable frame's data
)

const (
	zstdMagic          = 0xFD2FB528
	zstdSkippableMagic = 0x184D2A50 // the low 4 bits vary
	// zstdMaxBlock is Block_Maximum_Size: a block never holds more.
	zstdMaxBlock = 128 << 10
)

var errZstdFraming = errors.New("zstd framing")

// walk follows the structure through p, which may end anywhere; at is
// where p's record is.
func (f *zstdFramer) walk(p []byte, at int64) error {
	for len(p) > 0 {
		switch f.state {
		case frameMagic, frameHeader, blockHeader, skippableSize:
			if f.have == 0 {
				f.want = f.headerLen(p[0])
				f.at = at
			}
			n := copy(f.head[f.have:f.want], p)
			f.have += n
			p = p[n:]
			if f.have < f.want {
				continue
			}
			if err := f.header(); err != nil {
				return err
			}
		case blockContent, skippableData, frameChecksum:
			n := int(min(int64(len(p)), f.skip))
			f.skip -= int64(n)
			p = p[n:]
			if f.skip == 0 {
				f.endContent()
			}
		}
	}
	return nil
}

// unfinished says whether the stream walked so far stops inside a block
// (or a frame or block header), and if so how many bytes of it the stream
// holds and how many it lacks (0 when a header's length is not known); its
// header started in the payload walked with f.at.
// perf record ends every record's output with ZSTD_flushStream(), so a
// stream it finished ends between blocks.
func (f *zstdFramer) unfinished() (have, short int64, ok bool) {
	switch f.state {
	case blockContent:
		return f.size - f.skip, f.skip, true
	case frameMagic, blockHeader:
		if f.have == 0 {
			return 0, 0, false
		}
	case skippableData, frameChecksum:
		return 0, f.skip, true
	}
	return int64(f.have), int64(f.want - f.have), true
}

// headerLen is the size of the header that starts with byte b in the
// current state (the magic and the frame header descriptor are read first,
// alone).
func (f *zstdFramer) headerLen(b byte) int {
	switch f.state {
	case frameMagic:
		return 4
	case frameHeader:
		return 1 + frameHeaderRest(b)
	case blockHeader:
		return 3
	case skippableSize:
		return 4
	}
	return 0
}

// frameHeaderRest is the size of a frame header after its descriptor byte:
// window descriptor, dictionary id, frame content size.
func frameHeaderRest(fhd byte) int {
	single := fhd>>5&1 != 0
	n := [4]int{0, 1, 2, 4}[fhd&3]
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	if !single {
		n++
	}
	return n + fcs
}

// header acts on a complete header.
func (f *zstdFramer) header() error {
	h := f.head[:f.want]
	f.have = 0
	switch f.state {
	case frameMagic:
		m := binary.LittleEndian.Uint32(h)
		switch {
		case m == zstdMagic:
			f.state = frameHeader
		case m&^0xf == zstdSkippableMagic:
			f.state = skippableSize
		default:
			return fmt.Errorf("%w: no zstd frame magic (%#08x)", errZstdFraming, m)
		}
	case frameHeader:
		if h[0]&0x08 != 0 {
			return fmt.Errorf("%w: reserved bit set in a zstd frame header", errZstdFraming)
		}
		f.sum = h[0]&0x04 != 0
		f.window = max(f.window, frameWindow(h))
		f.state = blockHeader
	case skippableSize:
		f.skip = int64(binary.LittleEndian.Uint32(h))
		f.state = skippableData
		if f.skip == 0 {
			f.state = frameMagic
		}
	case blockHeader:
		bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		f.last = bh&1 != 0
		size := int64(bh >> 3)
		switch bh >> 1 & 3 {
		case 0: // raw
			f.skip = size
		case 1: // RLE: one byte, repeated size times
			f.skip = 1
		case 2: // compressed
			f.skip = size
		default:
			return fmt.Errorf("%w: reserved zstd block type", errZstdFraming)
		}
		if size > zstdMaxBlock {
			return fmt.Errorf("%w: a zstd block of %d bytes (at most %d)", errZstdFraming, size, zstdMaxBlock)
		}
		f.size = f.skip
		f.state = blockContent
		if f.skip == 0 {
			f.endContent()
		}
	}
	return nil
}

// endContent moves on after a block's content, a checksum or a skippable frame.
func (f *zstdFramer) endContent() {
	switch f.state {
	case blockContent:
		switch {
		case !f.last:
			f.state = blockHeader
		case f.sum:
			f.state, f.skip = frameChecksum, 4
		default:
			f.state = frameMagic
		}
	case frameChecksum, skippableData:
		f.state = frameMagic
	}
}
