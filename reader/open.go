package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// ErrDataFileOfDir is Open's error for the data file of a directory
// recording (perf record --threads; its HEADER_DIR_FORMAT feature says
// so): it holds the header and the records perf synthesized, the
// recording's own records are in the data.N files beside it. Open the
// directory instead.
var ErrDataFileOfDir = errors.New("the data file of a directory recording (perf record --threads): its records are in the data.N files beside it; open the directory")

// Open reads the recording at path, whatever the path is:
//
//   - A directory is a directory recording (perf record --threads), read
//     as one record sequence.
//   - A regular file is read where it is, by offset (NewFile); the data
//     file of a directory recording is refused (ErrDataFileOfDir), as its
//     records are not in it.
//   - Anything else (a FIFO, a device) is a stream (OpenStream): a
//     pipe-mode recording read as it arrives, a file-format one from a
//     copy in $TMPDIR.
//
// Closing the Reader closes what Open opened. An error is an
// *fs.PathError naming path.
func Open(path string, opts Options) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var r *Reader
	st, err := f.Stat()
	switch {
	case err != nil:
	case st.IsDir():
		r, err = openDir(f, opts) // f is the directory's, closed with r
	default:
		if r, err = openFile(f, st, opts); err == nil && r.isDataFileOfDir() {
			r.Close() // not f: Open closes it below
			r, err = nil, ErrDataFileOfDir
		}
		if errors.Is(err, ErrNotPerfData) && st.Mode().IsRegular() {
			err = notRecording(f, err)
		}
		if err == nil {
			r.files = append(r.files, f)
		}
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return r, nil
}

// A NotRecordingError is Open's error for a regular file that is no
// recording (ErrNotPerfData): with its first bytes (Head, at most
// 64), read from the file Open opened, so that a caller can tell what else
// the file is without opening the path again, which another user may have
// changed meanwhile. The message does not quote them: they may be
// anything (a secret, if someone points bpfmeta at one).
type NotRecordingError struct {
	Head []byte
	Err  error // an ErrNotPerfData
}

func (e *NotRecordingError) Error() string { return e.Err.Error() }
func (e *NotRecordingError) Unwrap() error { return e.Err }

// notRecording is err with the first bytes of f (NotRecordingError).
func notRecording(f *os.File, err error) error {
	head := make([]byte, 64)
	n, _ := f.ReadAt(head, 0)
	return &NotRecordingError{Head: head[:n], Err: err}
}

// isDataFileOfDir reports whether the recording has a HEADER_DIR_FORMAT
// feature: the data file of a directory recording.
func (r *Reader) isDataFileOfDir() bool {
	if r.form.layout == nil {
		return false
	}
	_, ok := r.form.layout.Feature(perfdata.FeatDirFormat)
	return ok
}

// OpenFile reads the recording in f, a file already open (standard
// input), as Open reads a path: a directory as a directory recording, a
// regular file by offset, anything else as a stream (OpenStream). f is not
// known to be the data file of a directory recording (there is no path
// beside it to read instead): it is read as it is. Closing the Reader
// closes what OpenFile opened, not f; the caller closes f after the
// Reader.
func OpenFile(f *os.File, opts Options) (*Reader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return openFile(f, st, opts)
	}
	// openDir closes the directory with the Reader, and reads its
	// entries: it is given one of its own, opened anew (not a dup of
	// f, which would share f's position in the listing).
	fd, err := unix.Openat(int(f.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: f.Name(), Err: err}
	}
	dir := os.NewFile(uintptr(fd), f.Name())
	r, err := openDir(dir, opts)
	if err != nil {
		dir.Close()
		return nil, err
	}
	return r, nil
}

// openFile reads the recording in f, which is no directory (st is its
// stat): a regular file by offset, anything else as a stream. A regular
// file is the Reader's File, even read as a stream (one that cannot seek).
func openFile(f *os.File, st fs.FileInfo, opts Options) (*Reader, error) {
	if !st.Mode().IsRegular() {
		return OpenStream(f, opts)
	}
	var r *Reader
	var err error
	if _, serr := f.Seek(0, io.SeekCurrent); serr == nil {
		r, err = NewFile(f, st.Size(), opts)
	} else {
		r, err = OpenStream(f, opts)
	}
	if err != nil {
		return nil, err
	}
	r.file = f
	return r, nil
}

// File is the regular file Open or OpenFile reads the recording from, or
// nil (a stream, a copy of one, a directory recording): what an output of
// the recording must not be.
func (r *Reader) File() *os.File { return r.file }

// OpenStream reads a recording from a stream that cannot seek: a
// pipe-mode recording as it arrives (NewStream); a file-format recording
// (cat perf.data | ...), which cannot be read in one pass (its header says
// where its data ends only after the data was written), from a copy
// (Spool) in an unnamed file in os.TempDir() ($TMPDIR; nothing of it
// survives the process, however it ends), no larger than its header says
// it is and than the room there is there (statfs). Closing the Reader
// removes the copy; it does not close src.
//
// A pipe (src an *os.File) has its buffer grown first
// (scratch.GrowPipe, F_SETPIPE_SZ): perf writes a stream in large
// blocks, and fewer, larger reads cost less.
func OpenStream(src io.Reader, opts Options) (*Reader, error) {
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
	if !IsFileFormat(head) {
		return NewStream(br, opts)
	}
	dir := os.TempDir()
	f, err := scratch.Unnamed(dir)
	if err != nil {
		return nil, fmt.Errorf("a file-format recording on a pipe is copied to %s to be read: %w", dir, err)
	}
	size, err := Spool(f, br, room(dir))
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
