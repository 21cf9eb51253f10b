package perfdata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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
	Len int
	// Kallsyms is the offset of the u32-sized /proc/kallsyms copy old perf
	// versions stored (the size field included), and KallsymsLen its
	// length with the size field. perf skips it with lseek(), which fails on
	// a pipe, so a pipe stream must carry it empty (4 zero bytes, as perf
	// has written it since it stopped storing kallsyms).
	Kallsyms, KallsymsLen int
}

// ParseTracingData parses trace data the way perf's trace_report() reads
// it (trace-event-read.c): the magic, the version string, the byte order
// and sizes, header_page and header_event, the ftrace and event format
// files, kallsyms, the printk formats and, from version 0.6 on, the saved
// cmdlines.
func ParseTracingData(b []byte) (TracingData, error) {
	var td TracingData
	r := tracingReader{b: b}
	if !bytes.HasPrefix(b, tracingMagic) {
		return td, errors.New("trace data: no \\x17\\x08Dtracing magic")
	}
	r.off = len(tracingMagic)
	version := r.str()
	if r.byte1() != 0 {
		r.bo = binary.BigEndian
	} else {
		r.bo = binary.LittleEndian
	}
	r.byte1() // long size
	r.n(4)    // page size
	r.tag("header_page\x00")
	r.skip(r.n(8))
	r.tag("header_event\x00")
	r.skip(r.n(8))
	for i, n := 0, r.n(4); i < int(n) && r.err == nil; i++ { // ftrace format files
		r.skip(r.n(8))
	}
	for i, n := 0, r.n(4); i < int(n) && r.err == nil; i++ { // systems
		r.str()
		for j, m := 0, r.n(4); j < int(m) && r.err == nil; j++ { // their event formats
			r.skip(r.n(8))
		}
	}
	td.Kallsyms = r.off
	r.skip(r.n(4)) // kallsyms
	td.KallsymsLen = r.off - td.Kallsyms
	r.skip(r.n(4)) // printk formats
	if v, err := strconv.ParseFloat(version, 64); err == nil && v >= 0.6 {
		r.skip(r.n(8)) // saved cmdlines
	}
	if r.err != nil {
		return td, fmt.Errorf("trace data: %w at %#x", r.err, r.off)
	}
	td.Len = r.off
	return td, nil
}

// ForPipe returns the trace data in b as a pipe stream can carry it: what
// perf reads of it, with an empty kallsyms.
func (td TracingData) ForPipe(b []byte) []byte {
	if td.KallsymsLen <= 4 {
		return b[:td.Len]
	}
	out := make([]byte, 0, td.Len-td.KallsymsLen+4)
	out = append(out, b[:td.Kallsyms]...)
	out = append(out, 0, 0, 0, 0)
	return append(out, b[td.Kallsyms+td.KallsymsLen:td.Len]...)
}

type tracingReader struct {
	b   []byte
	off int
	bo  binary.ByteOrder
	err error
}

var errShortTrace = errors.New("ends early")

func (r *tracingReader) take(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)-r.off) {
		r.err = errShortTrace
		return nil
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p
}

func (r *tracingReader) byte1() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *tracingReader) n(size int) uint64 {
	p := r.take(uint64(size))
	switch {
	case p == nil:
		return 0
	case size == 4:
		return uint64(r.bo.Uint32(p))
	default:
		return r.bo.Uint64(p)
	}
}

func (r *tracingReader) skip(n uint64) { r.take(n) }

func (r *tracingReader) str() string {
	if r.err != nil {
		return ""
	}
	i := bytes.IndexByte(r.b[r.off:], 0)
	if i < 0 {
		r.err = errShortTrace
		return ""
	}
	s := string(r.b[r.off : r.off+i])
	r.off += i + 1
	return s
}

func (r *tracingReader) tag(t string) {
	if p := r.take(uint64(len(t))); p != nil && string(p) != t {
		r.err = fmt.Errorf("no %q", t[:len(t)-1])
	}
}
