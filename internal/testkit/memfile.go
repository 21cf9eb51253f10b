package testkit

import (
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// MemFile is a file in memory (memfd) holding b, read from its start,
// closed when t ends: a real file for what needs one (pread, pwrite,
// copy_file_range), without the file system's cost (fuzz targets).
func MemFile(t testing.TB, b []byte) *os.File {
	t.Helper()
	fd, err := unix.MemfdCreate("testkit", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "memfd")
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	return f
}
