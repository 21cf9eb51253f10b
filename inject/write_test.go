package inject_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// junk is bytes after a pipe stream's last record that are not a
// record, which the writer's Close writes to a pipe stream.
var junk = []byte("[ perf record: Woken up 1 times ]\n")

// failWriter fails the writes it is true of.
type failWriter func([]byte) bool

var errFull = errors.New("disk full")

func (f failWriter) Write(b []byte) (int, error) {
	if f(b) {
		return 0, errFull
	}
	return len(b), nil
}

// TestWriteErrors: inject.Write's errors come in the classes bpfmeta
// inject names them by (rewrite.blame): the input's as the reader says
// it, the output's as it finishes the output a *CloseError, and the
// output is written whole when there is none.
func TestWriteErrors(t *testing.T) {
	c := prog(30, 0xc0, 0xffff2000, 0, true)
	in := newStream()
	in.rec(perfdata.RecordFinishedInit, nil)
	in.kernelLoad(c)
	in.sample()
	in.Write(junk)
	src := fakeSource{30: c}

	t.Run("ok", func(t *testing.T) {
		want, _ := run(t, in.Bytes(), src, inject.Options{})
		r := rectest.Stream(t, in.Bytes(), reader.Options{Decompress: true})
		var out bytes.Buffer
		w, err := writer.New(&out, r, writer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := inject.Write(w, r, src, inject.Options{})
		if err != nil || sum.Injected != 1 {
			t.Fatalf("Write: %v, %+v, want no error and a record injected", err, sum)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("Write's output is not Run's, closed")
		}
	})
	t.Run("input", func(t *testing.T) {
		b := in.Bytes()
		r := rectest.Stream(t, b[:len(b)-len(junk)-3], reader.Options{Decompress: true})
		w, err := writer.New(io.Discard, r, writer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = inject.Write(w, r, src, inject.Options{})
		var fe *reader.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("Write of a stream cut short: %v (%T), want the reader's *reader.FormatError", err, err)
		}
		if ce, we := (*inject.CloseError)(nil), (*writer.WriteError)(nil); errors.As(err, &ce) || errors.As(err, &we) {
			t.Errorf("Write of a stream cut short: %v (%T), an error of the output", err, err)
		}
	})
	t.Run("close", func(t *testing.T) {
		r := rectest.Stream(t, in.Bytes(), reader.Options{Decompress: true})
		// fails the write of junk, as Close writes it
		w, err := writer.New(failWriter(func(b []byte) bool { return bytes.Contains(b, junk) }), r, writer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = inject.Write(w, r, src, inject.Options{})
		var ce *inject.CloseError
		if !errors.As(err, &ce) || !errors.Is(err, errFull) || err.Error() != ce.Err.Error() {
			t.Fatalf("Write to an output that fails as it is finished: %v (%T), want a *CloseError of %v", err, err, errFull)
		}
		if we := (*writer.WriteError)(nil); errors.As(err, &we) {
			t.Errorf("Write: %v is a *writer.WriteError, an error of a record written", err)
		}
	})
	t.Run("record", func(t *testing.T) {
		// records enough that the writer writes (and fails) before the
		// last is handed to it: its writes go on beside inject's
		long := newStream()
		long.rec(perfdata.RecordFinishedInit, nil)
		long.kernelLoad(c)
		for range 1 << 17 {
			long.sample()
		}
		r := rectest.Stream(t, long.Bytes(), reader.Options{Decompress: true})
		// fails every write
		w, err := writer.New(failWriter(func([]byte) bool { return true }), r, writer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = inject.Write(w, r, src, inject.Options{})
		var we *writer.WriteError
		if !errors.As(err, &we) || !errors.Is(err, errFull) {
			t.Fatalf("Write to an output that fails: %v (%T), want a *writer.WriteError of %v", err, err, errFull)
		}
		if ce := (*inject.CloseError)(nil); errors.As(err, &ce) {
			t.Errorf("Write: %v is a *CloseError, an error of finishing the output", err)
		}
	})
}
