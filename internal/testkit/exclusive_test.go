package testkit

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// tryLock reports whether another open file description (as another
// process would have) gets the lock now.
func tryLock(t *testing.T) bool {
	t.Helper()
	f, err := os.Open(exclusivePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err != nil && !errors.Is(err, unix.EWOULDBLOCK) {
		t.Fatal(err)
	}
	return err == nil
}

// TestExclusive: the lock is held from the first Exclusive of the process
// to the end of the last test holding it, shared by subtests.
func TestExclusive(t *testing.T) {
	t.Run("held", func(t *testing.T) {
		Exclusive(t)
		t.Run("nested", func(t *testing.T) {
			Exclusive(t)
			if tryLock(t) {
				t.Error("another process could take the lock a subtest holds")
			}
		})
		if tryLock(t) {
			t.Error("another process could take the lock after a subtest released its hold, while the test still holds it")
		}
	})
	// (not tryLock: another test process may hold it by now)
	if exclusive.n != 0 || exclusive.f != nil {
		t.Errorf("the lock is still held after the tests holding it ended (%d holds)", exclusive.n)
	}
}
