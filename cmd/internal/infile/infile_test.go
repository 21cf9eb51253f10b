package infile_test

import (
	"bytes"
	"errors"
	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/cmd/internal/infile"
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
// name while it is read and is gone once the Input is closed.
func TestOpenStream(t *testing.T) {
	for _, name := range testkit.CorpusNames(t) {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			b := testkit.CorpusBytes(t, name)
			want, wantErr := reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{Decompress: true})
			before := testkit.OpenFDs(t)
			in, err := infile.OpenStream(struct{ io.Reader }{bytes.NewReader(b)}, reader.Options{Decompress: true})
			if wantErr != nil {
				if err == nil {
					in.Close()
					t.Fatalf("read from a stream, not from a file (%v)", wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.File != nil {
				t.Error("a stream's Input has a File")
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("$TMPDIR holds %s while the recording is read", ents[0].Name())
			}
			n, err := count(in.Reader)
			wn, werr := count(want)
			if n != wn || (err == nil) != (werr == nil) {
				t.Errorf("%d records (%v) from a stream, %d (%v) from a file", n, err, wn, werr)
			}
			if spooled := testkit.OpenFDs(t) - before; spooled != 0 && !reader.IsFileFormat(b) {
				t.Errorf("a pipe-mode recording: %d files opened", spooled)
			}
			in.Close()
			if left := testkit.OpenFDs(t) - before; left != 0 {
				t.Errorf("%d files left open after Close", left)
			}
		})
	}
}

// TestOpenFile: a regular file is read by offset and is the Input's File;
// a pipe is read as a stream, its buffer grown to scratch.PipeSize first.
func TestOpenFile(t *testing.T) {
	name := "autofdo_perf5.6_x86_64_small.data"
	f, err := os.Open(testkit.CorpusFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := infile.OpenFile(f, reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if in.File != f || in.Source() == nil {
		t.Errorf("a regular file: File %v, Source %v; want the file, read by offset", in.File, in.Source())
	}
	in.Close()

	b := testkit.CorpusBytes(t, "mstange_perf6.16_x86_64_zstd_compressed2.pipe.data")
	pr := testkit.PipeOf(t, b)
	in, err = infile.OpenFile(pr, reader.Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if most := pipeMaxSize(t); most >= scratch.PipeSize {
		if got, err := unix.FcntlInt(pr.Fd(), unix.F_GETPIPE_SZ, 0); err != nil || got != scratch.PipeSize {
			t.Errorf("the pipe's buffer is %d bytes (%v), want %d", got, err, scratch.PipeSize)
		}
	}
	if in.File != nil {
		t.Error("a pipe's Input has a File")
	}
	if n, err := count(in.Reader); err != nil || n == 0 {
		t.Errorf("%d records from the pipe: %v", n, err)
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
		in, err := infile.OpenStream(bytes.NewReader(c.in), reader.Options{})
		if err == nil {
			in.Close()
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
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
