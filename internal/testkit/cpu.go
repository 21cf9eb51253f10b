package testkit

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// OnCPU runs f on a thread pinned to cpu, where the records of what it
// does land in that CPU's ring buffer, and returns what f returns.
func OnCPU[T any](t testing.TB, cpu int, f func() T) T {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		t.Fatalf("pinning to CPU %d: %v", cpu, err)
	}
	defer unix.SchedSetaffinity(0, &old)
	return f()
}
