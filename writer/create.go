package writer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists is returned by Create for an existing output it may not replace.
var ErrExists = errors.New("exists")

// Output is an output file. A regular file is written under a temporary
// name next to it and renamed into place by Commit, so a failed or
// interrupted run never leaves a partial recording behind; a device or FIFO
// (/dev/null, a named pipe) is written directly.
type Output struct {
	*os.File
	path string
	tmp  string // "" when writing the path directly
	done bool
}

// Create opens path for a new recording. An existing regular file is
// replaced only if force is set. mode is the new file's permission bits.
func Create(path string, force bool, mode fs.FileMode) (*Output, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return nil, fmt.Errorf("%s is a directory", path)
	case err == nil && !st.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &Output{File: f, path: path}, nil
	case err == nil && !force:
		return nil, fmt.Errorf("%s: %w (use -f to replace it)", path, ErrExists)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".bpfmeta-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &Output{File: f, path: path, tmp: f.Name()}, nil
}

// Regular reports whether the output is a regular file (it can seek).
func (o *Output) Regular() bool { return o.tmp != "" }

// Commit closes the output and moves it into place.
func (o *Output) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	if err := o.File.Close(); err != nil {
		if o.tmp != "" {
			os.Remove(o.tmp)
		}
		return err
	}
	if o.tmp == "" {
		return nil
	}
	if err := os.Rename(o.tmp, o.path); err != nil {
		os.Remove(o.tmp)
		return err
	}
	return nil
}

// Abort closes and removes the output, unless it was committed.
func (o *Output) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.File.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}
