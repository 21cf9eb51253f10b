// Package reader reads perf.data recordings as perf does, one record at a time.
//
// It reads perf.data recordings as perf does: file mode (the seekable layout
// with header, attrs, data and feature sections, including the old PERFFILE
// version 1) and pipe mode (a 16-byte header and a stream of records), in
// either byte order, handing out one record at a time in constant memory.
//
// COMPRESSED and COMPRESSED2 records can be decompressed transparently:
// after a compressed record the reader hands out the records that complete
// inside it, marked with the compressed record's offset, exactly as perf's
// session code delivers them (one zstd stream per recording, records
// straddling compressed records).
//
// Records are handed out as stored, bytes untouched. The reader decodes only
// what it needs for framing; perfdata decodes the records a caller cares
// about. It does not write, reorder or interpret samples.
//
// NewFile reads a recording with random access (a file, an mmap, a byte
// slice), NewStream one that arrives as it is written (perf record -o -);
// neither touches the operating system. Open, OpenFile and OpenStream read
// what a user names, and carry the one input policy of the operating
// system's side: a directory is a directory recording, a regular file is
// read by offset, anything else as a stream with its pipe buffer grown
// (F_SETPIPE_SZ), and a file-format recording that arrives on a stream is
// first copied (Spool) to an unnamed file in $TMPDIR, no larger than the
// room there, which closing the Reader removes.
package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/hugebuf"
	"github.com/bpfmeta/bpfmeta/internal/retain"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Options change what a Reader hands out.
type Options struct {
	// Decompress makes the reader decode COMPRESSED/COMPRESSED2 records and
	// hand out the records inside them (Record.Outer set) after the
	// compressed record itself.
	Decompress bool
	// MaxExpansion is how many times the size of their payloads the
	// records of compressed records may be, once past 64 MiB (a zstd
	// bomb's are thousands of times): 0 is DefaultMaxExpansion, a
	// negative value no limit.
	MaxExpansion int
}

// Reader reads the records of one recording.
type Reader struct {
	opts Options
	form form

	s       *scanner
	counts  Counts
	end     int64 // file mode: end of the data section; pipe: -1
	rec     perfdata.Record
	payload payloadReader
	z       decompression

	// tail is the bytes after the last record that are not a record
	// (Trailing).
	tail struct {
		b   []byte
		off int64
	}
	err        error
	done       bool
	fast       bool // Next may take its short path (see there)
	started    bool // a record has been read: the dialect is known
	origin     Origin
	originDone bool       // a pipe stream's origin is complete
	files      []*os.File // closed by Close: what Open, OpenFile or OpenStream opened
	file       *os.File   // the regular file read (File), if Open or OpenFile read one

	dir  *dirParts // a directory recording's data files, or nil
	part int       // the file of a directory recording being read (Record.Part)

	// held: a writer writes the top-level records handed out from the
	// scanner's buffers (retain.Attach); the scanner asks it before it
	// reuses them. Apart from the Reader, so that the scanner's cleanup
	// can ask it without keeping the Reader.
	*held
}

// form is what a recording is, as its header and attrs say: how its
// records are framed and read.
type form struct {
	format  perfdata.Format
	dialect perfdata.Dialect
	order   binary.ByteOrder
	big     bool                 // order is big-endian: for the per-record path
	layout  *perfdata.FileLayout // file mode only
	events  perfdata.Events      // file attrs, or HEADER_ATTRs seen so far in a pipe
	src     io.ReaderAt          // the file, in file mode
}

// decompression is the state of the records of compressed records: one
// zstd stream for the whole recording.
type decompression struct {
	zs       *zstdStream
	inner    []byte // decompressed bytes not yet handed out
	innerR   int    // start of the next inner record in inner
	innerOff int64  // decompressed-stream offset of inner[innerR]
	outer    int64  // offset of the compressed record being handed out
	// outerOut is how many bytes the compressed record at outer has
	// decompressed to so far: perf fails on one that decompresses to
	// nothing (see cutBlock).
	outerOut int64
	inInner  bool // the current compressed record's output is not all out
	// innerBlk is the hugebuf block inner starts as, once a compressed
	// record is read; innerCleanup gives it back for a Reader dropped
	// unclosed.
	innerBlk     []byte
	innerCleanup runtime.Cleanup
	// expansion counts the compressed bytes and what they expanded to
	// (Options.MaxExpansion); zmem is the zstd window's share of the
	// process's memory budget, for the largest window so far (zwindow):
	// the decoder keeps its history from one stream to the next.
	expansion expansion
	zmem      budget.Meter
	zwindow   int64
}

