package cliutil

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Limits of the process below which a run could fail in a way bpfmeta
// cannot report: the Go runtime ends the process (exit 2, a goroutine
// dump, no cleanup, a temporary output left) when it cannot create its
// poller's descriptors at the first file opened, or cannot map memory.
const (
	// minFreeFiles is how many file descriptors must be free at start: a
	// run opens at most a dozen at once (input, output, its directory,
	// spools, a snapshot, BPF objects) besides the runtime's two; an open
	// past the limit later is an error that names the file.
	minFreeFiles = 32
	// minAddressSpace is the smallest RLIMIT_AS (ulimit -v) accepted. The
	// Go runtime reserves about 730 MiB of address space before main runs
	// (below that it cannot start at all, exit 2, before bpfmeta can say
	// anything); a run's bounded memory (< 64 MiB) fits in the rest.
	minAddressSpace = 1 << 30
)

// CheckLimits refuses to run under limits too low for any run to end
// cleanly (ulimit -n, ulimit -v): better one line now than the runtime's
// fatal error half-way. Call it before any file is opened.
func CheckLimits() error {
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &r) == nil && r.Cur != unix.RLIM_INFINITY && r.Cur < minAddressSpace {
		return fmt.Errorf("the address space limit (ulimit -v) is %d KiB; bpfmeta needs at least %d KiB (the Go runtime alone reserves most of it)", r.Cur>>10, minAddressSpace>>10)
	}
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) != nil {
		return nil
	}
	open, err := openFiles()
	switch {
	case errors.Is(err, unix.EMFILE):
		// not one descriptor free (the runtime keeps some of its own
		// open: the cgroup files it reads GOMAXPROCS from)
		return fmt.Errorf("the open file limit (ulimit -n) is %d and every descriptor is in use; bpfmeta needs %d free", r.Cur, minFreeFiles)
	case err == nil && r.Cur < uint64(open+minFreeFiles):
		return fmt.Errorf("the open file limit (ulimit -n) is %d and %d files are open; bpfmeta needs %d more", r.Cur, open, minFreeFiles)
	}
	return nil
}

// openFiles counts the process's open file descriptors in /proc/self/fd,
// without the os package (whose first open sets up the runtime's poller:
// the very descriptors that may be lacking). EMFILE says none is free.
func openFiles() (int, error) {
	fd, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	n := 0
	buf := make([]byte, 4096)
	for {
		m, err := unix.ReadDirent(fd, buf)
		if err != nil {
			return 0, err
		}
		if m == 0 {
			break
		}
		_, count, _ := unix.ParseDirent(buf[:m], -1, nil)
		n += count
	}
	return n - 1, nil // not the directory's own descriptor
}
