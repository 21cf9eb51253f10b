package writer_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// benchInputEnv names the recording the benchmarks copy: make bench's
// BENCH_DIR/big.data for figures that mean something, e.g.
//
//	BPFMETA_BENCH_INPUT=/var/tmp/bpfmeta-bench/big.data go test -run - -bench . ./writer
//
// Without it they copy the largest file-mode corpus file.
const benchInputEnv = "BPFMETA_BENCH_INPUT"

// benchInput opens the recording to copy; it must be in file format.
func benchInput(b *testing.B) (*os.File, *reader.Reader, int64) {
	b.Helper()
	path := os.Getenv(benchInputEnv)
	if path == "" {
		var best int64
		for _, f := range corpusFiles(b) {
			if st, err := os.Stat(f); err == nil && st.Size() > best && filepath.Ext(filepath.Base(f[:len(f)-len(".data")])) != ".pipe" {
				path, best = f, st.Size()
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	r, err := reader.NewFile(f, st.Size(), reader.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if r.Format() != perfdata.FormatFile {
		b.Skipf("%s is not in file format", path)
	}
	return f, r, st.Size()
}

// copyAll copies every record of a new reader of f to out.
func copyAll(b *testing.B, f *os.File, size int64, out io.Writer) {
	b.Helper()
	r, err := reader.NewFile(f, size, reader.Options{Decompress: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	w, err := writer.New(out, r, writer.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for r.Next() {
		if err := w.WriteRecord(r.Record()); err != nil {
			b.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFileIdentity: bpfmeta convert file->file, read and written back
// unchanged into a new file (runs of records copied with copy_file_range).
func BenchmarkFileIdentity(b *testing.B) {
	f, _, size := benchInput(b)
	out := filepath.Join(b.TempDir(), "out.data")
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		o, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		copyAll(b, f, size, o)
		o.Close()
		b.StopTimer()
		os.Remove(out)
		b.StartTimer()
	}
}

// BenchmarkPipe: file->pipe, the records written as a pipe stream to
// io.Discard (what the stream costs without the output device).
func BenchmarkPipe(b *testing.B) {
	f, _, size := benchInput(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		copyAll(b, f, size, io.Discard)
	}
}