// held is retain.Buffers under a name that does not export the field.
type held = retain.Buffers

// NewFile reads a recording stored in a file (or anything with random
// access) of the given size. It reads file-mode and pipe-mode contents.
func NewFile(ra io.ReaderAt, size int64, opts Options) (*Reader, error) {
	var head [perfdata.FileHeaderSize]byte
	n, err := ra.ReadAt(head[:], 0)
	if n < 16 {
		if err != nil && err != io.EOF {
			return nil, err
		}
		if n == 0 {
			return nil, empty()
		}
		return nil, shortHeader(head[:n])
	}
	if isPipe(head[:n]) {
		return NewStream(io.NewSectionReader(ra, 0, size), opts)
	}
	r := &Reader{opts: opts, form: form{format: perfdata.FormatFile}, end: -1, held: new(held)}
	l, err := readLayout(ra, size, head[:n])
	if err != nil {
		return nil, err
	}
	r.form.layout = l
	r.form.order, r.form.big = l.Order, l.Order == binary.BigEndian
	r.form.events.SetOrder(l.Order)
	r.form.src = ra
	if err := readEvents(ra, l, &r.form.events); err != nil {
		return nil, err
	}
	r.end = l.DataEnd()
	r.form.dialect = l.Dialect
	r.s = newScanner(io.NewSectionReader(ra, l.DataOffset(), int64(l.Header.Data.Size)), l.DataOffset(), r.held)
	r.readOrigin()
	return r, nil
}

// NewStream reads a recording from a stream that cannot seek: a pipe-mode
// recording (perf record -o -), or a pipe-mode recording in a file.
func NewStream(src io.Reader, opts Options) (*Reader, error) {
	var head [perfdata.PipeHeaderSize]byte
	n, err := io.ReadFull(src, head[:])
	if err != nil {
		if err == io.EOF {
			return nil, empty()
		}
		if err == io.ErrUnexpectedEOF {
			return nil, shortHeader(head[:n])
		}
		return nil, err
	}
	m, ok := perfdata.ParseMagic(head[:8], nil)
	if !ok {
		return nil, notPerfData()
	}
	if !isPipe(head[:]) {
		return nil, &FormatError{Offset: 8, Outer: -1, Err: ErrCorrupt,
			Msg: fmt.Sprintf("file-mode recording (header size %d) on a stream that cannot seek; pass it as a file", m.Order.Uint64(head[8:]))}
	}
	r := &Reader{
		opts: opts,
		form: form{format: perfdata.FormatPipe, order: m.Order, big: m.Order == binary.BigEndian},
		end:  -1,
		held: new(held),
	}
	r.s = newScanner(src, perfdata.PipeHeaderSize, r.held)
	r.form.events.SetOrder(m.Order)
	return r, nil
}

// shortHeader is the error for an input of fewer bytes (head) than any
// header has: a recording cut short if they are the start of one.
func shortHeader(head []byte) error {
	if perfdata.IsMagicPrefix(head) {
		return truncated(0, "truncated header: %d of at least %d bytes", len(head), perfdata.PipeHeaderSize)
	}
	return &FormatError{Offset: 0, Outer: -1, Msg: fmt.Sprintf("input is %d bytes, too short for a perf.data header", len(head)), Err: ErrNotPerfData}
}

// notPerfData says the input is not a recording. It does not quote the
// input's bytes: they may be anything (a secret, if someone points bpfmeta
// at one).
func notPerfData() error {
	return &FormatError{Offset: 0, Outer: -1, Err: ErrNotPerfData,
		Msg: "no perf.data magic number (PERFILE2, 2ELIFREP or PERFFILE)"}
}

