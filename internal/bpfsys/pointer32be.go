//go:build mips

package bpfsys

import "unsafe"

// pointer on a 32-bit big-endian platform: the u64's high half, zero, comes
// first; the Go pointer is its low half, at the last 4 bytes.
type pointer struct {
	hi uint32
	p  unsafe.Pointer
}

func toPointer(p unsafe.Pointer) pointer { return pointer{p: p} }
