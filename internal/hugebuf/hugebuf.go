// Package hugebuf hands out the readers' large buffers, on a huge page where it can.
//
// It hands out the large buffers records are read into: blocks of Size
// bytes, aligned to Size, that the kernel backs with one huge page where it
// can (madvise MADV_HUGEPAGE, which takes effect when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always").
//
// Why: a reader touches its buffers once per process, and every 4 KiB page
// of fresh memory costs a page fault, 11-15 µs each in the VMs this was
// measured on, and a TLB entry for every page the kernel copies into. A
// 2 MiB block on 4 KiB pages took 6-8 ms to touch there, on a huge page
// 0.2-0.4 ms; inject and convert file->file of a 344 MB recording ran in
// 0.84x and 0.87x the wall time with the reader's buffers in one (15
// paired runs). The Go heap gives no huge pages when the system's setting
// is "madvise" (Debian's default), so the blocks are mapped here, outside
// it: they hold no pointers.
//
// Blocks are never unmapped: Put keeps a block for the next Get, so the
// memory held is what the most readers open at once used, and at most
// maxMapped blocks are mapped. Beyond that (readers left unclosed, whose
// blocks come back only when the garbage collector finds them, which the
// memory outside its heap does not hasten), Get makes blocks on the Go heap,
// which the collector reclaims as any other. Bytes of a block are valid
// until it is Put; what a reader handed out of its buffers is valid until
// the reader is closed.
package hugebuf

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/budget"
)

// Size is the size of a block: the x86-64 and arm64 (4 KiB pages) huge
// page.
const Size = 2 << 20

// maxMapped is the most blocks mapped outside the Go heap (128 MiB).
const maxMapped = 64

var pool struct {
	sync.Mutex
	free   [][]byte       // mapped blocks Put back
	mapped map[*byte]bool // every mapped block, by its first byte
}

// Get returns a block of Size bytes, of unspecified content: one Put
// before, or a new one (zero).
func Get() []byte {
	pool.Lock()
	defer pool.Unlock()
	if n := len(pool.free); n > 0 {
		b := pool.free[n-1]
		pool.free = pool.free[:n-1]
		return b
	}
	if len(pool.mapped) < maxMapped {
		if b := mapBlock(); b != nil {
			if pool.mapped == nil {
				pool.mapped = make(map[*byte]bool)
			}
			pool.mapped[&b[0]] = true
			// the process's memory budget counts it, as long as the
			// process lives
			budget.Process().Take(Size, "read buffers")
			return b
		}
	}
	return make([]byte, Size)
}

// Put gives back a block of Get's for a later Get. Nothing may use its
// bytes after that.
func Put(b []byte) {
	if cap(b) != Size {
		panic("hugebuf: Put of a slice that is not a block")
	}
	b = b[:Size]
	pool.Lock()
	defer pool.Unlock()
	if pool.mapped[&b[0]] {
		pool.free = append(pool.free, b)
	} // else a block of the Go heap's: the collector has it
}

// Pooled is the number of blocks Put and not taken again.
func Pooled() int {
	pool.Lock()
	defer pool.Unlock()
	return len(pool.free)
}

// mapBlock maps a block aligned to Size, so that one huge page can back
// it, or returns nil if the kernel maps no more memory.
func mapBlock() []byte {
	// Map twice the size and unmap what lies outside the aligned block.
	p, err := unix.MmapPtr(-1, 0, nil, 2*Size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	head := uintptr(-uintptr(p) & (Size - 1)) // bytes before the aligned address
	block := unsafe.Add(p, head)
	if head > 0 {
		unix.MunmapPtr(p, head)
	}
	unix.MunmapPtr(unsafe.Add(block, Size), Size-head)
	// An error (a kernel without transparent huge pages) leaves 4 KiB pages.
	unix.Madvise(unsafe.Slice((*byte)(block), Size), unix.MADV_HUGEPAGE)
	return unsafe.Slice((*byte)(block), Size)
}
