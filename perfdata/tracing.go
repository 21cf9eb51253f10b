package perfdata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// tracingMagic starts the trace data perf stores in TRACING_DATA:
// "\x17\x08D" then "tracing".
var tracingMagic = []byte("\x17\x08Dtracing")

// TracingData is where the parts of perf's trace data are that a rewriter
// cares about.
type TracingData struct {
	// Len is how many bytes perf's trace_report() reads. A TRACING_DATA
	// section can be longer; in a pipe stream perf insists the record's
	// size is exactly what it read.
	Len int64
	// Kallsyms is the offset of the u32-sized /proc/kallsyms copy old perf
	// versions stored (the size field included), and KallsymsLen its
	// length with the size field. perf skips it with lseek(), which fails on
	// a pipe, so a pipe stream must carry it empty (4 zero bytes, as perf
	// has written it since it stopped storing kallsyms).
	Kallsyms, KallsymsLen int64
}

// maxTracingString bounds a string perf's trace data holds (a version, a
// system name): far longer than any real one.
const maxTracingString = 4096

// ParseTracingData parses trace data of size bytes in r the way perf's
// trace_report() reads it (trace-event-read.c): the magic, the version
// string, the byte order and sizes, header_page and header_event, the
// ftrace and event format files, kallsyms, the printk formats and, from
// version 0.6 on, the saved cmdlines. It reads only the fields that say how
// long the parts are, never a part itself.
func ParseTracingData(r io.ReaderAt, size int64) (TracingData, error) {
	var td TracingData
	t := tracingReader{r: r, size: size}
	if m := t.take(len(tracingMagic)); t.err != nil || !bytes.Equal(m, tracingMagic) {
		return td, errors.New("trace data: no \\x17\\x08Dtracing magic")
	}
	version := t.str()
	if t.byte1() != 0 {
		t.bo = binary.BigEndian
	} else {
		t.bo = binary.LittleEndian
	}
	t.byte1() // long size
	t.n(4)    // page size
	t.tag("header_page\x00")
	t.skip(t.n(8))
	t.tag("header_event\x00")
	t.skip(t.n(8))
	for i, n := 0, t.n(4); i < int(n) && t.err == nil; i++ { // ftrace format files
		t.skip(t.n(8))
	}
	for i, n := 0, t.n(4); i < int(n) && t.err == nil; i++ { // systems
		t.str()
		for j, m := 0, t.n(4); j < int(m) && t.err == nil; j++ { // their event formats
			t.skip(t.n(8))
		}
	}
	kallsyms := t.off
	t.skip(t.n(4)) // kallsyms
	td.Kallsyms, td.KallsymsLen = kallsyms, t.off-kallsyms
	t.skip(t.n(4)) // printk formats
	if v, err := strconv.ParseFloat(version, 64); err == nil && v >= 0.6 {
		t.skip(t.n(8)) // saved cmdlines
	}
	if t.err != nil {
		return td, fmt.Errorf("trace data: %w at %#x", t.err, t.off)
	}
	td.Len = t.off
	return td, nil
}

// PipeLen is the length of the trace data as a pipe stream carries it:
// what perf reads of it, with an empty kallsyms (4 zero bytes).
func (td TracingData) PipeLen() int64 {
	if td.KallsymsLen <= 4 {
		return td.Len
	}
	return td.Len - td.KallsymsLen + 4
}

// WritePipe writes the trace data in r (parsed as td) as a pipe stream
// carries it: what perf reads of it, with an empty kallsyms.
func (td TracingData) WritePipe(w io.Writer, r io.ReaderAt) error {
	if td.KallsymsLen <= 4 {
		_, err := io.Copy(w, io.NewSectionReader(r, 0, td.Len))
		return err
	}
	if _, err := io.Copy(w, io.NewSectionReader(r, 0, td.Kallsyms)); err != nil {
		return err
	}
	if _, err := w.Write(make([]byte, 4)); err != nil {
		return err
	}
	end := td.Kallsyms + td.KallsymsLen
	_, err := io.Copy(w, io.NewSectionReader(r, end, td.Len-end))
	return err
}

type tracingReader struct {
	r    io.ReaderAt
	size int64
	off  int64
	bo   binary.ByteOrder
	err  error
	buf  [16]byte
}

var errShortTrace = errors.New("ends early")

// take reads n <= 16 bytes.
func (t *tracingReader) take(n int) []byte {
	if t.err != nil || int64(n) > t.size-t.off {
		t.err = errShortTrace
		return nil
	}
	p := t.buf[:n]
	if _, err := t.r.ReadAt(p, t.off); err != nil {
		t.err = err
		return nil
	}
	t.off += int64(n)
	return p
}

func (t *tracingReader) byte1() byte {
	if p := t.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (t *tracingReader) n(size int) uint64 {
	p := t.take(size)
	switch {
	case p == nil:
		return 0
	case size == 4:
		return uint64(t.bo.Uint32(p))
	default:
		return t.bo.Uint64(p)
	}
}

func (t *tracingReader) skip(n uint64) {
	if t.err != nil || n > uint64(t.size-t.off) {
		t.err = errShortTrace
		return
	}
	t.off += int64(n)
}

// str reads a NUL-terminated string of at most maxTracingString bytes.
func (t *tracingReader) str() string {
	var s []byte
	for t.err == nil {
		c := t.byte1()
		if t.err != nil {
			return ""
		}
		if c == 0 {
			return string(s)
		}
		if len(s) == maxTracingString {
			t.err = fmt.Errorf("a string longer than %d bytes", maxTracingString)
			return ""
		}
		s = append(s, c)
	}
	return ""
}

func (t *tracingReader) tag(want string) {
	for i := 0; i < len(want) && t.err == nil; i++ {
		if c := t.byte1(); t.err == nil && c != want[i] {
			t.err = fmt.Errorf("no %q", want[:len(want)-1])
		}
	}
}
