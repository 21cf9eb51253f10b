package reader_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
)

// count reads r to its end: its records, and the error that stopped it.
func count(r *reader.Reader) (int64, error) {
	n := int64(0)
	for r.Next() {
		n++
	}
	return n, r.Err()
}

// TestOpenStream: every recording of the corpus read from a stream (no
// ReaderAt, no file) has the records it has read from a file; a
// file-format one is spooled to an unnamed file in $TMPDIR, which has no
// name while it is read and is gone once the Reader is closed.
func TestOpenStream(t *testing.T) {
	for _, name := range testkit.CorpusNames(t) {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			b := testkit.CorpusBytes(t, name)
			want, wantErr := reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{Decompress: true})
			before := testkit.OpenFDs(t)
			r, err := reader.OpenStream(struct{ io.Reader }{bytes.NewReader(b)}, reader.Options{Decompress: true})
			if wantErr != nil {
				if err == nil {
					r.Close()
					t.Fatalf("read from a stream, not from a file (%v)", wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.File() != nil {
				t.Error("a stream's Reader has a File")
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("$TMPDIR holds %s while the recording is read", ents[0].Name())
			}
			n, err := count(r)
			wn, werr := count(want)
			if n != wn || (err == nil) != (werr == nil) {
				t.Errorf("%d records (%v) from a stream, %d (%v) from a file", n, err, wn, werr)
			}
			if spooled := testkit.OpenFDs(t) - before; spooled != 0 && !reader.IsFileFormat(b) {
				t.Errorf("a pipe-mode recording: %d files opened", spooled)
			}
			r.Close()
			if left := testkit.OpenFDs(t) - before; left != 0 {
				t.Errorf("%d files left open after Close", left)
			}
		})
	}
}

