package reader

import (
	"io/fs"
	"os"
)

// Open reads the recording at path: a regular file by offset (NewFile), a
// directory recording (perf record --threads), and anything else (a FIFO,
// a device) as a stream (NewStream), which then must hold a pipe-mode
// recording. A file-format recording that arrives on a stream is read
// after it was copied to a file (Spool); where to, and how much room that
// may take, is the caller's policy, not the reader's. Closing the Reader
// closes what Open opened. An error is an *fs.PathError naming path.
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
	case st.Mode().IsRegular():
		if r, err = NewFile(f, st.Size(), opts); err == nil {
			r.files = append(r.files, f)
		}
	default:
		if r, err = NewStream(f, opts); err == nil {
			r.files = append(r.files, f)
		}
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return r, nil
}
