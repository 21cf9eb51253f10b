//go:build 386 || arm || mipsle

package bpfsys

import "unsafe"

// pointer on a 32-bit little-endian platform: the Go pointer is the u64's
// low half, at its first 4 bytes; the high half is zero.
type pointer struct {
	p  unsafe.Pointer
	hi uint32
}

func toPointer(p unsafe.Pointer) pointer { return pointer{p: p} }
