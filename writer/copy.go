package writer

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// copyRange copies n bytes of src at srcOff to dst at dstOff: with
// copy_file_range(2) when both are files (no copy through user space, or
// none at all on file systems that share extents), else through a buffer.
func copyRange(dst io.WriterAt, dstOff int64, src io.ReaderAt, srcOff, n int64) error {
	df, dok := dst.(fder)
	sf, sok := src.(fder)
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
			return inputError("reading the input at %#x: %w", srcOff, err)
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

// copyBufSize is the buffer of copies that cannot use copy_file_range.
const copyBufSize = 256 << 10

var errNoCopyFileRange = errors.New("copy_file_range not usable")

// fder is an *os.File, or something that embeds one (Output).
type fder interface{ Fd() uintptr }

// copyFileRange copies with copy_file_range(2), reporting how much it did
// before it had to give up (cross-device copies on old kernels, special files).
func copyFileRange(dst fder, dstOff int64, src fder, srcOff, n int64) (int64, error) {
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
			return done, inputError("copying the input at %#x: %w", srcOff, io.ErrUnexpectedEOF)
		}
		done += int64(m)
	}
	return done, nil
}
