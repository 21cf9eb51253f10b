package testkit

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// exclusivePath is the lock file Exclusive takes.
var exclusivePath = filepath.Join(os.TempDir(), "bpfmeta-test.lock")

// exclusive counts this process's tests that hold the machine.
var exclusive struct {
	sync.Mutex
	n int
	f *os.File
}

// Exclusive holds the machine for the test, until it and its cleanups end,
// against bpfmeta's tests in other processes: those that load BPF programs
// (BPF) or run perf (PerfStock, PerfModern). A system-wide recording sees
// every program loaded meanwhile and perf 7.2's side-band thread writes
// records for them all, so two test binaries at once (go test ./... runs
// packages in parallel; two checkouts tested side by side) would each count
// the other's loads of the same fixtures as their own. Tests of one process
// share the hold (its subtests, parallel or not); a lock file
// (exclusivePath, flock(2), released when the process exits however it
// ends) keeps out the others, which wait. Programs other than the tests'
// own fixtures are not kept out: tests never assume they are alone.
func Exclusive(t testing.TB) {
	t.Helper()
	exclusive.Lock()
	defer exclusive.Unlock()
	if exclusive.n == 0 {
		f, err := os.OpenFile(exclusivePath, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			t.Fatalf("holding the machine against other test processes: %v", err)
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			t.Fatalf("holding the machine against other test processes: %s is not a regular file", exclusivePath)
		}
		for {
			err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			f.Close()
			t.Fatalf("holding the machine against other test processes: flock %s: %v", exclusivePath, err)
		}
		exclusive.f = f
	}
	exclusive.n++
	t.Cleanup(func() {
		exclusive.Lock()
		defer exclusive.Unlock()
		if exclusive.n--; exclusive.n == 0 {
			exclusive.f.Close()
			exclusive.f = nil
		}
	})
}
