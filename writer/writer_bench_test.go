package writer_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// benchInput opens the recording the benchmarks copy
// (BPFMETA_BENCH_INPUT), by default the largest file-mode corpus file; it
// must be in file format.
func benchInput(b *testing.B) (*os.File, *reader.Reader, int64) {
	f, size := testkit.OpenBenchInput(b, func(t testing.TB) string {
		return testkit.LargestCorpusFile(t, func(name string) bool { return !strings.HasSuffix(name, ".pipe.data") })
	})
	r, err := reader.NewFile(f, size, reader.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if r.Format() != perfdata.FormatFile {
		b.Skipf("%s is not in file format", f.Name())
	}
	return f, r, size
}

// BenchmarkFileIdentity: bpfmeta convert file->file, read and written back
// unchanged into a new file (runs of records written from the reader's buffers).
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
		rectest.CopyFile(b, f, size, o, nil)
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
		rectest.CopyFile(b, f, size, io.Discard, nil)
	}
}
