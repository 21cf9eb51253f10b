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

// benchDefault is the recording the benchmarks read without
// BPFMETA_BENCH_INPUT (make bench's BENCH_DIR/big.data or big.pipe):
// a compressed corpus recording with BPF programs.
func benchDefault(t testing.TB) string {
	return testkit.CorpusFile(t, "mstange_perf6.16_x86_64_zstd_compressed2.pipe.data")
}

// BenchmarkInjectStream: inject reading a stream and writing a pipe stream
// (bpfmeta inject -i - -o -), with a source that knows no program, so that
// the figure is the cost of the pass, not of the kernel.
func BenchmarkInjectStream(b *testing.B) {
	path, size := testkit.BenchInput(b, benchDefault)
	src := &bpfprog.List{}
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
		if _, err := inject.Write(w, r, src, inject.Options{}); err != nil {
			b.Fatal(err)
		}
		r.Close()
		f.Close()
	}
}

// BenchmarkInjectWalk: the walk inject makes over a recording in a file:
// the reader's parse, inject's look at each record and the writer's
// handling of it, written as a pipe stream whose bytes go nowhere
// (io.Discard), so that the figure is not the output's: what a record
// inject only passes through (MMAP, COMM, a SAMPLE outside every BPF
// program) costs, user-ns/record in user space, cpu-ns/record with the
// kernel's pread(2) of the input. With BPFMETA_BENCH_INPUT=.../big.data, e.g.
//
//	BPFMETA_BENCH_INPUT=/var/tmp/bpfmeta-bench/big.data go test -run - -bench InjectWalk -count 10 ./inject
func BenchmarkInjectWalk(b *testing.B) {
	f, size := testkit.OpenBenchInput(b, benchDefault)
	src := &bpfprog.List{}
	testkit.BenchPerRecord(b, size, func() int {
		r, err := reader.NewFile(f, size, reader.Options{Decompress: true})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		w, err := writer.New(io.Discard, r, writer.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inject.Write(w, r, src, inject.Options{}); err != nil {
			b.Fatal(err)
		}
		c := r.Counts()
		return int(c.Records + c.Inner)
	})
}
