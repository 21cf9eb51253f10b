package hugebuf

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestBlock(t *testing.T) {
	b := Get()
	if len(b) != Size || cap(b) != Size {
		t.Fatalf("a block of %d bytes (cap %d), want %d", len(b), cap(b), Size)
	}
	if at := uintptr(unsafe.Pointer(&b[0])); at%Size != 0 {
		t.Errorf("block at %#x, not aligned to %d: no huge page can back it", at, Size)
	}
	for i := range b {
		b[i] = byte(i)
	}
	n := Pooled()
	Put(b)
	if Pooled() != n+1 {
		t.Fatalf("%d blocks pooled after a Put, want %d", Pooled(), n+1)
	}
	c := Get()
	if &c[0] != &b[0] {
		t.Errorf("Get after Put mapped a new block instead of reusing the one put back")
	}
	Put(c)
}

// TestHugePage: with transparent huge pages for madvise'd memory, a
// touched block is one huge page (AnonHugePages of its mapping), unless
// the kernel had none free.
func TestHugePage(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") && !strings.Contains(string(mode), "[always]") {
		t.Skip("transparent huge pages are off here")
	}
	b := mapBlock()
	if b == nil {
		t.Fatal("cannot map a block")
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	var in bool
	for _, line := range strings.Split(string(smaps), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, ok := strings.Cut(f[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = ok && err1 == nil && err2 == nil && uint64(start) >= l && uint64(start) < h
			continue
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			if strings.Fields(line)[1] != "0" {
				return
			}
			// Where page faults of madvise'd memory compact memory
			// for a huge page, one is found; else the kernel may
			// fall back to 4 KiB pages when none is free.
			defrag, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/defrag")
			if d := string(defrag); strings.Contains(d, "[madvise]") || strings.Contains(d, "[always]") || strings.Contains(d, "[defer+madvise]") {
				t.Errorf("the block is on 4 KiB pages: %s", line)
			} else {
				t.Logf("the block is on 4 KiB pages (no huge page free, and %s does not compact for one): %s", strings.TrimSpace(d), line)
			}
			return
		}
	}
	t.Errorf("no mapping of the block at %#x in /proc/self/smaps", start)
}

// TestMaxMapped: past maxMapped blocks out at once, Get makes them on the
// Go heap, and Put keeps only mapped ones for reuse.
func TestMaxMapped(t *testing.T) {
	var out [][]byte
	for range maxMapped + 3 {
		out = append(out, Get())
	}
	pool.Lock()
	mapped := len(pool.mapped)
	pool.Unlock()
	if mapped > maxMapped {
		t.Errorf("%d blocks mapped, at most %d", mapped, maxMapped)
	}
	heap := 0
	for _, b := range out {
		pool.Lock()
		if !pool.mapped[&b[0]] {
			heap++
		}
		pool.Unlock()
	}
	if heap < 3 {
		t.Errorf("%d of %d blocks on the heap, want at least 3", heap, len(out))
	}
	n := Pooled()
	for _, b := range out {
		Put(b)
	}
	if got := Pooled() - n; got != len(out)-heap {
		t.Errorf("%d blocks pooled after putting %d back (%d of them the heap's), want %d", got, len(out), heap, len(out)-heap)
	}
}
