package inject_test

import (
	"bytes"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// countingWriter counts the records written through it.
type countingWriter struct {
	inject.RecordWriter
	n int
}

func (w *countingWriter) WriteRecord(rec *perfdata.Record) error {
	w.n++
	return w.RecordWriter.WriteRecord(rec)
}

// TestProgress: Options.Progress is called once every ProgressEvery
// records written, the added ones included, and changes nothing written.
func TestProgress(t *testing.T) {
	a := prog(10, 0xa0, 0xffff0000, 1, true)
	in := newStream()
	in.synth(a)
	for range 3*inject.ProgressEvery - 2 {
		in.sample()
	}
	want, _ := run(t, in.Bytes(), fakeSource{10: a}, inject.Options{})

	r := rectest.Stream(t, in.Bytes(), reader.Options{})
	var out bytes.Buffer
	w, err := writer.New(&out, r, writer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cw := &countingWriter{RecordWriter: w}
	calls := 0
	sum, err := inject.Run(r, cw, fakeSource{10: a}, inject.Options{Progress: func() { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if sum.Injected != 2 || calls != cw.n/inject.ProgressEvery || calls != 3 {
		t.Errorf("%d records written (%d added), Progress called %d times; want 2 added, and a call every %d records (3)", cw.n, sum.Injected, calls, inject.ProgressEvery)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("with Progress, the output differs from without")
	}
}

// systemSource is a source of no programs, of the machine sys.
type systemSource struct {
	fakeSource
	sys bpfprog.System
}

func (s systemSource) System() bpfprog.System { return s.sys }

// TestOtherMachine: Options.OtherMachine is called once, with the
// recording's origin and the source's machine, when a hostname or kernel
// release both say differs, from a file and from a pipe stream (which says
// it in its first records); not when they agree or either does not say.
func TestOtherMachine(t *testing.T) {
	for _, name := range []string{"mstange_perf6.5_aarch64_zstd_compressed.data", "mstange_perf6.5_aarch64_zstd_compressed.pipe.data"} {
		path := testkit.CorpusFile(t, name)
		open := func() *reader.Reader { return rectest.Open(t, path, reader.Options{Decompress: true}) }
		var origin reader.Origin
		for r := open(); r.Next(); {
			if o, known := r.Origin(); known {
				origin = o
				break
			}
		}
		if origin.Hostname == "" || origin.OSRelease == "" {
			t.Fatalf("%s: origin %+v, want a hostname and a kernel release", name, origin)
		}
		for _, c := range []struct {
			sys   bpfprog.System
			other bool
		}{
			{bpfprog.System{Hostname: origin.Hostname, KernelRelease: origin.OSRelease}, false},
			{bpfprog.System{}, false},
			{bpfprog.System{Hostname: origin.Hostname}, false},
			{bpfprog.System{Hostname: "elsewhere"}, true},
			{bpfprog.System{Hostname: origin.Hostname, KernelRelease: "0.0.0"}, true},
			{bpfprog.System{KernelRelease: "0.0.0"}, true},
		} {
			r := open()
			w, err := writer.New(&bytes.Buffer{}, r, writer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []*inject.OtherMachine
			_, err = inject.Run(r, w, systemSource{sys: c.sys}, inject.Options{OtherMachine: func(m *inject.OtherMachine) { got = append(got, m) }})
			w.Abort()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !c.other && len(got) > 0:
				t.Errorf("%s, source %+v: warned %+v, want no warning", name, c.sys, *got[0])
			case c.other && (len(got) != 1 || got[0].Recording != origin || got[0].Source != c.sys):
				t.Errorf("%s, source %+v: warned %d times (%v), want once, of the recording's origin %+v", name, c.sys, len(got), got, origin)
			}
		}
	}
}
