package inject_test

import (
	"bufio"
	"io"
	"os"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// benchInputEnv names the recording the benchmarks inject into: make
// bench's BENCH_DIR/big.pipe (a pipe stream) or big.data for figures that
// mean something, e.g.
//
//	BPFMETA_BENCH_INPUT=/var/tmp/bpfmeta-bench/big.pipe go test -run - -bench . ./inject
//
// Without it they read a compressed corpus recording with BPF programs.
const benchInputEnv = "BPFMETA_BENCH_INPUT"

func benchInput(b *testing.B) (string, int64) {
	b.Helper()
	path := os.Getenv(benchInputEnv)
	if path == "" {
		path = testkit.CorpusFile(b, "mstange_perf6.16_x86_64_zstd_compressed2.pipe.data")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

// BenchmarkInjectStream: inject reading a stream and writing a pipe stream
// (bpfmeta inject -i - -o -), with a source that knows no program, so that
// the figure is the cost of the pass, not of the kernel.
func BenchmarkInjectStream(b *testing.B) {
	path, size := benchInput(b)
	src := &bpfprog.Snapshot{}
	b.SetBytes(size)
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := reader.NewStream(bufio.NewReaderSize(f, 1<<20), reader.Options{Decompress: true})
		if err != nil {
			b.Fatal(err)
		}
		w, err := writer.New(io.Discard, r, writer.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inject.Run(r, w, src, inject.Options{}); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		r.Close()
		f.Close()
	}
}
