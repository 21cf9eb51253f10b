package writer_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// The retained path (Attach) writes records from the reader's buffers in a
// goroutine. These tests make the writer slow and the reads ragged, so that
// the reader keeps running into buffers the writer has not written yet: a
// byte overwritten too early shows as output that differs from the copying
// path's. Run them with -race too (make test does).

// slowWriter sleeps before every write, as a slow disk or pipe would.
type slowWriter struct {
	w     io.Writer
	delay time.Duration
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.w.Write(p)
}

type slowWriterAt struct {
	w     io.WriterAt
	delay time.Duration
}

func (s *slowWriterAt) Write(p []byte) (int, error) { panic("a file output is written at offsets") }

func (s *slowWriterAt) WriteAt(p []byte, off int64) (int, error) {
	time.Sleep(s.delay)
	return s.w.WriteAt(p, off)
}

// raggedReader returns reads of random sizes, as a pipe does.
type raggedReader struct {
	r   io.Reader
	rng *rand.Rand
}

func (r *raggedReader) Read(p []byte) (int, error) {
	n := 1 + r.rng.IntN(min(len(p), 100_000))
	return r.r.Read(p[:n])
}

// bigPipeStream is a 12 MiB pipe stream of records of random sizes, with
// AUXTRACE records carrying random payloads if aux.
func bigPipeStream(rng *rand.Rand, aux bool) []byte {
	le := binary.LittleEndian
	var b bytes.Buffer
	b.Write(perfdata.PipeHeader(le))
	h := make([]byte, 8)
	for b.Len() < 12<<20 {
		if aux && rng.IntN(200) == 0 {
			n := uint64(rng.IntN(300_000))
			rec := make([]byte, 48)
			perfdata.EventHeader{Type: perfdata.RecordAuxtrace, Size: 48}.Encode(rec, le)
			le.PutUint64(rec[8:], n)
			b.Write(rec)
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			b.Write(p)
			continue
		}
		size := 8 * (1 + rng.IntN(200))
		perfdata.EventHeader{Type: perfdata.RecordSample, Size: uint16(size)}.Encode(h, le)
		b.Write(h)
		body := make([]byte, size-8)
		for i := range body {
			body[i] = byte(rng.Uint32())
		}
		b.Write(body)
	}
	return b.Bytes()
}

// inserter adds a FINISHED_ROUND before one record in every (on
// average); the same rng seed gives the same insertions in both runs.
func inserter(seed uint64, every int) func(w *writer.Writer, rec *perfdata.Record) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	fr := make([]byte, 8)
	perfdata.EventHeader{Type: perfdata.RecordFinishedRound, Size: 8}.Encode(fr, binary.LittleEndian)
	return func(w *writer.Writer, rec *perfdata.Record) error {
		if !rec.Compressed() && rng.IntN(every) == 0 {
			if err := w.WriteRecord(&perfdata.Record{Offset: -1, Outer: -1, Raw: append([]byte(nil), fr...), Header: perfdata.EventHeader{Type: perfdata.RecordFinishedRound, Size: 8}}); err != nil {
				return err
			}
		}
		return w.WriteRecord(rec)
	}
}

func TestRetainedPipe(t *testing.T) {
	// Insertions and AUX data go through the writer's own buffers, of
	// which there are few: a reader that waits for one cannot get ahead.
	// Without them (the last case) only the barrier keeps it from
	// overwriting what the writer has yet to write.
	for _, tc := range []struct {
		aux   bool
		every int
		delay time.Duration
	}{{true, 50, 200 * time.Microsecond}, {true, 5000, 3 * time.Millisecond}, {false, 1 << 30, 20 * time.Millisecond}} {
		in := bigPipeStream(rand.New(rand.NewPCG(1, 1)), tc.aux)
		testRetainedPipe(t, in, tc.every, tc.delay)
	}
}

