//go:build !(386 || arm || mips || mipsle)

package bpfsys

import "unsafe"

// pointer on a 64-bit platform: the Go pointer is the whole u64.
type pointer struct{ p unsafe.Pointer }

func toPointer(p unsafe.Pointer) pointer { return pointer{p: p} }
