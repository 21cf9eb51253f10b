package inject_test

import (
	"bytes"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// kernelLoadPadded writes what the kernel emits for a program loaded while
// recording when other perf sessions listen for KSYMBOL and BPF_EVENT too:
// perf_event_ksymbol_output() and perf_event_bpf_output() add every
// listener's id_header_size to the shared record's size, so the records
// our session gets are pad bytes longer, the sample_id still right after
// the fields and the rest never written (zeros in a fresh ring buffer).
// testdata/stock_file_during_withmeta.data has such records (pad 32).
func (s *stream) kernelLoadPadded(p *bpfprog.Program, pad int) {
	for _, f := range p.Funcs {
		b := make([]byte, 16)
		s.Order.PutUint64(b, f.Addr)
		s.Order.PutUint32(b[8:], 40)
		s.Order.PutUint16(b[12:], uint16(perfdata.KSymbolTypeBPF))
		n := make([]byte, (len(f.KernelName)+8)&^7)
		copy(n, f.KernelName)
		body := append(append(b, n...), s.trailer(true)...)
		s.rec(perfdata.RecordKSymbol, append(body, make([]byte, pad)...))
	}
	b := make([]byte, 16)
	s.Order.PutUint16(b, uint16(perfdata.BPFEventProgLoad))
	s.Order.PutUint32(b[4:], p.ID)
	copy(b[8:], p.Tag[:])
	body := append(b, s.trailer(true)...)
	s.rec(perfdata.RecordBPFEvent, append(body, make([]byte, pad)...))
}

// TestKernelRecordsPadded: a program whose kernel BPF_EVENT ends in zeros
// (padded, above) is still one loaded during the recording: its records go
// at the end, as perf 7.2 (which goes by its side-band thread) writes them.
func TestKernelRecordsPadded(t *testing.T) {
	c := prog(30, 0xc0, 0xffff2000, 1, true)
	for _, pad := range []int{16, 32} {
		in := newStream()
		in.rec(perfdata.RecordFinishedInit, nil)
		in.kernelLoadPadded(c, pad)
		in.sample()
		in.rec(perfdata.RecordFinishedRound, nil)
		want := &stream{&testkit.Stream{Order: le}}
		want.Write(in.Bytes())
		for _, f := range c.Funcs {
			want.metadataOf(f.KernelName, c)
		}
		got, sum := run(t, in.Bytes(), fakeSource{30: c}, inject.Options{})
		if len(sum.Programs) != 1 || sum.Programs[0].Synthesized {
			t.Errorf("pad %d: programs %+v, want one loaded during the recording", pad, sum.Programs)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("pad %d: the records are not at the end", pad)
		}
	}
}