func testRetainedPipe(t *testing.T, in []byte, every int, delay time.Duration) {
	run := func(attach bool) []byte {
		r, err := reader.NewStream(&raggedReader{bytes.NewReader(in), rand.New(rand.NewPCG(2, 2))}, reader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		p, err := writer.New(&slowWriter{&out, delay}, r, optsFor(attach))
		if err != nil {
			t.Fatal(err)
		}
		rectest.CopyAll(t, r, p, inserter(3, every))
		return out.Bytes()
	}
	copied, held := run(false), run(true)
	if len(copied) < len(in) {
		t.Fatalf("copied %d bytes of %d", len(copied), len(in))
	}
	if !bytes.Equal(copied, held) {
		t.Errorf("insertions every %d records, writes delayed %v: records written from the reader's buffers differ from copied ones", every, delay)
	}
}

// TestRetainedFile: a file-mode rewrite of a file recording writes the
// records passed through from the reader's buffers; into a slow output it
// gives what copying them from the input file (copy_file_range) gives,
// record by record with insertions, and a run at a time (Copy).
func TestRetainedFile(t *testing.T) {
	for _, tc := range []struct {
		aux   bool
		every int // 0: writer.Copy, no insertions
		delay time.Duration
	}{{true, 50, 200 * time.Microsecond}, {false, 5000, 3 * time.Millisecond}, {true, 0, 10 * time.Millisecond}} {
		stream := bigPipeStream(rand.New(rand.NewPCG(1, 3)), tc.aux)
		path := filepath.Join(t.TempDir(), "in.data")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := reader.NewStream(bytes.NewReader(stream), reader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := writer.New(f, r, writer.Options{Format: perfdata.FormatFile})
		if err != nil {
			t.Fatal(err)
		}
		rectest.CopyAll(t, r, w, nil)
		f.Close()

		edit := func() rectest.Edit { // the same insertions in both runs
			if tc.every == 0 {
				return nil
			}
			return inserter(3, tc.every)
		}
		copied := rewriteFile(t, path, optsFor(false), 0, edit())
		held := rewriteFile(t, path, optsFor(true), tc.delay, edit())
		if len(copied) < len(stream) {
			t.Fatalf("copied %d bytes of a %d-byte stream", len(copied), len(stream))
		}
		if !bytes.Equal(copied, held) {
			t.Errorf("aux %v, insertions every %d records, writes delayed %v: records written from the reader's buffers differ from copied ones", tc.aux, tc.every, tc.delay)
		}
	}
}

// TestSlowFile: a file-mode rewrite of the largest corpus recordings into
// a slow output gives what one into a file gives: the AUX data and the
// header sections, copied by copy_file_range into the file, go through
// memory to the slow output.
func TestSlowFile(t *testing.T) {
	for _, name := range []string{"haskellperf_PERFFILE_v1_tracepoints.data", "autofdo_perf3.3google_x86_64_kernel2.6.34_lbr_raw.data", "quipper_perf4.14_x86_64_intel_pt_auxtrace.data"} {
		t.Run(name, func(t *testing.T) {
			path := testkit.CorpusFile(t, name)
			fast := rewriteFile(t, path, writer.Options{}, 0, inserter(4, 50))
			slow := rewriteFile(t, path, writer.Options{}, 2*time.Millisecond, inserter(4, 50))
			if !bytes.Equal(fast, slow) {
				t.Errorf("the output written through memory differs from the one copied in the kernel")
			}
		})
	}
}

// rewriteFile writes the file recording at path again through a writer
// with opts, into a new file or, with a delay, a slow output in front of
// it (which copy_file_range cannot write to), handing every record to
// edit; it returns the bytes written.
func rewriteFile(t *testing.T, path string, opts writer.Options, delay time.Duration, edit rectest.Edit) []byte {
	t.Helper()
	r := rectest.Open(t, path, reader.Options{Decompress: true})
	outPath := filepath.Join(t.TempDir(), "out.data")
	of, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer of.Close()
	var out io.Writer = of
	if delay > 0 {
		out = &slowWriterAt{of, delay}
	}
	w, err := writer.New(out, r, opts)
	if err != nil {
		t.Fatal(err)
	}
	rectest.CopyAll(t, r, w, edit)
	return testkit.ReadFile(t, outPath)
}

// optsFor: records written from the reader's buffers (attach), or copied.
func optsFor(attach bool) writer.Options {
	if attach {
		return writer.Options{}
	}
	return writer.Copying(writer.Options{})
}
