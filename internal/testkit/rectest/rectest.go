// Package rectest is what the record pipeline's tests share: recordings read whole, rewritten.
//
// It is what the tests of the record pipeline share: a recording read whole
// into memory, and a recording written again through the writer as the CLI
// writes it (a file in the input's format, or a directory for a directory
// recording, finished or removed).
//
// It is apart from testkit, which knows nothing of reader and writer, so
// that the packages below them can use testkit in their own tests; it is
// for tests only, and only those of external test packages (package x_test)
// or of packages above reader and writer import it.
package rectest

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Open opens the recording at path (a file, a pipe stream in a file, or a
// directory recording), closed at the end of the test; an error fails it.
func Open(t testing.TB, path string, opts reader.Options) *reader.Reader {
	t.Helper()
	r, err := reader.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Record is one record of a Recording, its bytes copied.
type Record struct {
	Offset int64
	Outer  int64 // as perfdata.Record.Outer: >= 0 for records inside compressed ones
	Type   perfdata.RecordType
	Raw    []byte
	Part   int // the file of a directory recording it is in
}

// Compressed says whether r came out of a compressed record.
func (r *Record) Compressed() bool { return r.Outer >= 0 }

// Recording is a whole (small) recording as the reader reads it.
type Recording struct {
	Path         string
	Format       perfdata.Format
	Order        binary.ByteOrder
	IDHeaderSize int
	Records      []Record // in reader order, compressed records' contents after them
	Trailing     []byte
	DataFiles    []string // a directory recording's data.N, in reading order
}

// Read reads the recording at path to its end; an error fails the test.
func Read(t testing.TB, path string, opts reader.Options) *Recording {
	t.Helper()
	r, err := reader.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec := &Recording{Path: path, Format: r.Format(), Order: r.ByteOrder()}
	for r.Next() {
		x := r.Record()
		rec.Records = append(rec.Records, Record{Offset: x.Offset, Outer: x.Outer, Type: x.Header.Type, Raw: bytes.Clone(x.Raw), Part: x.Part})
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rec.IDHeaderSize = r.IDHeaderSize()
	for _, n := range r.DataFiles() {
		rec.DataFiles = append(rec.DataFiles, perfdata.DataFileName(n))
	}
	_, tr := r.Trailing()
	rec.Trailing = bytes.Clone(tr)
	return rec
}

// Top returns the records stored as such (not inside compressed records).
func (r *Recording) Top() []Record {
	var top []Record
	for _, x := range r.Records {
		if !x.Compressed() {
			top = append(top, x)
		}
	}
	return top
}

// Edit is what Copy does with each record: write it (w.WriteRecord),
// leave it out, or add records around it.
type Edit func(w *writer.Writer, rec *perfdata.Record) error

// Copy hands every record of r to edit (nil: writes it as it is, with
// writer.Copy) and returns the first error, the input's or edit's; it
// leaves w open.
func Copy(r *reader.Reader, w *writer.Writer, edit Edit) error {
	if edit == nil {
		_, err := writer.Copy(w, r, nil)
		return err
	}
	for r.Next() {
		if err := edit(w, r.Record()); err != nil {
			return err
		}
	}
	return r.Err()
}

// CopyAll is Copy, then closes w; an error fails the test.
func CopyAll(t testing.TB, r *reader.Reader, w *writer.Writer, edit Edit) {
	t.Helper()
	if err := Copy(r, w, edit); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Through writes the recording at in through run into a new output in
// dir, as the CLI does: a file (writer.New: in's format, unless
// wopts.Format says another) or, for a directory recording, a directory
// (outfile.CreateDir, writer.NewDir), read with ropts. It returns the
// output's path and the error of reading in, of run or of finishing the
// output; after one, nothing is left at the path. Any other error fails
// the test. run may finish the output itself, as inject.Write does (the
// one wiring of reader, inject and writer, which inject's tests run
// here); Through's Close of w then does nothing.
func Through(t testing.TB, in, dir string, ropts reader.Options, wopts writer.Options, run func(*reader.Reader, *writer.Writer) error) (string, error) {
	t.Helper()
	r, err := reader.Open(in, ropts)
	if err != nil {
		return "", err
	}
	defer r.Close()
	out, w, commit, abort := create(t, r, in, dir, wopts)
	defer abort()
	if err := run(r, w); err != nil {
		return out, err
	}
	if err := w.Close(); err != nil {
		return out, err
	}
	return out, commit()
}

// create makes Through's output for r in dir: its path, its writer, and
// what finishes it and what removes it (a no-op after commit).
func create(t testing.TB, r *reader.Reader, in, dir string, wopts writer.Options) (string, *writer.Writer, func() error, func()) {
	t.Helper()
	var w *writer.Writer
	if !r.IsDirRecording() {
		f, err := os.CreateTemp(dir, filepath.Base(in)+".*.out")
		if err == nil {
			w, err = writer.New(f, r, wopts)
		}
		if err != nil {
			t.Fatal(err)
		}
		done := false
		commit := func() error { done = true; return f.Close() }
		abort := func() {
			w.Abort()
			if !done {
				f.Close()
				os.Remove(f.Name())
			}
		}
		return f.Name(), w, commit, abort
	}
	out, err := os.MkdirTemp(dir, filepath.Base(in)+".*.out")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(out) // outfile makes it, complete
	d, err := outfile.CreateDir(out, outfile.Options{})
	if err == nil {
		if w, err = writer.NewDir(d, r, wopts); err != nil {
			d.Abort()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return out, w, d.Commit, func() { w.Abort(); d.Abort() }
}

// Rewrite writes the recording at in again into a new output in the
// test's temporary directory, as Through does, handing every record
// (compressed ones' contents too) to edit, and returns its path; an error
// fails the test.
func Rewrite(t testing.TB, in string, wopts writer.Options, edit Edit) string {
	t.Helper()
	out, err := Through(t, in, t.TempDir(), reader.Options{Decompress: true}, wopts, func(r *reader.Reader, w *writer.Writer) error {
		return Copy(r, w, edit)
	})
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(in), err)
	}
	return out
}

// Stream reads the pipe stream b (a testkit.Stream's bytes) from memory,
// closed at the end of the test; an error fails it.
func Stream(t testing.TB, b []byte, opts reader.Options) *reader.Reader {
	t.Helper()
	r, err := reader.NewStream(bytes.NewReader(b), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// CopyFile reads the file-format recording in ra (size bytes,
// decompressing) and writes it again to out, in its format, through edit
// as CopyAll does; an error fails the test.
func CopyFile(t testing.TB, ra io.ReaderAt, size int64, out io.Writer, edit Edit) {
	t.Helper()
	r, err := reader.NewFile(ra, size, reader.Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := writer.New(out, r, writer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	CopyAll(t, r, w, edit)
}
