package reader

import (
	"errors"
	"fmt"
)

// DefaultMaxExpansion is how many times the bytes of their payloads the
// records of a recording's COMPRESSED records may be, once past
// minExpansionCheck, each record counted as minRecordCost bytes at least:
// perf record -z writes 5 to 20 times (a 14.8 MB recording of 153 MB of
// records; the corpus's between 2 and 5, and 66 for a --call-graph dwarf
// one, whose stacks are mostly zeros), and a stream that keeps expanding
// far beyond that is a zstd bomb, which would keep a reader busy for
// minutes on a file of a few KiB (issue 37: 108 KB that expand to 1 GiB
// of 8-byte records; 10,000 times).
const DefaultMaxExpansion = 100

// minExpansionCheck is the decompressed bytes under which the expansion is
// not checked: a short recording of idle CPUs may compress far better
// than a busy one, and that much costs a reader well under a second.
const minExpansionCheck = 64 << 20

// minRecordCost is what a record counts for in the expansion at least: a
// reader's time goes by the record as much as by the byte (27 ns an
// 8-byte record in inject, 0.8 ns a byte of real ones), so that a stream
// of tiny records may expand 4 times less, and its reader's CPU time
// stays in proportion to its input (docs/safety.md, Bounded memory and CPU
// in proportion to the input).
const minRecordCost = 32

// ErrExpansion is wrapped by the error for compressed records that expand
// to more than Options.MaxExpansion times their size.
var ErrExpansion = errors.New("compressed records expand beyond any recording's")

// expansion counts what the compressed records of a recording expand to.
type expansion struct {
	in, out int64 // payload bytes fed, bytes decoded
}

// checkExpansion is called with the bytes decoded since the last call: an
// error once they and those before are past the limit.
func (r *Reader) checkExpansion(n int) error {
	x := &r.z.expansion
	x.out += int64(n)
	out := max(x.out, r.counts.Inner*minRecordCost)
	if out <= minExpansionCheck {
		return nil
	}
	most := r.opts.MaxExpansion
	if most == 0 {
		most = DefaultMaxExpansion
	}
	if most < 0 || out <= int64(most)*x.in {
		return nil
	}
	return &FormatError{Offset: r.z.outer, Outer: -1, Err: ErrExpansion,
		Msg: fmt.Sprintf("compressed records expand %d times (%d MiB in %d records from %d KiB of COMPRESSED payloads, a record counted as %d bytes at least), where perf record -z writes 5 to 20 times and bpfmeta reads at most %d (--max-expansion): a zstd bomb?",
			out/max(x.in, 1), x.out>>20, r.counts.Inner, x.in>>10, minRecordCost, most)}
}

// frameWindow is the window a zstd frame header h declares (RFC 8878,
// 3.1.1.1.2): the history a decoder keeps for it.
func frameWindow(h []byte) int64 {
	fhd := h[0]
	if fhd>>5&1 == 0 { // not single segment: Window_Descriptor follows
		wd := h[1]
		base := int64(1) << (10 + wd>>3)
		return base + base/8*int64(wd&7)
	}
	// single segment: the window is the content size
	p := h[1+[4]int{0, 1, 2, 4}[fhd&3]:]
	switch fhd >> 6 {
	case 0:
		return int64(p[0])
	case 1:
		return int64(p[0]) | int64(p[1])<<8 + 256
	case 2:
		return int64(p[0]) | int64(p[1])<<8 | int64(p[2])<<16 | int64(p[3])<<24
	}
	var n uint64
	for i := 7; i >= 0; i-- {
		n = n<<8 | uint64(p[i])
	}
	return int64(min(n, 1<<62))
}

// zstdBlockBuffers is what the decoder keeps beside its window: a block
// in and a block out.
const zstdBlockBuffers = 2 * zstdMaxBlock

// chargeWindow takes the window of the frames so far from the memory
// budget (internal/budget).
func (r *Reader) chargeWindow() error {
	w := min(r.z.zs.frame.window, maxZstdWindow)
	if w <= r.z.zwindow {
		return nil
	}
	r.z.zmem.What = "zstd window"
	if err := r.z.zmem.Set(w + zstdBlockBuffers); err != nil {
		return err
	}
	r.z.zwindow = w
	return nil
}
