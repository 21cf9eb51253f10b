package testkit

import (
	"os"
	"syscall"
	"testing"
)

// benchInputEnv names the recording the benchmarks read instead of their
// corpus recording: make bench's BENCH_DIR/big.data (or big.pipe, a pipe
// stream) for figures that mean something, e.g.
//
//	BPFMETA_BENCH_INPUT=/var/tmp/bpfmeta-bench/big.data go test -run - -bench . ./reader
const benchInputEnv = "BPFMETA_BENCH_INPUT"

// BenchInput returns the recording a benchmark reads, $BPFMETA_BENCH_INPUT
// or else the one fallback names, and its size.
func BenchInput(b *testing.B, fallback func(testing.TB) string) (string, int64) {
	b.Helper()
	path := os.Getenv(benchInputEnv)
	if path == "" {
		path = fallback(b)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

// OpenBenchInput is BenchInput opened: the file, closed at the end of the
// benchmark, and its size.
func OpenBenchInput(b *testing.B, fallback func(testing.TB) string) (*os.File, int64) {
	b.Helper()
	path, size := BenchInput(b, fallback)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f, size
}

// BenchPerRecord runs pass once per b.Loop and reports, besides the time
// and allocations, the throughput over size bytes and the time per record
// (pass returns how many records it went through), in wall time (ns/record)
// and in CPU time of the whole process, user and system (cpu-ns/record)
// and user alone (user-ns/record: the parse, without the kernel's copy of
// the input into the read buffer): on a machine others load, the CPU time
// moves much less.
func BenchPerRecord(b *testing.B, size int64, pass func() int) {
	b.Helper()
	b.SetBytes(size)
	b.ReportAllocs()
	n := 0
	user0, sys0 := cpuTime()
	for b.Loop() {
		n = pass()
	}
	user, sys := cpuTime()
	per := float64(b.N) * float64(max(n, 1))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/record")
	b.ReportMetric(float64(user-user0+sys-sys0)/per, "cpu-ns/record")
	b.ReportMetric(float64(user-user0)/per, "user-ns/record")
}

// cpuTime is the process's user and system time so far, in ns.
func cpuTime() (user, sys int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return ru.Utime.Nano(), ru.Stime.Nano()
}
