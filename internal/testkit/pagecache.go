package testkit

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Unsynced returns how many of path's pages in the page cache are not yet
// on the disk (dirty or under writeback), by cachestat(2) (Linux 6.5): 0
// right after an fsync. It skips the test where that cannot be told: a
// file system kept in memory (tmpfs), whose pages are never written back,
// or a kernel without cachestat.
func Unsynced(t testing.TB, path string) uint64 {
	t.Helper()
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		t.Fatal(err)
	}
	// Statfs_t.Type is int32 on some 32-bit platforms: RAMFS_MAGIC would
	// overflow it as a constant.
	if typ := uint32(fs.Type); typ == unix.TMPFS_MAGIC || typ == unix.RAMFS_MAGIC {
		t.Skipf("%s is on a file system in memory: nothing is written back (set TMPDIR to a disk)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st unix.Cachestat_t
	err = unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &st, 0) // Len 0: to the end
	if err == unix.ENOSYS {
		Missing(t, "cachestat(2) needs Linux >= 6.5")
	}
	if err != nil {
		t.Fatalf("cachestat %s: %v", path, err)
	}
	return st.Dirty + st.Writeback
}
