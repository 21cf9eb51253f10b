// Package infile opens a recording to read with the project's input
// policy: the operating system's side of reading, which a format reader
// does not carry.
//
//   - A regular file is read where it is, by offset (reader.NewFile).
//   - Anything else (a pipe, a FIFO, a device, a terminal) is a stream. A
//     pipe's buffer is enlarged first (scratch.GrowPipe, F_SETPIPE_SZ): perf
//     writes a stream in large blocks, and fewer, larger reads cost less.
//   - A pipe-mode recording on a stream is read as it arrives
//     (reader.NewStream). A file-format recording (cat perf.data | ...)
//     cannot be read in one pass: its header says where its data ends only
//     after the data was written. It is first copied (reader.Spool) to an
//     unnamed file in $TMPDIR (scratch.Unnamed: nothing of it survives the
//     process, however it ends), no more than its header says it has and
//     no more than $TMPDIR has room for (statfs), and read from there;
//     closing the Input removes it.
//
// It is not for what -i means (a path, "-", ./perf.data on a terminal),
// directory recordings (reader.Open) or messages: cmd/internal/cliutil has
// those. The record format is package reader's.
package infile

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Input is a recording being read, and the spool it is read from, if any.
type Input struct {
	*reader.Reader
	// File is the regular file the recording is read from, if it is one:
	// what an output must not be.
	File  *os.File
	spool *os.File
}

// Close closes the reader and removes the spool; it does not close the
// file or stream the Input was opened on.
func (in *Input) Close() error {
	err := in.Reader.Close()
	if in.spool != nil {
		in.spool.Close()
		in.spool = nil
	}
	return err
}

// OpenFile reads the recording in f: a regular file by offset, anything
// else (a FIFO, a device, /dev/stdin) as a stream (OpenStream). The caller
// closes f after the Input.
func OpenFile(f *os.File, opts reader.Options) (*Input, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return OpenStream(f, opts)
	}
	// A regular file read from where it is (stdin redirected from a
	// file) is read whole, if it can seek.
	var in *Input
	if _, serr := f.Seek(0, io.SeekCurrent); serr == nil {
		var r *reader.Reader
		if r, err = reader.NewFile(f, st.Size(), opts); err == nil {
			in = &Input{Reader: r}
		}
	} else {
		in, err = OpenStream(f, opts)
	}
	if err != nil {
		return nil, err
	}
	in.File = f
	return in, nil
}

// OpenStream reads a recording from a stream that cannot seek, by the
// package's policy: a pipe-mode recording as it arrives, a file-format
// recording from a spool in $TMPDIR.
func OpenStream(src io.Reader, opts reader.Options) (*Input, error) {
	if f, ok := src.(*os.File); ok {
		scratch.GrowPipe(f)
	}
	// The first bytes say the format. They are read here and put back in
	// front of the rest, which is read straight from src: a buffer in
	// between would cut the reader's large reads to its size, and copy
	// every byte once more.
	var first [perfdata.PipeHeaderSize]byte
	n, err := io.ReadFull(src, first[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	head := first[:n]
	br := io.MultiReader(bytes.NewReader(head), src)
	if !reader.IsFileFormat(head) {
		r, err := reader.NewStream(br, opts)
		if err != nil {
			return nil, err
		}
		return &Input{Reader: r}, nil
	}
	dir := os.TempDir()
	f, err := scratch.Unnamed(dir)
	if err != nil {
		return nil, fmt.Errorf("a file-format recording on a pipe is copied to %s to be read: %w", dir, err)
	}
	size, err := reader.Spool(f, br, room(dir))
	if err == nil {
		var r *reader.Reader
		if r, err = reader.NewFile(f, size, opts); err == nil {
			return &Input{Reader: r, spool: f}, nil
		}
	}
	f.Close()
	if errors.Is(err, reader.ErrNotPerfData) {
		return nil, err
	}
	return nil, fmt.Errorf("a file-format recording on a pipe (copied to %s to be read): %w", dir, err)
}

// room is how many bytes an unprivileged user may still write in the file
// system of dir (statfs's f_bavail blocks), or 0 (no limit) if statfs
// fails.
func room(dir string) int64 {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0
	}
	return int64(min(st.Bavail*uint64(st.Bsize), 1<<62))
}
