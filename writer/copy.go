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
			return done, fmt.Errorf("copying the input at %#x: %w", srcOff, io.ErrUnexpectedEOF)
		}
		done += int64(m)
	}
	return done, nil
}

// writeback starts the kernel writing a file output's pages to disk as the
// sink writes them (sync_file_range SYNC_FILE_RANGE_WRITE, which does not
// wait), a piece at a time: the fsync that makes the output durable before
// it gets its name (package outfile) then waits for the last piece only,
// instead of for the whole recording after the copy; a stream written to a
// regular file (> out) is not held back by the kernel for its dirty pages
// near its end.
type writeback struct {
	fd       int
	base     int64 // where the sink's offset 0 is in the file
	from, to int64
}

// writebackChunk is how much is written before writeback is started for it.
const writebackChunk = 8 << 20

// writebackOf returns the writeback of the regular file dst is (an
// *os.File or what embeds one, or a command's stdout that has one), or
// nil. A stream's
// offset 0 is where the file's offset is now; a file written at offsets
// has its own.
func writebackOf(dst any, stream bool) *writeback {
	var f fder
	switch d := dst.(type) {
	case fder:
		f = d
	case interface{ File() (*os.File, bool) }: // a command's stdout
		if of, ok := d.File(); ok {
			f = of
		}
	}
	if f == nil {
		return nil
	}
	wb := &writeback{fd: int(f.Fd())}
	var st unix.Stat_t
	if unix.Fstat(wb.fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	if stream {
		off, err := unix.Seek(wb.fd, 0, io.SeekCurrent)
		if err != nil {
			return nil
		}
		wb.base = off
	}
	return wb
}

// written notes n bytes written at sink offset off, and starts the
// writeback of what was written since the last start once that is a
// chunk. Writes come in order; a gap starts a new range.
func (wb *writeback) written(off, n int64) {
	if wb == nil {
		return
	}
	off += wb.base
	if off != wb.to {
		wb.from = off
	}
	wb.to = off + n
	if wb.to-wb.from >= writebackChunk {
		// A hint: an error changes nothing.
		unix.SyncFileRange(wb.fd, wb.from, wb.to-wb.from, unix.SYNC_FILE_RANGE_WRITE)
		wb.from = wb.to
	}
}