// isPipe tells a pipe header (size 16) from a file header, as perf's
// perf_header__read_pipe() test does before anything else.
func isPipe(head []byte) bool {
	m, ok := perfdata.ParseMagic(head[:8], nil)
	return ok && m.Version == 2 && len(head) >= 16 && m.Order.Uint64(head[8:]) == perfdata.PipeHeaderSize
}

// Format reports whether the recording is in file or pipe format.
func (r *Reader) Format() perfdata.Format { return r.form.format }

// ByteOrder is the byte order of the machine that wrote the recording.
func (r *Reader) ByteOrder() binary.ByteOrder { return r.form.order }

// Dialect is the program that wrote the recording, as far as framing goes.
func (r *Reader) Dialect() perfdata.Dialect { return r.form.dialect }

// Layout describes a file-mode recording's sections; nil in pipe mode.
func (r *Reader) Layout() *perfdata.FileLayout { return r.form.layout }

// Events returns the recording's events: the attrs section of a file and
// its ids, or the HEADER_ATTR records a pipe stream has carried so far.
func (r *Reader) Events() *perfdata.Events { return &r.form.events }

// IDHeaderSize is the size of the sample_id trailer perf appends to the
// records it synthesizes: the first attr's, as evlist__id_hdr_size() takes it
// (0 while a pipe stream has shown no HEADER_ATTR).
func (r *Reader) IDHeaderSize() int { return r.form.events.IDHeaderSize() }

// Source is the file a file-mode recording is read from, for copying what
// is outside the data section; nil in pipe mode.
func (r *Reader) Source() io.ReaderAt { return r.form.src }

// Record is the record the last call to Next found. It and its bytes are
// valid until the next call to Next.
func (r *Reader) Record() *perfdata.Record { return &r.rec }

// Err is the error that stopped Next, or nil at a clean end.
func (r *Reader) Err() error { return r.err }

// Offset is the input offset the reader has consumed up to: after the last
// top-level record handed out (and its payload, once skipped).
func (r *Reader) Offset() int64 { return r.s.off }

// Trailing reports text at the end of a pipe stream where a record would
// be (such as perf record's status lines a shell redirect captured with
// the stream), as found once Next has returned false with Err() == nil;
// bytes there that are not text are an error (see trailingBytes). perf
// stops reading there with "unexpected end of event stream"; bpfmeta
// keeps the bytes.
func (r *Reader) Trailing() (off int64, b []byte) { return r.tail.off, r.tail.b }

