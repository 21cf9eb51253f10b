package writer

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copyRange copies n bytes of src at srcOff to dst at dstOff: with
// copy_file_range(2) when both are files (no copy through user space, or
// none at all on file systems that share extents), else through a buffer.
func copyRange(dst io.WriterAt, dstOff int64, src io.ReaderAt, srcOff, n int64) error {
	df, dok := dst.(*os.File)
	sf, sok := src.(*os.File)
	if dok && sok {
		done, err := copyFileRange(df, dstOff, sf, srcOff, n)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errNoCopyFileRange) {
			return err
		}
		dstOff, srcOff, n = dstOff+done, srcOff+done, n-done
	}
	buf := make([]byte, min(n, copyBufSize))
	for n > 0 {
		b := buf[:min(n, int64(len(buf)))]
		if _, err := src.ReadAt(b, srcOff); err != nil {
			return fmt.Errorf("reading the input at %#x: %w", srcOff, err)
		}
		if _, err := dst.WriteAt(b, dstOff); err != nil {
			return err
		}
		srcOff += int64(len(b))
		dstOff += int64(len(b))
		n -= int64(len(b))
	}
	return nil
}

var errNoCopyFileRange = errors.New("copy_file_range not usable")

// copyFileRange copies with copy_file_range(2), reporting how much it did
// before it had to give up (cross-device copies on old kernels, special files).
func copyFileRange(dst *os.File, dstOff int64, src *os.File, srcOff, n int64) (int64, error) {
	var done int64
	for done < n {
		m, err := unix.CopyFileRange(int(src.Fd()), &srcOff, int(dst.Fd()), &dstOff, int(min(n-done, 1<<30)), 0)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EXDEV || err == unix.EINVAL || err == unix.ENOSYS || err == unix.EOPNOTSUPP || err == unix.EBADF:
			return done, errNoCopyFileRange
		case err != nil:
			return done, fmt.Errorf("copy_file_range: %w", err)
		case m == 0:
			return done, fmt.Errorf("copying the input at %#x: %w", srcOff, io.ErrUnexpectedEOF)
		}
		done += int64(m)
	}
	return done, nil
}

// runChunk is the most a run of passed-through records grows before it is
// handed to the copier, so that copying overlaps reading.
const runChunk = 16 << 20

// copier writes and copies into the output in its own goroutine, in order.
type copier struct {
	dst  io.WriterAt
	src  io.ReaderAt
	jobs chan copyJob
	done chan error
	err  error
}

type copyJob struct {
	buf            []byte // write buf at dstOff, or
	dstOff, srcOff int64  // copy n bytes from srcOff
	n              int64
}

// copyQueue is how many jobs may wait: enough to keep the copier busy.
const copyQueue = 8

func newCopier(dst io.WriterAt, src io.ReaderAt) *copier {
	c := &copier{dst: dst, src: src, jobs: make(chan copyJob, copyQueue), done: make(chan error, 1)}
	go c.run()
	return c
}

func (c *copier) run() {
	var err error
	for j := range c.jobs {
		if err != nil {
			continue // drain
		}
		if j.buf != nil {
			_, err = c.dst.WriteAt(j.buf, j.dstOff)
		} else {
			err = copyRange(c.dst, j.dstOff, c.src, j.srcOff, j.n)
		}
	}
	c.done <- err
}

func (c *copier) write(b []byte, off int64) error {
	c.jobs <- copyJob{buf: b, dstOff: off}
	return nil
}

func (c *copier) copy(dstOff, srcOff, n int64) error {
	c.jobs <- copyJob{dstOff: dstOff, srcOff: srcOff, n: n}
	return nil
}

// close waits for every job and returns the first error.
func (c *copier) close() error {
	if c.jobs != nil {
		close(c.jobs)
		c.err = <-c.done
		c.jobs = nil
	}
	return c.err
}
