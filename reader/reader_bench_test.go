package reader_test

import (
	"bufio"
	"os"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
)

// benchDefault is the recording the benchmarks read without
// BPFMETA_BENCH_INPUT (make bench's BENCH_DIR/big.data or big.pipe):
// the largest corpus file.
func benchDefault(t testing.TB) string { return testkit.LargestCorpusFile(t, nil) }

// drain reads every record and returns how many there were.
func drain(b *testing.B, r *reader.Reader) int {
	b.Helper()
	n := 0
	for r.Next() {
		n++
	}
	if err := r.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkReadFile: records of a recording in a file, as convert and
// inject read a file-mode input (page cache warm after the first round).
func BenchmarkReadFile(b *testing.B) {
	f, size := testkit.OpenBenchInput(b, benchDefault)
	testkit.BenchPerRecord(b, size, func() int {
		r, err := reader.NewFile(f, size, reader.Options{Decompress: true})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		return drain(b, r)
	})
}

// BenchmarkReadStream: the same bytes through the pipe-mode path (a stream
// that cannot seek, behind a bufio.Reader as bpfmeta reads stdin). The input
// must be in pipe format (make bench's big.pipe); a file-mode input is
// skipped.
func BenchmarkReadStream(b *testing.B) {
	path, size := testkit.BenchInput(b, benchDefault)
	testkit.BenchPerRecord(b, size, func() int {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		r, err := reader.NewStream(bufio.NewReaderSize(struct{ *os.File }{f}, 1<<16), reader.Options{Decompress: true})
		if err != nil {
			b.Skipf("%s: %v", path, err)
		}
		defer r.Close()
		return drain(b, r)
	})
}

// BenchmarkDecompress: the records inside the COMPRESSED records of a
// recording made with perf record -z, e.g.
//
//	BPFMETA_BENCH_ZSTD=/var/tmp/bpfmeta-bench/bigz.data go test -run - -bench Decompress ./reader
//
// MB/s is of decompressed record bytes. Without BPFMETA_BENCH_ZSTD it reads
// a small -z corpus recording.
func BenchmarkDecompress(b *testing.B) {
	path := os.Getenv("BPFMETA_BENCH_ZSTD")
	if path == "" {
		path = testkit.CorpusFile(b, "mstange_perf6.16_x86_64_zstd_compressed2.data")
	}
	var inner int64
	for b.Loop() {
		r, err := reader.Open(path, reader.Options{Decompress: true})
		if err != nil {
			b.Fatal(err)
		}
		inner = 0
		for r.Next() {
			if rec := r.Record(); rec.Compressed() {
				inner += int64(len(rec.Raw)) + rec.PayloadSize
			}
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.SetBytes(inner)
}