// Close releases the decompressor and the read buffers, and closes what
// Open, OpenFile or OpenStream opened (the file at a path, the copy of a
// stream); it does not close an input the caller passed in. The records handed out are not valid after it. With a writer
// attached (retain.Attach), Close first waits until the writer has
// written the records it was given.
func (r *Reader) Close() error {
	r.fast = false
	r.stopDecoder()
	if r.s != nil {
		r.s.close()
	}
	if r.z.innerBlk != nil {
		r.z.innerCleanup.Stop()
		hugebuf.Put(r.z.innerBlk)
		r.z.innerBlk, r.z.inner, r.z.innerR = nil, nil, 0
	}
	var err error
	for _, f := range r.files {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	r.files = nil
	if derr := r.closeDir(); err == nil {
		err = derr
	}
	return err
}

// Counts are how many records a Reader has handed out.
type Counts struct {
	Records int64 // stored in the data section or stream
	// Inner records were decoded from compressed records, of InnerBytes
	// bytes (their data included).
	Inner, InnerBytes int64
}

// Counts returns how many records Next has handed out so far.
func (r *Reader) Counts() Counts { return r.counts }

// Next advances to the next record and reports whether there is one.
func (r *Reader) Next() bool {
	// Most records are kernel records already whole in the buffer, with
	// nothing pending before them: hand them out here, in a few ns (a
	// 317 MB recording has 2.8 M of them). fast says nothing is pending.
	if s := r.s; r.fast && s.w-s.r >= perfdata.EventHeaderSize {
		if h := perfdata.DecodeEventHeaderBig(s.buf[s.r:], r.form.big); short(h, s.w-s.r) {
			r.setRecord(s.off, h, s.buf[s.r:s.r+int(h.Size)], -1)
			s.consume(int(h.Size))
			r.counts.Records++
			return true
		}
	}
	ok := r.next()
	if ok {
		if r.rec.Outer >= 0 {
			r.counts.Inner++
			r.counts.InnerBytes += int64(len(r.rec.Raw)) + r.rec.PayloadSize
		} else {
			r.counts.Records++
		}
	}
	// next's checks, in the order it makes them, all pass for the next
	// record: no error or end, no data left to skip, no decompressed
	// records left, and the origin and dialect settled (nextTop's own
	// short path).
	r.fast = ok && r.err == nil && !r.done && r.payload.left == 0 && !r.z.inInner && r.started && r.originDone
	return ok
}

func (r *Reader) next() bool {
	if r.err != nil || r.done {
		return false
	}
	if r.payload.left > 0 {
		n, err := r.s.skip(r.payload.left)
		r.payload.left -= n
		if err != nil {
			r.fail(r.payloadCut())
			return false
		}
	}
	if r.z.inInner {
		ok, err := r.nextInner()
		if err != nil {
			r.fail(err)
			return false
		}
		if ok {
			return true
		}
		r.z.inInner = false
	}
	ok, err := r.nextTop()
	if ok && r.dir != nil && r.tailCut(&r.rec) {
		ok = false // data's tail synthesis comes after the data files
	}
	for err == nil && !ok {
		// the end of a file; a directory recording's next one, if any
		var more bool
		if more, err = r.nextPart(); !more {
			break
		}
		ok, err = r.nextTop()
	}
	if err != nil {
		r.fail(err)
		return false
	}
	if !ok {
		r.done = true
		if err := r.finish(); err != nil {
			r.fail(err)
		}
	}
	return ok
}

func (r *Reader) fail(err error) {
	r.err = r.partError(err)
	r.rec = perfdata.Record{}
	r.stopDecoder()
}

// stopDecoder ends the decompressor's coroutine and releases the
// decoder, if there is one.
func (r *Reader) stopDecoder() {
	if r.z.zs != nil {
		r.z.zs.close()
		r.z.zs = nil
	}
	r.z.zmem.Close()
	r.z.zwindow = 0
}

// finish checks the state at the end of the stream.
func (r *Reader) finish() error {
	r.originDone = true
	if r.z.zs != nil {
		if have, short, ok := r.z.zs.frame.unfinished(); ok {
			return r.cutBlock(have, short)
		}
	}
	if left := len(r.z.inner) - r.z.innerR; left > 0 {
		// perf drops such a tail silently (its decomp_last_rem is never
		// delivered); it means the recording stopped mid-record.
		return &FormatError{Offset: r.z.innerOff, Outer: r.z.outer, Err: ErrTruncated,
			Msg: fmt.Sprintf("compressed data ends %d bytes into a record, which is lost (perf loses it too, and says nothing)", left)}
	}
	if r.z.zs != nil {
		r.z.zs.restart() // the next data file of a directory recording starts a new stream
	}
	return nil
}

// cutBlock is the error of a compressed stream that ends inside a zstd
// block (or a header), have bytes of it there and short missing (0: not
// known): the block was to end in a compressed record that never came, and
// the records compressed in it are lost. perf loses them too: its
// zstd_decompress_stream() keeps the block's start and waits for the rest.
// What perf says depends on the last compressed record: if nothing of it
// decompressed (it holds only the block's start, or its middle),
// perf_session__process_compressed_event() fails ("Couldn't decompress
// data") and perf stops there; else perf loses the block without a word.
func (r *Reader) cutBlock(have, short int64) error {
	f := &r.z.zs.frame
	var b strings.Builder
	if short > 0 {
		fmt.Fprintf(&b, "the compressed data ends inside a zstd block that starts in this record: %d bytes of it are here and %d are missing", have, short)
	} else {
		fmt.Fprintf(&b, "the compressed data ends inside a zstd block or frame header that starts in this record (%d bytes of it)", have)
	}
	// A block decompresses to at most Block_Maximum_Size, and to no more
	// than the frame's window (RFC 8878, 3.1.1.2.3); how much, only its
	// missing end says.
	most := int64(zstdMaxBlock)
	if f.window > 0 {
		most = min(most, f.window)
	}
	fmt.Fprintf(&b, ", so the records compressed in it, up to %d bytes of them,", most)
	if left := len(r.z.inner) - r.z.innerR; left > 0 {
		fmt.Fprintf(&b, " and the %d bytes of a record decompressed before it", left)
	}
	b.WriteString(" are lost")
	switch {
	case r.z.outerOut == 0 && r.z.outer == f.at:
		b.WriteString("; perf loses them too, and stops at this record with \"Couldn't decompress data\" (nothing of it decompresses), reading none after it")
	case r.z.outerOut == 0:
		fmt.Fprintf(&b, "; perf loses them too, and stops at the compressed record at %#x with \"Couldn't decompress data\" (nothing of it decompresses), reading none after it", r.z.outer)
	default:
		b.WriteString("; perf loses them too, and says nothing")
	}
	return &FormatError{Offset: f.at, Outer: -1, Err: ErrTruncated, Msg: b.String()}
}

// nextTop reads the next record stored in the data section or pipe stream.
func (r *Reader) nextTop() (bool, error) {
	// The common case, kept short: a whole kernel record in the buffer.
	if s := r.s; r.started && s.w-s.r >= perfdata.EventHeaderSize {
		if h := perfdata.DecodeEventHeaderBig(s.buf[s.r:], r.form.big); short(h, s.w-s.r) {
			r.originDone = true // a kernel record: the features are behind
			r.setRecord(s.off, h, s.buf[s.r:s.r+int(h.Size)], -1)
			s.consume(int(h.Size))
			return true, nil
		}
	}
	r.started = true
	off := r.s.off
	hb, err := r.s.peek(perfdata.EventHeaderSize)
	if err != nil {
		return false, err
	}
	left := r.remaining(len(hb))
	if len(hb) == 0 {
		return false, nil
	}
	if len(hb) < perfdata.EventHeaderSize {
		return false, r.truncatedTop(off, hb, int(left))
	}
	h := perfdata.DecodeEventHeader(hb, r.form.order)
	if off == perfdata.PipeHeaderSize && r.form.format == perfdata.FormatPipe {
		r.form.dialect = perfdata.PipeDialect(h)
	}
	if h.Size < perfdata.EventHeaderSize {
		err := corrupt(off, "bad record size %d (type %v)", h.Size, h.Type)
		if r.form.format == perfdata.FormatPipe && !h.Type.Known() {
			return r.trailingBytes(off, err)
		}
		return false, err
	}
	raw, err := r.s.peek(int(h.Size))
	if err != nil {
		return false, err
	}
	if len(raw) < int(h.Size) {
		err := truncated(off, "truncated %s: size %d, %d bytes left", h.Type.Noun(), h.Size, len(raw))
		if r.form.format == perfdata.FormatPipe && !h.Type.Known() {
			return r.trailingBytes(off, err)
		}
		return false, err
	}
	r.s.consume(int(h.Size))
	r.setRecord(off, h, raw, -1)
	if err := r.topLevel(&r.rec); err != nil {
		return false, err
	}
	return true, nil
}

// setRecord makes the record handed out the one at off, field by field:
// a struct literal is built aside and copied whole, with a write barrier
// for its pointers, which cost a record 3-4 ns more (in innerRecord, 9% of
// an inject of a -z recording before, 3% after).
func (r *Reader) setRecord(off int64, h perfdata.EventHeader, raw []byte, outer int64) {
	rec := &r.rec
	rec.Offset, rec.Header, rec.Raw, rec.Outer, rec.Part = off, h, raw, outer, r.part
	rec.PayloadSize = 0
	if rec.Payload != nil {
		rec.Payload = nil
	}
}

// remaining is what is left of the data section after n peeked bytes.
func (r *Reader) remaining(n int) int64 {
	if r.end >= 0 {
		return r.end - r.s.off
	}
	return int64(n)
}

func (r *Reader) truncatedTop(off int64, hb []byte, left int) error {
	if r.form.format == perfdata.FormatPipe {
		left = len(hb)
	}
	return truncated(off, "truncated record header: %d bytes left", left)
}

// trailingBytes keeps what is left of a pipe stream that does not parse
// as a record of a type perf knows, when it is text: output captured
// after the stream, such as perf record's own "[ perf record: Woken up 1
// times to write data ]" in a shell redirect. Anything else there is a
// damaged record, and what follows it may be records: notRecord, the
// error of the record at off, is returned then. Text cannot hold a
// record: every record has NUL bytes (its header's size is below 64 KiB,
// and perf's fields are mostly small numbers).
func (r *Reader) trailingBytes(off int64, notRecord error) (bool, error) {
	b, err := r.s.peek(maxRecord + 1)
	if err != nil {
		return false, err
	}
	if len(b) > maxRecord {
		h := perfdata.DecodeEventHeader(b, r.form.order)
		return false, corrupt(off, "bad record: type %v, size %d", h.Type, h.Size)
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return false, notRecord
	}
	r.tail.b = append([]byte(nil), b...)
	r.tail.off = off
	r.s.consume(len(b))
	return false, nil
}

// payloadCut is the error of the record whose data the input ends in, and
// the reader's from then on: a writer copying the data sees it first, and
// the record is lost either way.
func (r *Reader) payloadCut() error {
	p := &r.payload
	err := r.partError(truncated(r.s.off, "AUX or trace data of the %v record at %#x ends after %d of %d bytes", r.rec.Header.Type, r.rec.Offset, p.size-p.left, p.size))
	if r.err == nil {
		r.err = err
	}
	return err
}

// partError names the file of a directory recording an error is in.
func (r *Reader) partError(err error) error {
	if r.dir == nil || err == nil {
		return err
	}
	var fe *FormatError
	if errors.As(err, &fe) && fe.File != "" {
		return err
	}
	return partError(r.PartName(r.part), err)
}

// topLevel does what a record means for framing and for the reader's state.
func (r *Reader) topLevel(rec *perfdata.Record) error {
	if r.form.format == perfdata.FormatPipe {
		r.pipeOrigin(rec)
	}
	switch t := rec.Header.Type; {
	case r.form.dialect.HasPayload(t):
		n, err := perfdata.PayloadLen(t, rec.Raw, r.form.order)
		if err != nil {
			return corrupt(rec.Offset, "%v", err)
		}
		if r.end >= 0 && n > r.end-r.s.off {
			return truncated(rec.Offset, "%v record announces %d bytes of data, %d bytes left", t, n, r.end-r.s.off)
		}
		rec.PayloadSize = n
		r.payload = payloadReader{s: r.s, size: n, left: n, r: r}
		rec.Payload = &r.payload
	case t == perfdata.RecordHeaderAttr:
		if r.form.format == perfdata.FormatPipe {
			a, err := perfdata.DecodeHeaderAttr(rec.Raw, r.form.order)
			if err != nil {
				return corrupt(rec.Offset, "%v", err)
			}
			if len(r.form.events.Attrs()) >= maxAttrs {
				return corrupt(rec.Offset, "more than %d HEADER_ATTR records", maxAttrs)
			}
			a.Attr.Raw = bytes.Clone(a.Attr.Raw) // rec.Raw is reused
			r.form.events.Add(a.Attr, a.IDs)
		}
	case t == perfdata.RecordCompressed || t == perfdata.RecordCompressed2:
		if !r.opts.Decompress {
			return nil
		}
		p, err := perfdata.CompressedPayload(t, rec.Raw, r.form.order)
		if err != nil {
			return corrupt(rec.Offset, "%v", err)
		}
		if r.z.zs == nil {
			r.z.zs = &zstdStream{}
		}
		if err := r.z.zs.feed(p, rec.Offset); err != nil {
			return corrupt(rec.Offset, "%v record: %v", t, err)
		}
		r.z.expansion.in += int64(len(p))
		if err := r.chargeWindow(); err != nil {
			return &FormatError{Offset: rec.Offset, Outer: -1, Msg: fmt.Sprintf("the zstd window of the %v records: %v", t, err), Err: err}
		}
		r.z.outer, r.z.outerOut = rec.Offset, 0
		r.z.inInner = true
	}
	return nil
}

// maxInnerPayload bounds the data an AUXTRACE record inside compressed
// records may carry: it must be in memory at once (as in perf's
// decompression buffer, mmap_len bytes), and perf record never compresses
// AUX data.
const maxInnerPayload = 1 << 20

// nextInner hands out the next complete record of the decompressed stream,
// decompressing more of the current compressed record as needed; false once
// its output is all out (a record it ends inside of is completed by the
// next compressed record, as in perf's decomp_last_rem).
func (r *Reader) nextInner() (bool, error) {
	for {
		ok, err := r.innerRecord()
		if ok || err != nil {
			return ok, err
		}
		// Keep only what is not handed out yet, and decode after it.
		if r.z.innerR > 0 {
			n := copy(r.z.inner, r.z.inner[r.z.innerR:])
			r.z.inner = r.z.inner[:n]
			r.z.innerR = 0
		}
		if len(r.z.inner) > maxRecord+maxInnerPayload { // what one record may take
			return false, &FormatError{Offset: r.z.innerOff, Outer: r.z.outer, Err: ErrCorrupt,
				Msg: fmt.Sprintf("a record with %d bytes of data inside compressed data (at most %d)", len(r.z.inner), maxInnerPayload)}
		}
		if r.z.innerBlk == nil {
			// Room for the most a record may take and a read after it,
			// whatever the payloads decompress to (see zstdReadSize).
			r.z.innerBlk = hugebuf.Get()
			r.z.inner = r.z.innerBlk[:0]
			r.z.innerCleanup = runtime.AddCleanup(r, hugebuf.Put, r.z.innerBlk)
		}
		// After a 0 (the end of a payload's output), this is the same dst
		// again, as next requires: the record it ended in is the one
		// innerRecord still finds incomplete, so nothing moved.
		n, err := r.z.zs.next(r.z.inner[len(r.z.inner):cap(r.z.inner)])
		if err != nil {
			return false, corrupt(r.z.outer, "%v", err)
		}
		if n == 0 {
			return false, nil // the record's output is all out
		}
		if err := r.checkExpansion(n); err != nil {
			return false, err
		}
		r.z.outerOut += int64(n)
		r.z.inner = r.z.inner[:len(r.z.inner)+n]
	}
}

// zstdReadSize is the least room the decoder gets in the buffer of
// decompressed records: what it decodes at a time.
const zstdReadSize = 256 << 10

// The hugebuf block the decompressed records are in holds the most one
// record may take and a read after it, so the decoder always has that
// much room: this does not compile if it could not.
const _ = uint(hugebuf.Size - (maxRecord + maxInnerPayload + zstdReadSize))

// innerRecord hands out the record at the start of the undelivered
// decompressed bytes if it is complete.
func (r *Reader) innerRecord() (ok bool, err error) {
	b := r.z.inner[r.z.innerR:]
	if len(b) < perfdata.EventHeaderSize {
		return false, nil
	}
	h := perfdata.DecodeEventHeaderBig(b, r.form.big)
	if h.Size < perfdata.EventHeaderSize {
		return false, &FormatError{Offset: r.z.innerOff, Outer: r.z.outer, Err: ErrCorrupt,
			Msg: fmt.Sprintf("bad record size %d (type %v)", h.Size, h.Type)}
	}
	if len(b) < int(h.Size) {
		return false, nil
	}
	raw := b[:h.Size]
	total := int64(h.Size)
	var payload []byte
	if r.form.dialect.HasPayload(h.Type) {
		n, err := perfdata.PayloadLen(h.Type, raw, r.form.order)
		if err != nil {
			return false, &FormatError{Offset: r.z.innerOff, Outer: r.z.outer, Err: ErrCorrupt, Msg: err.Error()}
		}
		if n > maxInnerPayload {
			return false, &FormatError{Offset: r.z.innerOff, Outer: r.z.outer, Err: ErrCorrupt,
				Msg: fmt.Sprintf("%v record with %d bytes of data inside compressed data (at most %d)", h.Type, n, maxInnerPayload)}
		}
		if int64(len(b)) < total+n {
			return false, nil // as perf, the whole record must be in the buffer
		}
		payload = b[total : total+n]
		total += n
	}
	r.setRecord(r.z.innerOff, h, raw, r.z.outer)
	if payload != nil {
		r.rec.PayloadSize = int64(len(payload))
		r.rec.Payload = &sliceReader{b: payload}
	}
	r.z.innerR += int(total)
	r.z.innerOff += total
	return true, nil
}

type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}
