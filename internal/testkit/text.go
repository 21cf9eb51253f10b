package testkit

import (
	"fmt"
	"io"
)

// DeepStack is perf script -g text of one sample of N frames (56 bytes
// each), made as it is read, so that a test can feed hundreds of MB
// without holding them.
type DeepStack struct {
	N         int
	BytesRead int
	i         int
	pending   []byte
}

// Read reads the text.
func (d *DeepStack) Read(p []byte) (int, error) {
	for len(d.pending) < len(p) && d.i <= d.N {
		if d.i == 0 {
			d.pending = append(d.pending, "deep 4242 [000] 1.000000: 1 cpu-clock: \n"...)
		} else {
			d.pending = fmt.Appendf(d.pending, "\t%16x do_syscall_64+0x4 ([kernel.kallsyms])\n", uint64(0xffffffff81000000)+uint64(d.i))
		}
		d.i++
	}
	if len(d.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	d.BytesRead += n
	return n, nil
}
