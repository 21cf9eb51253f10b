package outfile

import (
	"errors"
	"fmt"
	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Output is where a command writes: a File it creates (createPath's policy),
// or a stream (stdout) it cannot take back what it gave, which Hold can
// make wait.
type Output struct {
	Name string // for messages
	File *File  // nil for a stream
	Dir  *Dir   // a directory recording's directory, instead of File
	w    io.Writer
	held *os.File // what is written until Release (Hold)
	done func()   // called once the file is committed or aborted
}

// NewStream is an output to w, named name.
func NewStream(name string, w io.Writer) *Output { return &Output{Name: name, w: w} }

// Open creates the file at path by createPath's policy; track, if not nil, is
// called with it and returns what to call once it is committed or aborted
// (a Guard's Track).
func Open(path, name string, opts Options, track func(Aborter) func()) (*Output, error) {
	f, err := createPath(path, opts)
	if err != nil {
		return nil, err
	}
	o := &Output{Name: name, File: f, w: f, done: func() {}}
	if track != nil {
		o.done = track(f)
	}
	return o, nil
}

// OpenDir creates the directory at path by CreateDir's policy, tracked as
// Open tracks a file.
func OpenDir(path, name string, opts Options, track func(Aborter) func()) (*Output, error) {
	d, err := CreateDir(path, opts)
	if err != nil {
		return nil, err
	}
	o := &Output{Name: name, Dir: d, done: func() {}}
	if track != nil {
		o.done = track(d)
	}
	return o, nil
}

// IsStdout tells the names of the process's own stdout (/dev/stdout, fd
// 1): written to as stdout is, never replaced.
func IsStdout(path string) bool {
	p := filepath.Clean(path)
	return p == "/dev/stdout" || p == "/dev/fd/1" || p == "/proc/self/fd/1"
}

// Regular reports whether the output is a regular file: one that appears
// only when complete (Commit), so needs no holding.
func (o *Output) Regular() bool { return o.Dir != nil || o.File != nil && o.File.Regular() }

// Hold keeps what is written in an unnamed file in dir until Release: a
// stream cannot take back what it was given. A regular file needs no
// holding (it appears only when committed): Hold does nothing for one.
// what names it in an error.
func (o *Output) Hold(dir, what string) error {
	if o.Regular() {
		return nil
	}
	f, err := scratch.Unnamed(dir)
	if err != nil {
		return fmt.Errorf("holding %s back in %s: %w", what, dir, err)
	}
	o.held = f
	return nil
}

// Dest is where to write: the output file, or the stream. A stream is
// written in order even when it is a regular file (stdout redirected to
// one) or held in one (Hold), so Dest gives it as a plain io.Writer, which
// cannot seek: a recording's writer then writes a pipe stream
// (writer.New), the one format a stream can take.
func (o *Output) Dest() io.Writer {
	switch {
	case o.held != nil:
		return stream{o.held}
	case o.File != nil:
		return o.File.File
	}
	return stream{o.w}
}

// stream hides what else than io.Writer a stream's destination is.
type stream struct{ io.Writer }

// Release writes what was held to the output.
func (o *Output) Release() error {
	if o.held == nil {
		return nil
	}
	if _, err := o.held.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.Copy(o.w, o.held); err != nil {
		return o.Error(err)
	}
	return nil
}

// Commit finishes a file (File.Commit) or directory (Dir.Commit).
func (o *Output) Commit() error {
	var commit func() error
	switch {
	case o.File != nil:
		commit = o.File.Commit
	case o.Dir != nil:
		commit = o.Dir.Commit
	default:
		return nil
	}
	defer o.done()
	if err := commit(); err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err // the name is o.Name
		}
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	return nil
}

// Abort removes a file that is not committed, and what was held.
func (o *Output) Abort() {
	if o.held != nil {
		o.held.Close()
		o.held = nil
	}
	if o.File != nil {
		o.File.Abort()
		o.done()
	}
	if o.Dir != nil {
		o.Dir.Abort()
		o.done()
	}
}

// Error names the output in an error writing it: as the command's user
// named it, not by the name the file has while it is written (none, or a
// temporary one).
func (o *Output) Error(err error) error {
	var pe *fs.PathError
	if o.File != nil && errors.As(err, &pe) && pe.Path == o.File.Name() {
		return fmt.Errorf("%s: %s: %w", o.Name, pe.Op, pe.Err)
	}
	if strings.HasPrefix(err.Error(), o.Name) {
		return err
	}
	return fmt.Errorf("%s: %w", o.Name, err)
}
