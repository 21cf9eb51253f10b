package reader

import (
	"runtime"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/hugebuf"
	"github.com/bpfmeta/bpfmeta/internal/retain"
)

// The read buffers are a hugebuf block, outside the Go heap: Close gives
// it back, and so does the garbage collector for a Reader dropped
// unclosed, unless a writer was given its bytes.

const (
	buffersCorpusFile = "../testdata/corpus/autofdo_perf5.6_x86_64_small.data"
	// one with COMPRESSED records: the decompressed records are in a
	// block too
	buffersZstdFile = "../testdata/corpus/mstange_perf6.5_aarch64_zstd_compressed.data"
)

func openForBuffers(t *testing.T) *Reader {
	t.Helper()
	return openBuffered(t, buffersCorpusFile)
}

func openBuffered(t *testing.T, path string) *Reader {
	t.Helper()
	r, err := Open(path, Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCloseGivesBuffersBack(t *testing.T) {
	r := openForBuffers(t)
	n := hugebuf.Pooled()
	r.Close()
	if got := hugebuf.Pooled(); got != n+1 {
		t.Errorf("%d blocks pooled after Close, want %d", got, n+1)
	}
	r.Close() // twice: nothing more
	if got := hugebuf.Pooled(); got != n+1 {
		t.Errorf("%d blocks pooled after a second Close, want %d", got, n+1)
	}
}

func TestCloseGivesZstdBufferBack(t *testing.T) {
	r := openBuffered(t, buffersZstdFile)
	if r.Counts().Inner == 0 {
		t.Fatalf("%s: no records decoded from compressed records", buffersZstdFile)
	}
	n := hugebuf.Pooled()
	r.Close()
	if got := hugebuf.Pooled(); got != n+2 {
		t.Errorf("%d blocks pooled after Close, want %d (the read buffers', the decompressed records')", got, n+2)
	}
	var m int
	func() {
		openBuffered(t, buffersZstdFile) // dropped unclosed
		m = hugebuf.Pooled()
	}()
	if !pooledWithin(m+2, 5*time.Second) {
		t.Errorf("the blocks of a Reader of compressed records dropped unclosed did not come back (%d pooled, want %d)", hugebuf.Pooled(), m+2)
	}
}

func TestDroppedGivesBuffersBack(t *testing.T) {
	var n int
	func() {
		openForBuffers(t) // dropped unclosed
		n = hugebuf.Pooled()
	}()
	if !pooledWithin(n+1, 5*time.Second) {
		t.Errorf("the block of a Reader dropped unclosed did not come back (%d pooled, want %d)", hugebuf.Pooled(), n+1)
	}

	// With a writer attached, the block stays out of the pool: the
	// writer may still write from it.
	func() {
		r := openForBuffers(t)
		retain.Attach(r, func() func() { return func() {} })
		n = hugebuf.Pooled()
	}()
	if pooledWithin(n+1, time.Second) {
		t.Errorf("the block of a dropped Reader with a writer attached went back to the pool")
	}
}

// pooledWithin collects garbage until want blocks are pooled, or d passed.
func pooledWithin(want int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		if hugebuf.Pooled() >= want {
			return true
		}
	}
	return false
}