// TestOpenFile: a regular file is read by offset and is the Reader's
// File; a pipe is read as a stream, its buffer grown to scratch.PipeSize
// first; neither is closed with the Reader.
func TestOpenFile(t *testing.T) {
	name := "autofdo_perf5.6_x86_64_small.data"
	f, err := os.Open(testkit.CorpusFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := reader.OpenFile(f, reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.File() != f || r.Source() == nil {
		t.Errorf("a regular file: File %v, Source %v; want the file, read by offset", r.File(), r.Source())
	}
	r.Close()
	if _, err := f.Stat(); err != nil {
		t.Errorf("the file was closed with the Reader: %v", err)
	}

	b := testkit.CorpusBytes(t, "mstange_perf6.16_x86_64_zstd_compressed2.pipe.data")
	pr := testkit.PipeOf(t, b)
	r, err = reader.OpenFile(pr, reader.Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	if most := pipeMaxSize(t); most >= scratch.PipeSize {
		if got, err := unix.FcntlInt(pr.Fd(), unix.F_GETPIPE_SZ, 0); err != nil || got != scratch.PipeSize {
			t.Errorf("the pipe's buffer is %d bytes (%v), want %d", got, err, scratch.PipeSize)
		}
	}
	if r.File() != nil {
		t.Error("a pipe's Reader has a File")
	}
	if n, err := count(r); err != nil || n == 0 {
		t.Errorf("%d records from the pipe: %v", n, err)
	}
	r.Close()
	if _, err := pr.Stat(); err != nil {
		t.Errorf("the pipe was closed with the Reader: %v", err)
	}
}

// TestOpenStreamErrors: what a reader says of an empty stream, of one that
// is no recording and of a file-format recording perf record did not finish
// comes through the spool unchanged.
func TestOpenStreamErrors(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	b := testkit.CorpusBytes(t, "autofdo_perf5.6_x86_64_small.data")
	unfinished := bytes.Clone(b)
	clear(unfinished[48:56]) // the data section's size
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, reader.ErrEmpty},
		{"not a recording", []byte(strings.Repeat("not a recording. ", 10)), reader.ErrNotPerfData},
		{"unfinished", unfinished, reader.ErrUnfinished},
		{"cut", b[:len(b)/2], reader.ErrTruncated},
	} {
		r, err := reader.OpenStream(bytes.NewReader(c.in), reader.Options{})
		if err == nil {
			r.Close()
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestOpenKinds: Open reads whatever a path names as its kind is read (a
// regular file by offset, a FIFO as a stream, a file-format recording on
// it from a spool, a directory as a directory recording), with the
// records a file of the same bytes has, and leaves no file open once the
// Reader is closed.
func TestOpenKinds(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	tmp := t.TempDir()
	fileFormat := "autofdo_perf5.6_x86_64_small.data"
	pipeMode := "mstange_perf6.16_x86_64_zstd_compressed2.pipe.data"
	threads := testkit.ThreadsNames(t)[0]
	fifo := func(name string) string {
		path := filepath.Join(tmp, name+".fifo")
		must(t, syscall.Mkfifo(path, 0o600))
		go func() {
			w, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			w.Write(testkit.CorpusBytes(t, name))
			w.Close()
		}()
		return path
	}
	for _, c := range []struct {
		kind, path string
		file, dir  bool   // the Reader's File is the path's; a directory recording
		same       string // the corpus file whose records it has
	}{
		{"regular file", testkit.CorpusFile(t, fileFormat), true, false, fileFormat},
		{"FIFO, file format", fifo(fileFormat), false, false, fileFormat},
		{"FIFO, pipe mode", fifo(pipeMode), false, false, pipeMode},
		{"directory", testkit.ThreadsDir(threads), false, true, ""},
	} {
		before := testkit.OpenFDs(t)
		r, err := reader.Open(c.path, reader.Options{Decompress: true})
		if err != nil {
			t.Errorf("%s: %v", c.kind, err)
			continue
		}
		if f := r.File(); (f != nil) != c.file || f != nil && f.Name() != c.path {
			t.Errorf("%s: File %v, want one: %v", c.kind, f, c.file)
		}
		if r.IsDirRecording() != c.dir {
			t.Errorf("%s: IsDirRecording %v", c.kind, r.IsDirRecording())
		}
		n, err := count(r)
		if c.same != "" {
			b := testkit.CorpusBytes(t, c.same)
			want, werr := reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{Decompress: true})
			if werr != nil {
				t.Fatal(werr)
			}
			if wn, werr := count(want); n != wn || err != nil || werr != nil {
				t.Errorf("%s: %d records (%v), %d (%v) from the file", c.kind, n, err, wn, werr)
			}
		} else if err != nil || n == 0 {
			t.Errorf("%s: %d records: %v", c.kind, n, err)
		}
		r.Close()
		if left := testkit.OpenFDs(t) - before; left != 0 {
			t.Errorf("%s: %d files left open after Close", c.kind, left)
		}
	}
}

// TestOpenDataFileOfDir: Open refuses the data file of a directory
// recording (its records are in the data.N files beside it) with
// ErrDataFileOfDir, as an *fs.PathError naming it, and leaves nothing
// open; OpenFile, which has no directory to read instead, reads it as it
// is; a directory given to OpenFile is read as the directory recording,
// and stays the caller's.
func TestOpenDataFileOfDir(t *testing.T) {
	dir := testkit.ThreadsDir(testkit.ThreadsNames(t)[0])
	data := filepath.Join(dir, "data")
	before := testkit.OpenFDs(t)
	r, err := reader.Open(data, reader.Options{})
	var pe *fs.PathError
	if !errors.Is(err, reader.ErrDataFileOfDir) || !errors.As(err, &pe) || pe.Path != data {
		t.Errorf("Open(data): %v, want an *fs.PathError of ErrDataFileOfDir naming it", err)
	}
	if err == nil {
		r.Close()
	}
	if left := testkit.OpenFDs(t) - before; left != 0 {
		t.Errorf("%d files left open by the refusal", left)
	}

	f, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err = reader.OpenFile(f, reader.Options{})
	if err != nil {
		t.Fatalf("OpenFile(data): %v", err)
	}
	if r.File() != f {
		t.Error("OpenFile(data): not read from the file")
	}
	r.Close()

	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	whole, err := reader.Open(dir, reader.Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	wn, werr := count(whole)
	whole.Close()
	r, err = reader.OpenFile(d, reader.Options{Decompress: true})
	if err != nil {
		t.Fatalf("OpenFile(dir): %v", err)
	}
	if !r.IsDirRecording() || r.File() != nil {
		t.Errorf("OpenFile(dir): IsDirRecording %v, File %v", r.IsDirRecording(), r.File())
	}
	if n, err := count(r); n != wn || err != nil || werr != nil {
		t.Errorf("OpenFile(dir): %d records (%v), Open(dir) %d (%v)", n, err, wn, werr)
	}
	r.Close()
	if ents, err := d.ReadDir(-1); err != nil || len(ents) < 2 {
		t.Errorf("the directory given to OpenFile: %d entries listed after (%v); its listing was taken", len(ents), err)
	}
}

// pipeMaxSize is the largest pipe buffer an unprivileged process may ask
// for (/proc/sys/fs/pipe-max-size).
func pipeMaxSize(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOpenNotRecording: Open's error for a regular file that is no
// recording carries its first bytes, read from the file it opened (at most
// 64), and does not quote them; a FIFO's error carries none.
func TestOpenNotRecording(t *testing.T) {
	dir := t.TempDir()
	text := `{"format_version":1,"secret":"` + strings.Repeat("x", 100) + `"}`
	path := filepath.Join(dir, "snap.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := reader.Open(path, reader.Options{})
	var nr *reader.NotRecordingError
	if !errors.Is(err, reader.ErrNotPerfData) || !errors.As(err, &nr) {
		t.Fatalf("Open: %v (%T), want a NotRecordingError", err, err)
	}
	if string(nr.Head) != text[:64] {
		t.Errorf("Head %q, want %q", nr.Head, text[:64])
	}
	if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "format_version") {
		t.Errorf("the message quotes the file: %v", err)
	}
}
