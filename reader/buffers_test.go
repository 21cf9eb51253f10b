package reader

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/hugebuf"
	"github.com/bpfmeta/bpfmeta/internal/retain"
)

// The read buffers are a hugebuf block, outside the Go heap: Close gives
// it back, and so does the garbage collector for a Reader dropped
// unclosed, unless a writer was given its bytes.

const buffersCorpusFile = "../testdata/corpus/autofdo_perf5.6_x86_64_small.data"

func openForBuffers(t *testing.T) *Reader {
	t.Helper()
	f, err := os.Open(buffersCorpusFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewFile(f, st.Size(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
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
