package reader

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// OpenFile reads the recording in f: from a regular file by offset
// (NewFile), from anything else (a FIFO, a device, /dev/stdin) as a
// stream (OpenStream, with dir). The caller closes f after the Reader.
func OpenFile(f *os.File, dir string, opts Options) (*Reader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().IsRegular() {
		// A regular file read from where it is (stdin redirected from a
		// file) is read whole, if it can seek.
		if _, err := f.Seek(0, io.SeekCurrent); err == nil {
			return NewFile(f, st.Size(), opts)
		}
	}
	return OpenStream(f, dir, opts)
}

// OpenStream reads a recording from a stream that cannot seek. A pipe-mode
// recording is read as it arrives (NewStream). A file-mode recording cannot
// be read in one pass (its header says where its data ends only after the
// data was written): it is first copied (Spool) to an unnamed file in dir,
// no more than its header says it has and no more than dir has room for,
// and read from there; closing the Reader removes it. A pipe's buffer is
// enlarged first (F_SETPIPE_SZ): perf writes a stream in large blocks, and
// fewer, larger reads cost less.
func OpenStream(src io.Reader, dir string, opts Options) (*Reader, error) {
	if f, ok := src.(*os.File); ok {
		outfile.GrowPipe(f)
	}
	br := bufio.NewReaderSize(src, 1<<16)
	head, err := br.Peek(perfdata.PipeHeaderSize)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if !IsFileFormat(head) {
		return NewStream(br, opts)
	}
	f, err := outfile.Unnamed(dir)
	if err != nil {
		return nil, fmt.Errorf("a file-format recording on a pipe is copied to %s to be read: %w", dir, err)
	}
	var free int64
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil {
		free = int64(min(st.Bavail*uint64(st.Bsize), 1<<62))
	}
	size, err := Spool(f, br, free)
	if err == nil {
		var r *Reader
		if r, err = NewFile(f, size, opts); err == nil {
			r.files = append(r.files, f)
			return r, nil
		}
	}
	f.Close()
	if errors.Is(err, ErrNotPerfData) {
		return nil, err
	}
	return nil, fmt.Errorf("a file-format recording on a pipe (copied to %s to be read): %w", dir, err)
}
